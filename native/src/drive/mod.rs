//! Real-drive access below the block layer: NVMe admin commands through the kernel's
//! pass-through ioctl ([`nvme`]), decoders of what the drive answers ([`identify`]), ATA
//! security/sanitize through `hdparm` ([`ata`]), what a purge reaches ([`topology`]), the
//! purge itself ([`purge`]), block read-back for verification ([`media`]) and a fake
//! controller for tests ([`fake`]).

pub mod ata;
pub mod fake;
pub mod identify;
pub mod media;
pub mod nvme;
pub mod purge;
pub mod record;
pub mod topology;

pub use nvme::{AdminCmd, IoctlAdmin, NvmeAdmin};
#[cfg(test)]
mod purge_tests;
