//! The workload: fio's vocabulary, parsed and validated once, shared by the real engine and
//! the simulator.

mod budget;
mod data;
mod ops;

pub use budget::Budget;
pub(crate) use data::compress_ratio_cache;
pub use data::{compress_ratio_cached, measure_compress_ratio, DataGen};
pub use ops::{job_slices, Op, OpKind, OpStream};

use crate::error::{Error, Result};
use crate::units::{parse_duration, parse_int, parse_size, parse_switch};
use serde::Serialize;

/// I/O pattern (`rw`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    Read,
    Write,
    RandRead,
    RandWrite,
    RandRw,
    Trim,
    RandTrim,
}

impl Rw {
    pub fn is_random(self) -> bool {
        matches!(
            self,
            Rw::RandRead | Rw::RandWrite | Rw::RandRw | Rw::RandTrim
        )
    }
    /// True when the workload can write (or unmap) data on the target.
    pub fn is_destructive(self) -> bool {
        !matches!(self, Rw::Read | Rw::RandRead)
    }
    pub fn name(self) -> &'static str {
        match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::RandRead => "randread",
            Rw::RandWrite => "randwrite",
            Rw::RandRw => "randrw",
            Rw::Trim => "trim",
            Rw::RandTrim => "randtrim",
        }
    }
}

/// What written buffers contain (`data`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataPattern {
    /// Incompressible: refilled from a fast PRNG for every I/O.
    Random,
    /// All zero bytes.
    Zeros,
    /// `compress:N`: N % of every 4 KiB chunk is zeros, the rest random, so a compressor keeps
    /// about (100 − N) % of the bytes.
    Compress(u8),
    /// `pattern:HEX`: the given bytes repeated.
    Pattern(Vec<u8>),
}

impl DataPattern {
    pub fn spec(&self) -> String {
        match self {
            DataPattern::Random => "random".into(),
            DataPattern::Zeros => "zeros".into(),
            DataPattern::Compress(n) => format!("compress:{n}"),
            DataPattern::Pattern(b) => {
                let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
                format!("pattern:{hex}")
            }
        }
    }
}

/// How random offsets are drawn (`random`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RandomDist {
    /// With replacement, as IOMeter does.
    Uniform,
    /// Every block once per pass, as fio does by default.
    Permutation,
}

/// How a job's threads use the CPUs of `cpus_allowed` (fio's `cpus_allowed_policy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CpusPolicy {
    /// Every job may run on every CPU of the list (fio's default).
    Shared,
    /// Job `j` runs on the list's CPU `j mod n` alone.
    Split,
}

/// The highest CPU number `cpus_allowed` takes (a `cpu_set_t` holds 1,024).
pub const CPU_MAX: u32 = 1023;

/// I/O engine for real targets (`engine`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// io_uring where the kernel allows it, psync otherwise.
    Auto,
    IoUring,
    Psync,
}

/// A validated workload. Sizes are bytes, times seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    pub rw: Rw,
    /// % of reads in `randrw` (0–100).
    pub rwmix_read: u32,
    pub bs: u64,
    pub iodepth: u32,
    pub jobs: u32,
    pub offset: u64,
    /// Span length; `None` = from `offset` to the end of the target.
    pub size: Option<u64>,
    pub time_s: Option<f64>,
    pub written: Option<u64>,
    pub loops: Option<u64>,
    pub data: DataPattern,
    pub random: RandomDist,
    pub direct: bool,
    pub engine: EngineKind,
    pub interval_s: f64,
    pub seed: u64,
    /// A block trace to replay instead of generated offsets (see `crate::trace`), with its
    /// offsets already mapped onto the target.
    pub trace: Option<std::sync::Arc<Vec<crate::trace::TraceOp>>>,
    /// For a trace: issue each op no earlier than its recorded time × this factor
    /// (`None`: as fast as the queue depth allows).
    pub trace_time_scale: Option<f64>,
    /// The CPUs a real target's jobs may run on, ascending and distinct (fio's `cpus_allowed`;
    /// `None`: wherever the scheduler puts them). `sim:` targets ignore it, as they do
    /// `engine` and `direct`.
    pub cpus_allowed: Option<Vec<u32>>,
    pub cpus_allowed_policy: CpusPolicy,
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            rw: Rw::Write,
            rwmix_read: 50,
            bs: 4096,
            iodepth: 1,
            jobs: 1,
            offset: 0,
            size: None,
            time_s: None,
            written: None,
            loops: None,
            data: DataPattern::Random,
            random: RandomDist::Permutation,
            direct: true,
            engine: EngineKind::Auto,
            interval_s: 1.0,
            seed: 0x5eed,
            trace: None,
            trace_time_scale: None,
            cpus_allowed: None,
            cpus_allowed_policy: CpusPolicy::Shared,
        }
    }
}

