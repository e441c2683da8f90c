//! Block traces: fio iolog v2/v3 and blkparse's default text output, parsed into a list of
//! operations with their recorded issue times, then replayed through the ordinary op stream.

use crate::error::{Error, Result};
use crate::workload::OpKind;
use std::path::Path;

/// One traced operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceOp {
    /// Recorded issue time, ns since the first operation of the trace.
    pub t_ns: u64,
    pub kind: OpKind,
    pub offset: u64,
    pub len: u64,
}

/// Trace file formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    FioIologV2,
    FioIologV3,
    Blkparse,
}

/// A parsed trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    pub format: TraceFormat,
    pub ops: Vec<TraceOp>,
    /// Highest byte touched + 1 (the span the trace needs).
    pub span_bytes: u64,
}

/// How trace offsets are mapped onto the target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Remap {
    /// Multiply offsets (and lengths) by this factor, aligned down to `align`.
    pub offset_scale: f64,
    /// Then add this many bytes.
    pub offset_shift: u64,
    /// Alignment of remapped offsets and lengths (direct I/O needs 512 or 4096).
    pub align: u64,
}

impl Default for Remap {
    fn default() -> Self {
        Remap {
            offset_scale: 1.0,
            offset_shift: 0,
            align: 512,
        }
    }
}

fn perr(path: &str, line: usize, what: &str) -> Error {
    Error::Parse(format!(
        "{path}, line {line}: {what}; fix or remove that line (fio iolog v2/v3 or blkparse text expected)"
    ))
}

/// Parses field `text` of line `n`, or says which field was not `what`.
fn num<T: std::str::FromStr>(text: &str, name: &str, n: usize, what: &str) -> Result<T> {
    text.parse().map_err(|_| perr(name, n, what))
}

/// Reads and parses a trace file, detecting its format from its first line.
pub fn read_trace(path: &Path) -> Result<Trace> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::io(format!("could not read trace {}", path.display()), e))?;
    parse_trace(&path.display().to_string(), &text)
}

/// Parses trace text; `name` is used in error messages.
pub fn parse_trace(name: &str, text: &str) -> Result<Trace> {
    let first = text.lines().next().unwrap_or("").trim();
    let format = match first {
        "fio version 2 iolog" => TraceFormat::FioIologV2,
        "fio version 3 iolog" => TraceFormat::FioIologV3,
        _ => TraceFormat::Blkparse,
    };
    let mut ops = Vec::new();
    let mut t0: Option<u64> = None;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim();
        if line.is_empty() || (line_no == 1 && format != TraceFormat::Blkparse) {
            continue;
        }
        let op = match format {
            TraceFormat::FioIologV2 | TraceFormat::FioIologV3 => {
                parse_iolog_line(name, line_no, line, format)?
            }
            TraceFormat::Blkparse => parse_blkparse_line(name, line_no, line)?,
        };
        if let Some(mut op) = op {
            let base = *t0.get_or_insert(op.t_ns);
            op.t_ns = op.t_ns.saturating_sub(base);
            ops.push(op);
        }
    }
    if ops.is_empty() {
        return Err(Error::Parse(format!(
            "{name} holds no read, write or trim operations; give a fio iolog (v2/v3) or blkparse text output"
        )));
    }
    // v2 has no times: keep order, issue as fast as possible.
    // every op's end was checked at its line
    let span_bytes = ops.iter().map(|o| o.offset + o.len).max().unwrap_or(0);
    Ok(Trace {
        format,
        ops,
        span_bytes,
    })
}

