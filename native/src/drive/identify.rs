//! Decoders of the NVMe Identify structures and the sanitize status log into typed records
//! (NVMe Base Specification 2.0: Identify Controller figure 275, power state descriptor
//! figure 276, NVM Command Set Identify Namespace figure 97 of the NVM Command Set spec 1.0,
//! Sanitize Status log figure 260). Offsets are bytes from the start of the structure.

use crate::error::{Error, Result};
use serde::Serialize;

fn le16(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}
fn le32(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}
fn le64(b: &[u8], o: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[o..o + 8]);
    u64::from_le_bytes(a)
}
/// A 128-bit little-endian count (TNVMCAP), saturated to u64 (18 EB is enough).
fn le128_sat(b: &[u8], o: usize) -> u64 {
    if b[o + 8..o + 16].iter().any(|&x| x != 0) {
        u64::MAX
    } else {
        le64(b, o)
    }
}
/// An ASCII field padded with spaces (SN, MN, FR).
fn ascii(b: &[u8], o: usize, n: usize) -> String {
    String::from_utf8_lossy(&b[o..o + n])
        .trim_end_matches([' ', '\0'])
        .trim_start()
        .to_string()
}

fn need(b: &[u8], n: usize, what: &str) -> Result<()> {
    if b.len() < n {
        return Err(Error::Format(format!(
            "an NVMe {what} must be {n} bytes, got {}; pass the whole structure",
            b.len()
        )));
    }
    Ok(())
}

/// Kelvin (as the drive reports) → °C; 0 means "not reported".
fn kelvin_to_c(k: u16) -> Option<i32> {
    (k != 0).then(|| i32::from(k) - 273)
}

/// One power state descriptor.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PowerState {
    pub index: u8,
    pub max_power_w: f64,
    /// Non-operational state (the drive processes no I/O in it).
    pub non_operational: bool,
    pub entry_latency_us: u32,
    pub exit_latency_us: u32,
    pub idle_power_w: Option<f64>,
    pub active_power_w: Option<f64>,
}

/// Sanitize capabilities (SANICAP).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Sanicap {
    pub crypto_erase: bool,
    pub block_erase: bool,
    pub overwrite: bool,
}

/// Format NVM attributes (FNA).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Fna {
    /// A format applies to every namespace of the controller (bit 0).
    pub format_all_namespaces: bool,
    /// A secure erase applies to every namespace (bit 1).
    pub erase_all_namespaces: bool,
    /// Cryptographic erase is supported as a format's secure erase (bit 2).
    pub crypto_erase: bool,
}

/// The fields of Identify Controller a lab report and the purge decision need.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IdController {
    pub pci_vendor_id: u16,
    pub serial: String,
    pub model: String,
    pub firmware: String,
    /// NVMe version the controller reports ("1.4.0"), when it reports one.
    pub nvme_version: Option<String>,
    /// Maximum data transfer size, a power of two in minimum page units (0 = no limit).
    pub mdts: u8,
    pub format_nvm_supported: bool,
    pub security_send_receive: bool,
    pub namespace_management: bool,
    pub firmware_slots: u8,
    pub firmware_slot1_read_only: bool,
    pub warning_temp_c: Option<i32>,
    pub critical_temp_c: Option<i32>,
    pub total_capacity_bytes: Option<u64>,
    pub sanitize: Sanicap,
    pub format: Fna,
    pub volatile_write_cache_present: bool,
    pub namespaces_max: u32,
    pub power_states: Vec<PowerState>,
}

