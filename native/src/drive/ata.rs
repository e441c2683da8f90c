//! ATA security and sanitize through `hdparm` (a subprocess: the ATA pass-through it builds
//! through SG_IO is long-tested, and a fake `hdparm` on `PATH` replays recorded output in
//! tests). Decodes the "Security:" block and the SANITIZE lines of `hdparm -I`.

use crate::error::{Error, Result};
use serde::Serialize;
use std::process::Command;

/// What `hdparm -I` says about ATA security and sanitize.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct AtaCaps {
    pub security_supported: bool,
    pub security_enabled: bool,
    pub locked: bool,
    /// SECURITY FREEZE LOCK is in effect (set by many BIOSes at boot): erase commands abort.
    pub frozen: bool,
    pub enhanced_erase: bool,
    /// Minutes the drive estimates for SECURITY ERASE UNIT / the enhanced erase.
    pub erase_minutes: Option<u32>,
    pub enhanced_erase_minutes: Option<u32>,
    pub sanitize_supported: bool,
    pub sanitize_block_erase: bool,
    pub sanitize_crypto_scramble: bool,
    pub sanitize_overwrite: bool,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub firmware: Option<String>,
}

/// Decodes `hdparm -I` output.
pub fn decode_identify(text: &str) -> AtaCaps {
    let mut c = AtaCaps::default();
    let mut in_security = false;
    for raw in text.lines() {
        let line = raw.trim();
        let field = |k: &str| line.strip_prefix(k).map(|v| v.trim().to_string());
        if let Some(v) = field("Model Number:") {
            c.model = Some(v);
        } else if let Some(v) = field("Serial Number:") {
            c.serial = Some(v);
        } else if let Some(v) = field("Firmware Revision:") {
            c.firmware = Some(v);
        }
        if !raw.starts_with(['\t', ' ']) {
            in_security = line.starts_with("Security:");
            continue;
        }
        // feature list: "*\tSANITIZE feature set" ("*" = supported/enabled)
        let starred = line.starts_with('*');
        let feat = line.trim_start_matches('*').trim();
        if starred || !in_security {
            match feat {
                "SANITIZE feature set" => c.sanitize_supported = starred,
                "BLOCK_ERASE_EXT command" => c.sanitize_block_erase = starred,
                "CRYPTO_SCRAMBLE_EXT command" => c.sanitize_crypto_scramble = starred,
                "OVERWRITE_EXT command" => c.sanitize_overwrite = starred,
                _ => {}
            }
        }
        if !in_security {
            continue;
        }
        match line {
            "supported" => c.security_supported = true,
            "enabled" => c.security_enabled = true,
            "locked" => c.locked = true,
            "frozen" => c.frozen = true,
            "supported: enhanced erase" => c.enhanced_erase = true,
            _ => {}
        }
        // "2min for SECURITY ERASE UNIT. 2min for ENHANCED SECURITY ERASE UNIT."
        for part in line.split('.') {
            let part = part.trim();
            let mins = part
                .split_once("min for")
                .and_then(|(n, _)| n.trim().trim_start_matches('>').parse::<u32>().ok());
            if part.ends_with("for ENHANCED SECURITY ERASE UNIT") {
                c.enhanced_erase_minutes = mins;
            } else if part.ends_with("for SECURITY ERASE UNIT") {
                c.erase_minutes = mins;
            }
        }
    }
    c
}

/// Runs an external tool; its stdout, or an error naming the command and its stderr.
pub trait Tool {
    fn run(&self, args: &[String]) -> Result<String>;
    fn name(&self) -> String;
}

/// `hdparm` (or another program of the same interface) found on `PATH`.
pub struct Program(pub String);

impl Tool for Program {
    fn run(&self, args: &[String]) -> Result<String> {
        let out = Command::new(&self.0).args(args).output().map_err(|e| {
            Error::io(
                format!(
                    "running {} failed (install it: apt-get install {}; `make setup` does)",
                    self.0, self.0
                ),
                e,
            )
        })?;
        if !out.status.success() {
            return Err(Error::io(
                format!(
                    "`{} {}` failed with {}: {}",
                    self.0,
                    args.join(" "),
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
                std::io::Error::other("tool failed"),
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
    fn name(&self) -> String {
        self.0.clone()
    }
}

/// The temporary user password a security erase sets (cleared by the erase itself).
pub const ERASE_PASSWORD: &str = "flashback";

/// hdparm argument lists of an ATA secure erase: set a user password, then erase with it.
pub fn secure_erase_args(dev: &str, enhanced: bool) -> Vec<Vec<String>> {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        s(&[
            "--user-master",
            "u",
            "--security-set-pass",
            ERASE_PASSWORD,
            dev,
        ]),
        s(&[
            "--user-master",
            "u",
            if enhanced {
                "--security-erase-enhanced"
            } else {
                "--security-erase"
            },
            ERASE_PASSWORD,
            dev,
        ]),
    ]
}

/// hdparm argument list starting an ATA SANITIZE (block erase or crypto scramble).
pub fn sanitize_args(dev: &str, crypto: bool) -> Vec<String> {
    vec![
        "--yes-i-know-what-i-am-doing".into(),
        if crypto {
            "--sanitize-crypto-scramble".into()
        } else {
            "--sanitize-block-erase".into()
        },
        dev.into(),
    ]
}

/// `hdparm --sanitize-status` output: still running?
pub fn sanitize_in_progress(text: &str) -> bool {
    text.contains("in progress") || text.contains("IN PROGRESS")
}
