//! Capture rows ⇄ Arrow: the schema of the design's capture table, an IPC stream sink that is
//! flushed every interval, a reader and a salvager for torn files.

use super::check;
use super::row::IntervalRow;
use super::META_KEY;
use crate::error::{Error, Result};
use arrow_array::builder::{Float64Builder, StringBuilder, UInt64Builder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const DIRS: [&str; 3] = ["read", "write", "trim"];
const LAT: [&str; 5] = ["mean", "p50", "p99", "p999", "max"];

/// The capture schema; `with_sim` adds the simulator's ground-truth columns.
pub fn schema(with_sim: bool, meta_json: &str) -> SchemaRef {
    let mut f = vec![
        Field::new("t_s", DataType::Float64, false),
        Field::new("interval_s", DataType::Float64, false),
    ];
    for d in DIRS {
        f.push(Field::new(format!("{d}_ios"), DataType::UInt64, false));
    }
    for d in DIRS {
        f.push(Field::new(format!("{d}_bytes"), DataType::UInt64, false));
    }
    for d in DIRS {
        f.push(Field::new(format!("{d}_iops"), DataType::Float64, false));
    }
    for d in &DIRS[..2] {
        f.push(Field::new(format!("{d}_mbps"), DataType::Float64, false));
    }
    for d in &DIRS[..2] {
        for l in LAT {
            f.push(Field::new(
                format!("{d}_lat_{l}_us"),
                DataType::Float64,
                true,
            ));
        }
    }
    f.push(Field::new("host_written_bytes", DataType::UInt64, false));
    f.push(Field::new("step", DataType::Utf8, false));
    if with_sim {
        f.push(Field::new("nand_written_bytes", DataType::UInt64, false));
        f.push(Field::new("wa", DataType::Float64, true));
        f.push(Field::new("free_blocks", DataType::UInt64, false));
        f.push(Field::new("gc_copied_bytes", DataType::UInt64, false));
    }
    let md = HashMap::from([(META_KEY.to_string(), meta_json.to_string())]);
    Arc::new(Schema::new_with_metadata(f, md))
}

/// Converts rows to one record batch of `schema` (made by [`schema`]).
pub fn rows_to_batch(schema: &SchemaRef, rows: &[IntervalRow]) -> Result<RecordBatch> {
    let with_sim = schema.column_with_name("nand_written_bytes").is_some();
    let n = rows.len();
    let f64col = |f: &dyn Fn(&IntervalRow) -> f64| -> ArrayRef {
        let mut b = Float64Builder::with_capacity(n);
        rows.iter().for_each(|r| b.append_value(f(r)));
        Arc::new(b.finish())
    };
    let u64col = |f: &dyn Fn(&IntervalRow) -> u64| -> ArrayRef {
        let mut b = UInt64Builder::with_capacity(n);
        rows.iter().for_each(|r| b.append_value(f(r)));
        Arc::new(b.finish())
    };
    let optcol = |f: &dyn Fn(&IntervalRow) -> Option<f64>| -> ArrayRef {
        let mut b = Float64Builder::with_capacity(n);
        rows.iter().for_each(|r| b.append_option(f(r)));
        Arc::new(b.finish())
    };
    let mut cols: Vec<ArrayRef> = vec![f64col(&|r| r.t_s), f64col(&|r| r.interval_s)];
    for k in 0..3 {
        cols.push(u64col(&|r| r.ios[k]));
    }
    for k in 0..3 {
        cols.push(u64col(&|r| r.bytes[k]));
    }
    for k in 0..3 {
        cols.push(f64col(&|r| r.ios[k] as f64 / r.interval_s));
    }
    for k in 0..2 {
        cols.push(f64col(&|r| r.bytes[k] as f64 / r.interval_s / 1e6));
    }
    for k in 0..2 {
        cols.push(optcol(&|r| r.lat[k].map(|l| l.mean_us)));
        cols.push(optcol(&|r| r.lat[k].map(|l| l.p50_us)));
        cols.push(optcol(&|r| r.lat[k].map(|l| l.p99_us)));
        cols.push(optcol(&|r| r.lat[k].map(|l| l.p999_us)));
        cols.push(optcol(&|r| r.lat[k].map(|l| l.max_us)));
    }
    cols.push(u64col(&|r| r.host_written_bytes));
    let mut sb = StringBuilder::with_capacity(n, n * 8);
    rows.iter().for_each(|r| sb.append_value(&r.step));
    cols.push(Arc::new(sb.finish()));
    if with_sim {
        let t = |r: &IntervalRow| r.sim.unwrap_or_default();
        cols.push(u64col(&|r| t(r).nand_written_bytes));
        cols.push(optcol(&|r| r.wa));
        cols.push(u64col(&|r| t(r).free_blocks));
        cols.push(u64col(&|r| t(r).gc_copied_bytes));
    }
    Ok(RecordBatch::try_new(schema.clone(), cols)?)
}

/// Rows per record batch in a finished capture: a file cut short loses at most this many
/// intervals to `recover()`.
pub const FINISHED_BATCH_ROWS: usize = 1024;

/// Writes rows as they come to an Arrow IPC stream, flushing after every batch so that a crash
/// loses at most the interval in flight; each batch carries its checksum. [`IpcSink::finalize`]
/// rewrites the file atomically with the final metadata (status etc.), streaming it batch by
/// batch (memory stays flat however long the capture).
pub struct IpcSink {
    path: PathBuf,
    schema: SchemaRef,
    file_schema: SchemaRef,
    writer: Option<StreamWriter<BufWriter<File>>>,
}

impl IpcSink {
    /// Starts streaming to `path` through the guarded writer ([`crate::output::open_stream`]):
    /// never a device, FIFO or directory, an existing file only with `overwrite`, and locked
    /// against a second run for as long as the sink is open.
    pub fn create(path: &Path, with_sim: bool, meta_json: &str, overwrite: bool) -> Result<Self> {
        let schema = schema(with_sim, meta_json);
        let file_schema = check::file_schema(&schema);
        let (file, _) = crate::output::open_stream(path, overwrite)?;
        let writer = StreamWriter::try_new(BufWriter::new(file), &file_schema)?;
        let mut s = IpcSink {
            path: path.to_path_buf(),
            schema,
            file_schema,
            writer: Some(writer),
        };
        s.flush()?;
        Ok(s)
    }

    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Appends rows as one batch and flushes it to the OS.
    pub fn push(&mut self, rows: &[IntervalRow]) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let batch = check::with_crc(&rows_to_batch(&self.schema, rows)?, &self.file_schema)?;
        let w = self.writer.as_mut().expect("sink used after finalize");
        w.write(&batch)
            .map_err(|e| streaming_error(&self.path, e))?;
        self.flush()
    }

    fn flush(&mut self) -> Result<()> {
        let w = self.writer.as_mut().expect("sink used after finalize");
        w.flush().map_err(|e| streaming_error(&self.path, e))?;
        w.get_mut()
            .flush()
            .map_err(|e| streaming_error(&self.path, arrow_schema::ArrowError::from(e)))
    }

    /// Rewrites the capture with its final metadata into a temporary file next to it and
    /// renames it over the streaming file, so the file is valid at every moment. The streamed
    /// rows are read back batch by batch and regrouped into batches of
    /// [`FINISHED_BATCH_ROWS`], so a finished file cut short still recovers all but its tail.
    pub fn finalize(mut self, meta_json: &str) -> Result<()> {
        if let Some(mut w) = self.writer.take() {
            w.finish()?;
        }
        let rc = CaptureReader::open(&self.path)?;
        let with_sim = self.schema.column_with_name("nand_written_bytes").is_some();
        let schema = schema(with_sim, meta_json);
        let path = self.path.clone();
        write_stream(&self.path, &schema, |emit| {
            let mut pending: Vec<RecordBatch> = vec![];
            let mut rows = 0;
            for b in rc {
                let b = b?;
                rows += b.num_rows();
                pending.push(RecordBatch::try_new(schema.clone(), b.columns().to_vec())?);
                if rows >= FINISHED_BATCH_ROWS {
                    emit(&arrow_select::concat::concat_batches(&schema, &pending)?)?;
                    pending.clear();
                    rows = 0;
                }
            }
            if !pending.is_empty() {
                emit(&arrow_select::concat::concat_batches(&schema, &pending)?)?;
            }
            Ok(())
        })
        .map_err(|e| match e {
            Error::Format(m) => Error::Format(format!(
                "{m} (while finishing {}: the capture streamed there was altered during the run)",
                path.display()
            )),
            Error::Io { source, .. }
                if matches!(source.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT)) =>
            {
                Error::io(
                    format!(
                        "the disk holding {} is full, so the capture could not be finished; the file keeps every interval streamed (salvage them with `flashback recover {}`)",
                        path.display(),
                        path.display()
                    ),
                    source,
                )
            }
            e => e,
        })
    }
}

