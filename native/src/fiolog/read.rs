//! The plain per-I/O log reader: `time_ms, value, ddir, bs[, …]`, every field an unsigned
//! decimal integer after optional spaces, fields separated by `,`, lines ended by `\n` (the last
//! one may lack it), every line as wide as the first. That is what fio writes (`"%lu, %llu, %u,
//! %llu, %u\n"`), and polars' CSV reader (the importer's general path) reads each such line to
//! the same integers. Anything else (CR, tabs, signs, quotes, hex, blank or ragged lines, values
//! past `i64::MAX`) is left to the general path, which reads or refuses it with the message it
//! always gave: the reader answers `None` rather than an error.

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// Times and values are handed over as `f64`; below 2⁵³ every integer is exact there.
pub const EXACT_F64: u64 = 1 << 53;
/// Bytes read per `read(2)`; a line longer than this is left to the general path.
const BLOCK: usize = 1 << 20;

/// A field after time and value: one value on every line (a one-direction job's `ddir`, a fixed
/// `bs`, an unused priority), or one per line.
#[derive(Debug, Clone, PartialEq)]
pub enum Field {
    Constant(i64),
    Values(Vec<i64>),
}

/// A plain log's fields, column by column.
#[derive(Debug)]
pub struct LogColumns {
    pub rows: usize,
    /// Field 1, the sample's time (ms).
    pub t_ms: Vec<f64>,
    /// Field 2, the sample's value (latency, bandwidth or 1 for iops).
    pub value: Vec<f64>,
    /// Fields 3 onwards.
    pub rest: Vec<Field>,
    /// Each field's smallest and largest value.
    pub lows: Vec<i64>,
    pub highs: Vec<i64>,
    /// Whether the times never step back.
    pub t_sorted: bool,
}

/// A field after time and value, kept as one value until a line differs.
struct Lazy {
    first: i64,
    values: Option<Vec<i64>>,
}

impl Lazy {
    #[inline]
    fn push(&mut self, row: usize, v: i64, capacity: usize) {
        match &mut self.values {
            Some(vs) => vs.push(v),
            None if row == 0 => self.first = v,
            None if v != self.first => {
                let mut vs = Vec::with_capacity(capacity);
                vs.resize(row, self.first);
                vs.push(v);
                self.values = Some(vs);
            }
            None => {}
        }
    }
}

/// Reads a plain per-I/O log (see the module doc); `None` when the file is not one, cannot be
/// read, is empty, has fewer than 3 fields, holds a time or value of 2⁵³ or more, or has a time
/// stepping back by more than `time_back_ms` (the general path names the line).
pub fn read_plain(path: &Path, time_back_ms: i64) -> Option<LogColumns> {
    let mut file = File::open(path).ok()?;
    let size = file.metadata().ok()?.len() as usize;
    let mut buf = vec![0u8; BLOCK];
    let (mut end, mut eof) = fill(&mut file, &mut buf, 0)?;
    let first_len = buf[..end].iter().position(|&b| b == b'\n').unwrap_or(end);
    let width = buf[..first_len].iter().filter(|&&b| b == b',').count() + 1;
    if first_len == 0 || width < 3 {
        return None;
    }
    // every line takes at least two bytes a field: enough room without reallocating, and the
    // pages past the rows read are never touched
    let capacity = size / (2 * width) + 1;
    let mut p = Parser {
        width,
        time_back_ms,
        capacity,
        row: 0,
        fields: vec![0; width],
        t_ms: Vec::with_capacity(capacity),
        value: Vec::with_capacity(capacity),
        rest: (2..width)
            .map(|_| Lazy {
                first: 0,
                values: None,
            })
            .collect(),
        prev_t: 0,
        t_sorted: true,
    };
    loop {
        let limit = if eof {
            end
        } else {
            buf[..end].iter().rposition(|&b| b == b'\n')? + 1
        };
        p.lines(&buf[..limit], eof)?;
        if eof {
            break;
        }
        buf.copy_within(limit..end, 0);
        (end, eof) = fill(&mut file, &mut buf, end - limit)?;
    }
    if p.row == 0 {
        return None;
    }
    let rows = p.row;
    p.t_ms.shrink_to_fit();
    p.value.shrink_to_fit();
    let rest: Vec<Field> = p
        .rest
        .into_iter()
        .map(|l| match l.values {
            Some(mut vs) => {
                vs.shrink_to_fit();
                Field::Values(vs)
            }
            None => Field::Constant(l.first),
        })
        .collect();
    // each field's range, taken from its column once it is read (a pass the compiler
    // vectorises, where a running minimum and maximum per line cost a third of the parse);
    // every time and value is an integer below 2⁵³ (`row_done`): exact as f64 both ways
    let mut ranges: Vec<(i64, i64)> = [&p.t_ms, &p.value]
        .into_iter()
        .map(|col| {
            let (lo, hi) = range_of(col, f64::MAX, f64::MIN);
            (lo as i64, hi as i64)
        })
        .collect();
    ranges.extend(rest.iter().map(|f| match f {
        Field::Constant(v) => (*v, *v),
        Field::Values(vs) => range_of(vs, i64::MAX, i64::MIN),
    }));
    let (lows, highs) = ranges.into_iter().unzip();
    Some(LogColumns {
        rows,
        t_ms: p.t_ms,
        value: p.value,
        rest,
        lows,
        highs,
        t_sorted: p.t_sorted,
    })
}