/// The field names [`Workload::from_pairs`] accepts.
pub const FIELDS: &[&str] = &[
    "rw",
    "rwmix_read",
    "bs",
    "iodepth",
    "jobs",
    "offset",
    "size",
    "time",
    "written",
    "loops",
    "data",
    "random",
    "direct",
    "engine",
    "interval",
    "seed",
    "cpus_allowed",
    "cpus_allowed_policy",
];

impl Workload {
    /// Builds a workload from fio-style `key=value` pairs (values as strings), validating every
    /// field. Unknown keys and bad values are an [`Error::InvalidValue`] naming the field.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self> {
        let mut w = Workload::default();
        for (k, v) in pairs {
            match k {
                "rw" => {
                    // fio's names, in any case
                    let names = [
                        ("read", Rw::Read),
                        ("write", Rw::Write),
                        ("randread", Rw::RandRead),
                        ("randwrite", Rw::RandWrite),
                        ("randrw", Rw::RandRw),
                        ("trim", Rw::Trim),
                        ("randtrim", Rw::RandTrim),
                    ];
                    w.rw = parse_choice(
                        k,
                        v,
                        &v.trim().to_ascii_lowercase(),
                        "an I/O pattern",
                        &names,
                    )?
                }
                "rwmix_read" => w.rwmix_read = parse_int(k, v, 0, 100)? as u32,
                "bs" => w.bs = parse_size(k, v)?,
                "iodepth" => w.iodepth = parse_int(k, v, 1, 4096)? as u32,
                "jobs" => w.jobs = parse_int(k, v, 1, 256)? as u32,
                "offset" => w.offset = parse_size(k, v)?,
                "size" => w.size = Some(parse_size(k, v)?),
                "time" => w.time_s = Some(parse_duration(k, v)?),
                "written" => w.written = Some(parse_size(k, v)?),
                "loops" => w.loops = Some(parse_int(k, v, 1, u64::MAX)?),
                "data" => w.data = parse_data(v)?,
                "random" => {
                    let names = [
                        ("uniform", RandomDist::Uniform),
                        ("permutation", RandomDist::Permutation),
                    ];
                    w.random = parse_choice(k, v, v.trim(), "a distribution", &names)?
                }
                "direct" => w.direct = parse_switch(k, v)?,
                "engine" => {
                    let names = [
                        ("io_uring", EngineKind::IoUring),
                        ("psync", EngineKind::Psync),
                        ("auto", EngineKind::Auto),
                    ];
                    w.engine = parse_choice(k, v, v.trim(), "an engine", &names)?
                }
                "interval" => w.interval_s = parse_duration(k, v)?,
                "seed" => w.seed = parse_int(k, v, 0, u64::MAX)?,
                "cpus_allowed" => w.cpus_allowed = Some(parse_cpus(v)?),
                "cpus_allowed_policy" => {
                    let names = [("shared", CpusPolicy::Shared), ("split", CpusPolicy::Split)];
                    w.cpus_allowed_policy = parse_choice(k, v, v.trim(), "a policy", &names)?
                }
                _ => {
                    return Err(Error::InvalidValue(format!(
                        "{k:?} is not a workload field; use one of {}",
                        FIELDS.join(", ")
                    )))
                }
            }
        }
        w.validate()?;
        Ok(w)
    }

    /// Cross-field checks.
    pub fn validate(&self) -> Result<()> {
        if self.bs == 0 {
            return Err(Error::InvalidValue(
                "bs=0 is not a block size; use 512 bytes or more".into(),
            ));
        }
        if self.direct && !self.bs.is_multiple_of(512) {
            return Err(Error::InvalidValue(format!(
                "bs={} is not a multiple of 512, which direct I/O needs; use a multiple of 512 or direct=false",
                self.bs
            )));
        }
        if self.direct && !self.offset.is_multiple_of(512) {
            return Err(Error::InvalidValue(format!(
                "offset={} is not a multiple of 512, which direct I/O needs; align it",
                self.offset
            )));
        }
        if let Some(size) = self.size {
            // bs × jobs past 2^64 is larger than any size
            let least = self.bs.checked_mul(self.jobs as u64);
            if least.is_none_or(|least| size < least) {
                let least = least.map_or("more than 2^64".to_string(), |b| b.to_string());
                return Err(Error::InvalidValue(format!(
                    "size={size} is smaller than bs × jobs ({least}); make the span larger"
                )));
            }
        }
        if self.interval_s.is_nan() || self.interval_s < 0.001 {
            return Err(Error::InvalidValue(format!(
                "interval={}s is too short; use 1ms or more",
                self.interval_s
            )));
        }
        if let Some(t) = self.time_s {
            if t <= 0.0 {
                return Err(Error::InvalidValue(
                    "time=0 would run nothing; give a positive duration".into(),
                ));
            }
        }
        if self.written == Some(0) {
            return Err(Error::InvalidValue(
                "written=0 would run nothing; give a positive size".into(),
            ));
        }
        if self.written.is_some() && !self.rw.is_destructive() {
            return Err(Error::InvalidValue(format!(
                "written= limits bytes written, but rw={} writes nothing; use time= or loops=",
                self.rw.name()
            )));
        }
        Ok(())
    }

    /// The effective loop limit: one pass when no limit at all is given (as fio does).
    pub fn loops_limit(&self) -> Option<u64> {
        match (self.time_s, self.written, self.loops) {
            (None, None, None) => Some(1),
            (_, _, l) => l,
        }
    }

    /// The workload as a JSON object for capture metadata, in the user's vocabulary.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "rw": self.rw.name(),
            "rwmix_read": self.rwmix_read,
            "bs": self.bs,
            "iodepth": self.iodepth,
            "jobs": self.jobs,
            "offset": self.offset,
            "size": self.size,
            "time_s": self.time_s,
            "written": self.written,
            "loops": self.loops,
            "data": self.data.spec(),
            "random": self.random,
            "direct": self.direct,
            "engine": self.engine,
            "interval_s": self.interval_s,
            "seed": self.seed,
            "trace_ops": self.trace.as_ref().map(|t| t.len()),
            "trace_time_scale": self.trace_time_scale,
            "cpus_allowed": self.cpus_allowed.as_deref().map(cpus_spec),
            "cpus_allowed_policy": self.cpus_allowed_policy,
        })
    }

    /// The CPUs job `j` may run on (`cpus_allowed` under `cpus_allowed_policy`); `None`: no
    /// restriction.
    pub fn cpus_of_job(&self, j: usize) -> Option<Vec<u32>> {
        let cpus = self.cpus_allowed.as_ref()?;
        Some(match self.cpus_allowed_policy {
            CpusPolicy::Shared => cpus.clone(),
            CpusPolicy::Split => vec![cpus[j % cpus.len()]],
        })
    }
}

