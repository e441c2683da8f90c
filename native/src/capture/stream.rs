//! The capture file's framing: an Arrow IPC stream whose every record batch carries its
//! checksum (see [`super::check`]), ended by the end-of-stream marker and a **trailer** that
//! says how the stream ended: the run id, the interval and batch counts, a checksum over every
//! batch's checksum in order, and the run's final metadata (status, totals, latency) when it
//! was known only after the intervals were written.
//!
//! The trailer follows the Arrow end-of-stream marker, so Arrow readers (polars'
//! `read_ipc_stream`) read the file as a plain stream and stop before it. flashback's reader
//! refuses a file without a whole trailer whose counts, checksum and run id match what it read:
//! a capture cut at a batch boundary, or whose header and intervals come from different runs,
//! is never loaded as complete.
//!
//! Layout of the trailer: `FBTRAIL1`, the JSON length (u32 LE), the JSON, its CRC-32 (u32 LE).
//!
//! Batches are encoded once: the checksum column is encoded as zeros, the checksum is computed
//! over the body bytes already encoded before it (the same bytes [`check::batch_crc`] covers)
//! and written into the encoded body in place.

use super::check;
use crate::error::{Error, Result};
use arrow_array::{ArrayRef, RecordBatch, UInt32Array};
use arrow_ipc::writer::{
    write_message, DictionaryTracker, IpcDataGenerator, IpcWriteContext, IpcWriteOptions,
};
use arrow_schema::SchemaRef;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::sync::Arc;

/// The first bytes of a trailer.
pub const TRAILER_MAGIC: &[u8; 8] = b"FBTRAIL1";
/// The Arrow IPC end-of-stream marker (continuation marker, zero length).
pub const EOS: [u8; 8] = [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0];
/// The largest trailer a reader accepts (its final metadata carries the run's latency
/// histograms: tens of kilobytes).
pub const MAX_TRAILER_BYTES: u64 = 64 << 20;
/// The metadata `format` of files that end with a trailer; files of earlier formats
/// (`flashback-capture/1`) are read without one.
pub const FORMAT: &str = "flashback-capture/2";

/// What the trailer records.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Trailer {
    pub run_id: String,
    pub intervals: u64,
    pub batches: u64,
    /// CRC-32 over every batch's checksum (u32 LE) in stream order.
    pub chain_crc32: u32,
    /// The run's final metadata, which supersedes the header's (absent when the header already
    /// holds the final metadata, as in a file saved whole).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<serde_json::Value>,
}

impl Trailer {
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let json = serde_json::to_vec(self)
            .map_err(|e| Error::Format(format!("could not encode the trailer: {e}")))?;
        let mut out = Vec::with_capacity(json.len() + 16);
        out.extend_from_slice(TRAILER_MAGIC);
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(&json);
        out.extend_from_slice(&check::crc32(&json).to_le_bytes());
        Ok(out)
    }

    /// Parses the bytes after the end-of-stream marker; `Err` says what is wrong with them.
    pub fn parse(bytes: &[u8]) -> std::result::Result<Trailer, String> {
        if bytes.is_empty() {
            return Err("it ends without its trailer".into());
        }
        if bytes.len() < 16 || &bytes[..8] != TRAILER_MAGIC {
            return Err("its trailer is damaged (no trailer header)".into());
        }
        let n = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize;
        if bytes.len() != 16 + n {
            return Err(format!(
                "its trailer is {} bytes where its header says {}",
                bytes.len(),
                16 + n
            ));
        }
        let json = &bytes[12..12 + n];
        let crc = u32::from_le_bytes(bytes[12 + n..].try_into().expect("4 bytes"));
        if check::crc32(json) != crc {
            return Err("its trailer fails its checksum".into());
        }
        serde_json::from_slice(json).map_err(|e| format!("its trailer is not readable ({e})"))
    }
}

/// Writes a capture stream: the schema message at creation, each batch encoded once with its
/// checksum, and at the end the end-of-stream marker and the trailer.
pub struct BatchWriter<W: Write> {
    w: W,
    file_schema: SchemaRef,
    gen: IpcDataGenerator,
    dict: DictionaryTracker,
    ctx: IpcWriteContext,
    opts: IpcWriteOptions,
    pub rows: u64,
    pub batches: u64,
    chain: u32,
}

impl<W: Write> BatchWriter<W> {
    /// Starts a stream of batches of `schema` (without the checksum column) on `w`.
    pub fn new(mut w: W, schema: &SchemaRef) -> Result<Self> {
        let file_schema = check::file_schema(schema);
        let gen = IpcDataGenerator::default();
        let mut dict = DictionaryTracker::new(false);
        let opts = IpcWriteOptions::default();
        let enc = gen.schema_to_bytes_with_dictionary_tracker(&file_schema, &mut dict, &opts);
        write_message(&mut w, enc, &opts).map_err(io_error)?;
        Ok(BatchWriter {
            w,
            file_schema,
            gen,
            dict,
            ctx: IpcWriteContext::default(),
            opts,
            rows: 0,
            batches: 0,
            chain: 0,
        })
    }

