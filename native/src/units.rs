//! fio-style size and duration strings.
//!
//! Sizes are binary, as in fio: `4k` = 4096, `1m` = 1 MiB, `1.8t` = 1.8 TiB; a plain
//! integer is bytes. Durations: `30s`, `5m`, `2h`, `250ms`, `10us`; a plain number is seconds.

use crate::error::{Error, Result};

const SIZE_SUFFIXES: [(&str, u64); 6] = [
    ("", 1),
    ("k", 1 << 10),
    ("m", 1 << 20),
    ("g", 1 << 30),
    ("t", 1 << 40),
    ("p", 1 << 50),
];

/// Parses a size such as `4k`, `1m`, `10g`, `1.8t`, `512`, `4KiB`, `64kb` into bytes.
///
/// Errors with [`Error::InvalidValue`] naming `field` when the string is not a size.
pub fn parse_size(field: &str, text: &str) -> Result<u64> {
    let s = text.trim().to_ascii_lowercase();
    let bad = || {
        Error::InvalidValue(format!(
            "{field}={text:?} is not a size; use bytes or a number with k/m/g/t/p (binary, as fio), e.g. 4k, 1m, 1.8t"
        ))
    };
    if s.is_empty() {
        return Err(bad());
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let unit = unit.trim();
    let unit = unit
        .strip_suffix("ib")
        .or_else(|| unit.strip_suffix('b'))
        .unwrap_or(unit);
    let mult = SIZE_SUFFIXES
        .iter()
        .find(|(u, _)| *u == unit)
        .map(|(_, m)| *m)
        .ok_or_else(bad)?;
    if num.is_empty() {
        return Err(bad());
    }
    if let Ok(n) = num.parse::<u64>() {
        return n.checked_mul(mult).ok_or_else(bad);
    }
    let x: f64 = num.parse().map_err(|_| bad())?;
    let bytes = x * mult as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(bad());
    }
    Ok(bytes.round() as u64)
}

/// Parses a duration such as `30s`, `5m`, `2h`, `250ms`, `1.5` into seconds.
pub fn parse_duration(field: &str, text: &str) -> Result<f64> {
    let s = text.trim().to_ascii_lowercase();
    let bad = || {
        Error::InvalidValue(format!(
            "{field}={text:?} is not a duration; use a number with us/ms/s/m/h/d, e.g. 30s, 5m, 2h"
        ))
    };
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let mult = match unit.trim() {
        "" | "s" | "sec" => 1.0,
        "us" => 1e-6,
        "ms" => 1e-3,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86400.0,
        _ => return Err(bad()),
    };
    let x: f64 = num.parse().map_err(|_| bad())?;
    let secs = x * mult;
    if !secs.is_finite() || secs < 0.0 {
        return Err(bad());
    }
    Ok(secs)
}

/// Parses a scale: the fraction of a drive's capacity a run uses, in (0, 1].
///
/// This is the one meaning of "scale" in flashback (simulator specs, replays, the CLI):
/// `1/64`, `0.015625` and `1.5625e-2` all mean a 64th. A number above 1 is refused rather
/// than read as a divisor: `16` is an error ("write 1/16"), never a sixteenth nor 16 times.
///
/// Errors with [`Error::InvalidValue`] naming `field` when the text is not such a fraction.
pub fn parse_scale(field: &str, text: &str) -> Result<f64> {
    let s = text.trim();
    let bad = || {
        Error::InvalidValue(format!(
            "{field}={text:?} is not a scale; use a fraction in (0, 1] such as 1/16 or 0.25"
        ))
    };
    let v = if let Some((a, b)) = s.split_once('/') {
        let a: f64 = a.trim().parse().map_err(|_| bad())?;
        let b: f64 = b.trim().parse().map_err(|_| bad())?;
        a / b
    } else {
        s.parse().map_err(|_| bad())?
    };
    if v.is_finite() && v > 1.0 {
        let hint = if v.fract() == 0.0 {
            format!("write 1/{v}")
        } else {
            "use a fraction such as 1/16 or 0.25".to_string()
        };
        return Err(Error::InvalidValue(format!(
            "{field}={text:?} is above 1; a scale is a fraction of the capacity, at most 1: {hint}"
        )));
    }
    if !v.is_finite() || v <= 0.0 {
        return Err(bad());
    }
    Ok(v)
}

