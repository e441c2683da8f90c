//! The purge decision and its execution: which device-native method a drive offers (read from
//! Identify / `hdparm -I`), what it reaches (every namespace a controller-wide command erases),
//! whether it may run (confirmation by name, the in-use guard per device, frozen drives, USB
//! bridges), the commands it sends, and the read-back that checks it worked.
//!
//! Methods, in the order `auto` tries them (SNIA PTS accepts each as a purge):
//! NVMe Sanitize block erase, NVMe Sanitize crypto erase, NVMe Format with user-data erase,
//! NVMe Format with crypto erase, SATA Sanitize block erase, SATA Sanitize crypto scramble,
//! ATA enhanced security erase, ATA security erase. A device that offers none (a loop device,
//! a virtual disk) gets TRIM, or a zero fill where TRIM is not supported, labelled "not a PTS
//! purge"; those two run through the engine's guarded target (`Target.sanitize`/a write run),
//! not here.
//!
//! [`plan()`] reads the device and decides (the per-method rows in `methods`), [`execute()`]
//! sends the commands and reads back, [`run_on_system`] and [`run_with_fakes`] wire the
//! parties.

mod execute;
mod methods;
mod plan;
mod system;

pub use execute::execute;
pub use plan::plan;
pub use system::{run_on_system, run_with_fakes, SystemGuard};

use super::ata::{AtaCaps, Tool};
use super::identify::{IdController, IdNamespace};
use super::media::Media;
use super::nvme::NvmeAdmin;
use super::topology::Topology;
use crate::error::{Error, Result};
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

/// Purge methods (see the module documentation for the order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Method {
    NvmeSanitizeBlock,
    NvmeSanitizeCrypto,
    NvmeFormatUserData,
    NvmeFormatCrypto,
    SataSanitizeBlock,
    SataSanitizeCrypto,
    AtaSecureEraseEnhanced,
    AtaSecureErase,
    Trim,
    ZeroFill,
}

impl Method {
    pub const ALL: [Method; 10] = [
        Method::NvmeSanitizeBlock,
        Method::NvmeSanitizeCrypto,
        Method::NvmeFormatUserData,
        Method::NvmeFormatCrypto,
        Method::SataSanitizeBlock,
        Method::SataSanitizeCrypto,
        Method::AtaSecureEraseEnhanced,
        Method::AtaSecureErase,
        Method::Trim,
        Method::ZeroFill,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Method::NvmeSanitizeBlock => "nvme-sanitize-block",
            Method::NvmeSanitizeCrypto => "nvme-sanitize-crypto",
            Method::NvmeFormatUserData => "nvme-format-user-data",
            Method::NvmeFormatCrypto => "nvme-format-crypto",
            Method::SataSanitizeBlock => "sata-sanitize-block",
            Method::SataSanitizeCrypto => "sata-sanitize-crypto",
            Method::AtaSecureEraseEnhanced => "ata-secure-erase-enhanced",
            Method::AtaSecureErase => "ata-secure-erase",
            Method::Trim => "trim",
            Method::ZeroFill => "zero-fill",
        }
    }

    pub fn from_name(s: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.name() == s)
    }

    /// A purge in the SNIA PTS sense (TRIM and a zero fill are not).
    pub fn is_pts_purge(self) -> bool {
        !matches!(self, Method::Trim | Method::ZeroFill)
    }

    /// The sentence the record, replays and the report use.
    pub fn label(self) -> String {
        match self {
            Method::Trim => "not purged (TRIM only): not a PTS purge".into(),
            Method::ZeroFill => "not purged (zero fill only): not a PTS purge".into(),
            m => format!("purged by {}", m.name()),
        }
    }
}

/// Names of every method, for messages and the CLI's choices.
pub fn method_names() -> Vec<&'static str> {
    Method::ALL.iter().map(|m| m.name()).collect()
}

/// Why a device (by `/dev` path) may not be written; the engine's in-use guard in production.
pub trait Guard {
    fn in_use(&self, dev: &str) -> Option<String>;
}

/// Everything a purge talks to; swapped for fakes in tests.
pub struct Env<'a> {
    /// Root under which `sys/` is read (`/`, or a fixture tree).
    pub root: &'a Path,
    /// The NVMe controller of the device (None: not opened / not NVMe).
    pub admin: Option<&'a dyn NvmeAdmin>,
    pub hdparm: &'a dyn Tool,
    pub guard: &'a dyn Guard,
    /// The device's blocks, for the read-back.
    pub media: Option<&'a dyn Media>,
    /// How to wait between polls of a running sanitize.
    pub sleep: &'a dyn Fn(Duration),
}

/// What the caller asks.
pub struct Request {
    /// `/dev/<name>`.
    pub device: String,
    /// Every device named in the confirmation.
    pub destroy: Vec<String>,
    /// `auto` or a method name.
    pub method: String,
    /// Blocks read back after the purge.
    pub verify_samples: u64,
}

/// What `hdparm`/Identify said the device can do.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Capabilities {
    pub nvme_controller: Option<IdController>,
    pub nvme_namespace: Option<IdNamespace>,
    /// Active namespace ids the controller reports (a sanitize erases every one).
    pub nvme_active_namespaces: Vec<u32>,
    pub ata: Option<AtaCaps>,
    pub discard: bool,
}

/// One row of the method table for this device.
#[derive(Clone, Debug, Serialize)]
pub struct Candidate {
    pub method: &'static str,
    pub available: bool,
    pub why: String,
}

/// The decision, before anything destructive is sent.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    pub device: String,
    pub method: &'static str,
    pub pts_purge: bool,
    pub label: String,
    /// Every block device the method erases (`/dev/...`), and namespaces without one.
    pub reaches: Vec<String>,
    /// The commands that would be sent, in order, as text.
    pub commands: Vec<String>,
    pub candidates: Vec<Candidate>,
    pub capabilities: Capabilities,
    pub topology: Topology,
    /// Refusals that stop the purge (empty: it may run). A plan lists them; a purge raises
    /// the first.
    pub refusals: Vec<String>,
    #[serde(skip)]
    chosen: Option<Method>,
}

fn refused(s: String) -> Error {
    Error::Refused(s)
}

fn dev_path(name: &str) -> String {
    format!("/dev/{name}")
}

/// The device's kernel name from a `/dev` path (symlinks such as `/dev/disk/by-id/...`
/// resolved when they exist).
pub fn device_name(path: &str) -> Result<String> {
    let p = std::fs::canonicalize(path).unwrap_or_else(|_| Path::new(path).to_path_buf());
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
        .ok_or_else(|| {
            Error::Target(format!(
                "{path} names no device; give a /dev path such as /dev/nvme0n1"
            ))
        })
}
