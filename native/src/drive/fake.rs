//! A fake NVMe controller for tests: implements [`NvmeAdmin`] and [`Media`], records every
//! command it receives, answers Identify / Get Log Page / Get Features from bytes it was given
//! (recorded from a drive, or laid out by [`id_ctrl_bytes`]) and models what Format NVM and
//! Sanitize do to the media, so a purge can be run, verified and audited without a drive.
//! Compiled into the library (not only `cfg(test)`) so the Python tests and the `telemetry`
//! layer can drive the same fake through the bindings.

use super::media::Media;
use super::nvme::{command_error, opcode, AdminCmd, NvmeAdmin, IDENTIFY_BYTES};
use crate::error::Result;
use std::collections::BTreeMap;
use std::sync::Mutex;

#[derive(Default)]
struct State {
    commands: Vec<AdminCmd>,
    id_ctrl: Vec<u8>,
    namespaces: BTreeMap<u32, Vec<u8>>,
    logs: BTreeMap<u8, Vec<u8>>,
    features: BTreeMap<u8, u32>,
    rejects: BTreeMap<u8, i32>,
    /// Bytes every block reads back as: `Some(b)` after an erase, `None` = old data.
    erased_to: Option<u8>,
    /// The drive acknowledges erases but leaves the data (a lying drive, for verification).
    ignores_erase: bool,
    reads: u64,
}

/// See the module documentation.
#[derive(Default)]
pub struct FakeController {
    s: Mutex<State>,
}

impl FakeController {
    /// A controller that answers nothing until given bytes (every Identify returns zeros).
    pub fn new() -> Self {
        Self::default()
    }

    /// A controller built from `spec`, with namespaces 1..=spec.namespaces of `blocks` blocks.
    pub fn from_spec(spec: &CtrlSpec) -> Self {
        let f = Self::new();
        f.set_identify_controller(id_ctrl_bytes(spec));
        for n in 1..=spec.namespaces {
            f.set_identify_namespace(n, id_ns_bytes(spec.ns_blocks, 0, spec.dlfeat));
        }
        f.set_feature(0x06, u32::from(spec.vwc_enabled));
        f.set_feature(0x04, 353); // 80 °C composite over-temperature threshold, kelvin
        f
    }

    fn st(&self) -> std::sync::MutexGuard<'_, State> {
        self.s.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set_identify_controller(&self, b: Vec<u8>) {
        self.st().id_ctrl = b;
    }
    pub fn set_identify_namespace(&self, nsid: u32, b: Vec<u8>) {
        self.st().namespaces.insert(nsid, b);
    }
    pub fn set_log(&self, lid: u8, b: Vec<u8>) {
        self.st().logs.insert(lid, b);
    }
    pub fn set_feature(&self, fid: u8, value: u32) {
        self.st().features.insert(fid, value);
    }
    /// Every later command with `op` completes with NVMe status `status`.
    pub fn reject(&self, op: u8, status: i32) {
        self.st().rejects.insert(op, status);
    }
    /// Acknowledge erases without erasing (verification must catch it).
    pub fn ignore_erases(&self) {
        self.st().ignores_erase = true;
    }
    /// Every command received, in order.
    pub fn commands(&self) -> Vec<AdminCmd> {
        self.st().commands.clone()
    }
    /// Media reads served (for the verification's sample size).
    pub fn media_reads(&self) -> u64 {
        self.st().reads
    }

    fn erase(s: &mut State, to: u8) {
        if !s.ignores_erase {
            s.erased_to = Some(to);
        }
    }

    fn dealloc_byte(s: &State) -> u8 {
        let dlfeat = s.namespaces.get(&1).map_or(0, |b| b[33] & 7);
        if dlfeat == 2 {
            0xff
        } else {
            0
        }
    }
}

impl NvmeAdmin for FakeController {
    fn admin(&self, cmd: &mut AdminCmd, data: &mut [u8]) -> Result<u32> {
        let mut s = self.st();
        s.commands.push(*cmd);
        if let Some(&status) = s.rejects.get(&cmd.opcode) {
            drop(s);
            return Err(command_error(cmd, &self.describe(), status));
        }
        let fill = |data: &mut [u8], src: &[u8]| {
            let n = data.len().min(src.len());
            data[..n].copy_from_slice(&src[..n]);
            data[n..].fill(0);
        };
        match cmd.opcode {
            opcode::IDENTIFY => {
                let cns = cmd.cdw10 & 0xff;
                let src: Vec<u8> = match cns {
                    1 => s.id_ctrl.clone(),
                    0 => s.namespaces.get(&cmd.nsid).cloned().unwrap_or_default(),
                    2 => {
                        let mut v = Vec::with_capacity(IDENTIFY_BYTES);
                        for n in s.namespaces.keys() {
                            v.extend_from_slice(&n.to_le_bytes());
                        }
                        v
                    }
                    _ => vec![],
                };
                fill(data, &src);
                Ok(0)
            }
            opcode::GET_LOG_PAGE => {
                let lid = (cmd.cdw10 & 0xff) as u8;
                let src = s.logs.get(&lid).cloned().unwrap_or_default();
                fill(data, &src);
                Ok(0)
            }
            opcode::GET_FEATURES => Ok(s
                .features
                .get(&((cmd.cdw10 & 0xff) as u8))
                .copied()
                .unwrap_or(0)),
            opcode::FORMAT_NVM => {
                let to = Self::dealloc_byte(&s);
                Self::erase(&mut s, to);
                Ok(0)
            }
            opcode::SANITIZE => {
                let to = if cmd.cdw10 & 7 == 3 {
                    0
                } else {
                    Self::dealloc_byte(&s)
                };
                Self::erase(&mut s, to);
                let mut log = vec![0u8; 512];
                log[0..2].copy_from_slice(&0xffffu16.to_le_bytes());
                log[2] = 1; // completed
                log[4..8].copy_from_slice(&cmd.cdw10.to_le_bytes());
                s.logs.insert(0x81, log);
                Ok(0)
            }
            _ => {
                drop(s);
                Err(command_error(cmd, &self.describe(), 0x001))
            }
        }
    }

