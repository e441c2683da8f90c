//! The steady-state write-amplification detector behind the `steady_state_wa` event.

/// Sliding detector of the steady-state write amplification: windows of 1/4 of the user
/// capacity; steady once four consecutive window WAs (one drive fill) lie within ±2.5 % of
/// their mean after GC started copying (the window straddling the GC onset is skipped). The
/// event's `host_written_bytes` and time are those of the start of the four windows.
pub struct SteadyDetector {
    window_bytes: u64,
    /// Host bytes at which the next window closes.
    pub next_at: u64,
    start_host: u64,
    start_nand: u64,
    start_t: u64,
    start_host_prev: u64,
    /// (window start host bytes, window WA, window start drive time)
    hist: Vec<(u64, f64, u64)>,
    armed: bool,
    done: bool,
}

impl SteadyDetector {
    pub fn new(capacity: u64) -> Self {
        let w = (capacity / 4).max(1 << 20);
        SteadyDetector {
            window_bytes: w,
            next_at: w,
            start_host: 0,
            start_nand: 0,
            start_t: 0,
            start_host_prev: 0,
            hist: vec![],
            armed: false,
            done: false,
        }
    }

    /// Closes a window at `host` bytes written, `nand` bytes programmed, drive time `t_ns`;
    /// `gc_started`: GC has copied data. Returns `(host bytes, drive time, mean WA)` of the
    /// steady state's start the first time four windows agree.
    pub fn window(
        &mut self,
        host: u64,
        nand: u64,
        t_ns: u64,
        gc_started: bool,
    ) -> Option<(u64, u64, f64)> {
        let s = self;
        s.next_at = host + s.window_bytes;
        let dh = host - s.start_host;
        let wa = (nand - s.start_nand) as f64 / dh.max(1) as f64;
        let start_t = s.start_t;
        s.start_host_prev = s.start_host;
        s.start_host = host;
        s.start_nand = nand;
        s.start_t = t_ns;
        if !gc_started {
            // only windows that start after GC began copying count
            s.hist.clear();
            s.armed = false;
            return None;
        }
        if !s.armed {
            s.armed = true; // this window straddled the GC onset
            return None;
        }
        s.hist.push((s.start_host_prev, wa, start_t));
        if s.done || s.hist.len() < 4 {
            return None;
        }
        let last = &s.hist[s.hist.len() - 4..];
        let mean = last.iter().map(|x| x.1).sum::<f64>() / 4.0;
        if last.iter().all(|x| (x.1 - mean).abs() <= 0.025 * mean) {
            s.done = true;
            return Some((last[0].0, last[0].2, mean));
        }
        None
    }
}
