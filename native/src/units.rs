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

/// Parses a capacity divisor such as `1/16`, `16` or `0.0625` into a factor in (0, 1].
pub fn parse_scale(field: &str, text: &str) -> Result<f64> {
    let s = text.trim();
    let bad = || {
        Error::InvalidValue(format!(
            "{field}={text:?} is not a scale; use a fraction in (0, 1] such as 1/16 or 0.25, or a divisor such as 16"
        ))
    };
    let v = if let Some((a, b)) = s.split_once('/') {
        let a: f64 = a.trim().parse().map_err(|_| bad())?;
        let b: f64 = b.trim().parse().map_err(|_| bad())?;
        a / b
    } else {
        let v: f64 = s.parse().map_err(|_| bad())?;
        if v > 1.0 {
            1.0 / v
        } else {
            v
        }
    };
    if !v.is_finite() || v <= 0.0 || v > 1.0 {
        return Err(bad());
    }
    Ok(v)
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
    fn scales() {
        assert_eq!(parse_scale("scale", "1/16").unwrap(), 1.0 / 16.0);
        assert_eq!(parse_scale("scale", "16").unwrap(), 1.0 / 16.0);
        assert_eq!(parse_scale("scale", "0.25").unwrap(), 0.25);
        assert!(parse_scale("scale", "0").is_err());
        assert!(parse_scale("scale", "2/1").is_err());
    }
}
