//! Capture rows ⇄ Arrow: the schema (from the column table), rows to batches, the streaming
//! sink (intervals coalesced into batches on a wall-clock cadence) and the atomic writers of
//! whole files. The framing (checksums, trailer) is in [`super::stream`], reading in
//! [`super::read`].

use super::columns::{self, Get};
use super::row::IntervalRow;
use super::stream::{self, BatchWriter};
use super::META_KEY;
use crate::error::{Error, Result};
use arrow_array::builder::{Float64Builder, StringBuilder, UInt64Builder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Field, Schema, SchemaRef};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The capture schema (from [`columns::COLUMNS`]); `with_sim` adds the simulator's
/// ground-truth columns.
pub fn schema(with_sim: bool, meta_json: &str) -> SchemaRef {
    let f: Vec<Field> = columns::written(with_sim)
        .map(|c| Field::new(c.name, c.data_type(), c.nullable))
        .collect();
    let md = HashMap::from([(META_KEY.to_string(), meta_json.to_string())]);
    Arc::new(Schema::new_with_metadata(f, md))
}

/// Converts rows to one record batch of `schema` (made by [`schema`]): each column's values
/// come from its row of [`columns::COLUMNS`]. A non-nullable column a row has no value for
/// (the simulator's truth before its first sample) is written as 0.
pub fn rows_to_batch(schema: &SchemaRef, rows: &[IntervalRow]) -> Result<RecordBatch> {
    let n = rows.len();
    let mut cols: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
    for field in schema.fields() {
        let c = columns::by_name(field.name())
            .ok_or_else(|| Error::Format(format!("{} is not a capture column", field.name())))?;
        let nullable = c.nullable;
        cols.push(match c.get {
            Get::F64(g) => {
                let mut b = Float64Builder::with_capacity(n);
                for r in rows {
                    match g(r) {
                        None if !nullable => b.append_value(0.0),
                        v => b.append_option(v),
                    }
                }
                Arc::new(b.finish())
            }
            Get::U64(g) => {
                let mut b = UInt64Builder::with_capacity(n);
                for r in rows {
                    match g(r) {
                        None if !nullable => b.append_value(0),
                        v => b.append_option(v),
                    }
                }
                Arc::new(b.finish())
            }
            Get::Str(g) => {
                let mut b = StringBuilder::with_capacity(n, n * 8);
                rows.iter().for_each(|r| b.append_value(g(r)));
                Arc::new(b.finish())
            }
            Get::ImportedF64 => {
                return Err(Error::Format(format!(
                    "{} is a column of fio imports; the core does not write it",
                    c.name
                )))
            }
        });
    }
    Ok(RecordBatch::try_new(schema.clone(), cols)?)
}

/// Rows per record batch: a finished file cut short loses at most this many intervals to
/// `recover()`, and a stream writes a batch once this many intervals are waiting.
pub const FINISHED_BATCH_ROWS: usize = 1024;

/// The longest wall time a streamed interval waits in memory before its batch is written and
/// flushed to the OS: a crash or `kill -9` loses at most the last second of a run.
pub const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// Opens the file a capture streams to, through the guarded writer
/// ([`crate::output::open_stream`]): never a device, FIFO or directory, an existing file only
/// with `overwrite`, and locked against a second run for as long as it is open. The one place
/// a stream file is opened.
pub fn open_stream_file(path: &Path, overwrite: bool) -> Result<File> {
    let (file, _) = crate::output::open_stream(path, overwrite)?;
    Ok(file)
}

/// `meta_json` with a `run_id` (kept if present, else a new one) and the current `format`;
/// returns the JSON and the run id.
pub fn stamp_meta(meta_json: &str) -> Result<(String, String)> {
    let mut v: serde_json::Value = serde_json::from_str(meta_json)
        .map_err(|e| Error::InvalidValue(format!("capture metadata is not JSON ({e})")))?;
    let m = v
        .as_object_mut()
        .ok_or_else(|| Error::InvalidValue("capture metadata must be a JSON object".into()))?;
    let run_id = match m.get("run_id").and_then(|r| r.as_str()) {
        Some(r) if !r.is_empty() => r.to_string(),
        _ => stream::new_run_id(),
    };
    m.insert("run_id".into(), run_id.clone().into());
    m.insert("format".into(), stream::FORMAT.into());
    Ok((v.to_string(), run_id))
}

/// Streams rows to a capture file as a run goes. Rows wait in memory until a batch's worth
/// have come (1, 2, 4, … then [`FINISHED_BATCH_ROWS`]) or [`FLUSH_EVERY`] of wall time has
/// passed since the last write, then go out as one checksummed batch, flushed to the OS. [`IpcSink::finalize`]
/// appends the end of the stream and the trailer with the final metadata: the file is never
/// read back or rewritten.
pub struct IpcSink {
    path: PathBuf,
    schema: SchemaRef,
    run_id: String,
    writer: Option<BatchWriter<BufWriter<File>>>,
    pending: Vec<IntervalRow>,
    last_write: Instant,
    /// Rows the next batch waits for: 1 at first, doubling per batch up to
    /// [`FINISHED_BATCH_ROWS`], so a run's first intervals reach the file at once (a disk that
    /// fills early still keeps some) and later batches are large.
    batch_rows: usize,
}

