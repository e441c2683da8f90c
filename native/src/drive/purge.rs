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

use super::ata::{self, AtaCaps, Tool};
use super::identify::{self, DeallocatedRead, IdController, IdNamespace, SanitizeState};
use super::media::{verify_sample, Media, Verification};
use super::nvme::{self, FormatErase, NvmeAdmin, SanitizeAction, NSID_ALL};
use super::topology::{read_topology, DevKind, Topology};
use crate::error::{Error, Result};
use serde::Serialize;
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

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

/// Reads what the device can do. NVMe: Identify Controller, Identify Namespace and the active
/// namespace list (read-only admin commands); SATA: `hdparm -I`.
fn capabilities(env: &Env<'_>, topo: &Topology) -> Result<Capabilities> {
    let mut caps = Capabilities {
        discard: topo.discard_max_bytes.unwrap_or(0) > 0,
        ..Default::default()
    };
    if topo.usb_bridge.is_some() {
        return Ok(caps);
    }
    match &topo.kind {
        DevKind::Nvme { nsid, .. } => {
            let admin = env.admin.ok_or_else(|| {
                Error::Target(format!(
                    "cannot send NVMe admin commands to the controller of /dev/{}; run as root",
                    topo.name
                ))
            })?;
            caps.nvme_controller = Some(identify::decode_controller(&nvme::identify_controller(
                admin,
            )?)?);
            caps.nvme_namespace = Some(identify::decode_namespace(&nvme::identify_namespace(
                admin, *nsid,
            )?)?);
            caps.nvme_active_namespaces = nvme::active_namespaces(admin)?;
        }
        DevKind::Ata => {
            let out = env.hdparm.run(&["-I".into(), dev_path(&topo.name)])?;
            caps.ata = Some(ata::decode_identify(&out));
        }
        DevKind::Loop | DevKind::Other => {}
    }
    Ok(caps)
}

/// Is `m` available on this device, and why (not)?
fn availability(m: Method, topo: &Topology, caps: &Capabilities) -> (bool, String) {
    let yes = |s: &str| (true, s.to_string());
    let no = |s: String| (false, s);
    if m.is_pts_purge() && topo.usb_bridge.is_some() {
        return no(format!(
            "the device sits behind a USB bridge ({}), which mangles ATA/NVMe pass-through",
            topo.usb_bridge.as_deref().unwrap_or("")
        ));
    }
    let nv = caps.nvme_controller.as_ref();
    let at = caps.ata.as_ref();
    let ata_block = |at: &AtaCaps| {
        if at.frozen {
            Some("the drive is security-frozen (the BIOS froze it at boot): suspend and resume the machine, or hot-plug the drive, then retry".to_string())
        } else if at.locked {
            Some("the drive is security-locked with a password flashback does not know".to_string())
        } else {
            None
        }
    };
    match m {
        Method::NvmeSanitizeBlock
        | Method::NvmeSanitizeCrypto
        | Method::NvmeFormatUserData
        | Method::NvmeFormatCrypto => {
            let Some(c) = nv else {
                return no("not an NVMe device".into());
            };
            let (ok, what) = match m {
                Method::NvmeSanitizeBlock => (c.sanitize.block_erase, "SANICAP block erase"),
                Method::NvmeSanitizeCrypto => (c.sanitize.crypto_erase, "SANICAP crypto erase"),
                Method::NvmeFormatUserData => (c.format_nvm_supported, "OACS Format NVM"),
                _ => (
                    c.format_nvm_supported && c.format.crypto_erase,
                    "OACS Format NVM and FNA crypto erase",
                ),
            };
            if ok {
                yes(&format!("{what} set"))
            } else {
                no(format!("{what} not set"))
            }
        }
        Method::SataSanitizeBlock
        | Method::SataSanitizeCrypto
        | Method::AtaSecureEraseEnhanced
        | Method::AtaSecureErase => {
            let Some(a) = at else {
                return no("not an ATA device".into());
            };
            let (ok, what) = match m {
                Method::SataSanitizeBlock => (
                    a.sanitize_supported && a.sanitize_block_erase,
                    "SANITIZE BLOCK_ERASE_EXT",
                ),
                Method::SataSanitizeCrypto => (
                    a.sanitize_supported && a.sanitize_crypto_scramble,
                    "SANITIZE CRYPTO_SCRAMBLE_EXT",
                ),
                Method::AtaSecureEraseEnhanced => (
                    a.security_supported && a.enhanced_erase,
                    "security enhanced erase",
                ),
                _ => (a.security_supported, "security feature set"),
            };
            if !ok {
                return no(format!("{what} not supported"));
            }
            match ata_block(a) {
                Some(why) => no(why),
                None => yes(&format!("{what} supported")),
            }
        }
        Method::Trim => {
            if caps.discard {
                yes("the device supports discard (not a PTS purge)")
            } else {
                no("the device does not support discard".into())
            }
        }
        Method::ZeroFill => yes("writing zeros over the whole device (not a PTS purge)"),
    }
}

