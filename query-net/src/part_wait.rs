//! How long a client waits for the rest of a reply that comes in several datagrams.
//!
//! GameSpy v1 and 3 mark their last part, Quake 3 marks nothing; in all of them a part can be
//! lost, and nothing says so. Clients we read (gamedig) end on the marked last part and
//! otherwise wait their whole timeout and return nothing; for Quake 3 they take the first
//! datagram alone. A server sends a reply's parts back to back (a responder writes them in one
//! loop; on loopback `gsq serve` sends them within a few hundred microseconds), so once the
//! parts stop coming for several round trips the rest is not on its way: [`PartWait`] ends
//! the wait a short gap after the latest part, never a full timeout later.

use std::time::{Duration, Instant};

use crate::engine::{Outcome, Retry};

/// The least gap waited after the latest part: a loopback or LAN round trip is far shorter,
/// and timers of a loaded machine fire a few milliseconds late.
pub const MIN_PART_GAP: Duration = Duration::from_millis(50);

/// The gap after the latest part counts this many round trips of the query (the first part's).
pub const GAP_ROUND_TRIPS: u32 = 4;

/// The gap after the latest part is at least this many times the longest pause seen between
/// two parts of the reply, so a server that paces its parts is not cut off.
pub const GAP_PAUSES: u32 = 2;

/// The wait for the rest of a multi-part reply, shared by every client whose replies come in
/// parts: once a part arrived, the session ends [`gap`](Self::gap) after the latest part
/// unless the reply completes first. The gap is [`GAP_ROUND_TRIPS`] round trips of the query,
/// or [`GAP_PAUSES`] times the longest pause between parts seen so far, whichever is longer,
/// at least [`MIN_PART_GAP`] and at most the attempt's timeout.
///
/// ```
/// use std::time::{Duration, Instant};
/// use query_net::part_wait::{PartWait, MIN_PART_GAP};
///
/// let t0 = Instant::now();
/// let mut wait = PartWait::new(Duration::from_secs(2));
/// assert_eq!(wait.until(), None);
/// // The first part came after a 5 ms round trip: four round trips are less than the floor.
/// wait.part_arrived(Duration::from_millis(5), t0);
/// assert_eq!(wait.until(), Some(t0 + MIN_PART_GAP));
/// // A part 40 ms later: the server paces its parts, the gap grows to two such pauses.
/// let t1 = t0 + Duration::from_millis(40);
/// wait.part_arrived(Duration::from_millis(5), t1);
/// assert_eq!(wait.until(), Some(t1 + Duration::from_millis(80)));
/// assert!(!wait.is_over(t1 + Duration::from_millis(79)));
/// assert!(wait.is_over(t1 + Duration::from_millis(80)));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct PartWait {
    timeout: Duration,
    latest: Option<Instant>,
    longest_pause: Duration,
    until: Option<Instant>,
}

impl PartWait {
    /// No part yet; `timeout` is the attempt's timeout, the longest gap waited.
    pub fn new(timeout: Duration) -> Self {
        PartWait {
            timeout,
            latest: None,
            longest_pause: Duration::ZERO,
            until: None,
        }
    }

    /// A part arrived at `now`; `rtt` is the query's round trip (to its first part).
    pub fn part_arrived(&mut self, rtt: Duration, now: Instant) {
        if let Some(latest) = self.latest {
            self.longest_pause = self
                .longest_pause
                .max(now.saturating_duration_since(latest));
        }
        self.latest = Some(now);
        self.until = Some(now + self.gap(rtt));
    }

    /// The gap waited after the latest part, for a query whose round trip is `rtt`.
    pub fn gap(&self, rtt: Duration) -> Duration {
        rtt.saturating_mul(GAP_ROUND_TRIPS)
            .max(self.longest_pause.saturating_mul(GAP_PAUSES))
            .max(MIN_PART_GAP)
            .min(self.timeout.max(MIN_PART_GAP))
    }

    /// When the wait ends; `None` before the first part.
    pub fn until(&self) -> Option<Instant> {
        self.until
    }

    /// Whether a part arrived and the gap after the latest has passed at `now`.
    pub fn is_over(&self, now: Instant) -> bool {
        self.until.is_some_and(|until| now >= until)
    }