    fn describe(&self) -> String {
        "fake NVMe controller".into()
    }
}

impl Media for FakeController {
    fn read_at(&self, _offset: u64, buf: &mut [u8]) -> Result<()> {
        let mut s = self.st();
        s.reads += 1;
        buf.fill(s.erased_to.unwrap_or(0xa5));
        Ok(())
    }
}

/// What to lay out in a fake Identify Controller.
#[derive(Clone, Debug)]
pub struct CtrlSpec {
    pub model: String,
    pub serial: String,
    pub firmware: String,
    pub oacs: u16,
    pub sanicap: u32,
    pub fna: u8,
    pub vwc_present: bool,
    pub vwc_enabled: bool,
    pub capacity_bytes: u64,
    pub namespaces: u32,
    pub ns_blocks: u64,
    /// DLFEAT bits 2:0 of every namespace: 1 = deallocated blocks read as zeros.
    pub dlfeat: u8,
}

impl Default for CtrlSpec {
    fn default() -> Self {
        CtrlSpec {
            model: "FAKE NVMe SSD 1TB".into(),
            serial: "FAKE0000SERIAL01".into(),
            firmware: "1B2QFAKE".into(),
            oacs: 0x0017,
            sanicap: 0,
            fna: 0,
            vwc_present: true,
            vwc_enabled: true,
            capacity_bytes: 1_000_204_886_016,
            namespaces: 1,
            ns_blocks: 1_953_525_168,
            dlfeat: 1,
        }
    }
}

/// An Identify Controller structure laid out per NVMe Base 2.0 figure 275 from `spec`, with
/// three power states (8 W, 4.5 W, 5 mW non-operational) and thresholds 80 °C / 85 °C.
pub fn id_ctrl_bytes(spec: &CtrlSpec) -> Vec<u8> {
    let mut b = vec![0u8; IDENTIFY_BYTES];
    let put = |b: &mut [u8], o: usize, n: usize, s: &str| {
        let f = format!("{s:<n$}");
        b[o..o + n].copy_from_slice(&f.as_bytes()[..n]);
    };
    b[0..2].copy_from_slice(&0x144du16.to_le_bytes());
    put(&mut b, 4, 20, &spec.serial);
    put(&mut b, 24, 40, &spec.model);
    put(&mut b, 64, 8, &spec.firmware);
    b[80..84].copy_from_slice(&0x0001_0400u32.to_le_bytes());
    b[256..258].copy_from_slice(&spec.oacs.to_le_bytes());
    b[260] = 0x16;
    b[263] = 2; // NPSS: 3 states
    b[266..268].copy_from_slice(&353u16.to_le_bytes());
    b[268..270].copy_from_slice(&358u16.to_le_bytes());
    b[280..288].copy_from_slice(&spec.capacity_bytes.to_le_bytes());
    b[328..332].copy_from_slice(&spec.sanicap.to_le_bytes());
    b[516..520].copy_from_slice(&spec.namespaces.to_le_bytes());
    b[524] = spec.fna;
    b[525] = u8::from(spec.vwc_present);
    let ps = |b: &mut [u8], i: usize, mp: u16, flags: u8, enlat: u32, exlat: u32| {
        let o = 2048 + 32 * i;
        b[o..o + 2].copy_from_slice(&mp.to_le_bytes());
        b[o + 3] = flags;
        b[o + 4..o + 8].copy_from_slice(&enlat.to_le_bytes());
        b[o + 8..o + 12].copy_from_slice(&exlat.to_le_bytes());
    };
    ps(&mut b, 0, 800, 0, 0, 0);
    ps(&mut b, 1, 450, 0, 0, 0);
    ps(&mut b, 2, 50, 0b11, 2000, 22_000);
    b
}

/// An Identify Namespace of `blocks` blocks with two LBA formats (512 B, 4096 B), format
/// `in_use` active and DLFEAT `dlfeat`.
pub fn id_ns_bytes(blocks: u64, in_use: u8, dlfeat: u8) -> Vec<u8> {
    let mut b = vec![0u8; IDENTIFY_BYTES];
    b[0..8].copy_from_slice(&blocks.to_le_bytes());
    b[8..16].copy_from_slice(&blocks.to_le_bytes());
    b[16..24].copy_from_slice(&(blocks / 3).to_le_bytes());
    b[25] = 1;
    b[26] = in_use;
    b[33] = dlfeat;
    b[128 + 2] = 9;
    b[128 + 3] = 2;
    b[132 + 2] = 12;
    b
}
