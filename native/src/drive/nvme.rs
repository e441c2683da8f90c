//! The NVMe admin command set through the kernel's admin pass-through ioctl
//! (`NVME_IOCTL_ADMIN_CMD`, `linux/nvme_ioctl.h`), behind [`NvmeAdmin`] so that every caller
//! can be run against [`super::fake::FakeController`] instead of a drive.
//!
//! Why hand-written: the interface is one ioctl and a 72-byte struct, stable since Linux 3.3;
//! the maintained C library (libnvme) would add a C dependency and the Rust crates on
//! crates.io that wrap it are unmaintained or SPDK-only. The helpers build the command dwords
//! exactly as the NVMe Base Specification 2.0 lays them out (figure numbers in comments).

use crate::error::{Error, Result};
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// Admin opcodes used here (NVMe Base 2.0, figure 84).
pub mod opcode {
    pub const GET_LOG_PAGE: u8 = 0x02;
    pub const IDENTIFY: u8 = 0x06;
    pub const GET_FEATURES: u8 = 0x0a;
    pub const FORMAT_NVM: u8 = 0x80;
    pub const SANITIZE: u8 = 0x84;
}

/// Feature identifiers read by the device record (NVMe Base 2.0, figure 317).
pub mod feature {
    pub const POWER_MANAGEMENT: u8 = 0x02;
    pub const TEMPERATURE_THRESHOLD: u8 = 0x04;
    pub const VOLATILE_WRITE_CACHE: u8 = 0x06;
}

/// Log page identifiers (NVMe Base 2.0, figure 202).
pub mod log {
    pub const SMART_HEALTH: u8 = 0x02;
    pub const SANITIZE_STATUS: u8 = 0x81;
}

/// The namespace id meaning "every namespace of the controller".
pub const NSID_ALL: u32 = 0xffff_ffff;

/// Size of an Identify data structure, bytes.
pub const IDENTIFY_BYTES: usize = 4096;

/// `struct nvme_passthru_cmd` (= `nvme_admin_cmd`) of `linux/nvme_ioctl.h`, field for field.
/// `addr` and `data_len` are filled from the data buffer by the ioctl implementation; the
/// other fields are the submission queue entry's dwords. `result` holds completion dword 0.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AdminCmd {
    pub opcode: u8,
    pub flags: u8,
    pub rsvd1: u16,
    pub nsid: u32,
    pub cdw2: u32,
    pub cdw3: u32,
    pub metadata: u64,
    pub addr: u64,
    pub metadata_len: u32,
    pub data_len: u32,
    pub cdw10: u32,
    pub cdw11: u32,
    pub cdw12: u32,
    pub cdw13: u32,
    pub cdw14: u32,
    pub cdw15: u32,
    pub timeout_ms: u32,
    pub result: u32,
}

const _: () = assert!(std::mem::size_of::<AdminCmd>() == 72);

/// `_IOWR('N', 0x41, struct nvme_admin_cmd)`: direction 3 (read|write) << 30, size 72 << 16,
/// type 'N' << 8, number 0x41.
pub const NVME_IOCTL_ADMIN_CMD: libc::c_ulong =
    (3 << 30) | (72 << 16) | ((b'N' as libc::c_ulong) << 8) | 0x41;

impl AdminCmd {
    /// The command's name for messages ("Identify (06h)").
    pub fn name(&self) -> String {
        let n = match self.opcode {
            opcode::GET_LOG_PAGE => "Get Log Page",
            opcode::IDENTIFY => "Identify",
            opcode::GET_FEATURES => "Get Features",
            opcode::FORMAT_NVM => "Format NVM",
            opcode::SANITIZE => "Sanitize",
            _ => "admin command",
        };
        format!("{n} ({:02x}h)", self.opcode)
    }
}

/// Something that executes NVMe admin commands: the kernel ([`IoctlAdmin`]) or a fake.
pub trait NvmeAdmin {
    /// Sends `cmd` with `data` as its data buffer (read into for a controller-to-host command,
    /// may be empty) and returns completion dword 0. A non-zero NVMe status is an error naming
    /// the command and the status.
    fn admin(&self, cmd: &mut AdminCmd, data: &mut [u8]) -> Result<u32>;