/// Decodes Identify Controller (4096 bytes).
pub fn decode_controller(b: &[u8]) -> Result<IdController> {
    need(b, 4096, "Identify Controller structure")?;
    let ver = le32(b, 80);
    let oacs = le16(b, 256);
    let frmw = b[260];
    let npss = b[263];
    let sanicap = le32(b, 328);
    let fna = b[524];
    let tnvmcap = le128_sat(b, 280);
    let power_states = (0..=npss.min(31))
        .map(|i| power_state(&b[2048 + 32 * usize::from(i)..][..32], i))
        .collect();
    Ok(IdController {
        pci_vendor_id: le16(b, 0),
        serial: ascii(b, 4, 20),
        model: ascii(b, 24, 40),
        firmware: ascii(b, 64, 8),
        nvme_version: (ver != 0)
            .then(|| format!("{}.{}.{}", ver >> 16, (ver >> 8) & 0xff, ver & 0xff)),
        mdts: b[77],
        security_send_receive: oacs & 1 != 0,
        format_nvm_supported: oacs & 2 != 0,
        namespace_management: oacs & 8 != 0,
        firmware_slot1_read_only: frmw & 1 != 0,
        firmware_slots: (frmw >> 1) & 0x7,
        warning_temp_c: kelvin_to_c(le16(b, 266)),
        critical_temp_c: kelvin_to_c(le16(b, 268)),
        total_capacity_bytes: (tnvmcap != 0).then_some(tnvmcap),
        sanitize: Sanicap {
            crypto_erase: sanicap & 1 != 0,
            block_erase: sanicap & 2 != 0,
            overwrite: sanicap & 4 != 0,
        },
        format: Fna {
            format_all_namespaces: fna & 1 != 0,
            erase_all_namespaces: fna & 2 != 0,
            crypto_erase: fna & 4 != 0,
        },
        volatile_write_cache_present: b[525] & 1 != 0,
        namespaces_max: le32(b, 516),
        power_states,
    })
}

/// One 32-byte power state descriptor; powers in watts (MPS selects 0.01 W or 0.0001 W units
/// for MP; IDLP/ACTP carry their own 2-bit scale: 01b = 0.0001 W, 10b = 0.01 W, 00b = none).
fn power_state(d: &[u8], index: u8) -> PowerState {
    let mps = d[3] & 1 != 0;
    let mp = f64::from(le16(d, 0)) * if mps { 0.0001 } else { 0.01 };
    let scaled = |v: u16, scale: u8| match scale {
        1 => Some(f64::from(v) * 0.0001),
        2 => Some(f64::from(v) * 0.01),
        _ => None,
    };
    PowerState {
        index,
        max_power_w: round4(mp),
        non_operational: d[3] & 2 != 0,
        entry_latency_us: le32(d, 4),
        exit_latency_us: le32(d, 8),
        idle_power_w: scaled(le16(d, 16), d[18] >> 6).map(round4),
        active_power_w: scaled(le16(d, 20), d[22] >> 6).map(round4),
    }
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// One LBA format of a namespace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LbaFormat {
    pub index: u8,
    pub data_bytes: u32,
    pub metadata_bytes: u16,
    /// Relative performance: 0 best … 3 degraded.
    pub relative_performance: u8,
}

/// What a read of a deallocated block returns (DLFEAT bits 2:0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DeallocatedRead {
    NotReported,
    Zeros,
    Ones,
}

/// The fields of Identify Namespace the record and the verification need.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IdNamespace {
    pub size_blocks: u64,
    pub capacity_blocks: u64,
    pub used_blocks: u64,
    pub formats: Vec<LbaFormat>,
    /// Index of the LBA format in use.
    pub format_in_use: u8,
    pub deallocated_read: DeallocatedRead,
}

impl IdNamespace {
    /// The format in use.
    pub fn current(&self) -> Option<&LbaFormat> {
        self.formats.iter().find(|f| f.index == self.format_in_use)
    }

    /// Size of the namespace in bytes (size_blocks × block size), when the format is known.
    pub fn size_bytes(&self) -> Option<u64> {
        self.current()
            .map(|f| self.size_blocks * u64::from(f.data_bytes))
    }
}

/// Decodes Identify Namespace (4096 bytes). An inactive namespace is all zeros: refused.
pub fn decode_namespace(b: &[u8]) -> Result<IdNamespace> {
    need(b, 4096, "Identify Namespace structure")?;
    let nlbaf = b[25];
    let flbas = b[26];
    let formats: Vec<LbaFormat> = (0..=nlbaf.min(63))
        .map(|i| {
            let o = 128 + 4 * usize::from(i);
            LbaFormat {
                index: i,
                data_bytes: 1u32.checked_shl(u32::from(b[o + 2])).unwrap_or(0),
                metadata_bytes: le16(b, o),
                relative_performance: b[o + 3] & 0x3,
            }
        })
        .collect();
    let ns = IdNamespace {
        size_blocks: le64(b, 0),
        capacity_blocks: le64(b, 8),
        used_blocks: le64(b, 16),
        format_in_use: (flbas & 0xf) | ((flbas >> 5) & 0x3) << 4,
        deallocated_read: match b[33] & 0x7 {
            1 => DeallocatedRead::Zeros,
            2 => DeallocatedRead::Ones,
            _ => DeallocatedRead::NotReported,
        },
        formats,
    };
    if ns.size_blocks == 0 || ns.current().is_none_or(|f| f.data_bytes < 512) {
        return Err(Error::Format(
            "the Identify Namespace structure is empty or names no valid LBA format (an inactive namespace?); check the namespace id".into(),
        ));
    }
    Ok(ns)
}