/// The smallest and largest of `xs`, starting from (`lo`, `hi`).
fn range_of<T: Copy + PartialOrd>(xs: &[T], lo: T, hi: T) -> (T, T) {
    xs.iter().fold((lo, hi), |(lo, hi), &x| {
        (if x < lo { x } else { lo }, if x > hi { x } else { hi })
    })
}

/// Reads into `buf[have..]` until it is full or the file ends: (bytes held, at the end).
fn fill(file: &mut File, buf: &mut [u8], mut have: usize) -> Option<(usize, bool)> {
    while have < buf.len() {
        match file.read(&mut buf[have..]) {
            Ok(0) => return Some((have, true)),
            Ok(n) => have += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some((have, false))
}

struct Parser {
    width: usize,
    time_back_ms: i64,
    capacity: usize,
    row: usize,
    fields: Vec<i64>,
    t_ms: Vec<f64>,
    value: Vec<f64>,
    rest: Vec<Lazy>,
    prev_t: i64,
    t_sorted: bool,
}

impl Parser {
    /// Parses whole lines (`eof`: the last one may lack its `\n`); `None` at the first byte
    /// outside the plain layout.
    fn lines(&mut self, s: &[u8], eof: bool) -> Option<()> {
        let cut = memchr::memrchr(b'\n', s).map_or(0, |n| n + 1);
        let (whole, tail) = s.split_at(cut);
        self.whole_lines(whole)?;
        if tail.is_empty() {
            return Some(());
        }
        if !eof {
            return None;
        }
        // the file's last line, without its `\n`: read as if it had one
        let mut last = tail.to_vec();
        last.push(b'\n');
        self.whole_lines(&last)
    }

    /// Parses `s`, empty or lines each ended by `\n`: `width` fields a line, each an unsigned
    /// decimal after optional spaces, separated by `,`.
    fn whole_lines(&mut self, s: &[u8]) -> Option<()> {
        let n = s.len();
        assert!(
            s.last().is_none_or(|&b| b == b'\n'),
            "whole lines end with a newline"
        );
        // SAFETY: every call reads below `n`. `s[n - 1]` is `\n`, and each scan below moves past
        // spaces, digits and a `,` only, none of which is `\n`, so it stops at or before `n - 1`;
        // a line starts only at an `i < n` (the loop's test) after the `\n` ending the last.
        let at = |i: usize| unsafe { *s.get_unchecked(i) };
        let mut i = 0;
        while i < n {
            let last = self.width - 1;
            for (k, field) in self.fields.iter_mut().enumerate() {
                while at(i) == b' ' {
                    i += 1;
                }
                let start = i;
                let mut acc: u64 = 0;
                loop {
                    let d = at(i).wrapping_sub(b'0');
                    if d > 9 {
                        break;
                    }
                    acc = acc.wrapping_mul(10).wrapping_add(d as u64);
                    i += 1;
                }
                // 19 digits cannot wrap a u64; i64::MAX has 19
                if i == start || i - start > 19 || acc > i64::MAX as u64 {
                    return None;
                }
                *field = acc as i64;
                if at(i) != if k < last { b',' } else { b'\n' } {
                    return None;
                }
                i += 1;
            }
            self.row_done()?;
        }
        Some(())
    }

    #[inline]
    fn row_done(&mut self) -> Option<()> {
        let (t, v) = (self.fields[0], self.fields[1]);
        if t as u64 >= EXACT_F64 || v as u64 >= EXACT_F64 {
            return None;
        }
        if self.row > 0 && t < self.prev_t {
            if t < self.prev_t - self.time_back_ms {
                return None;
            }
            self.t_sorted = false;
        }
        self.prev_t = t;
        self.t_ms.push(t as f64);
        self.value.push(v as f64);
        for (lazy, &x) in self.rest.iter_mut().zip(&self.fields[2..]) {
            lazy.push(self.row, x, self.capacity);
        }
        self.row += 1;
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn read(text: &[u8]) -> Option<LogColumns> {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(text).unwrap();
        read_plain(f.path(), 100)
    }

    #[test]
    fn reads_fios_layout_with_constant_fields_kept_once() {
        let c = read(b"0, 10309, 1, 4096, 0\n3, 78, 1, 8192, 0\n5, 35, 1, 4096, 0\n").unwrap();
        assert_eq!(c.rows, 3);
        assert_eq!(c.t_ms, vec![0.0, 3.0, 5.0]);
        assert_eq!(c.value, vec![10309.0, 78.0, 35.0]);
        assert_eq!(c.rest[0], Field::Constant(1));
        assert_eq!(c.rest[1], Field::Values(vec![4096, 8192, 4096]));
        assert_eq!(c.rest[2], Field::Constant(0));
        assert_eq!(c.lows, vec![0, 35, 1, 4096, 0]);
        assert_eq!(c.highs, vec![5, 10309, 1, 8192, 0]);
        assert!(c.t_sorted);
    }

    #[test]
    fn a_field_differing_late_is_filled_back() {
        let c = read(b"1, 1, 0, 4096\n2, 1, 0, 4096\n3, 1, 1, 4096").unwrap();
        assert_eq!(c.rest[0], Field::Values(vec![0, 0, 1]));
        assert_eq!(c.rows, 3); // the last line without its newline
    }

    #[test]
    fn lines_across_blocks_are_read_whole() {
        let mut text = Vec::new();
        for k in 0..200_000u64 {
            writeln!(text, "{}, {}, {}, 4096, 0", k / 100, k * 7 % 1000, k % 2).unwrap();
        }
        let c = read(&text).unwrap();
        assert!(text.len() > 3 * BLOCK);
        assert_eq!(c.rows, 200_000);
        assert_eq!(c.value[199_999], (199_999u64 * 7 % 1000) as f64);
        let Field::Values(d) = &c.rest[0] else {
            panic!("ddir varies")
        };
        assert_eq!(d.iter().sum::<i64>(), 100_000);
    }

    #[test]
    fn times_stepping_back_a_little_are_read_unsorted() {
        let c = read(b"200, 1, 0, 1\n150, 1, 0, 1\n300, 1, 0, 1\n").unwrap();
        assert!(!c.t_sorted);
        assert!(read(b"200, 1, 0, 1\n99, 1, 0, 1\n").is_none());
    }

    #[test]
    fn anything_outside_the_plain_layout_is_left_to_the_general_reader() {
        for bad in [
            &b""[..],
            b"\n1, 2, 3\n",
            b"1, 2\n",
            b"1, 2, 3\r\n",
            b"1, 2, 3\n\n",
            b"1, 2, 3\n4, 5\n",
            b"1, 2, 3\n4, 5, 6, 7\n",
            b"1, -2, 3\n",
            b"1, +2, 3\n",
            b"1,\t2, 3\n",
            b"1, 2 , 3\n",
            b"1, \"2\", 3\n",
            b"1, 2, 0x3\n",
            b"1, 2, 9223372036854775808\n",
            b"1, 9007199254740992, 3\n",
            b"9007199254740992, 1, 3\n",
            b"1, 2, 3,\n",
        ] {
            assert!(read(bad).is_none(), "{:?}", String::from_utf8_lossy(bad));
        }
        let c = read(b"  1,2,   9223372036854775807\n").unwrap();
        assert_eq!(c.rest[0], Field::Constant(i64::MAX));
        assert!(read_plain(Path::new("/nonexistent/x_clat.1.log"), 100).is_none());
    }
}