    /// Where the commands go, for messages ("/dev/nvme0").
    fn describe(&self) -> String;
}

/// Decodes an NVMe status field (ioctl return value: status code type << 8 | status code).
pub fn status_text(status: i32) -> String {
    let sct = (status >> 8) & 0x7;
    let sc = status & 0xff;
    let what = match (sct, sc) {
        (0, 0x01) => "Invalid Command Opcode",
        (0, 0x02) => "Invalid Field in Command",
        (0, 0x0b) => "Invalid Namespace or Format",
        (0, 0x1d) => "Sanitize Failed",
        (0, 0x1e) => "Sanitize In Progress",
        (0, 0x20) => "Namespace is Write Protected",
        (1, 0x0a) => "Invalid Format",
        (1, 0x15) => "Namespace Insufficient Capacity",
        (1, 0x23) => "Sanitize Prohibited While Persistent Memory Region is Enabled",
        _ => "see the NVMe status code tables",
    };
    format!("status 0x{status:03x} (type {sct}, code 0x{sc:02x}: {what})")
}

/// The kernel's admin pass-through on an NVMe character (`/dev/nvme0`) or namespace block
/// device (`/dev/nvme0n1`): both accept `NVME_IOCTL_ADMIN_CMD`. Needs CAP_SYS_ADMIN.
pub struct IoctlAdmin {
    file: File,
    path: PathBuf,
}

impl IoctlAdmin {
    /// Opens `path` read-only (the admin ioctl needs no write access to the node).
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| {
            Error::io(
                format!("opening {} for NVMe admin commands failed", path.display()),
                e,
            )
        })?;
        Ok(IoctlAdmin {
            file,
            path: path.to_path_buf(),
        })
    }
}

impl NvmeAdmin for IoctlAdmin {
    fn admin(&self, cmd: &mut AdminCmd, data: &mut [u8]) -> Result<u32> {
        cmd.addr = if data.is_empty() {
            0
        } else {
            data.as_mut_ptr() as u64
        };
        cmd.data_len = u32::try_from(data.len()).map_err(|_| {
            Error::InvalidValue(format!(
                "an NVMe data buffer of {} bytes is too large; use at most 4 GiB",
                data.len()
            ))
        })?;
        // SAFETY: `cmd` is a valid nvme_passthru_cmd; `addr`/`data_len` describe `data`, which
        // outlives the call; the kernel writes at most `data_len` bytes there and `result`.
        let r = unsafe {
            libc::ioctl(
                self.file.as_raw_fd(),
                NVME_IOCTL_ADMIN_CMD as _,
                cmd as *mut AdminCmd,
            )
        };
        cmd.addr = 0;
        if r < 0 {
            return Err(Error::io(
                format!("NVMe {} on {} failed", cmd.name(), self.path.display()),
                std::io::Error::last_os_error(),
            ));
        }
        if r > 0 {
            return Err(command_error(cmd, &self.describe(), r));
        }
        Ok(cmd.result)
    }

    fn describe(&self) -> String {
        self.path.display().to_string()
    }
}

/// The error for a command the controller completed with a non-zero status.
pub fn command_error(cmd: &AdminCmd, device: &str, status: i32) -> Error {
    Error::io(
        format!(
            "NVMe {} on {device} was rejected by the drive with {}",
            cmd.name(),
            status_text(status)
        ),
        std::io::Error::other("NVMe command error"),
    )
}

/// Identify with CNS `cns` for namespace `nsid` (figure 273): 4096 bytes.
pub fn identify(dev: &dyn NvmeAdmin, cns: u8, nsid: u32) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; IDENTIFY_BYTES];
    let mut c = AdminCmd {
        opcode: opcode::IDENTIFY,
        nsid,
        cdw10: u32::from(cns),
        ..Default::default()
    };
    dev.admin(&mut c, &mut buf)?;
    Ok(buf)
}