/// The value of `names` that `matched` (`v` as the field compares it) names; else an
/// [`Error::InvalidValue`] saying `k=v` is not `what` and listing the names in order.
fn parse_choice<T: Copy>(
    k: &str,
    v: &str,
    matched: &str,
    what: &str,
    names: &[(&str, T)],
) -> Result<T> {
    if let Some(&(_, t)) = names.iter().find(|(n, _)| *n == matched) {
        return Ok(t);
    }
    let list: Vec<&str> = names.iter().map(|(n, _)| *n).collect();
    let (last, rest) = list.split_last().expect("a field has names");
    Err(Error::InvalidValue(format!(
        "{k}={v:?} is not {what}; use {} or {last}",
        rest.join(", ")
    )))
}

/// Parses fio's CPU list, `0,5,8-15`, into ascending distinct CPU numbers.
fn parse_cpus(v: &str) -> Result<Vec<u32>> {
    let bad = |why: &str| {
        Error::InvalidValue(format!(
            "cpus_allowed={v:?} {why}; give CPU numbers and ranges such as 0,5,8-15"
        ))
    };
    let num = |t: &str| -> Result<u32> {
        let n: u32 = t
            .trim()
            .parse()
            .map_err(|_| bad(&format!("has {:?}, which is not a CPU number", t.trim())))?;
        if n > CPU_MAX {
            return Err(bad(&format!("names CPU {n}, past the highest, {CPU_MAX}")));
        }
        Ok(n)
    };
    let mut out = Vec::new();
    for part in v.split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(bad(&format!("has the range {a}-{b}, which runs backwards")));
                }
                out.extend(a..=b);
            }
            None => out.push(num(part)?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The shortest list of CPU numbers and ranges naming `cpus` (ascending): `[0, 1, 2, 5]` →
/// `0-2,5`.
pub fn cpus_spec(cpus: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

fn parse_data(v: &str) -> Result<DataPattern> {
    let v = v.trim();
    if v == "random" {
        return Ok(DataPattern::Random);
    }
    if v == "zeros" {
        return Ok(DataPattern::Zeros);
    }
    if let Some(p) = v.strip_prefix("compress:") {
        let n: u8 = p
            .trim_end_matches('%')
            .parse()
            .ok()
            .filter(|n| *n <= 100)
            .ok_or_else(|| {
                Error::InvalidValue(format!(
                    "data={v:?} has a bad percentage; use compress:N with N from 0 to 100"
                ))
            })?;
        return Ok(DataPattern::Compress(n));
    }
    if let Some(h) = v.strip_prefix("pattern:") {
        let h = h.trim_start_matches("0x");
        let ok = !h.is_empty() && h.len() % 2 == 0 && h.chars().all(|c| c.is_ascii_hexdigit());
        if !ok {
            return Err(Error::InvalidValue(format!(
                "data={v:?} is not a hex pattern; use pattern:HEX with an even number of hex digits, e.g. pattern:deadbeef"
            )));
        }
        let bytes = (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).expect("checked: hex digits"))
            .collect();
        return Ok(DataPattern::Pattern(bytes));
    }
    Err(Error::InvalidValue(format!(
        "data={v:?} is not a data pattern; use random, zeros, compress:N or pattern:HEX"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fio_vocabulary() {
        let w = Workload::from_pairs([
            ("rw", "randrw"),
            ("rwmix_read", "70"),
            ("bs", "4k"),
            ("iodepth", "32"),
            ("size", "8g"),
            ("time", "60s"),
            ("data", "compress:50"),
            ("random", "uniform"),
        ])
        .unwrap();
        assert_eq!(w.rw, Rw::RandRw);
        assert_eq!(w.rwmix_read, 70);
        assert_eq!(w.bs, 4096);
        assert_eq!(w.iodepth, 32);
        assert_eq!(w.size, Some(8 << 30));
        assert_eq!(w.time_s, Some(60.0));
        assert_eq!(w.data, DataPattern::Compress(50));
        assert_eq!(w.random, RandomDist::Uniform);
        assert_eq!(w.loops_limit(), None);
    }

    #[test]
    fn cpus_allowed_reads_fios_lists() {
        // fio's HOWTO example, `cpus_allowed=0,5,8-15`, with a repeat and out of order
        let w = Workload::from_pairs([("cpus_allowed", " 8-15,0,5 ,9"), ("jobs", "3")]).unwrap();
        let want: Vec<u32> = [0, 5].into_iter().chain(8..=15).collect();
        assert_eq!(w.cpus_allowed.as_deref(), Some(&want[..]));
        assert_eq!(w.to_json()["cpus_allowed"], "0,5,8-15");
        assert_eq!(w.to_json()["cpus_allowed_policy"], "shared");
        assert_eq!(w.cpus_of_job(2), Some(want.clone()));
        let s = Workload::from_pairs([("cpus_allowed", "3,1"), ("cpus_allowed_policy", "split")])
            .unwrap();
        assert_eq!(
            (s.cpus_of_job(0), s.cpus_of_job(1)),
            (Some(vec![1]), Some(vec![3]))
        );
        assert_eq!(
            s.cpus_of_job(2),
            Some(vec![1]),
            "jobs past the list wrap, as fio's"
        );
        assert_eq!(Workload::default().cpus_of_job(0), None);
        assert_eq!(
            Workload::default().to_json()["cpus_allowed"],
            serde_json::Value::Null
        );
        assert_eq!(cpus_spec(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert_eq!(cpus_spec(&[CPU_MAX]), "1023");
    }

    #[test]
    fn cpus_allowed_refuses_what_names_no_cpu() {
        for (v, want) in [
            ("", "\"\", which is not a CPU number"),
            ("0,,1", "not a CPU number"),
            ("a", "\"a\", which is not a CPU number"),
            ("-1", "not a CPU number"),
            ("3-1", "the range 3-1, which runs backwards"),
            ("1024", "names CPU 1024, past the highest, 1023"),
            ("0-1024", "past the highest"),
        ] {
            let e = Workload::from_pairs([("cpus_allowed", v)])
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(want) && e.contains("such as 0,5,8-15"),
                "{v:?}: {e}"
            );
        }
        let e = Workload::from_pairs([("cpus_allowed_policy", "one")]).unwrap_err();
        assert!(e.to_string().contains("use shared or split"), "{e}");
    }

    #[test]
    fn no_limit_means_one_pass() {
        let w = Workload::from_pairs([("rw", "write")]).unwrap();
        assert_eq!(w.loops_limit(), Some(1));
    }

    #[test]
    fn rejects_bad_fields_with_one_sentence() {
        let cases = [
            ("rw", "scribble", "rw="),
            ("bs", "0", "bs=0"),
            ("bs", "1000", "multiple of 512"),
            ("iodepth", "0", "iodepth=0"),
            ("data", "compress:150", "compress:N"),
            ("data", "pattern:abc", "hex pattern"),
            ("nosuch", "1", "not a workload field"),
        ];
        for (k, v, needle) in cases {
            let e = Workload::from_pairs([(k, v)]).unwrap_err().to_string();
            assert!(e.contains(needle), "{k}={v}: {e}");
            assert!(!e.contains('\n'));
        }
    }

    /// Issue 23 item 15: bs × jobs past 2^64 was an overflow (a panic in debug builds, a
    /// wrapped product that passed the check in release); it is a parameter error now.
    #[test]
    fn block_size_times_jobs_past_2_pow_64_is_a_parameter_error() {
        let e = Workload::from_pairs([
            ("bs", "18446744073709547520"),
            ("jobs", "2"),
            ("size", "4k"),
        ])
        .unwrap_err();
        assert!(matches!(e, Error::InvalidValue(_)), "{e}");
        assert!(e.to_string().contains("more than 2^64"), "{e}");
    }

    #[test]
    fn pattern_bytes() {
        let w = Workload::from_pairs([("data", "pattern:deadBEEF")]).unwrap();
        assert_eq!(w.data, DataPattern::Pattern(vec![0xde, 0xad, 0xbe, 0xef]));
    }
}