fn parse_iolog_line(
    name: &str,
    n: usize,
    line: &str,
    format: TraceFormat,
) -> Result<Option<TraceOp>> {
    let f: Vec<&str> = line.split_whitespace().collect();
    let (t_ns, rest) = match format {
        TraceFormat::FioIologV3 => {
            let ms: u64 = f.first().and_then(|x| x.parse().ok()).ok_or_else(|| {
                perr(
                    name,
                    n,
                    "the first field is not a timestamp in milliseconds",
                )
            })?;
            let t_ns = ms
                .checked_mul(1_000_000)
                .ok_or_else(|| perr(name, n, "the timestamp is too large (past 2^64 ns)"))?;
            (t_ns, &f[1..])
        }
        _ => (0, &f[..]),
    };
    // rest: filename action [offset length]
    if rest.len() < 2 {
        return Err(perr(name, n, "expected `filename action [offset length]`"));
    }
    let kind = match rest[1] {
        "read" => OpKind::Read,
        "write" => OpKind::Write,
        "trim" => OpKind::Trim,
        "add" | "open" | "close" | "sync" | "datasync" | "wait" => return Ok(None),
        other => return Err(perr(name, n, &format!("unknown action {other:?}"))),
    };
    if rest.len() < 4 {
        return Err(perr(
            name,
            n,
            "a read/write/trim needs an offset and a length",
        ));
    }
    let offset: u64 = num(rest[2], name, n, "the offset is not a byte count")?;
    let len: u64 = num(rest[3], name, n, "the length is not a byte count")?;
    if len == 0 {
        return Err(perr(name, n, "the length is zero"));
    }
    end_of(name, n, offset, len)?;
    Ok(Some(TraceOp {
        t_ns,
        kind,
        offset,
        len,
    }))
}

/// blkparse default text: `maj,min cpu seq time pid action rwbs sector + blocks [process]`.
/// Only queue (`Q`) events are replayed; other events and summary lines are skipped.
fn parse_blkparse_line(name: &str, n: usize, line: &str) -> Result<Option<TraceOp>> {
    let f: Vec<&str> = line.split_whitespace().collect();
    let looks_like_event =
        f.len() >= 7 && f[0].contains(',') && f[0].split(',').all(|p| p.parse::<u32>().is_ok());
    if !looks_like_event {
        // blkparse ends with per-CPU summaries ("CPU0 (8,0):", "Total ...", "Reads Queued:" ...)
        let summary = f.is_empty()
            || f[0].starts_with("CPU")
            || f[0] == "Total"
            || f[0] == "Events"
            || line.contains("Queued:")
            || line.contains("Dispatches:")
            || line.contains("Completed:")
            || line.contains("Throughput")
            || line.contains("Merges:")
            || line.contains("Timer unplugs")
            || line.contains("Read depth")
            || line.contains("IO unplugs")
            || line.starts_with("Skips:")
            || line.contains("Reads Requeued")
            || line.contains("Writes Requeued");
        if summary {
            return Ok(None);
        }
        return Err(perr(
            name,
            n,
            "not a blkparse event line (`maj,min cpu seq time pid action rwbs sector + blocks`)",
        ));
    }
    if f[5] != "Q" {
        return Ok(None);
    }
    let rwbs = f[6];
    let kind = if rwbs.contains('D') {
        OpKind::Trim
    } else if rwbs.contains('W') {
        OpKind::Write
    } else if rwbs.contains('R') {
        OpKind::Read
    } else {
        return Ok(None); // flush-only / barrier events carry no data
    };
    if f.len() < 10 || f[8] != "+" {
        return Ok(None); // e.g. a zero-length flush "Q FWS [proc]"
    }
    let secs: f64 = num(f[3], name, n, "the time field is not seconds")?;
    if !(secs.is_finite() && secs >= 0.0 && secs * 1e9 < u64::MAX as f64) {
        return Err(perr(
            name,
            n,
            "the time field is not a non-negative number of seconds below 2^64 ns",
        ));
    }
    let sector: u64 = num(f[7], name, n, "the sector is not a number")?;
    let blocks: u64 = num(f[9], name, n, "the block count is not a number")?;
    if blocks == 0 {
        return Ok(None);
    }
    let too_far = || {
        perr(
            name,
            n,
            "the sector range lies past byte 2^64 (sector × 512 overflows)",
        )
    };
    let offset = sector.checked_mul(512).ok_or_else(too_far)?;
    let len = blocks.checked_mul(512).ok_or_else(too_far)?;
    end_of(name, n, offset, len)?;
    Ok(Some(TraceOp {
        t_ns: (secs * 1e9).round() as u64,
        kind,
        offset,
        len,
    }))
}