/// A reporting interval's length in whole nanoseconds: `interval_s` rounded to the nearest
/// nanosecond, at least 1 (so a zero or sub-nanosecond interval cannot stall the loop that
/// closes intervals). The one rule shared by the recorder, the engine's reporters and the
/// simulator's time limit, so their interval boundaries fall on the same nanosecond.
pub fn interval_ns(interval_s: f64) -> u64 {
    (interval_s * 1e9).round().max(1.0) as u64
}

/// A run's time limit (`time=`) in ns, at least 1: the one rule for the engine's deadline and
/// the simulator's. A limit that is a whole number of reporting intervals up to float rounding (e.g. 180 s × a scale, with interval 1 s × the same scale) ends exactly on
/// the last boundary; otherwise the commands still in flight at the limit would land in a
/// last row a few nanoseconds long, with an absurd rate.
pub fn time_limit_ns(time_s: f64, interval_s: f64) -> u64 {
    let dur = ((time_s * 1e9).round() as u64).max(1);
    let iv = interval_ns(interval_s);
    let k = (dur + iv / 2) / iv;
    if k > 0 && dur.abs_diff(k * iv) <= iv / 1000 {
        k * iv
    } else {
        dur
    }
}

/// Parses a whole number in `lo..=hi`.
///
/// Errors with [`Error::InvalidValue`] naming `field` when it is not one or out of range.
pub fn parse_int(field: &str, text: &str, lo: u64, hi: u64) -> Result<u64> {
    let t = text.trim();
    let n: u64 = t.parse().map_err(|_| {
        Error::InvalidValue(format!(
            "{field}={text:?} is not a whole number; use {lo} to {hi}"
        ))
    })?;
    if n < lo || n > hi {
        return Err(Error::InvalidValue(format!(
            "{field}={t} is out of range; use {lo} to {hi}"
        )));
    }
    Ok(n)
}

/// Parses a finite number in `lo..=hi` (`lo_open`: strictly above `lo`).
///
/// Errors with [`Error::InvalidValue`] naming `field` when it is not one or out of range.
pub fn parse_number(field: &str, text: &str, lo: f64, hi: f64, lo_open: bool) -> Result<f64> {
    let t = text.trim();
    let x: f64 = t.parse().map_err(|_| {
        Error::InvalidValue(format!(
            "{field}={text:?} is not a number; use {lo} to {hi}"
        ))
    })?;
    let ok_lo = if lo_open { x > lo } else { x >= lo };
    if !(ok_lo && x <= hi && x.is_finite()) {
        let from = if lo_open {
            format!("more than {lo}")
        } else {
            format!("{lo}")
        };
        return Err(Error::InvalidValue(format!(
            "{field}={t} is out of range; use {from} to {hi}"
        )));
    }
    Ok(x)
}