/// The drive offers `m` but cannot run it now (security-frozen or locked).
fn offered_but_blocked(m: Method, caps: &Capabilities) -> bool {
    let Some(a) = caps.ata.as_ref() else {
        return false;
    };
    let offered = match m {
        Method::SataSanitizeBlock => a.sanitize_supported && a.sanitize_block_erase,
        Method::SataSanitizeCrypto => a.sanitize_supported && a.sanitize_crypto_scramble,
        Method::AtaSecureEraseEnhanced => a.security_supported && a.enhanced_erase,
        Method::AtaSecureErase => a.security_supported,
        _ => false,
    };
    offered && (a.frozen || a.locked)
}

/// Every device (and namespace without one) the method erases.
fn reaches(m: Method, topo: &Topology, caps: &Capabilities) -> Vec<String> {
    let DevKind::Nvme { namespaces, .. } = &topo.kind else {
        return vec![dev_path(&topo.name)];
    };
    let all = match m {
        Method::NvmeSanitizeBlock | Method::NvmeSanitizeCrypto => true,
        Method::NvmeFormatUserData | Method::NvmeFormatCrypto => caps
            .nvme_controller
            .as_ref()
            .is_some_and(|c| c.format.format_all_namespaces || c.format.erase_all_namespaces),
        _ => false,
    };
    if !all {
        return vec![dev_path(&topo.name)];
    }
    let mut v: Vec<String> = namespaces.iter().map(|n| dev_path(n)).collect();
    // namespaces the controller has but no block device shows (hidden, or detached)
    let ctrl = match &topo.kind {
        DevKind::Nvme { controller, .. } => controller.clone(),
        _ => unreachable!(),
    };
    let shown: Vec<u32> = namespaces
        .iter()
        .filter_map(|n| n.rsplit_once('n').and_then(|(_, id)| id.parse().ok()))
        .collect();
    for id in &caps.nvme_active_namespaces {
        if !shown.contains(id) {
            v.push(format!("{ctrl} namespace {id} (no block device)"));
        }
    }
    v
}

fn current_lbaf(caps: &Capabilities) -> u8 {
    caps.nvme_namespace.as_ref().map_or(0, |n| n.format_in_use)
}

fn format_target_nsid(topo: &Topology, caps: &Capabilities) -> u32 {
    let all = caps
        .nvme_controller
        .as_ref()
        .is_some_and(|c| c.format.format_all_namespaces || c.format.erase_all_namespaces);
    match &topo.kind {
        DevKind::Nvme { nsid, .. } if !all => *nsid,
        _ => NSID_ALL,
    }
}

/// The commands `m` sends, as text (what `plan` prints).
fn commands(m: Method, topo: &Topology, caps: &Capabilities) -> Vec<String> {
    let ctrl = match &topo.kind {
        DevKind::Nvme { controller, .. } => dev_path(controller),
        _ => String::new(),
    };
    let dev = dev_path(&topo.name);
    let show = |c: nvme::AdminCmd| {
        format!(
            "{} to {ctrl}: NSID=0x{:08x} CDW10=0x{:08x} CDW11=0x{:08x}",
            c.name(),
            c.nsid,
            c.cdw10,
            c.cdw11
        )
    };
    let hd = |a: Vec<String>| format!("hdparm {}", a.join(" "));
    let poll81 = format!("then Get Log Page (02h) 81h (sanitize status) from {ctrl} until done");
    match m {
        Method::NvmeSanitizeBlock => vec![
            show(nvme::sanitize_cmd(SanitizeAction::BlockErase, 0)),
            poll81,
        ],
        Method::NvmeSanitizeCrypto => vec![
            show(nvme::sanitize_cmd(SanitizeAction::CryptoErase, 0)),
            poll81,
        ],
        Method::NvmeFormatUserData | Method::NvmeFormatCrypto => {
            let ses = if m == Method::NvmeFormatUserData {
                FormatErase::UserData
            } else {
                FormatErase::Crypto
            };
            vec![show(nvme::format_nvm_cmd(
                format_target_nsid(topo, caps),
                current_lbaf(caps),
                ses,
            ))]
        }
        Method::SataSanitizeBlock | Method::SataSanitizeCrypto => vec![
            hd(ata::sanitize_args(&dev, m == Method::SataSanitizeCrypto)),
            format!("then hdparm --sanitize-status {dev} until done"),
        ],
        Method::AtaSecureEraseEnhanced | Method::AtaSecureErase => {
            ata::secure_erase_args(&dev, m == Method::AtaSecureEraseEnhanced)
                .into_iter()
                .map(hd)
                .collect()
        }
        Method::Trim => vec![format!("BLKDISCARD over the whole of {dev}")],
        Method::ZeroFill => vec![format!(
            "sequential writes of zeros over the whole of {dev}"
        )],
    }
}