/// Writes a complete capture file atomically (temporary file + rename).
pub fn write_capture(
    path: &Path,
    with_sim: bool,
    rows: &[IntervalRow],
    meta_json: &str,
) -> Result<()> {
    let schema = schema(with_sim, meta_json);
    write_stream(path, &schema, |emit| {
        for chunk in rows.chunks(FINISHED_BATCH_ROWS) {
            emit(&rows_to_batch(&schema, chunk)?)?;
        }
        Ok(())
    })
}

/// Writes a table (its schema and batches, from any source) as a capture file carrying
/// `meta_json` under [`META_KEY`], atomically: the schema's own metadata is replaced.
pub fn write_table(
    path: &Path,
    schema: &SchemaRef,
    batches: Vec<RecordBatch>,
    meta_json: String,
) -> Result<()> {
    let md = HashMap::from([(META_KEY.to_string(), meta_json)]);
    let schema = Arc::new(Schema::new_with_metadata(schema.fields().clone(), md));
    let batches = batches
        .into_iter()
        .map(|b| RecordBatch::try_new(schema.clone(), b.columns().to_vec()))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    write_batches(path, &schema, &batches)
}

/// Writes batches as a complete IPC stream atomically (temporary file + rename), each batch
/// with its checksum.
pub fn write_batches(path: &Path, schema: &SchemaRef, batches: &[RecordBatch]) -> Result<()> {
    write_stream(path, schema, |emit| {
        for b in batches {
            let mut start = 0;
            while start < b.num_rows() || (start == 0 && b.num_rows() == 0) {
                let n = FINISHED_BATCH_ROWS.min(b.num_rows() - start);
                emit(&b.slice(start, n))?;
                start += n.max(1);
            }
        }
        Ok(())
    })
}