/// Identify Controller (CNS 01h), raw.
pub fn identify_controller(dev: &dyn NvmeAdmin) -> Result<Vec<u8>> {
    identify(dev, 0x01, 0)
}

/// Identify Namespace (CNS 00h) of `nsid`, raw.
pub fn identify_namespace(dev: &dyn NvmeAdmin, nsid: u32) -> Result<Vec<u8>> {
    identify(dev, 0x00, nsid)
}

/// Active namespace ids (CNS 02h): every active namespace of the controller, ascending.
pub fn active_namespaces(dev: &dyn NvmeAdmin) -> Result<Vec<u32>> {
    let b = identify(dev, 0x02, 0)?;
    Ok(b.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .take_while(|&n| n != 0)
        .collect())
}

/// Get Log Page `lid` for `nsid`, `len_bytes` long (a multiple of 4), from offset 0
/// (figures 197–200: NUMD is a 0-based dword count split in NUMDL/NUMDU).
pub fn get_log_page(dev: &dyn NvmeAdmin, lid: u8, nsid: u32, len_bytes: usize) -> Result<Vec<u8>> {
    if len_bytes == 0 || !len_bytes.is_multiple_of(4) {
        return Err(Error::InvalidValue(format!(
            "a log page read of {len_bytes} bytes is not a whole number of dwords; ask for a positive multiple of 4"
        )));
    }
    let numd = (len_bytes / 4 - 1) as u32;
    let mut buf = vec![0u8; len_bytes];
    let mut c = AdminCmd {
        opcode: opcode::GET_LOG_PAGE,
        nsid,
        cdw10: u32::from(lid) | ((numd & 0xffff) << 16),
        cdw11: numd >> 16,
        ..Default::default()
    };
    dev.admin(&mut c, &mut buf)?;
    Ok(buf)
}

/// Get Features `fid`, current value (SEL 000b): completion dword 0 (figure 313).
pub fn get_features(dev: &dyn NvmeAdmin, fid: u8, nsid: u32) -> Result<u32> {
    let mut c = AdminCmd {
        opcode: opcode::GET_FEATURES,
        nsid,
        cdw10: u32::from(fid),
        ..Default::default()
    };
    dev.admin(&mut c, &mut [])
}

/// Secure Erase Settings of Format NVM (figure 375, CDW10 bits 11:9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatErase {
    None = 0,
    UserData = 1,
    Crypto = 2,
}

/// Sanitize actions (figure 380, CDW10 SANACT bits 2:0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SanitizeAction {
    ExitFailureMode = 1,
    BlockErase = 2,
    Overwrite = 3,
    CryptoErase = 4,
}

/// The Format NVM command (not sent): LBA format index `lbaf` kept, no metadata or protection
/// change, erase `ses`; `nsid` = one namespace or [`NSID_ALL`].
pub fn format_nvm_cmd(nsid: u32, lbaf: u8, ses: FormatErase) -> AdminCmd {
    let lbaf = u32::from(lbaf);
    AdminCmd {
        opcode: opcode::FORMAT_NVM,
        nsid,
        cdw10: (lbaf & 0xf) | ((ses as u32) << 9) | (((lbaf >> 4) & 0x3) << 12),
        // a format can take minutes on a large drive
        timeout_ms: 3_600_000,
        ..Default::default()
    }
}

/// The Sanitize command (not sent). It always acts on every namespace of the controller;
/// `nsid` is ignored by the drive and sent as 0. No-Deallocate stays clear, so the drive
/// deallocates after the erase (the state a PTS purge wants).
pub fn sanitize_cmd(action: SanitizeAction, overwrite_pattern: u32) -> AdminCmd {
    let mut cdw10 = action as u32;
    if action == SanitizeAction::Overwrite {
        cdw10 |= 1 << 4; // one pass
    }
    AdminCmd {
        opcode: opcode::SANITIZE,
        cdw10,
        cdw11: overwrite_pattern,
        ..Default::default()
    }
}

