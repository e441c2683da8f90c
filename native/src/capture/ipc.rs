//! Capture rows ⇄ Arrow: the schema of the design's capture table, an IPC stream sink that is
//! flushed every interval, a reader and a salvager for torn files.

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

/// Writes rows as they come to an Arrow IPC stream, flushing after every batch so that a crash
/// loses at most the interval in flight. [`IpcSink::finalize`] rewrites the file atomically
/// with the final metadata (status etc.).
pub struct IpcSink {
    path: PathBuf,
    schema: SchemaRef,
    writer: Option<StreamWriter<BufWriter<File>>>,
}

impl IpcSink {
    pub fn create(path: &Path, with_sim: bool, meta_json: &str) -> Result<Self> {
        let schema = schema(with_sim, meta_json);
        let file = File::create(path).map_err(|e| {
            Error::io(
                format!("could not create capture file {}", path.display()),
                e,
            )
        })?;
        let writer = StreamWriter::try_new(BufWriter::new(file), &schema)?;
        let mut s = IpcSink {
            path: path.to_path_buf(),
            schema,
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
        let batch = rows_to_batch(&self.schema, rows)?;
        let w = self.writer.as_mut().expect("sink used after finalize");
        w.write(&batch)?;
        self.flush()
    }

    fn flush(&mut self) -> Result<()> {
        let w = self.writer.as_mut().expect("sink used after finalize");
        w.flush()?;
        w.get_mut()
            .flush()
            .map_err(|e| Error::io(format!("could not flush {}", self.path.display()), e))
    }

    /// Rewrites the whole capture with its final metadata into a temporary file next to it and
    /// renames it over the streaming file, so the file is valid at every moment.
    pub fn finalize(mut self, rows: &[IntervalRow], meta_json: &str) -> Result<()> {
        if let Some(mut w) = self.writer.take() {
            w.finish()?;
        }
        let with_sim = self.schema.column_with_name("nand_written_bytes").is_some();
        write_capture(&self.path, with_sim, rows, meta_json)
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
    let batch = rows_to_batch(&schema, rows)?;
    write_batches(path, &schema, &[batch])
}

/// Writes batches as a complete IPC stream atomically (temporary file + rename).
pub fn write_batches(path: &Path, schema: &SchemaRef, batches: &[RecordBatch]) -> Result<()> {
    let tmp = tmp_path(path);
    let res = (|| {
        let file = File::create(&tmp)
            .map_err(|e| Error::io(format!("could not create {}", tmp.display()), e))?;
        let mut w = StreamWriter::try_new(BufWriter::new(file), schema)?;
        for b in batches {
            w.write(b)?;
        }
        w.finish()?;
        let mut inner = w.into_inner()?;
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

/// A capture read back: schema (with metadata), batches, and whether the tail was torn.
pub struct ReadCapture {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
    pub meta_json: String,
    /// True when the stream ended without its end-of-stream marker or in a torn message.
    pub torn: bool,
}

/// Reads a capture file. With `salvage`, a torn tail is dropped instead of being an error.
pub fn read_capture(path: &Path, salvage: bool) -> Result<ReadCapture> {
    let file = File::open(path)
        .map_err(|e| Error::io(format!("could not open capture {}", path.display()), e))?;
    let reader = StreamReader::try_new(BufReader::new(file), None).map_err(|e| {
        Error::Format(format!(
            "{} is not a flashback capture (no Arrow IPC stream header: {e}); pass a file written by flashback",
            path.display()
        ))
    })?;
    let schema = reader.schema();
    let meta_json = schema.metadata().get(META_KEY).cloned().ok_or_else(|| {
        Error::Format(format!(
            "{} is an Arrow stream without flashback metadata; pass a file written by flashback",
            path.display()
        ))
    })?;
    let mut batches = vec![];
    let torn;
    let mut reader = reader;
    loop {
        match reader.next() {
            Some(Ok(b)) => batches.push(b),
            Some(Err(e)) => {
                if salvage {
                    torn = true;
                    break;
                }
                return Err(Error::Format(format!(
                    "{} is torn after {} intervals ({e}); use flashback.recover() to salvage it",
                    path.display(),
                    batches.iter().map(|b| b.num_rows()).sum::<usize>()
                )));
            }
            None => {
                torn = !reader.is_finished();
                break;
            }
        }
    }
    Ok(ReadCapture {
        schema,
        batches,
        meta_json,
        torn,
    })
}