type Emit<'a> = dyn FnMut(&RecordBatch) -> Result<()> + 'a;

/// Writes the stream `fill` emits (batches of `schema`, checksums added here) to a temporary
/// file, syncs it and renames it over `path`; on any error the temporary file is removed.
fn write_stream(
    path: &Path,
    schema: &SchemaRef,
    fill: impl FnOnce(&mut Emit<'_>) -> Result<()>,
) -> Result<()> {
    // The guarded writer (`crate::output`): an exclusive temporary in the destination's
    // directory, synced and renamed into place; dropped on error, leaving nothing behind.
    let mut out = crate::output::OutputFile::create(path, true)?;
    let file_schema = check::file_schema(schema);
    let existed = out.path().exists();
    let werr = |e: arrow_schema::ArrowError| match e {
        arrow_schema::ArrowError::IoError(_, io) => crate::output::write_error(path, existed, io),
        e => Error::from(e),
    };
    {
        let file = out
            .file()
            .try_clone()
            .map_err(|e| Error::io(format!("could not write {}", path.display()), e))?;
        let mut w = StreamWriter::try_new(BufWriter::new(file), &file_schema).map_err(werr)?;
        fill(&mut |b: &RecordBatch| {
            let b = RecordBatch::try_new(schema.clone(), b.columns().to_vec())?;
            w.write(&check::with_crc(&b, &file_schema)?).map_err(werr)?;
            Ok(())
        })?;
        w.finish().map_err(werr)?;
        let mut inner = w.into_inner().map_err(werr)?;
        inner
            .flush()
            .map_err(|e| crate::output::write_error(path, existed, e))?;
    }
    out.commit()?;
    Ok(())
}

/// A write error while streaming to `path`: a full disk names the file and says the intervals
/// streamed so far are kept there (salvage them with `flashback recover`).
fn streaming_error(path: &Path, e: arrow_schema::ArrowError) -> Error {
    match e {
        arrow_schema::ArrowError::IoError(_, io)
            if matches!(io.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT)) =>
        {
            Error::io(
                format!(
                    "the disk holding {} is full: the run stopped; the intervals streamed before that are kept there (salvage them with `flashback recover {}`)",
                    path.display(),
                    path.display()
                ),
                io,
            )
        }
        arrow_schema::ArrowError::IoError(_, io) => {
            Error::io(format!("could not write the capture {}", path.display()), io)
        }
        e => Error::from(e),
    }
}