/// The end (`offset + len`) of the operation on line `n`, or the error naming the line when it
/// lies past byte 2^64 − 1.
fn end_of(name: &str, n: usize, offset: u64, len: u64) -> Result<u64> {
    offset.checked_add(len).ok_or_else(|| {
        perr(
            name,
            n,
            "the operation ends past byte 2^64 (offset + length overflows)",
        )
    })
}

impl Trace {
    /// Maps offsets onto a target of `target_bytes` with `remap`; ops that would end past the
    /// target are an error naming the first one.
    pub fn remapped(&self, remap: &Remap, target_bytes: u64) -> Result<Vec<TraceOp>> {
        if !(remap.offset_scale > 0.0 && remap.offset_scale.is_finite()) {
            return Err(Error::InvalidValue(format!(
                "offset_scale={} is not a positive factor; use e.g. 0.5 to fit a trace into half the span",
                remap.offset_scale
            )));
        }
        let a = remap.align.max(1);
        let mut out = Vec::with_capacity(self.ops.len());
        for (i, op) in self.ops.iter().enumerate() {
            // f64 → u64 casts saturate; every sum is checked, so no offset wraps onto byte 0
            let scaled = (op.offset as f64 * remap.offset_scale) as u64;
            let scaled_len = (op.len as f64 * remap.offset_scale) as u64;
            let end = (scaled / a * a)
                .checked_add(remap.offset_shift)
                .and_then(|off| {
                    let len = scaled_len.div_ceil(a).checked_mul(a)?.max(a);
                    Some((off, len, off.checked_add(len)?))
                });
            let Some((off, len, _)) = end.filter(|e| e.2 <= target_bytes) else {
                let at = end.map_or("past byte 2^64".to_string(), |e| format!("at byte {}", e.2));
                return Err(Error::InvalidValue(format!(
                    "trace operation {} ends {at} but the target has {target_bytes} bytes; use offset_scale= or a larger target",
                    i + 1
                )));
            };
            out.push(TraceOp {
                offset: off,
                len,
                ..*op
            });
        }
        Ok(out)
    }
}