/// Chooses the method and checks everything that may stop it; sends only read-only
/// Identify commands (NVMe) or `hdparm -I` (SATA).
pub fn plan(env: &Env<'_>, req: &Request) -> Result<Plan> {
    let name = device_name(&req.device)?;
    let topo = read_topology(env.root, &name);
    let caps = capabilities(env, &topo)?;
    let candidates: Vec<Candidate> = Method::ALL
        .iter()
        .map(|&m| {
            let (available, why) = availability(m, &topo, &caps);
            Candidate {
                method: m.name(),
                available,
                why,
            }
        })
        .collect();
    let avail = |m: Method| {
        candidates
            .iter()
            .any(|c| c.method == m.name() && c.available)
    };
    let mut refusals = vec![];
    let chosen: Option<Method> = if req.method == "auto" {
        let native = Method::ALL.iter().copied().filter(|m| m.is_pts_purge());
        // offered by the drive but blocked now (frozen, locked): refuse rather than fall back
        let offered: Vec<Method> = native
            .clone()
            .filter(|&m| offered_but_blocked(m, &caps))
            .collect();
        match native.clone().find(|&m| avail(m)) {
            Some(m) => Some(m),
            None if topo.usb_bridge.is_some() => {
                refusals.push(format!(
                    "refusing to purge /dev/{name}: it sits behind a USB bridge ({}) that mangles ATA/NVMe pass-through; connect it directly (SATA/PCIe), or ask for method=\"trim\" or \"zero-fill\" knowing neither is a PTS purge",
                    topo.usb_bridge.as_deref().unwrap_or("")
                ));
                None
            }
            None if !offered.is_empty() => {
                let why = availability(offered[0], &topo, &caps).1;
                refusals.push(format!(
                    "refusing to purge /dev/{name} by {}: {why}",
                    offered[0].name()
                ));
                None
            }
            None => Some(if avail(Method::Trim) {
                Method::Trim
            } else {
                Method::ZeroFill
            }),
        }
    } else {
        let m = Method::from_name(&req.method).ok_or_else(|| {
            Error::InvalidValue(format!(
                "unknown purge method {:?}; use \"auto\" or one of: {}",
                req.method,
                method_names().join(", ")
            ))
        })?;
        if avail(m) {
            Some(m)
        } else {
            let why = availability(m, &topo, &caps).1;
            let fallback = if avail(Method::Trim) {
                "trim"
            } else {
                "zero-fill"
            };
            let others: Vec<&str> = candidates
                .iter()
                .filter(|c| {
                    c.available && Method::from_name(c.method).is_some_and(Method::is_pts_purge)
                })
                .map(|c| c.method)
                .collect();
            let hint = if others.is_empty() {
                format!(
                    "it offers no PTS purge; method=\"{fallback}\" (or \"auto\") wipes it, labelled \"not a PTS purge\""
                )
            } else {
                format!("it offers {}", others.join(", "))
            };
            refusals.push(format!(
                "refusing to purge /dev/{name} by {}: {why}; {hint}",
                m.name()
            ));
            None
        }
    };
    let (method, reach, cmds) = match chosen {
        Some(m) => (m, reaches(m, &topo, &caps), commands(m, &topo, &caps)),
        None => (
            Method::from_name(&req.method).unwrap_or(Method::ZeroFill),
            vec![dev_path(&name)],
            vec![],
        ),
    };
    if chosen.is_some() {
        check_confirmation(&name, &reach, &req.destroy, &mut refusals);
        for d in reach.iter().filter(|d| d.starts_with("/dev/")) {
            if let Some(why) = env.guard.in_use(d) {
                let shown = if *d == dev_path(&name) {
                    why
                } else {
                    format!(
                        "{why} ({} erases every namespace of the controller, {d} included)",
                        method.name()
                    )
                };
                refusals.push(shown);
            }
        }
    }
    Ok(Plan {
        device: dev_path(&name),
        method: method.name(),
        pts_purge: method.is_pts_purge(),
        label: method.label(),
        reaches: reach,
        commands: cmds,
        candidates,
        capabilities: caps,
        topology: topo,
        refusals,
        chosen,
    })
}

