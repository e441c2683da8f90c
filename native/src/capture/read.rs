//! Reading capture files: every batch's checksum verified, the end of the stream checked (the
//! end-of-stream marker, and for `flashback-capture/2` files the trailer's run id, counts and
//! checksum chain: see [`super::stream`]), the metadata validated, and a panic inside the Arrow
//! reader turned into a damaged-file error. Memory stays at the output plus one batch: small
//! batches are merged as they are read.

use super::check;
use super::ipc::FINISHED_BATCH_ROWS;
use super::stream::{Counting, Trailer, FORMAT, MAX_TRAILER_BYTES};
use super::META_KEY;
use crate::error::{Error, Result};
use arrow_array::RecordBatch;
use arrow_ipc::reader::StreamReader;
use arrow_schema::SchemaRef;
use serde_json::Value;
use std::fs::File;
use std::io::{BufReader, Read};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// A capture read back: schema (with metadata), batches, and whether the tail was torn.
pub struct ReadCapture {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
    /// The capture's metadata: the trailer's final metadata when it has one, else the
    /// header's; validated by [`parse_meta`].
    pub meta: Value,
    /// True when the stream did not end as a finished capture ends (no end-of-stream marker,
    /// no whole trailer, or a torn or damaged message).
    pub torn: bool,
    /// When salvaging: why reading stopped early.
    pub damage: Option<String>,
}

/// The metadata keys whose JSON type is checked, with the type they must have (or null).
const META_TYPES: [(&str, &str); 14] = [
    ("status", "string"),
    ("step", "string"),
    ("format", "string"),
    ("run_id", "string"),
    ("start_time", "string"),
    ("end_time", "string"),
    ("flashback_version", "string"),
    ("workload", "object"),
    ("target", "object"),
    ("host", "object"),
    ("totals", "object"),
    ("latency", "object"),
    ("cumulative_start", "object"),
    ("duration_s", "number"),
];

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Parses and checks a capture's metadata JSON (from the file at `path`): a JSON object
/// (serde_json refuses lone surrogates and nesting past 128 levels), with the known keys of
/// the right types.
pub fn parse_meta(path: &Path, json: &str) -> Result<Value> {
    let bad = |why: String| {
        Error::Format(format!(
            "{} has damaged metadata ({why}); pass a capture file written by flashback",
            path.display()
        ))
    };
    let v: Value = serde_json::from_str(json).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    let obj = v
        .as_object()
        .ok_or_else(|| bad(format!("a JSON {} where an object belongs", json_type(&v))))?;
    for (key, want) in META_TYPES {
        if let Some(x) = obj.get(key) {
            let got = json_type(x);
            if got != want && got != "null" {
                return Err(bad(format!("{key:?} is a {got} where a {want} belongs")));
            }
        }
    }
    Ok(v)
}

/// The `format` values of the capture files flashback has written (files from before the key
/// existed have none).
const KNOWN_FORMATS: [&str; 2] = ["flashback-capture/1", FORMAT];

type Stream = StreamReader<Counting<BufReader<File>>>;

/// Reads a capture file batch by batch, verifying each batch's checksum (files written before
/// checksums existed are read unchecked) and, at the end, how the stream ended. Yields batches
/// without the checksum column; the first damaged or torn batch, or a wrong ending, is an
/// error naming the intervals kept before it.
pub struct CaptureReader {
    path: PathBuf,
    reader: Stream,
    /// The schema without the checksum column.
    pub schema: SchemaRef,
    /// The header's metadata (validated).
    pub meta: Value,
    checked: bool,
    /// Intervals read so far.
    pub rows: usize,
    batches: u64,
    chain: u32,
    /// The trailer, once read and checked.
    pub trailer: Option<Trailer>,
    done: bool,
}