/// A workload that replays the trace at `path` on a target of `target_bytes`: the trace read
/// and remapped, `rw` set from its operations (`randrw` when it writes or trims, else
/// `randread`), `bs` to its longest operation; the queue-depth, data and interval fields come
/// from `fields` (`size`/`offset`/`rw`/`bs` there are ignored). `time_scale=None` issues as
/// fast as the queue allows; otherwise each op waits for its recorded time × `time_scale`.
///
/// Errors: [`Error::InvalidValue`] for a bad `time_scale` or field, or a trace that does not
/// fit the target after remapping; [`Error::Parse`] for a malformed trace line.
pub fn trace_workload<'a>(
    path: &Path,
    fields: impl IntoIterator<Item = (&'a str, &'a str)>,
    remap: &Remap,
    time_scale: Option<f64>,
    target_bytes: u64,
) -> Result<crate::workload::Workload> {
    if let Some(k) = time_scale {
        if !(k > 0.0 && k.is_finite()) {
            return Err(Error::InvalidValue(format!(
                "time_scale={k} is not a positive factor; use 1.0 for recorded timing or None for as fast as possible"
            )));
        }
    }
    let ops = read_trace(path)?.remapped(remap, target_bytes)?;
    let writes = ops.iter().any(|o| o.kind != OpKind::Read);
    let max_len = ops.iter().map(|o| o.len).max().unwrap_or(remap.align);
    let rw = if writes { "randrw" } else { "randread" };
    let bs = max_len.to_string();
    let mut pairs: Vec<(&str, &str)> = fields
        .into_iter()
        .filter(|(k, _)| !matches!(*k, "rw" | "bs" | "size" | "offset"))
        .collect();
    pairs.extend([("rw", rw), ("bs", bs.as_str())]);
    let mut w = crate::workload::Workload::from_pairs(pairs)?;
    w.trace = Some(std::sync::Arc::new(ops));
    w.trace_time_scale = time_scale;
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iolog_file(body: &str) -> tempfile::NamedTempFile {
        use std::io::Write;
        let mut f = tempfile::NamedTempFile::new().unwrap();
        write!(
            f,
            "fio version 2 iolog\n/dev/x add\n/dev/x open\n{body}/dev/x close\n"
        )
        .unwrap();
        f
    }

    #[test]
    fn trace_workload_takes_rw_and_bs_from_the_trace() {
        let reads = iolog_file("/dev/x read 0 4096\n/dev/x read 8192 16384\n");
        let fields = [
            ("rw", "write"),
            ("bs", "1m"),
            ("size", "1g"),
            ("iodepth", "4"),
        ];
        let remap = Remap {
            align: 4096,
            ..Remap::default()
        };
        let w = trace_workload(reads.path(), fields, &remap, Some(2.0), 1 << 30).unwrap();
        assert_eq!(w.rw, crate::workload::Rw::RandRead);
        assert_eq!(w.bs, 16384);
        assert_eq!(w.iodepth, 4);
        assert_eq!(w.trace_time_scale, Some(2.0));
        assert_eq!(w.trace.as_ref().unwrap().len(), 2);
        let mixed = iolog_file("/dev/x read 0 4096\n/dev/x trim 0 4096\n");
        let w = trace_workload(mixed.path(), [], &remap, None, 1 << 30).unwrap();
        assert_eq!(w.rw, crate::workload::Rw::RandRw);
        assert_eq!(w.bs, 4096);
    }

    #[test]
    fn trace_workload_refuses_a_bad_time_scale_and_a_trace_too_big() {
        let f = iolog_file("/dev/x write 0 4096\n");
        let remap = Remap {
            align: 4096,
            ..Remap::default()
        };
        for k in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = trace_workload(f.path(), [], &remap, Some(k), 1 << 30).unwrap_err();
            assert!(e.to_string().contains("time_scale="), "{e}");
        }
        let big = iolog_file("/dev/x write 1073741824 4096\n");
        assert!(trace_workload(big.path(), [], &remap, None, 1 << 30).is_err());
    }

    #[test]
    fn iolog_v2() {
        let t = parse_trace(
            "x",
            "fio version 2 iolog\n/dev/x add\n/dev/x open\n/dev/x write 4096 8192\n/dev/x read 0 4096\n/dev/x trim 0 4096\n/dev/x close\n",
        )
        .unwrap();
        assert_eq!(t.format, TraceFormat::FioIologV2);
        assert_eq!(t.ops.len(), 3);
        assert_eq!(
            t.ops[0],
            TraceOp {
                t_ns: 0,
                kind: OpKind::Write,
                offset: 4096,
                len: 8192
            }
        );
        assert_eq!(t.span_bytes, 12288);
    }

    #[test]
    fn iolog_v3_times_relative() {
        let t = parse_trace(
            "x",
            "fio version 3 iolog\n100 /dev/x add\n100 /dev/x open\n105 /dev/x write 0 4096\n110 /dev/x read 4096 4096\n",
        )
        .unwrap();
        assert_eq!(t.ops[0].t_ns, 0);
        assert_eq!(t.ops[1].t_ns, 5_000_000);
    }

    #[test]
    fn blkparse_queue_events_only() {
        let text = "  8,0    3        1     0.000000000   697  Q  WS 3417048 + 8 [kworker/3:1H]\n\
                    8,0    3        2     0.000002000   697  G  WS 3417048 + 8 [kworker/3:1H]\n\
                    8,0    1        3     0.500000000   700  Q   R 100 + 16 [fio]\n\
                    8,0    1        4     0.600000000   700  Q   D 0 + 2048 [fstrim]\n\
                    8,0    1        5     0.700000000   700  Q FWS [fio]\n\
                    CPU1 (8,0):\n Reads Queued:           1,        8KiB\n";
        let t = parse_trace("b", text).unwrap();
        assert_eq!(t.ops.len(), 3);
        assert_eq!(
            t.ops[0],
            TraceOp {
                t_ns: 0,
                kind: OpKind::Write,
                offset: 3417048 * 512,
                len: 4096
            }
        );
        assert_eq!(t.ops[1].kind, OpKind::Read);
        assert_eq!(t.ops[1].t_ns, 500_000_000);
        assert_eq!(t.ops[2].kind, OpKind::Trim);
    }

    #[test]
    fn malformed_lines_name_the_line() {
        let e = parse_trace("f.log", "fio version 3 iolog\nabc /dev/x write 0 1\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("f.log, line 2"), "{e}");
        let e = parse_trace("f.log", "fio version 2 iolog\n/dev/x scribble 0 1\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("scribble"), "{e}");
        let e = parse_trace("b.txt", "8,0 1 1 0.1 5 Q W x + 8 [p]\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 1"), "{e}");
        let e = parse_trace("b.txt", "hello world\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 1"), "{e}");
    }

    #[test]
    fn remap_scales_and_checks_bounds() {
        let t = parse_trace("x", "fio version 2 iolog\n/d write 8192 4096\n").unwrap();
        let r = t
            .remapped(
                &Remap {
                    offset_scale: 0.5,
                    offset_shift: 4096,
                    align: 4096,
                },
                1 << 20,
            )
            .unwrap();
        assert_eq!((r[0].offset, r[0].len), (8192, 4096));
        assert!(t.remapped(&Remap::default(), 8192).is_err());
    }

    /// Issue 23 item 5: blkparse sector 2^55 (× 512 = 2^64) wrapped to offset 0, and an iolog
    /// offset of 2^64 − 4096 passed the bounds check; both are errors naming the line now.
    #[test]
    fn offsets_near_2_pow_64_are_errors_naming_the_line() {
        let e = parse_trace(
            "b.txt",
            "8,0 1 1 0.0 5 Q W 0 + 8 [p]\n8,0 1 2 0.1 5 Q W 36028797018963968 + 8 [p]\n",
        )
        .unwrap_err();
        assert!(matches!(e, Error::Parse(_)), "{e}");
        assert!(
            e.to_string().contains("b.txt, line 2") && e.to_string().contains("2^64"),
            "{e}"
        );
        let e = parse_trace(
            "f.log",
            "fio version 2 iolog\n/d write 18446744073709547520 4096\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("f.log, line 2"), "{e}");
        // the last byte addressable is fine at parse time, and refused by the target's bounds
        let t = parse_trace(
            "f.log",
            "fio version 2 iolog\n/d write 18446744073709543424 4096\n",
        )
        .unwrap();
        let e = t.remapped(&Remap::default(), 1 << 30).unwrap_err();
        assert!(e.to_string().contains("trace operation 1"), "{e}");
        // a shift that would carry the offset past 2^64 is refused, not wrapped
        let t = parse_trace("f.log", "fio version 2 iolog\n/d write 4096 4096\n").unwrap();
        let huge = Remap {
            offset_shift: u64::MAX - 4095,
            ..Remap::default()
        };
        let e = t.remapped(&huge, u64::MAX).unwrap_err();
        assert!(e.to_string().contains("past byte 2^64"), "{e}");
        let e = parse_trace(
            "f.log",
            "fio version 3 iolog\n18446744073709551 /d write 0 4096\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
        let e = parse_trace("b.txt", "8,0 1 1 1e300 5 Q W 0 + 8 [p]\n").unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
    }
}