    /// Appends `batch` (columns of the schema given to [`BatchWriter::new`]) with its checksum.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let n = batch.num_rows();
        let mut cols: Vec<ArrayRef> = batch.columns().to_vec();
        cols.push(Arc::new(UInt32Array::from(vec![0u32; n])));
        let fb = RecordBatch::try_new(self.file_schema.clone(), cols)?;
        let (dicts, mut enc) = self
            .gen
            .encode(&fb, &mut self.dict, &self.opts, &mut self.ctx)?;
        for d in dicts {
            write_message(&mut self.w, d, &self.opts).map_err(io_error)?;
        }
        let (crc_start, values) = crc_column_offsets(&enc.ipc_message)?;
        let crc = check::crc32_update(
            check::crc32(&(n as u64).to_le_bytes()),
            &enc.arrow_data[..crc_start],
        );
        for i in 0..n {
            let at = values + 4 * i;
            enc.arrow_data[at..at + 4].copy_from_slice(&crc.to_le_bytes());
        }
        write_message(&mut self.w, enc, &self.opts).map_err(io_error)?;
        self.chain = check::crc32_update(self.chain, &crc.to_le_bytes());
        self.rows += n as u64;
        self.batches += 1;
        Ok(())
    }

    pub fn get_mut(&mut self) -> &mut W {
        &mut self.w
    }

    /// Ends the stream: the end-of-stream marker and the trailer (with `meta`, the final
    /// metadata, if the header does not hold it). Returns the writer, not yet flushed.
    pub fn finish(mut self, run_id: &str, meta: Option<serde_json::Value>) -> Result<W> {
        let t = Trailer {
            run_id: run_id.to_string(),
            intervals: self.rows,
            batches: self.batches,
            chain_crc32: self.chain,
            meta,
        };
        let io = |e| Error::io("could not end the capture stream".to_string(), e);
        self.w.write_all(&EOS).map_err(io)?;
        self.w.write_all(&t.to_bytes()?).map_err(io)?;
        Ok(self.w)
    }
}

/// An Arrow write error, with an operating-system error kept as [`Error::Io`] (so a full
/// disk can be told).
fn io_error(e: arrow_schema::ArrowError) -> Error {
    match e {
        arrow_schema::ArrowError::IoError(_, io) => {
            Error::io("could not write the capture stream".to_string(), io)
        }
        e => Error::from(e),
    }
}

/// Offsets in an encoded batch body of the checksum column (the last column): where its
/// buffers start, and where its values start.
fn crc_column_offsets(ipc_message: &[u8]) -> Result<(usize, usize)> {
    let bad = || Error::Format("an encoded batch has no checksum column buffers".into());
    let m = arrow_ipc::root_as_message(ipc_message).map_err(|_| bad())?;
    let rb = m.header_as_record_batch().ok_or_else(bad)?;
    let bufs = rb.buffers().ok_or_else(bad)?;
    let k = bufs.len();
    if k < 2 {
        return Err(bad());
    }
    Ok((
        bufs.get(k - 2).offset() as usize,
        bufs.get(k - 1).offset() as usize,
    ))
}

/// A reader that counts the bytes consumed and keeps the last 8 (to tell a stream that ended
/// with its end-of-stream marker from one cut at a message boundary).
pub struct Counting<R> {
    pub inner: R,
    pub pos: u64,
    last8: [u8; 8],
}

impl<R> Counting<R> {
    pub fn new(inner: R) -> Self {
        Counting {
            inner,
            pos: 0,
            last8: [0; 8],
        }
    }

    /// True when the last bytes consumed were the end-of-stream marker.
    pub fn after_eos(&self) -> bool {
        self.pos >= 8 && self.last8 == EOS
    }
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        let got = &buf[..n];
        if n >= 8 {
            self.last8.copy_from_slice(&got[n - 8..]);
        } else {
            self.last8.rotate_left(n);
            self.last8[8 - n..].copy_from_slice(got);
        }
        Ok(n)
    }
}

/// A unique id for one run (128 random bits, hex), written in its metadata and its stream's
/// trailer so that a file mixing two runs' metadata and intervals is told apart.
pub fn new_run_id() -> String {
    format!("{:032x}", rand::random::<u128>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::columns;
    use crate::capture::IntervalRow;

    fn batch(n: usize) -> (SchemaRef, RecordBatch) {
        let schema = crate::capture::ipc::schema(true, "{}");
        let rows: Vec<IntervalRow> = (0..n)
            .map(|i| IntervalRow {
                t_s: i as f64 + 1.0,
                interval_s: 1.0,
                ios: [i as u64, 2 * i as u64, 0],
                step: format!("s{i}"),
                ..Default::default()
            })
            .collect();
        let b = crate::capture::ipc::rows_to_batch(&schema, &rows).unwrap();
        (schema, b)
    }

    /// The checksum written from the bytes already encoded is the one the reader computes by
    /// encoding the batch on its own (files of either writer verify with either reader).
    #[test]
    fn single_encode_checksum_matches_batch_crc() {
        for n in [0, 1, 3, 64, 1000] {
            let (schema, b) = batch(n);
            let mut w = BatchWriter::new(Vec::new(), &schema).unwrap();
            w.write(&b).unwrap();
            let bytes = w.finish("r", None).unwrap();
            let mut r = arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None)
                .unwrap();
            let got = r.next().unwrap().unwrap();
            let (plain, checked) = check::plain_schema(&got.schema());
            assert!(checked);
            let data = check::verify(&got, &plain).unwrap();
            assert!(data.is_ok(), "{n} rows: checksum mismatch");
            assert_eq!(data.unwrap().0.columns(), b.columns());
            assert_eq!(
                got.num_columns(),
                columns::written(true).count() + 1,
                "checksum column"
            );
        }
    }

    #[test]
    fn trailer_round_trips_and_rejects_damage() {
        let t = Trailer {
            run_id: "abc".into(),
            intervals: 7,
            batches: 2,
            chain_crc32: 99,
            meta: Some(serde_json::json!({"status": "complete"})),
        };
        let b = t.to_bytes().unwrap();
        assert_eq!(Trailer::parse(&b).unwrap(), t);
        for i in 0..b.len() {
            let mut d = b.clone();
            d[i] ^= 0x10;
            assert!(Trailer::parse(&d).is_err(), "flip at {i} accepted");
            assert!(Trailer::parse(&b[..i]).is_err(), "cut at {i} accepted");
        }
    }
}
