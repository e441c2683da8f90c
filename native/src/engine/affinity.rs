//! `cpus_allowed`: the CPUs a job's thread runs on, set as fio sets them, by each job's thread
//! on itself before it sets up its ring and buffers (fio-3.33 `backend.c` `thread_main`:
//! `fio_setaffinity(td->pid, o->cpumask)` before `init_io_u`).
//!
//! A thread keeps its mask for its life, so a job on the calling thread (one job) gets the
//! caller's former mask back when its [`Pinned`] guard is dropped.

use crate::error::{Error, Result};
use crate::workload::{cpus_spec, Workload, CPU_MAX};
use std::io;

fn empty_set() -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is a plain bit array; all zeros is the empty set
    unsafe { std::mem::zeroed() }
}

/// The calling thread's CPU mask now.
fn current_set() -> io::Result<libc::cpu_set_t> {
    let mut set = empty_set();
    // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is the calling thread
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(set)
}

/// The CPUs the calling thread may run on now, ascending.
pub fn allowed() -> io::Result<Vec<u32>> {
    let set = current_set()?;
    // SAFETY: CPU_ISSET reads `set` within its size (CPU_MAX < CPU_SETSIZE)
    Ok((0..=CPU_MAX)
        .filter(|&c| unsafe { libc::CPU_ISSET(c as usize, &set) })
        .collect())
}

/// Checks that every CPU of `w.cpus_allowed` is one this process may run on, before anything
/// is laid out or written. Errors: [`Error::InvalidValue`] naming the first CPU that is not,
/// with the list that is.
pub fn check(w: &Workload) -> Result<()> {
    let Some(want) = &w.cpus_allowed else {
        return Ok(());
    };
    let have = allowed().map_err(|source| Error::Io {
        context: "reading the CPUs this process may run on (sched_getaffinity)".into(),
        source,
    })?;
    match want.iter().find(|c| !have.contains(c)) {
        Some(c) => Err(Error::InvalidValue(format!(
            "cpus_allowed={} names CPU {c}, which this process may not run on; use CPUs from {}",
            cpus_spec(want),
            cpus_spec(&have)
        ))),
        None => Ok(()),
    }
}

/// The calling thread pinned to some CPUs; dropping it gives the thread its former CPUs back.
pub struct Pinned {
    saved: libc::cpu_set_t,
}

/// Pins the calling thread to `cpus` (each ≤ [`CPU_MAX`]).
pub fn pin(cpus: &[u32]) -> io::Result<Pinned> {
    let saved = current_set()?;
    let mut set = empty_set();
    // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is the calling thread;
    // CPU_SET writes within `set` (every CPU ≤ CPU_MAX < CPU_SETSIZE)
    unsafe {
        for &c in cpus {
            libc::CPU_SET(c as usize, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(Pinned { saved })
}

/// Pins the calling thread for job `j` of `w` (see [`Workload::cpus_of_job`]); `None` when
/// `w` has no `cpus_allowed`.
pub fn pin_job(w: &Workload, j: usize) -> io::Result<Option<Pinned>> {
    w.cpus_of_job(j).map(|c| pin(&c)).transpose()
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // SAFETY: `saved` is the valid mask read in `pin`; pid 0 is the calling thread. A
        // failure leaves the thread pinned, which is no worse than the run it served.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&self.saved), &self.saved) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_thread_runs_on_its_cpus_and_gets_its_own_back() {
        std::thread::spawn(|| {
            let before = allowed().unwrap();
            let one = *before.last().unwrap();
            {
                let _p = pin(&[one]).unwrap();
                assert_eq!(allowed().unwrap(), vec![one]);
                // SAFETY: sched_getcpu takes no arguments
                assert_eq!(unsafe { libc::sched_getcpu() }, one as i32);
            }
            assert_eq!(allowed().unwrap(), before);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_cpu_this_process_may_not_use_is_refused_by_name() {
        let have = allowed().unwrap();
        let missing = (0..=CPU_MAX).find(|c| !have.contains(c)).unwrap();
        let w =
            Workload::from_pairs([("cpus_allowed", &*format!("{},{missing}", have[0]))]).unwrap();
        let e = check(&w).unwrap_err().to_string();
        assert!(
            e.contains(&format!(
                "names CPU {missing}, which this process may not run on"
            )) && e.contains(&format!("use CPUs from {}", cpus_spec(&have))),
            "{e}"
        );
        let ok = Workload::from_pairs([("cpus_allowed", &*have[0].to_string())]).unwrap();
        check(&ok).unwrap();
    }
}