/// A capture read back: schema (with metadata), batches, and whether the tail was torn.
pub struct ReadCapture {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
    pub meta_json: String,
    /// True when the stream ended without its end-of-stream marker or in a torn message.
    pub torn: bool,
    /// When salvaging: why reading stopped early (a torn message or a checksum mismatch).
    pub damage: Option<String>,
}

/// Reads a capture file batch by batch, verifying each batch's checksum (files written before
/// checksums existed are read unchecked). Yields batches without the checksum column; the
/// first damaged or torn batch is an error naming the intervals it holds.
pub struct CaptureReader {
    path: PathBuf,
    reader: StreamReader<BufReader<File>>,
    /// The schema without the checksum column.
    pub schema: SchemaRef,
    pub meta_json: String,
    checked: bool,
    /// Intervals read so far.
    pub rows: usize,
    done: bool,
}

impl CaptureReader {
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path)
            .map_err(|e| Error::io(format!("could not open capture {}", path.display()), e))?;
        let reader = StreamReader::try_new(BufReader::new(file), None).map_err(|e| {
            Error::Format(format!(
                "{} is not a flashback capture (no Arrow IPC stream header: {e}); pass a file written by flashback",
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
        Ok(CaptureReader {
            path: path.to_path_buf(),
            reader,
            schema,
            meta_json,
            checked,
            rows: 0,
            done: false,
        })
    }

    /// True when the stream ended with its end-of-stream marker.
    pub fn is_finished(&self) -> bool {
        self.reader.is_finished()
    }
}

impl Iterator for CaptureReader {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let shown = self.path.display();
        let out = match self.reader.next()? {
            Err(e) => Err(Error::Format(format!(
                "{shown} is torn after interval {} ({e}); flashback.recover() keeps the {} intervals before it",
                self.rows, self.rows
            ))),
            Ok(b) if !self.checked => Ok(b),
            Ok(b) => match check::verify(&b, &self.schema) {
                Ok(Ok(b)) => Ok(b),
                Ok(Err(())) => Err(Error::Format(format!(
                    "{shown}: intervals {}-{}{} fail their checksum (the file was altered or damaged after it was written); flashback.recover() keeps the {} intervals before them",
                    self.rows,
                    self.rows + b.num_rows().max(1) - 1,
                    t_span(&b),
                    self.rows
                ))),
                Err(e) => Err(Error::Format(format!(
                    "{shown}: intervals from {} on are unreadable ({e}); flashback.recover() keeps the {} intervals before them",
                    self.rows, self.rows
                ))),
            },
        };
        match &out {
            Ok(b) => self.rows += b.num_rows(),
            Err(_) => self.done = true,
        }
        Some(out)
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

/// Reads a capture file. With `salvage`, reading stops at the first torn or damaged batch
/// (kept in `damage`) instead of failing.
pub fn read_capture(path: &Path, salvage: bool) -> Result<ReadCapture> {
    let mut reader = CaptureReader::open(path)?;
    let mut batches = vec![];
    let mut damage = None;
    for b in reader.by_ref() {
        match b {
            Ok(b) => batches.push(b),
            Err(e) if salvage => {
                damage = Some(e.to_string());
                break;
            }
            Err(e) => return Err(e),
        }
    }
    let torn = damage.is_some() || !reader.is_finished();
    Ok(ReadCapture {
        schema: reader.schema.clone(),
        batches,
        meta_json: reader.meta_json.clone(),
        torn,
        damage,
    })
}
