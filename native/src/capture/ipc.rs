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

/// Creates (or truncates) the file a capture streams to: the one place a stream file is
/// opened, to be switched to the guarded writer (`output.rs`) in one line.
pub fn open_stream_file(path: &Path) -> Result<File> {
    File::create(path).map_err(|e| {
        Error::io(
            format!("could not create capture file {}", path.display()),
            e,
        )
    })
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

/// Streams rows to a capture file as a run goes. Rows wait in memory until
/// [`FINISHED_BATCH_ROWS`] have come or [`FLUSH_EVERY`] of wall time has passed since the
/// last write, then go out as one checksummed batch, flushed to the OS. [`IpcSink::finalize`]
/// appends the end of the stream and the trailer with the final metadata: the file is never
/// read back or rewritten.
pub struct IpcSink {
    path: PathBuf,
    schema: SchemaRef,
    run_id: String,
    writer: Option<BatchWriter<BufWriter<File>>>,
    pending: Vec<IntervalRow>,
    last_write: Instant,
}

impl IpcSink {
    /// Starts the stream with `meta_json` (which must carry the run's `run_id`).
    pub fn create(path: &Path, with_sim: bool, meta_json: &str) -> Result<Self> {
        let (meta_json, run_id) = stamp_meta(meta_json)?;
        let schema = schema(with_sim, &meta_json);
        let file = open_stream_file(path)?;
        let writer = BatchWriter::new(BufWriter::new(file), &schema)?;
        let mut s = IpcSink {
            path: path.to_path_buf(),
            schema,
            run_id,
            writer: Some(writer),
            pending: Vec::with_capacity(FINISHED_BATCH_ROWS),
            last_write: Instant::now(),
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
        if self.pending.len() >= FINISHED_BATCH_ROWS || self.last_write.elapsed() >= FLUSH_EVERY {
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
        self.writer
            .as_mut()
            .expect("sink used after finalize")
            .write(&batch)?;
        self.flush()
    }

    fn flush(&mut self) -> Result<()> {
        let w = self.writer.as_mut().expect("sink used after finalize");
        w.get_mut()
            .flush()
            .map_err(|e| Error::io(format!("could not write {}", self.path.display()), e))
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
        let shown = self.path.display();
        let mut buf = w.finish(&self.run_id, Some(meta))?;
        buf.flush()
            .map_err(|e| Error::io(format!("could not finish the capture {shown}"), e))?;
        buf.get_ref()
            .sync_all()
            .map_err(|e| Error::io(format!("could not sync the capture {shown}"), e))
    }
}

/// Writes a complete capture file atomically (temporary file + rename).
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
    let tmp = tmp_path(path);
    let res = (|| {
        let file = File::create(&tmp)
            .map_err(|e| Error::io(format!("could not create {}", tmp.display()), e))?;
        let mut w = BatchWriter::new(BufWriter::new(file), schema)?;
        fill(&mut |b: &RecordBatch| w.write(b))?;
        let mut inner = w.finish(run_id, None)?;
        inner
            .flush()
            .map_err(|e| Error::io(format!("could not write {}", tmp.display()), e))?;
        inner
            .get_ref()
            .sync_all()
            .map_err(|e| Error::io(format!("could not sync {}", tmp.display()), e))?;
        std::fs::rename(&tmp, path).map_err(|e| {
            Error::io(
                format!("could not move the capture into {}", path.display()),
                e,
            )
        })
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}

fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp{}", std::process::id()));
    path.with_file_name(name)
}
