//! The sampler thread: reads each [`Source`] at its own cadence, merges what they read into
//! one [`DriveSample`] and publishes it (with the time it was taken) in a [`Slot`].

use super::slot::{Published, Reader, Slot};
use super::{DriveSample, Source};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// At most this many error messages are kept per source (the count goes on).
const MAX_ERRORS: usize = 3;

/// What the sampler did, for the capture's metadata.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SamplerReport {
    /// (source name, reads, failed reads, first error messages).
    pub sources: Vec<(String, u64, u64, Vec<String>)>,
    /// The last merged sample (its counter units go into the metadata).
    pub last: Option<DriveSample>,
}

/// A running sampler thread; [`Sampler::stop`] joins it.
pub struct Sampler {
    slot: Arc<Slot>,
    stop: Arc<(Mutex<bool>, Condvar)>,
    handle: Option<JoinHandle<SamplerReport>>,
}

impl Sampler {
    /// Starts the thread; every source is read once at once, then at its cadence.
    pub fn start(mut sources: Vec<Box<dyn Source>>) -> Sampler {
        let slot = Arc::new(Slot::default());
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let (slot2, stop2) = (slot.clone(), stop.clone());
        let handle = std::thread::Builder::new()
            .name("flashback-telemetry".into())
            .spawn(move || run(&mut sources, &slot2, &stop2))
            .expect("spawning the telemetry sampler thread");
        Sampler {
            slot,
            stop,
            handle: Some(handle),
        }
    }

    /// A non-blocking reader of the latest sample.
    pub fn reader(&self) -> Reader {
        Reader::new(self.slot.clone())
    }

    /// Stops and joins the thread (wakes it at once), returning what it did.
    pub fn stop(mut self) -> SamplerReport {
        self.halt()
    }

    fn halt(&mut self) -> SamplerReport {
        {
            let (m, c) = &*self.stop;
            *m.lock().unwrap_or_else(|p| p.into_inner()) = true;
            c.notify_all();
        }
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        if self.handle.is_some() {
            self.halt();
        }
    }
}

fn run(
    sources: &mut [Box<dyn Source>],
    slot: &Slot,
    stop: &(Mutex<bool>, Condvar),
) -> SamplerReport {
    let start = Instant::now();
    let mut due: Vec<Instant> = vec![start; sources.len()];
    let mut merged = DriveSample::default();
    let mut report = SamplerReport {
        sources: sources
            .iter()
            .map(|s| (s.name().to_string(), 0, 0, vec![]))
            .collect(),
        last: None,
    };
    loop {
        let now = Instant::now();
        let mut changed = false;
        for (i, src) in sources.iter_mut().enumerate() {
            if due[i] > now {
                continue;
            }
            let r = &mut report.sources[i];
            r.1 += 1;
            match src.read() {
                Ok(s) => {
                    merged.merge(&s);
                    changed = true;
                }
                Err(e) => {
                    r.2 += 1;
                    if r.3.len() < MAX_ERRORS {
                        r.3.push(e.to_string());
                    }
                }
            }
            due[i] = now + src.cadence();
        }
        if changed {
            report.last = Some(merged);
            slot.publish(Published {
                sample: merged,
                at: Instant::now(),
            });
        }
        let next = due
            .iter()
            .min()
            .copied()
            .unwrap_or(now + Duration::from_secs(1));
        let (m, c) = stop;
        let mut halted = m.lock().unwrap_or_else(|p| p.into_inner());
        while !*halted {
            let wait = next.saturating_duration_since(Instant::now());
            if wait.is_zero() {
                break;
            }
            halted = c
                .wait_timeout(halted, wait)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        if *halted {
            return report;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
    use std::sync::atomic::{AtomicU64, Ordering};

    struct Fake {
        n: Arc<AtomicU64>,
        every: Duration,
        fail: bool,
        temp: bool,
    }
    impl Source for Fake {
        fn name(&self) -> &'static str {
            if self.temp {
                "fast"
            } else {
                "slow"
            }
        }
        fn cadence(&self) -> Duration {
            self.every
        }
        fn read(&mut self) -> crate::Result<DriveSample> {
            let k = self.n.fetch_add(1, Ordering::SeqCst) + 1;
            if self.fail {
                return Err(Error::Parse(format!("read {k} failed")));
            }
            Ok(if self.temp {
                DriveSample {
                    temp_c: Some(30.0 + k as f64),
                    ..Default::default()
                }
            } else {
                DriveSample {
                    host_written_bytes: Some(k * 512_000),
                    ..Default::default()
                }
            })
        }
    }

    #[test]
    fn each_source_at_its_cadence_merged_and_stop_is_prompt() {
        let (fast_n, slow_n) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let s = Sampler::start(vec![
            Box::new(Fake {
                n: fast_n.clone(),
                every: Duration::from_millis(20),
                fail: false,
                temp: true,
            }),
            Box::new(Fake {
                n: slow_n.clone(),
                every: Duration::from_secs(3600),
                fail: false,
                temp: false,
            }),
        ]);
        let mut r = s.reader();
        std::thread::sleep(Duration::from_millis(250));
        let p = r.latest().expect("a sample");
        assert!(p.sample.temp_c.unwrap() > 33.0, "{p:?}");
        assert_eq!(p.sample.host_written_bytes, Some(512_000)); // the slow one read once
        assert!(p.age_s(Instant::now()) < 0.2);
        let t0 = Instant::now();
        let rep = s.stop();
        assert!(
            t0.elapsed() < Duration::from_millis(500),
            "stop waited for the slow cadence"
        );
        assert_eq!(slow_n.load(Ordering::SeqCst), 1);
        assert!(fast_n.load(Ordering::SeqCst) >= 5);
        assert_eq!(rep.sources[1].1, 1);
    }

    #[test]
    fn failures_are_counted_with_the_first_messages_and_publish_nothing() {
        let s = Sampler::start(vec![Box::new(Fake {
            n: Arc::new(AtomicU64::new(0)),
            every: Duration::from_millis(10),
            fail: true,
            temp: true,
        })]);
        let mut r = s.reader();
        std::thread::sleep(Duration::from_millis(80));
        assert_eq!(r.latest(), None);
        let rep = s.stop();
        let (_, reads, failed, msgs) = &rep.sources[0];
        assert_eq!(reads, failed);
        assert_eq!(msgs.len(), MAX_ERRORS);
        assert_eq!(msgs[0], "read 1 failed");
    }
}
