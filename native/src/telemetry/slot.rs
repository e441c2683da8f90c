//! The latest drive sample, shared between the sampler thread (writer) and the recorder
//! (reader). The reader only ever `try_lock`s: when the sampler holds the lock it keeps the
//! copy it read last time, so the I/O path never waits on the sampler.

use super::DriveSample;
use std::sync::{Arc, Mutex, TryLockError};
use std::time::Instant;

/// A sample and when it was taken.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Published {
    pub sample: DriveSample,
    pub at: Instant,
}

impl Published {
    /// Seconds between the sample and `now`.
    pub fn age_s(&self, now: Instant) -> f64 {
        now.saturating_duration_since(self.at).as_secs_f64()
    }
}

/// The one place the sampler publishes to.
#[derive(Default)]
pub struct Slot {
    inner: Mutex<Option<Published>>,
}

impl Slot {
    /// Replaces the latest sample (the sampler thread; may wait for a reader's brief copy).
    pub fn publish(&self, p: Published) {
        match self.inner.lock() {
            Ok(mut g) => *g = Some(p),
            Err(poisoned) => *poisoned.into_inner() = Some(p),
        }
    }
}

/// The recorder's side: never blocks.
pub struct Reader {
    slot: Arc<Slot>,
    last: Option<Published>,
}

impl Reader {
    pub fn new(slot: Arc<Slot>) -> Self {
        Reader { slot, last: None }
    }

    /// The latest published sample, or the one read last time if the slot is busy.
    pub fn latest(&mut self) -> Option<Published> {
        match self.slot.inner.try_lock() {
            Ok(g) => self.last = *g,
            Err(TryLockError::Poisoned(p)) => self.last = *p.into_inner(),
            Err(TryLockError::WouldBlock) => {}
        }
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_never_blocks_and_keeps_its_last_copy_while_the_slot_is_held() {
        let slot = Arc::new(Slot::default());
        let mut r = Reader::new(slot.clone());
        assert_eq!(r.latest(), None);
        let a = Published {
            sample: DriveSample {
                temp_c: Some(40.0),
                ..Default::default()
            },
            at: Instant::now(),
        };
        slot.publish(a);
        assert_eq!(r.latest(), Some(a));
        let guard = slot.inner.lock().unwrap(); // the sampler mid-publish
        let t0 = Instant::now();
        assert_eq!(r.latest(), Some(a));
        assert!(t0.elapsed().as_millis() < 50);
        drop(guard);
    }
}