    /// [`ClientSession::poll_timeout`](crate::engine::ClientSession::poll_timeout) of a session
    /// whose reply comes in parts: `retry`'s deadline until a part arrived, then the end of
    /// this wait; none once the session has ended.
    pub fn poll_timeout<T>(&self, outcome: &Outcome<T>, retry: &Retry) -> Option<Instant> {
        match self.until {
            Some(until) if !outcome.is_finished() => Some(until),
            _ => outcome.poll_timeout(retry),
        }
    }

    /// [`ClientSession::handle_timeout`](crate::engine::ClientSession::handle_timeout) of a
    /// session whose reply comes in parts. Until a part arrived, `retry` resends (or, its
    /// attempts spent, ends the session: [`Outcome::handle_timeout`]); after, whether the wait
    /// is over at `now`, when the session ends with the parts that arrived.
    pub fn handle_timeout<T>(
        &self,
        outcome: &mut Outcome<T>,
        retry: &mut Retry,
        now: Instant,
    ) -> bool {
        if outcome.is_finished() {
            return false;
        }
        if self.until.is_none() {
            outcome.handle_timeout(retry, now);
            return false;
        }
        self.is_over(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gap_is_bounded_by_the_timeout_and_the_floor() {
        let t0 = Instant::now();
        let mut wait = PartWait::new(Duration::from_millis(300));
        wait.part_arrived(Duration::from_millis(200), t0);
        // Four round trips (800 ms) are more than the attempt's timeout.
        assert_eq!(wait.until(), Some(t0 + Duration::from_millis(300)));
        let mut tiny = PartWait::new(Duration::from_millis(10));
        tiny.part_arrived(Duration::ZERO, t0);
        assert_eq!(tiny.until(), Some(t0 + MIN_PART_GAP));
        assert!(!tiny.is_over(t0));
    }

    #[test]
    fn the_retry_wakes_the_session_until_a_part_arrived_then_the_gap_does() {
        let t0 = Instant::now();
        let mut retry = Retry::new(Duration::from_millis(300), 2);
        retry.start("status request", b"q");
        let mut outcome: Outcome<u8> = Outcome::new();
        let mut wait = PartWait::new(Duration::from_millis(300));
        outcome.poll_transmit(&mut retry, t0).unwrap();
        let resend = t0 + Duration::from_millis(300);
        assert_eq!(wait.poll_timeout(&outcome, &retry), Some(resend));
        assert!(!wait.handle_timeout(&mut outcome, &mut retry, resend));
        assert!(
            outcome.poll_transmit(&mut retry, resend).is_some(),
            "resent"
        );

        // The first part stops the resending: the gap after it is what wakes the session.
        let part = resend + Duration::from_millis(10);
        outcome.answered(&mut retry, part);
        wait.part_arrived(Duration::from_millis(10), part);
        assert_eq!(
            wait.poll_timeout(&outcome, &retry),
            Some(part + MIN_PART_GAP)
        );
        assert!(!wait.handle_timeout(&mut outcome, &mut retry, part + Duration::from_millis(49)));
        assert!(wait.handle_timeout(&mut outcome, &mut retry, part + MIN_PART_GAP));
        assert!(
            !outcome.is_finished(),
            "the caller ends it with what arrived"
        );

        outcome.finish(Ok(1));
        assert_eq!(wait.poll_timeout(&outcome, &retry), None);
        assert!(!wait.handle_timeout(&mut outcome, &mut retry, part + MIN_PART_GAP));
    }

    #[test]
    fn without_a_part_the_spent_attempts_end_the_session() {
        let t0 = Instant::now();
        let mut retry = Retry::new(Duration::from_millis(100), 1);
        retry.start("status request", b"q");
        let mut outcome: Outcome<u8> = Outcome::new();
        let wait = PartWait::new(Duration::from_millis(100));
        outcome.poll_transmit(&mut retry, t0).unwrap();
        assert!(!wait.handle_timeout(&mut outcome, &mut retry, t0 + Duration::from_millis(100)));
        assert!(matches!(
            outcome.poll_result(),
            Some(Err(crate::QueryError::Timeout { attempts: 1, .. }))
        ));
    }
}
