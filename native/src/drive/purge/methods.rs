//! The method table for one device: whether each method is available and why, what it
//! erases, and the commands it sends.

use super::{dev_path, Capabilities, Method};
use crate::drive::ata::{self, AtaCaps};
use crate::drive::nvme::{self, FormatErase, SanitizeAction, NSID_ALL};
use crate::drive::topology::{DevKind, Topology};

/// Is `m` available on this device, and why (not)?
pub(super) fn availability(m: Method, topo: &Topology, caps: &Capabilities) -> (bool, String) {
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
        } else if at.locked || at.security_enabled {
            Some("the drive's ATA security is enabled with a user password flashback does not know; disable it (hdparm --security-disable PASSWORD) and retry".to_string())
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
pub(super) fn offered_but_blocked(m: Method, caps: &Capabilities) -> bool {
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
    offered && (a.frozen || a.locked || a.security_enabled)
}

/// Every device (and namespace without one) the method erases.
pub(super) fn reaches(m: Method, topo: &Topology, caps: &Capabilities) -> Vec<String> {
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

pub(super) fn current_lbaf(caps: &Capabilities) -> u8 {
    caps.nvme_namespace.as_ref().map_or(0, |n| n.format_in_use)
}

pub(super) fn format_target_nsid(topo: &Topology, caps: &Capabilities) -> u32 {
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
pub(super) fn commands(m: Method, topo: &Topology, caps: &Capabilities) -> Vec<String> {
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