/// State of the most recent sanitize (log page 81h, SSTAT bits 2:0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SanitizeState {
    Never,
    Completed,
    InProgress,
    Failed,
    CompletedNoDeallocate,
    Unknown,
}

/// The sanitize status log page (81h), first 20 bytes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SanitizeStatus {
    /// Progress of a running sanitize, 0..1 (SPROG / 65536).
    pub progress: f64,
    pub state: SanitizeState,
    /// The CDW10 of the sanitize that set this status.
    pub last_cdw10: u32,
    /// The drive's estimates, seconds (None: no estimate): overwrite, block, crypto.
    pub estimate_overwrite_s: Option<u32>,
    pub estimate_block_erase_s: Option<u32>,
    pub estimate_crypto_erase_s: Option<u32>,
}

/// Decodes the sanitize status log (at least 20 bytes).
pub fn decode_sanitize_status(b: &[u8]) -> Result<SanitizeStatus> {
    need(b, 20, "sanitize status log page (81h)")?;
    let est = |o| {
        let v = le32(b, o);
        (v != u32::MAX).then_some(v)
    };
    Ok(SanitizeStatus {
        progress: f64::from(le16(b, 0)) / 65536.0,
        state: match le16(b, 2) & 0x7 {
            0 => SanitizeState::Never,
            1 => SanitizeState::Completed,
            2 => SanitizeState::InProgress,
            3 => SanitizeState::Failed,
            4 => SanitizeState::CompletedNoDeallocate,
            _ => SanitizeState::Unknown,
        },
        last_cdw10: le32(b, 4),
        estimate_overwrite_s: est(8),
        estimate_block_erase_s: est(12),
        estimate_crypto_erase_s: est(16),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::drive::fake::{id_ctrl_bytes, id_ns_bytes, CtrlSpec};

    #[test]
    fn controller_fields_come_from_their_offsets() {
        let spec = CtrlSpec {
            sanicap: 0b011,
            fna: 0b101,
            ..CtrlSpec::default()
        };
        let c = decode_controller(&id_ctrl_bytes(&spec)).unwrap();
        assert_eq!(c.model, spec.model);
        assert_eq!(c.serial, spec.serial);
        assert_eq!(c.firmware, spec.firmware);
        assert_eq!(c.nvme_version.as_deref(), Some("1.4.0"));
        assert!(c.format_nvm_supported && c.security_send_receive);
        assert_eq!(c.warning_temp_c, Some(80));
        assert_eq!(c.critical_temp_c, Some(85));
        assert!(c.sanitize.block_erase && c.sanitize.crypto_erase && !c.sanitize.overwrite);
        assert!(c.format.format_all_namespaces && !c.format.erase_all_namespaces);
        assert!(c.format.crypto_erase);
        assert!(c.volatile_write_cache_present);
        assert_eq!(c.total_capacity_bytes, Some(spec.capacity_bytes));
        assert_eq!(c.power_states.len(), 3);
        let ps0 = &c.power_states[0];
        assert_eq!((ps0.max_power_w, ps0.non_operational), (8.0, false));
        let ps2 = &c.power_states[2];
        assert!(ps2.non_operational);
        assert_eq!(ps2.max_power_w, 0.005);
        assert_eq!(ps2.exit_latency_us, 22_000);
    }

    #[test]
    fn namespace_formats_and_the_format_in_use() {
        let b = id_ns_bytes(1_953_525_168, 0, 1);
        let ns = decode_namespace(&b).unwrap();
        assert_eq!(ns.formats.len(), 2);
        assert_eq!(ns.current().unwrap().data_bytes, 512);
        assert_eq!(ns.size_bytes(), Some(1_953_525_168 * 512));
        assert_eq!(ns.deallocated_read, DeallocatedRead::Zeros);
        let ns = decode_namespace(&id_ns_bytes(1000, 1, 1)).unwrap();
        assert_eq!(ns.current().unwrap().data_bytes, 4096);
        assert!(decode_namespace(&[0u8; 4096]).is_err());
        assert!(decode_namespace(&[0u8; 100]).is_err());
    }

    fn padded(b: &[u8]) -> Vec<u8> {
        let mut v = b.to_vec();
        v.resize(4096.max(b.len()), 0);
        v
    }

    /// Real bytes from a Samsung enterprise drive (tests/data/nvme/SOURCES.md).
    #[test]
    fn real_identify_controller_decodes_as_nvme_cli_printed_it() {
        let c = decode_controller(&padded(include_bytes!(
            "../../../tests/data/nvme/ecclesia_id_ctrl.bin"
        )))
        .unwrap();
        assert_eq!(c.pci_vendor_id, 0x144d);
        assert_eq!(c.serial, "S5L0NYZM9A0014");
        assert_eq!(c.model, "ABCDEFGHIJKL-000GG");
        assert_eq!(c.firmware, "MPKD0P21");
        assert_eq!(c.warning_temp_c, Some(345 - 273));
        assert_eq!(c.critical_temp_c, Some(358 - 273));
        assert_eq!(c.total_capacity_bytes, Some(3_840_755_982_336));
        assert_eq!(c.mdts, 9);
        assert_eq!(c.namespaces_max, 8);
        assert_eq!(
            c.sanitize,
            Sanicap {
                crypto_erase: true,
                block_erase: true,
                overwrite: false
            }
        );
        assert!(c.format_nvm_supported);
        assert!(!c.format.format_all_namespaces && !c.format.erase_all_namespaces);
        assert!(c.format.crypto_erase);
        assert!(!c.volatile_write_cache_present);
        assert_eq!(c.power_states.len(), 1);
        let p = &c.power_states[0];
        assert_eq!(
            (p.max_power_w, p.entry_latency_us, p.exit_latency_us),
            (25.0, 100, 100)
        );
        assert!(!p.non_operational);
        assert_eq!(c.nvme_version.as_deref(), Some("1.3.0"));
    }

    #[test]
    fn real_identify_namespace_decodes_as_the_source_asserts() {
        let ns = decode_namespace(&padded(include_bytes!(
            "../../../tests/data/nvme/ecclesia_id_ns.bin"
        )))
        .unwrap();
        assert_eq!(ns.size_blocks, 0x40000);
        assert_eq!(ns.format_in_use, 1);
        assert_eq!(ns.current().unwrap().data_bytes, 4096);
        assert_eq!(ns.size_bytes(), Some(0x40000 * 4096));
        assert_eq!(ns.formats[0].data_bytes, 512);
        assert_eq!(ns.formats[0].relative_performance, 2);
        assert_eq!(ns.formats[1].relative_performance, 0);
    }

    #[test]
    fn real_sanitize_logs_decode() {
        let b = decode_sanitize_status(include_bytes!(
            "../../../tests/data/nvme/ecclesia_sanitize_log_block.bin"
        ))
        .unwrap();
        assert_eq!(b.state, SanitizeState::Completed);
        assert_eq!(b.last_cdw10 & 7, 2);
        assert_eq!(b.estimate_block_erase_s, None);
        let k = decode_sanitize_status(include_bytes!(
            "../../../tests/data/nvme/ecclesia_sanitize_log_crypto.bin"
        ))
        .unwrap();
        assert_eq!(k.state, SanitizeState::Completed);
        assert_eq!(k.last_cdw10, 0x20c);
        assert!(k.progress > 0.99);
    }

    #[test]
    fn sanitize_status_states_and_estimates() {
        let mut b = vec![0u8; 512];
        b[0..2].copy_from_slice(&32768u16.to_le_bytes());
        b[2] = 2;
        b[4] = 0x02;
        b[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        b[12..16].copy_from_slice(&30u32.to_le_bytes());
        let s = decode_sanitize_status(&b).unwrap();
        assert_eq!(s.state, SanitizeState::InProgress);
        assert_eq!(s.progress, 0.5);
        assert_eq!(s.last_cdw10, 2);
        assert_eq!(s.estimate_overwrite_s, None);
        assert_eq!(s.estimate_block_erase_s, Some(30));
    }
}
