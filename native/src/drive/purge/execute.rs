//! Sending the chosen method's commands, waiting for the drive, and the read-back.

use super::methods::{current_lbaf, format_target_nsid};
use super::{refused, Env, Method, Plan, Request};
use crate::drive::ata;
use crate::drive::identify::{self, DeallocatedRead, IdNamespace, SanitizeState};
use crate::drive::media::{verify_sample, Media, Verification};
use crate::drive::nvme::{self, FormatErase, NvmeAdmin, SanitizeAction, NSID_ALL};
use crate::error::{Error, Result};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

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
