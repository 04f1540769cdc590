//! Time as a value: engines never read a clock themselves, so tests can drive them with a
//! [`ManualClock`] and get the same result every run.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// One moment, on both clocks an engine may need: the monotonic one for deadlines and rate
/// limits, the wall clock for protocols that put time on the wire (OneQuery's token windows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Now {
    /// Monotonic time, for deadlines and intervals.
    pub instant: Instant,
    /// Wall-clock time, for values other machines must agree on.
    pub wall: SystemTime,
}

impl Now {
    /// Both clocks as they read right now.
    pub fn system() -> Self {
        Now {
            instant: Instant::now(),
            wall: SystemTime::now(),
        }
    }

    /// The same moment moved `by` later on both clocks.
    #[must_use]
    pub fn after(self, by: Duration) -> Self {
        Now {
            instant: self.instant + by,
            wall: self.wall + by,
        }
    }
}

/// A source of [`Now`]. Drivers read it once per event and hand the value to the engine.
pub trait Clock: Send + Sync + 'static {
    /// The current moment.
    fn now(&self) -> Now;
}

/// The machine's clocks.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Now {
        Now::system()
    }
}

/// A clock that moves only when told to. Clones share the same time, so a test can keep one
/// handle and give another to the code under test.
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use query_net::clock::{Clock, ManualClock};
///
/// let clock = ManualClock::new(UNIX_EPOCH + Duration::from_secs(1_740_000_000));
/// let before = clock.now();
/// clock.advance(Duration::from_millis(1500));
/// assert_eq!(clock.now().instant - before.instant, Duration::from_millis(1500));
/// ```
#[derive(Debug, Clone)]
pub struct ManualClock {
    start: Now,
    elapsed_nanos: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock whose wall time starts at `wall`; its monotonic time starts at an arbitrary instant.
    pub fn new(wall: SystemTime) -> Self {
        ManualClock {
            start: Now {
                instant: Instant::now(),
                wall,
            },
            elapsed_nanos: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Moves both clocks forward by `by`.
    pub fn advance(&self, by: Duration) {
        let nanos = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        self.elapsed_nanos.fetch_add(nanos, Ordering::SeqCst);
    }

    /// How far the clock has been moved since it was made.
    pub fn elapsed(&self) -> Duration {
        Duration::from_nanos(self.elapsed_nanos.load(Ordering::SeqCst))
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Now {
        self.start.after(self.elapsed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    #[test]
    fn clones_share_time_and_both_clocks_move_together() {
        let clock = ManualClock::new(UNIX_EPOCH + Duration::from_secs(100));
        let other = clock.clone();
        let t0 = clock.now();
        other.advance(Duration::from_secs(30));
        let t1 = clock.now();
        assert_eq!(t1.instant - t0.instant, Duration::from_secs(30));
        assert_eq!(t1.wall, UNIX_EPOCH + Duration::from_secs(130));
        assert_eq!(clock.elapsed(), Duration::from_secs(30));
    }

    #[test]
    fn manual_clock_does_not_move_by_itself() {
        let clock = ManualClock::new(UNIX_EPOCH);
        assert_eq!(clock.now(), clock.now());
    }
}