/// The confirmation must name every block device the method erases, and nothing else.
fn check_confirmation(
    name: &str,
    reach: &[String],
    destroy: &[String],
    refusals: &mut Vec<String>,
) {
    let devs: Vec<&String> = reach.iter().filter(|d| d.starts_with("/dev/")).collect();
    let all = devs
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(",");
    if destroy.is_empty() {
        refusals.push(format!(
            "purging /dev/{name} destroys every byte on {all}; confirm by naming {} with destroy=\"{all}\" (--destroy {all})",
            if devs.len() > 1 { "each of them" } else { "it" }
        ));
        return;
    }
    let named: Vec<String> = destroy
        .iter()
        .filter_map(|d| device_name(d).ok())
        .map(|n| dev_path(&n))
        .collect();
    let missing: Vec<&str> = devs
        .iter()
        .filter(|d| !named.contains(d))
        .map(|s| s.as_str())
        .collect();
    let extra: Vec<&str> = named
        .iter()
        .filter(|n| !devs.contains(n))
        .map(|s| s.as_str())
        .collect();
    if !missing.is_empty() {
        refusals.push(format!(
            "the confirmation does not name {}, which this purge also erases (a controller-wide command reaches every namespace); pass destroy=\"{all}\" (nothing was sent)",
            missing.join(", ")
        ));
    } else if !extra.is_empty() {
        refusals.push(format!(
            "destroy names {}, which this purge does not erase; pass exactly destroy=\"{all}\" (nothing was sent)",
            extra.join(", ")
        ));
    }
}