impl IpcSink {
    /// Starts streaming to `path` (see [`open_stream_file`]) with `meta_json`, stamped with
    /// its `run_id` and format.
    pub fn create(path: &Path, with_sim: bool, meta_json: &str, overwrite: bool) -> Result<Self> {
        let (meta_json, run_id) = stamp_meta(meta_json)?;
        let schema = schema(with_sim, &meta_json);
        let file = open_stream_file(path, overwrite)?;
        let writer = BatchWriter::new(BufWriter::new(file), &schema)
            .map_err(|e| streaming_error(path, e))?;
        let mut s = IpcSink {
            path: path.to_path_buf(),
            schema,
            run_id,
            writer: Some(writer),
            pending: Vec::with_capacity(FINISHED_BATCH_ROWS),
            last_write: Instant::now(),
            batch_rows: 1,
        };
        s.flush()?;
        Ok(s)
    }

    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Takes rows; writes a batch when enough rows or enough wall time have gathered.
    pub fn push(&mut self, rows: &[IntervalRow]) -> Result<()> {
        self.pending.extend_from_slice(rows);
        if self.pending.len() >= self.batch_rows || self.last_write.elapsed() >= FLUSH_EVERY {
            self.write_pending()?;
        }
        Ok(())
    }

    fn write_pending(&mut self) -> Result<()> {
        self.last_write = Instant::now();
        if self.pending.is_empty() {
            return Ok(());
        }
        let batch = rows_to_batch(&self.schema, &self.pending)?;
        self.pending.clear();
        self.batch_rows = (self.batch_rows * 2).min(FINISHED_BATCH_ROWS);
        self.writer
            .as_mut()
            .expect("sink used after finalize")
            .write(&batch)
            .map_err(|e| streaming_error(&self.path, e))?;
        self.flush()
    }

    fn flush(&mut self) -> Result<()> {
        let w = self.writer.as_mut().expect("sink used after finalize");
        w.get_mut()
            .flush()
            .map_err(|e| streaming_error(&self.path, Error::io(String::new(), e)))
    }

    /// Writes the rows still waiting, the end of the stream and the trailer carrying `meta`
    /// (the run's final metadata), and syncs the file.
    pub fn finalize(mut self, meta: &serde_json::Value) -> Result<()> {
        self.write_pending()?;
        let w = self.writer.take().expect("sink used after finalize");
        let mut meta = meta.clone();
        if let Some(m) = meta.as_object_mut() {
            m.insert("run_id".into(), self.run_id.clone().into());
            m.insert("format".into(), stream::FORMAT.into());
        }
        let path = self.path.clone();
        let mut buf = w
            .finish(&self.run_id, Some(meta))
            .map_err(|e| streaming_error(&path, e))?;
        buf.flush()
            .map_err(|e| streaming_error(&path, Error::io(String::new(), e)))?;
        buf.get_ref()
            .sync_all()
            .map_err(|e| streaming_error(&path, Error::io(String::new(), e)))
    }
}

/// Writes a complete capture file atomically (the guarded writer: temporary file + rename).
pub fn write_capture(
    path: &Path,
    with_sim: bool,
    rows: &[IntervalRow],
    meta_json: &str,
) -> Result<()> {
    let (meta_json, run_id) = stamp_meta(meta_json)?;
    let schema = schema(with_sim, &meta_json);
    write_stream(path, &schema, &run_id, |emit| {
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
    let (meta_json, run_id) = stamp_meta(&meta_json)?;
    let md = HashMap::from([(META_KEY.to_string(), meta_json)]);
    let schema = Arc::new(Schema::new_with_metadata(schema.fields().clone(), md));
    write_stream(path, &schema, &run_id, |emit| {
        for b in &batches {
            let b = RecordBatch::try_new(schema.clone(), b.columns().to_vec())?;
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

/// Writes the stream `fill` emits (batches of `schema`, checksums added here) and its trailer
/// to a temporary file, syncs it and renames it over `path`; on any error the temporary file
/// is removed.
fn write_stream(
    path: &Path,
    schema: &SchemaRef,
    run_id: &str,
    fill: impl FnOnce(&mut Emit<'_>) -> Result<()>,
) -> Result<()> {
    // The guarded writer (`crate::output`): an exclusive temporary in the destination's
    // directory, synced and renamed into place; dropped on error, leaving nothing behind.
    let mut out = crate::output::OutputFile::create(path, true)?;
    let existed = out.path().exists();
    let werr = |e: Error| match e {
        Error::Io { source, .. } => crate::output::write_error(path, existed, source),
        e => e,
    };
    {
        let file = out
            .file()
            .try_clone()
            .map_err(|e| Error::io(format!("could not write {}", path.display()), e))?;
        let mut w = BatchWriter::new(BufWriter::new(file), schema).map_err(werr)?;
        fill(&mut |b: &RecordBatch| w.write(b).map_err(werr))?;
        let mut inner = w.finish(run_id, None).map_err(werr)?;
        inner
            .flush()
            .map_err(|e| crate::output::write_error(path, existed, e))?;
    }
    out.commit()?;
    Ok(())
}

/// A write error while streaming to `path`: a full disk names the file and says the intervals
/// streamed so far are kept there (salvage them with `flashback recover`).
fn streaming_error(path: &Path, e: Error) -> Error {
    match e {
        Error::Io { source, .. }
            if matches!(source.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT)) =>
        {
            Error::io(
                format!(
                    "the disk holding {} is full: the run stopped; the intervals streamed before that are kept there (salvage them with `flashback recover {}`)",
                    path.display(),
                    path.display()
                ),
                source,
            )
        }
        Error::Io { source, .. } => {
            Error::io(format!("could not write the capture {}", path.display()), source)
        }
        e => e,
    }
}