impl CaptureReader {
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path)
            .map_err(|e| Error::io(format!("could not open capture {}", path.display()), e))?;
        let src = Counting::new(BufReader::new(file));
        let reader = catch_unwind(AssertUnwindSafe(|| StreamReader::try_new(src, None)))
            .map_err(|p| format!("the Arrow reader failed: {}", crate::error::panic_message(p.as_ref())))
            .and_then(|r| r.map_err(|e| e.to_string()))
            .map_err(|e| {
                Error::Format(format!(
                    "{} is not a flashback capture (no readable Arrow IPC stream header: {e}); pass a file written by flashback",
                    path.display()
                ))
            })?;
        let (schema, checked) = check::plain_schema(&reader.schema());
        let meta_json = schema.metadata().get(META_KEY).cloned().ok_or_else(|| {
            Error::Format(format!(
                "{} is an Arrow stream without flashback metadata; pass a file written by flashback",
                path.display()
            ))
        })?;
        let file_schema = reader.schema();
        if let Some(want) = file_schema.metadata().get(check::META_CRC_KEY) {
            let got = check::header_crc(file_schema.fields(), &meta_json);
            if want.parse::<u32>().ok() != Some(got) {
                return Err(Error::Format(format!(
                    "{}: its metadata fails its checksum (the file was altered or damaged after it was written); the intervals may be intact but flashback cannot trust the file",
                    path.display()
                )));
            }
        }
        let meta = parse_meta(path, &meta_json)?;
        let format = meta.get("format").and_then(Value::as_str);
        if let Some(f) = format.filter(|f| !KNOWN_FORMATS.contains(f)) {
            // a flipped byte in the format would otherwise read a checksummed file as one
            // written before checksums existed
            return Err(Error::Format(format!(
                "{}: its format {f:?} is not one flashback writes ({}; the file was altered or damaged, or is from a newer flashback)",
                path.display(),
                KNOWN_FORMATS.join(" or ")
            )));
        }
        let v2 = format == Some(FORMAT);
        let header_crc = file_schema.metadata().contains_key(check::META_CRC_KEY);
        if (v2 || checked || header_crc) && !(checked && header_crc) {
            // the batch and header checksums came in together (ce9c3d5), and a
            // flashback-capture/2 file always carries both: one without the other, or a
            // /2 file without them, means the file was altered (a flipped byte in a key or a
            // column name)
            return Err(Error::Format(format!(
                "{}: its checksums are missing (the file was altered or damaged after it was written); flashback cannot trust the file",
                path.display()
            )));
        }
        Ok(CaptureReader {
            path: path.to_path_buf(),
            reader,
            schema,
            meta,
            checked,
            rows: 0,
            batches: 0,
            chain: 0,
            trailer: None,
            done: false,
        })
    }

    fn has_trailer(&self) -> bool {
        self.meta.get("format").and_then(Value::as_str) == Some(FORMAT)
    }

    /// Checks how the stream ended (after the reader's last batch): `Err` says what is wrong.
    fn check_end(&mut self) -> std::result::Result<(), String> {
        if !self.reader.get_ref().after_eos() {
            return Err(
                "it ends without its end-of-stream marker (cut short, or its run never finished)"
                    .into(),
            );
        }
        let mut rest = vec![];
        self.reader
            .get_mut()
            .take(MAX_TRAILER_BYTES + 1)
            .read_to_end(&mut rest)
            .map_err(|e| format!("its trailer could not be read ({e})"))?;
        if !self.has_trailer() {
            if rest.starts_with(super::stream::TRAILER_MAGIC) {
                // a trailer, but a header that does not say so: the header was altered
                return Err("its header does not match its trailer (the file was altered)".into());
            }
            return Ok(());
        }
        let t = Trailer::parse(&rest)?;
        let run_id = self
            .meta
            .get("run_id")
            .and_then(Value::as_str)
            .unwrap_or("");
        if t.run_id != run_id {
            return Err(format!(
                "its intervals end with run {} but its header is run {run_id} (two runs wrote this file)",
                t.run_id
            ));
        }
        if t.intervals != self.rows as u64 || t.batches != self.batches {
            return Err(format!(
                "its trailer counts {} intervals in {} batches where the stream holds {} in {} (batches were lost or added)",
                t.intervals, t.batches, self.rows, self.batches
            ));
        }
        if self.checked && t.chain_crc32 != self.chain {
            return Err(
                "its batches fail the trailer's checksum (batches were replaced or reordered)"
                    .into(),
            );
        }
        if let Some(m) = &t.meta {
            let json = m.to_string();
            self.meta = parse_meta(&self.path, &json).map_err(|e| e.to_string())?;
        }
        self.trailer = Some(t);
        Ok(())
    }

    fn next_batch(&mut self) -> Option<Result<RecordBatch>> {
        let shown = self.path.display().to_string();
        let rows = self.rows;
        let keeps = format!("flashback.recover() keeps the {rows} intervals before it");
        let next = catch_unwind(AssertUnwindSafe(|| self.reader.next()));
        let b = match next {
            Err(p) => {
                return Some(Err(Error::Format(format!(
                "{shown} is damaged after interval {rows} (the Arrow reader failed: {}); {keeps}",
                crate::error::panic_message(p.as_ref())
            ))))
            }
            Ok(None) => {
                return match self.check_end() {
                    Ok(()) => None,
                    Err(why) => Some(Err(Error::Format(format!(
                        "{shown} does not end as a finished capture does: {why}; {keeps}"
                    )))),
                }
            }
            Ok(Some(Err(e))) => {
                return Some(Err(Error::Format(format!(
                    "{shown} is torn after interval {rows} ({e}); {keeps}"
                ))))
            }
            Ok(Some(Ok(b))) => b,
        };
        if !self.checked {
            return Some(Ok(b));
        }
        Some(match catch_unwind(AssertUnwindSafe(|| check::verify(&b, &self.schema))) {
            Ok(Ok(Ok((data, crc)))) => {
                self.chain = check::crc32_update(self.chain, &crc.to_le_bytes());
                Ok(data)
            }
            Ok(Ok(Err(()))) => Err(Error::Format(format!(
                "{shown}: intervals {rows}-{}{} fail their checksum (the file was altered or damaged after it was written); {keeps}",
                rows + b.num_rows().max(1) - 1,
                t_span(&b),
            ))),
            Ok(Err(e)) => Err(Error::Format(format!(
                "{shown}: intervals from {rows} on are unreadable ({e}); {keeps}"
            ))),
            Err(p) => Err(Error::Format(format!(
                "{shown}: intervals from {rows} on are unreadable ({}); {keeps}",
                crate::error::panic_message(p.as_ref())
            ))),
        })
    }
}