/// Runs the purge the plan chose (NVMe and ATA methods only; TRIM and the zero fill run
/// through the engine's target) and returns its record.
pub fn execute(env: &Env<'_>, req: &Request, plan: &Plan) -> Result<Value> {
    if let Some(r) = plan.refusals.first() {
        return Err(refused(r.clone()));
    }
    let m = plan
        .chosen
        .ok_or_else(|| Error::Internal("a plan without refusals chose no method".into()))?;
    if !m.is_pts_purge() {
        return Err(Error::Internal(format!(
            "{} runs through the engine's target, not the drive layer",
            m.name()
        )));
    }
    let dev = plan.device.clone();
    let smart = |a: Option<&dyn NvmeAdmin>| -> Value {
        a.and_then(|a| nvme::get_log_page(a, nvme::log::SMART_HEALTH, NSID_ALL, 512).ok())
            .map(|b| json!(hex(&b)))
            .unwrap_or(Value::Null)
    };
    let smart_before = smart(env.admin);
    let t0 = Instant::now();
    let mut sanitize_status = Value::Null;
    match m {
        Method::NvmeSanitizeBlock | Method::NvmeSanitizeCrypto => {
            let admin = env
                .admin
                .ok_or_else(|| Error::Internal("NVMe method without a controller".into()))?;
            let st = sanitize_log(admin)?;
            if st.state == SanitizeState::InProgress {
                return Err(refused(format!("refusing to purge {dev}: a sanitize is already running on its controller; wait for it to finish")));
            }
            let action = if m == Method::NvmeSanitizeBlock {
                SanitizeAction::BlockErase
            } else {
                SanitizeAction::CryptoErase
            };
            nvme::sanitize(admin, action)?;
            let limit = Duration::from_secs(24 * 3600);
            loop {
                let st = sanitize_log(admin)?;
                match st.state {
                    SanitizeState::InProgress => {}
                    SanitizeState::Failed => {
                        return Err(Error::io(
                            format!("the drive reports the sanitize of {dev} failed (log 81h); it stays in sanitize failure mode until a successful sanitize or an Exit Failure Mode action"),
                            std::io::Error::other("sanitize failed"),
                        ))
                    }
                    _ => {
                        sanitize_status = serde_json::to_value(&st).unwrap_or(Value::Null);
                        break;
                    }
                }
                if t0.elapsed() > limit {
                    return Err(Error::io(
                        format!("the sanitize of {dev} still runs after 24 h"),
                        std::io::Error::other("timeout"),
                    ));
                }
                (env.sleep)(Duration::from_secs(1));
            }
        }
        Method::NvmeFormatUserData | Method::NvmeFormatCrypto => {
            let admin = env
                .admin
                .ok_or_else(|| Error::Internal("NVMe method without a controller".into()))?;
            let ses = if m == Method::NvmeFormatUserData {
                FormatErase::UserData
            } else {
                FormatErase::Crypto
            };
            nvme::format_nvm(
                admin,
                format_target_nsid(&plan.topology, &plan.capabilities),
                current_lbaf(&plan.capabilities),
                ses,
            )?;
        }
        Method::SataSanitizeBlock | Method::SataSanitizeCrypto => {
            env.hdparm
                .run(&ata::sanitize_args(&dev, m == Method::SataSanitizeCrypto))?;
            loop {
                let out = env.hdparm.run(&["--sanitize-status".into(), dev.clone()])?;
                if !ata::sanitize_in_progress(&out) {
                    sanitize_status = json!(out.trim());
                    break;
                }
                (env.sleep)(Duration::from_secs(1));
            }
        }
        Method::AtaSecureEraseEnhanced | Method::AtaSecureErase => {
            for args in ata::secure_erase_args(&dev, m == Method::AtaSecureEraseEnhanced) {
                env.hdparm.run(&args)?;
            }
        }
        Method::Trim | Method::ZeroFill => unreachable!(),
    }
    let duration_s = t0.elapsed().as_secs_f64();
    let smart_after = smart(env.admin);
    let verification = match env.media {
        Some(media) => Some(verify(media, m, plan, req.verify_samples)?),
        None => None,
    };
    let mut rec = serde_json::to_value(plan).unwrap_or(Value::Null);
    if let Value::Object(o) = &mut rec {
        o.insert("duration_s".into(), json!(duration_s));
        o.insert("verification".into(), json!(verification));
        o.insert("sanitize_status".into(), sanitize_status);
        o.insert("smart_log_before_hex".into(), smart_before);
        o.insert("smart_log_after_hex".into(), smart_after);
    }
    if let Some(v) = &verification {
        if !v.passed && v.expected != "unspecified" {
            return Err(Error::io(
                format!(
                    "the drive reported {} of {dev} done, but {} of {} sampled blocks do not read back as {} (first at byte {}); the drive was not purged — do not run a PTS test on it",
                    m.name(),
                    v.blocks_read - v.blocks_matching,
                    v.blocks_read,
                    v.expected,
                    v.mismatched_offsets.first().copied().unwrap_or(0)
                ),
                std::io::Error::other("purge verification failed"),
            ));
        }
    }
    Ok(rec)
}

fn sanitize_log(admin: &dyn NvmeAdmin) -> Result<identify::SanitizeStatus> {
    identify::decode_sanitize_status(&nvme::get_log_page(
        admin,
        nvme::log::SANITIZE_STATUS,
        NSID_ALL,
        512,
    )?)
}

/// What the method promises a read of an erased block returns.
fn expected_pattern(m: Method, plan: &Plan) -> &'static str {
    let dealloc = plan
        .capabilities
        .nvme_namespace
        .as_ref()
        .map(|n| n.deallocated_read);
    match m {
        Method::NvmeSanitizeBlock
        | Method::NvmeSanitizeCrypto
        | Method::NvmeFormatUserData
        | Method::NvmeFormatCrypto => match dealloc {
            Some(DeallocatedRead::Zeros) => "zeros",
            Some(DeallocatedRead::Ones) => "ones",
            _ => "zeros or ones",
        },
        Method::SataSanitizeBlock | Method::AtaSecureErase => "zeros or ones",
        _ => "unspecified",
    }
}

fn verify(media: &dyn Media, m: Method, plan: &Plan, samples: u64) -> Result<Verification> {
    let ns = plan.capabilities.nvme_namespace.as_ref();
    let block = ns
        .and_then(|n| n.current().map(|f| f.data_bytes))
        .or(plan.topology.logical_block_bytes.map(|b| b as u32))
        .unwrap_or(512);
    let size = ns
        .and_then(IdNamespace::size_bytes)
        .or(plan.topology.size_bytes)
        .unwrap_or(0);
    verify_sample(media, size, block, samples, expected_pattern(m, plan))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
