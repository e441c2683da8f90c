//! The decision: what the device offers, which method runs, and every refusal.

use super::methods::{availability, commands, offered_but_blocked, reaches};
use super::{
    dev_path, device_name, method_names, Candidate, Capabilities, Env, Method, Plan, Request,
};
use crate::drive::ata;
use crate::drive::identify;
use crate::drive::nvme;
use crate::drive::topology::{read_topology, DevKind, Topology};
use crate::error::{Error, Result};

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