impl Iterator for CaptureReader {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let out = self.next_batch();
        match &out {
            Some(Ok(b)) => {
                self.rows += b.num_rows();
                self.batches += 1;
            }
            Some(Err(_)) | None => self.done = true,
        }
        out
    }
}

/// ` (t_s a–b)` of a batch, when its first column is a readable `t_s`.
fn t_span(b: &RecordBatch) -> String {
    let t = b
        .column_by_name("t_s")
        .and_then(|c| c.as_any().downcast_ref::<arrow_array::Float64Array>());
    match t {
        Some(t) if !t.is_empty() => format!(", t_s {}-{} s", t.value(0), t.value(t.len() - 1)),
        _ => String::new(),
    }
}

/// Reads a capture file. Without `salvage` a torn, damaged or unfinished file is an error;
/// with it, reading stops there (what stopped it kept in `damage`). Batches smaller than
/// [`FINISHED_BATCH_ROWS`] are merged as they are read, so memory is the output plus one
/// batch, however many batches the stream holds.
pub fn read_capture(path: &Path, salvage: bool) -> Result<ReadCapture> {
    let mut reader = CaptureReader::open(path)?;
    let schema = reader.schema.clone();
    let mut batches = vec![];
    let mut pending: Vec<RecordBatch> = vec![];
    let mut pending_rows = 0;
    let mut damage = None;
    let merge = |pending: &mut Vec<RecordBatch>| -> Result<RecordBatch> {
        let b = if pending.len() == 1 {
            pending.pop().expect("one batch")
        } else {
            arrow_select::concat::concat_batches(&schema, pending.iter())?
        };
        pending.clear();
        Ok(b)
    };
    for b in reader.by_ref() {
        match b {
            Ok(b) => {
                pending_rows += b.num_rows();
                pending.push(b);
                if pending_rows >= FINISHED_BATCH_ROWS {
                    batches.push(merge(&mut pending)?);
                    pending_rows = 0;
                }
            }
            Err(e) if salvage => {
                damage = Some(e.to_string());
                break;
            }
            Err(e) => return Err(e),
        }
    }
    if !pending.is_empty() {
        batches.push(merge(&mut pending)?);
    }
    Ok(ReadCapture {
        schema,
        batches,
        torn: damage.is_some(),
        meta: reader.meta,
        damage,
    })
}
