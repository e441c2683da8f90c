//! Checksums of capture files: every record batch carries the CRC-32 of its own contents, so
//! a byte altered after writing is reported with the intervals it hit, and the metadata JSON
//! carries one too.
//!
//! The checksum is computed over the batch's Arrow IPC body (the buffers as written, without
//! the checksum column; a writer takes them from the body it already encoded, see
//! [`super::stream::BatchWriter`]) and stored in a `UInt32` column [`CRC_COL`] repeated on every row of
//! the batch; readers drop that column. Files written before checksums existed have no such
//! column and load unchecked.

use crate::error::Result;
use arrow_array::{Array, RecordBatch, UInt32Array};
use arrow_ipc::writer::{DictionaryTracker, IpcDataGenerator, IpcWriteOptions};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use std::sync::Arc;

/// The column holding each batch's checksum in a capture file.
pub const CRC_COL: &str = "_batch_crc32";
/// The schema-metadata key holding the CRC-32 of the header: the metadata JSON and every
/// column's name, type and nullability.
pub const META_CRC_KEY: &str = "flashback.meta_crc32";

/// The checksum stored under [`META_CRC_KEY`] for a file schema (checksum column included).
pub fn header_crc(fields: &arrow_schema::Fields, meta_json: &str) -> u32 {
    let mut crc = crc32(meta_json.as_bytes());
    for f in fields {
        let d = format!(
            "{}\u{1f}{}\u{1f}{}\u{1e}",
            f.name(),
            f.data_type(),
            f.is_nullable()
        );
        crc = crc32_update(crc, d.as_bytes());
    }
    crc
}

const fn crc_table() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}
static TABLE: [u32; 256] = crc_table();

/// CRC-32 (IEEE 802.3, as zlib's `crc32`) of `bytes`, continuing from `crc`.
pub fn crc32_update(crc: u32, bytes: &[u8]) -> u32 {
    let mut c = !crc;
    for &b in bytes {
        c = TABLE[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

/// CRC-32 of `bytes`.
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32_update(0, bytes)
}

/// The checksum of a batch (without its checksum column): its row count and IPC body.
pub fn batch_crc(batch: &RecordBatch) -> Result<u32> {
    let gen = IpcDataGenerator::default();
    let mut dict = DictionaryTracker::new(false);
    let (_, enc) = gen.encode(
        batch,
        &mut dict,
        &IpcWriteOptions::default(),
        &mut Default::default(),
    )?;
    let crc = crc32_update(0, &(batch.num_rows() as u64).to_le_bytes());
    Ok(crc32_update(crc, &enc.arrow_data))
}

/// `schema` with the checksum column appended.
pub fn file_schema(schema: &SchemaRef) -> SchemaRef {
    let mut fields: Vec<Arc<Field>> = schema.fields().iter().cloned().collect();
    fields.push(Arc::new(Field::new(CRC_COL, DataType::UInt32, false)));
    let mut md = schema.metadata().clone();
    if let Some(m) = md.get(super::META_KEY).cloned() {
        let crc = header_crc(&fields.clone().into(), &m);
        md.insert(META_CRC_KEY.to_string(), crc.to_string());
    }
    Arc::new(Schema::new_with_metadata(fields, md))
}

/// Drops the checksum column of a file batch read back, returning the batch and its checksum;
/// `Err(())` when the contents do not match it. `plain` is the schema without the column.
pub fn verify(
    batch: &RecordBatch,
    plain: &SchemaRef,
) -> Result<std::result::Result<(RecordBatch, u32), ()>> {
    let idx = batch.num_columns() - 1;
    let stored = batch
        .column(idx)
        .as_any()
        .downcast_ref::<UInt32Array>()
        .map(|a| a.values().to_vec())
        .unwrap_or_default();
    let mut cols = batch.columns().to_vec();
    cols.pop();
    let data = RecordBatch::try_new(plain.clone(), cols)?;
    let crc = batch_crc(&data)?;
    let ok = stored.len() == data.num_rows()
        && stored.iter().all(|&c| c == crc)
        && batch.column(idx).null_count() == 0;
    Ok(if ok { Ok((data, crc)) } else { Err(()) })
}

/// The schema of a file without its checksum column, and whether it had one.
pub fn plain_schema(schema: &SchemaRef) -> (SchemaRef, bool) {
    match schema.fields().last() {
        Some(f) if f.name() == CRC_COL => {
            let fields: Vec<Arc<Field>> = schema.fields()[..schema.fields().len() - 1].to_vec();
            let mut md = schema.metadata().clone();
            md.remove(META_CRC_KEY);
            (Arc::new(Schema::new_with_metadata(fields, md)), true)
        }
        _ => (schema.clone(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_matches_the_standard_check_value() {
        // the CRC-32/ISO-HDLC check value (same as zlib.crc32(b"123456789"))
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }
}