/// Sends a Format NVM built by [`format_nvm_cmd`].
pub fn format_nvm(dev: &dyn NvmeAdmin, nsid: u32, lbaf: u8, ses: FormatErase) -> Result<()> {
    let mut c = format_nvm_cmd(nsid, lbaf, ses);
    dev.admin(&mut c, &mut []).map(|_| ())
}

/// Starts a Sanitize built by [`sanitize_cmd`]; it runs in the background on the drive:
/// follow it with the sanitize status log (81h, [`super::identify::SanitizeStatus`]).
pub fn sanitize(dev: &dyn NvmeAdmin, action: SanitizeAction) -> Result<()> {
    let mut c = sanitize_cmd(action, 0);
    dev.admin(&mut c, &mut []).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drive::fake::FakeController;

    #[test]
    fn ioctl_number_matches_the_kernel_header() {
        // _IOWR('N', 0x41, struct nvme_admin_cmd) with sizeof == 72, as nvme-cli computes it
        assert_eq!(NVME_IOCTL_ADMIN_CMD, 0xc048_4e41);
        assert_eq!(std::mem::offset_of!(AdminCmd, addr), 24);
        assert_eq!(std::mem::offset_of!(AdminCmd, data_len), 36);
        assert_eq!(std::mem::offset_of!(AdminCmd, cdw10), 40);
        assert_eq!(std::mem::offset_of!(AdminCmd, result), 68);
    }

    #[test]
    fn log_page_dwords_are_zero_based_and_split() {
        let f = FakeController::new();
        f.set_log(0x02, vec![7u8; 512]);
        let b = get_log_page(&f, 0x02, NSID_ALL, 512).unwrap();
        assert_eq!(b, vec![7u8; 512]);
        let c = f.commands()[0];
        assert_eq!(c.opcode, 0x02);
        assert_eq!(c.cdw10, 0x02 | (127 << 16));
        assert_eq!(c.cdw11, 0);
        assert_eq!(c.nsid, NSID_ALL);
        // a 1 MiB page: NUMD = 0x3ffff, its upper half in CDW11
        f.set_log(0xc0, vec![0u8; 0x40000 * 4]);
        get_log_page(&f, 0xc0, 0, 0x40000 * 4).unwrap();
        let c = f.commands()[1];
        assert_eq!(c.cdw10 >> 16, 0xffff);
        assert_eq!(c.cdw11, 0x3);
        assert!(get_log_page(&f, 0x02, 0, 6).is_err());
    }

    #[test]
    fn format_and_sanitize_dwords() {
        let c = format_nvm_cmd(NSID_ALL, 1, FormatErase::UserData);
        assert_eq!((c.opcode, c.nsid, c.cdw10), (0x80, NSID_ALL, 0x201));
        let c = format_nvm_cmd(1, 0x13, FormatErase::Crypto);
        assert_eq!(c.cdw10, 0x3 | (2 << 9) | (1 << 12));
        let c = sanitize_cmd(SanitizeAction::BlockErase, 0);
        assert_eq!((c.opcode, c.nsid, c.cdw10), (0x84, 0, 0x2));
        assert_eq!(sanitize_cmd(SanitizeAction::CryptoErase, 0).cdw10, 0x4);
        assert_eq!(sanitize_cmd(SanitizeAction::Overwrite, 0).cdw10, 0x13);
    }

    #[test]
    fn a_rejected_command_names_itself_and_the_status() {
        let f = FakeController::new();
        f.reject(opcode::SANITIZE, 0x002);
        let e = sanitize(&f, SanitizeAction::BlockErase)
            .unwrap_err()
            .to_string();
        assert!(e.contains("Sanitize (84h)"), "{e}");
        assert!(e.contains("Invalid Field in Command"), "{e}");
    }

    #[test]
    fn opening_a_missing_node_is_an_io_error() {
        let e = IoctlAdmin::open(Path::new("/dev/nvme-does-not-exist"))
            .err()
            .unwrap();
        assert!(matches!(e, Error::Io { .. }));
    }
}