/// Parses a switch: `on`/`true`/`yes`/`1` or `off`/`false`/`no`/`0` (any case).
///
/// Errors with [`Error::InvalidValue`] naming `field` otherwise.
pub fn parse_switch(field: &str, text: &str) -> Result<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(Error::InvalidValue(format!(
            "{field}={text:?} is not a switch; use on or off (true or false)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_binary_like_fio() {
        assert_eq!(parse_size("bs", "4k").unwrap(), 4096);
        assert_eq!(parse_size("bs", "4K").unwrap(), 4096);
        assert_eq!(parse_size("bs", "4KiB").unwrap(), 4096);
        assert_eq!(parse_size("bs", "1m").unwrap(), 1 << 20);
        assert_eq!(parse_size("size", "10g").unwrap(), 10 << 30);
        assert_eq!(parse_size("size", "512").unwrap(), 512);
        assert_eq!(
            parse_size("size", "1.8t").unwrap(),
            (1.8 * (1u64 << 40) as f64).round() as u64
        );
    }

    #[test]
    fn bad_sizes_name_the_field() {
        for s in ["", "k", "4x", "-4k", "4kk", "1.2.3m"] {
            let e = parse_size("bs", s).unwrap_err().to_string();
            assert!(e.contains("bs="), "{e}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("time", "30s").unwrap(), 30.0);
        assert_eq!(parse_duration("time", "5m").unwrap(), 300.0);
        assert_eq!(parse_duration("time", "2h").unwrap(), 7200.0);
        assert_eq!(parse_duration("time", "250ms").unwrap(), 0.25);
        assert_eq!(parse_duration("time", "1.5").unwrap(), 1.5);
        assert!(parse_duration("time", "5 parsecs").is_err());
    }

    #[test]
    fn interval_lengths() {
        assert_eq!(interval_ns(1.0), 1_000_000_000);
        assert_eq!(interval_ns(0.1), 100_000_000);
        // 0.001 × 9 is 0.009000000000000001 s, 9000000.000000002 ns: a whole nanosecond count
        assert_eq!(interval_ns(0.001 * 9.0), 9_000_000);
        assert_eq!(interval_ns(1.0000000005), 1_000_000_001); // half a ns rounds away from zero
        assert_eq!(interval_ns(0.0), 1); // a zero-length interval is one nanosecond
        assert_eq!(interval_ns(1e-12), 1);
    }

    #[test]
    fn time_limits() {
        // a scaled limit that is 180 scaled intervals up to float rounding ends on the boundary
        let scale = 1.0 / 3.0;
        let iv = interval_ns(scale);
        assert_eq!(time_limit_ns(180.0 * scale, scale), 180 * iv);
        // a limit between boundaries is kept as written
        assert_eq!(time_limit_ns(2.5, 1.0), 2_500_000_000);
        assert_eq!(time_limit_ns(2.0, 1.0), 2_000_000_000);
        // never zero (a zero deadline would end the run before its first I/O)
        assert_eq!(time_limit_ns(0.0, 1.0), 1);
        assert_eq!(time_limit_ns(1e-12, 1.0), 1);
    }

    #[test]
    fn numbers_and_switches() {
        assert_eq!(parse_int("n", " 7 ", 1, 10).unwrap(), 7);
        assert!(parse_int("n", "0", 1, 10)
            .unwrap_err()
            .to_string()
            .contains("n=0 is out of range"));
        assert!(parse_int("n", "2.5", 1, 10)
            .unwrap_err()
            .to_string()
            .contains("whole number"));
        assert_eq!(parse_number("x", "0.5", 0.0, 1.0, true).unwrap(), 0.5);
        assert!(parse_number("x", "0", 0.0, 1.0, true).is_err());
        assert_eq!(parse_number("x", "0", 0.0, 1.0, false).unwrap(), 0.0);
        assert!(parse_number("x", "NaN", 0.0, 1.0, false).is_err());
        assert!(parse_switch("s", "ON").unwrap());
        assert!(!parse_switch("s", "false").unwrap());
        assert!(parse_switch("s", "maybe")
            .unwrap_err()
            .to_string()
            .contains("s=\"maybe\""));
    }

    #[test]
    fn scales() {
        assert_eq!(parse_scale("scale", "1/16").unwrap(), 1.0 / 16.0);
        assert_eq!(parse_scale("scale", "0.015625").unwrap(), 1.0 / 64.0);
        assert_eq!(parse_scale("scale", "1.5625e-2").unwrap(), 1.0 / 64.0);
        assert_eq!(parse_scale("scale", "0.25").unwrap(), 0.25);
        assert_eq!(parse_scale("scale", "1").unwrap(), 1.0);
        let e = parse_scale("scale", "16").unwrap_err().to_string();
        assert!(e.contains("write 1/16"), "{e}");
        for bad in ["", "abc", "-1/4", "1/0", "0/4", "NaN", "inf", "1.5"] {
            assert!(parse_scale("scale", bad).is_err(), "{bad}");
        }
        assert!(parse_scale("scale", "0").is_err());
        assert!(parse_scale("scale", "2/1").is_err());
    }
}
