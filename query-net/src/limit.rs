//! Protection for responders: a token bucket per source address with bounded memory, and the
//! counters that show what was answered and what was dropped.
//!
//! A query responder is a classic amplification target (a small spoofed request, a large
//! reply), so each source gets a budget. The buckets are GCRA (the "generic cell rate
//! algorithm": one timestamp per source); this module adds the address keying and the memory
//! bound.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde::Serialize;

use crate::clock::{Clock, SystemClock};

/// How much one source address may ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Sustained requests per second per source.
    pub per_second: NonZeroU32,
    /// Requests a source may send at once after being quiet.
    pub burst: NonZeroU32,
    /// How many sources to track at most. When the table is full, sources whose bucket is full
    /// again are forgotten (forgetting them changes nothing: a new bucket is full too). If
    /// every tracked source is still active (a flood from many addresses), new sources are
    /// refused until some bucket refills, and [`SourceLimiter::turned_away`] counts them: an
    /// active source's bucket is never reset, so a flood cannot hand anyone a fresh burst.
    pub max_sources: usize,
}

impl Default for RateLimit {
    /// 10 requests per second with bursts of 20, 65,536 sources: generous for a server list
    /// polling every few seconds (a SQP or OneQuery client sends two datagrams per query), tight
    /// for a flood.
    fn default() -> Self {
        RateLimit {
            per_second: NonZeroU32::new(10).unwrap_or(NonZeroU32::MIN),
            burst: NonZeroU32::new(20).unwrap_or(NonZeroU32::MIN),
            max_sources: 65_536,
        }
    }
}

/// A token bucket per source address, with memory bounded by [`RateLimit::max_sources`].
///
/// IPv4-mapped IPv6 sources count as their IPv4 address; other IPv6 sources are grouped by
/// their /64 prefix, since one host usually owns a whole /64 and could otherwise get a fresh
/// bucket per address.
///
/// ```
/// use std::num::NonZeroU32;
/// use std::time::{Duration, UNIX_EPOCH};
/// use query_net::clock::ManualClock;
/// use query_net::limit::{RateLimit, SourceLimiter};
///
/// let clock = ManualClock::new(UNIX_EPOCH);
/// let limit = RateLimit { per_second: NonZeroU32::new(1).unwrap(), burst: NonZeroU32::new(2).unwrap(), ..RateLimit::default() };
/// let mut limiter = SourceLimiter::with_clock(limit, clock.clone());
/// let ip = "192.0.2.1".parse().unwrap();
/// assert!(limiter.check(ip) && limiter.check(ip));
/// assert!(!limiter.check(ip));
/// clock.advance(Duration::from_secs(1));
/// assert!(limiter.check(ip));
/// ```
#[derive(Debug)]
pub struct SourceLimiter<C: Clock + Clone = SystemClock> {
    /// Each tracked source's "theoretical arrival time", in nanoseconds since `epoch`: the
    /// bucket is full again once the clock reaches it.
    buckets: HashMap<IpAddr, u64>,
    epoch: Instant,
    /// Nanoseconds per token.
    interval: u64,
    /// How far ahead of now a source's time may run and still be admitted: `burst - 1` tokens.
    tolerance: u64,
    clock: C,
    max_sources: usize,
    /// New sources seen since the last sweep of the table.
    new_since_sweep: usize,
    /// When the table was last swept.
    last_sweep: Option<u64>,
    turned_away: u64,
}

impl SourceLimiter<SystemClock> {
    /// A limiter on the system clock.
    pub fn new(limit: RateLimit) -> Self {
        Self::with_clock(limit, SystemClock)
    }
}

impl<C: Clock + Clone> SourceLimiter<C> {
    /// A limiter reading time from `clock`.
    pub fn with_clock(limit: RateLimit, clock: C) -> Self {
        let interval = (1_000_000_000 / u64::from(limit.per_second.get())).max(1);
        let tolerance = interval.saturating_mul(u64::from(limit.burst.get()) - 1);
        SourceLimiter {
            buckets: HashMap::new(),
            epoch: clock.now().instant,
            interval,
            tolerance,
            clock,
            max_sources: limit.max_sources.max(1),
            new_since_sweep: 0,
            last_sweep: None,
            turned_away: 0,
        }
    }

    fn now(&self) -> u64 {
        let since = self
            .clock
            .now()
            .instant
            .saturating_duration_since(self.epoch);
        u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)
    }

    /// Takes a token from `source`'s bucket: `true` if the request may be answered.
    pub fn check(&mut self, source: IpAddr) -> bool {
        let now = self.now();
        let key = bucket_key(source);
        let (interval, tolerance) = (self.interval, self.tolerance);
        if let Some(tat) = self.buckets.get_mut(&key) {
            return admit(tat, now, interval, tolerance);
        }
        self.new_since_sweep = self.new_since_sweep.saturating_add(1);
        if self.buckets.len() >= self.max_sources {
            self.make_room(now);
            if self.buckets.len() >= self.max_sources {
                self.turned_away += 1;
                return false;
            }
        }
        let mut tat = now;
        let admitted = admit(&mut tat, now, interval, tolerance);
        self.buckets.insert(key, tat);
        admitted
    }

    /// Forgets the sources whose bucket is full again: they are no different from sources never
    /// seen. Amortised: a sweep reads the whole table, so it runs only when the table is full
    /// and either a quarter of `max_sources` new sources came since the last one, or enough
    /// time passed for every bucket then tracked to refill.
    fn make_room(&mut self, now: u64) {
        let refill = self.tolerance.saturating_add(self.interval);
        let recently = self
            .last_sweep
            .is_some_and(|last| now < last.saturating_add(refill));
        if recently && self.new_since_sweep < self.max_sources / 4 {
            return;
        }
        self.buckets.retain(|_, tat| *tat > now);
        self.last_sweep = Some(now);
        self.new_since_sweep = 0;
    }

    /// How many sources are tracked now.
    pub fn tracked_sources(&self) -> usize {
        self.buckets.len()
    }

    /// How many requests from new sources were refused because the table was full of active
    /// sources.
    pub fn turned_away(&self) -> u64 {
        self.turned_away
    }
}

/// GCRA: admits a request at `now` if the source's time `tat` runs at most `tolerance` ahead,
/// and then moves it one `interval` on.
fn admit(tat: &mut u64, now: u64, interval: u64, tolerance: u64) -> bool {
    let start = (*tat).max(now);
    if start - now > tolerance {
        return false;
    }
    *tat = start.saturating_add(interval);
    true
}

/// The address a bucket belongs to: IPv4 as is (also when mapped into IPv6), IPv6 by /64.
fn bucket_key(source: IpAddr) -> IpAddr {
    match source.to_canonical() {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => {
            let prefix = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(Ipv6Addr::from(prefix))
        }
    }
}

macro_rules! counters {
    ($( $(#[$doc:meta])* $name:ident ),* $(,)?) => {
        /// What a responder did with the datagrams it received. Atomic, so every serve loop and
        /// a monitoring thread can share one `Arc<Stats>`; relaxed ordering, since each counter
        /// is read on its own.
        #[derive(Debug, Default)]
        pub struct Stats {
            $( $(#[$doc])* pub $name: AtomicU64, )*
        }

        /// The counters of [`Stats`] at one moment, for printing or JSON.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
        pub struct StatsSnapshot {
            $( $(#[$doc])* pub $name: u64, )*
        }

        impl Stats {
            /// Reads every counter.
            pub fn snapshot(&self) -> StatsSnapshot {
                StatsSnapshot { $( $name: self.$name.load(Ordering::Relaxed), )* }
            }
        }
    };
}

counters! {
    /// Datagrams received.
    received,
    /// Requests answered with at least one datagram.
    answered,
    /// Reply datagrams sent.
    replies_sent,
    /// Requests that did not decode.
    dropped_malformed,
    /// Requests over their source's rate limit.
    dropped_rate_limited,
    /// Requests with a missing, wrong or expired challenge or token.
    dropped_bad_challenge,
    /// Well-formed requests the responder does not answer (unknown query types, other protocols).
    dropped_unsupported,
    /// Replies the socket refused to send.
    send_errors,
    /// Errors reading from the socket.
    recv_errors,
}

impl Stats {
    /// Adds one to `counter`.
    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use std::time::{Duration, UNIX_EPOCH};

    fn limit(per_second: u32, burst: u32, max_sources: usize) -> RateLimit {
        RateLimit {
            per_second: NonZeroU32::new(per_second).unwrap(),
            burst: NonZeroU32::new(burst).unwrap(),
            max_sources,
        }
    }

    fn v4(i: u32) -> IpAddr {
        IpAddr::V4(std::net::Ipv4Addr::from(0x0a00_0000 + i))
    }

    #[test]
    fn burst_then_refill_at_the_sustained_rate() {
        let clock = ManualClock::new(UNIX_EPOCH);
        let mut limiter = SourceLimiter::with_clock(limit(10, 3, 100), clock.clone());
        let ip = v4(1);
        assert!((0..3).all(|_| limiter.check(ip)));
        assert!(!limiter.check(ip));
        clock.advance(Duration::from_millis(99));
        assert!(!limiter.check(ip));
        clock.advance(Duration::from_millis(1));
        assert!(limiter.check(ip));
        assert!(!limiter.check(ip));
    }

    #[test]
    fn sources_have_separate_buckets() {
        let clock = ManualClock::new(UNIX_EPOCH);
        let mut limiter = SourceLimiter::with_clock(limit(1, 1, 100), clock);
        assert!(limiter.check(v4(1)));
        assert!(!limiter.check(v4(1)));
        assert!(limiter.check(v4(2)));
    }

    #[test]
    fn ipv6_sources_share_a_bucket_per_64_prefix_and_mapped_v4_counts_as_v4() {
        let clock = ManualClock::new(UNIX_EPOCH);
        let mut limiter = SourceLimiter::with_clock(limit(1, 1, 100), clock);
        assert!(limiter.check("2001:db8::1".parse().unwrap()));
        assert!(!limiter.check("2001:db8::ffff:2".parse().unwrap()));
        assert!(limiter.check("2001:db8:0:1::1".parse().unwrap()));
        assert!(limiter.check("192.0.2.7".parse().unwrap()));
        assert!(!limiter.check("::ffff:192.0.2.7".parse().unwrap()));
    }

    #[test]
    fn idle_sources_are_forgotten_when_the_table_fills() {
        let clock = ManualClock::new(UNIX_EPOCH);
        let mut limiter = SourceLimiter::with_clock(limit(100, 1, 64), clock.clone());
        for i in 0..64 {
            assert!(limiter.check(v4(i)));
        }
        assert_eq!(limiter.tracked_sources(), 64);
        clock.advance(Duration::from_secs(1));
        assert!(limiter.check(v4(1000)));
        assert_eq!(limiter.tracked_sources(), 1);
        assert_eq!(limiter.turned_away(), 0);
    }

    #[test]
    fn a_flood_of_distinct_sources_never_grows_the_table_past_its_bound() {
        let clock = ManualClock::new(UNIX_EPOCH);
        let mut limiter = SourceLimiter::with_clock(limit(1, 1, 64), clock.clone());
        let mut max_seen = 0;
        for i in 0..10_000 {
            limiter.check(v4(i));
            max_seen = max_seen.max(limiter.tracked_sources());
            if i % 100 == 0 {
                clock.advance(Duration::from_millis(50));
            }
        }
        assert!(max_seen <= 64, "tracked {max_seen}");
        assert!(limiter.turned_away() > 0);
    }

    #[test]
    fn a_spoofed_flood_from_many_sources_never_resets_an_active_sources_bucket() {
        let clock = ManualClock::new(UNIX_EPOCH);
        let mut limiter = SourceLimiter::with_clock(limit(1, 3, 64), clock.clone());
        let victim = v4(1_000_000);
        assert!((0..3).all(|_| limiter.check(victim)));
        assert!(!limiter.check(victim), "the victim's burst is spent");
        // A flood from ever new addresses, far more than the table holds, with time moving
        // on a little, but less than the victim needs for one token (a second).
        for i in 0..100_000 {
            limiter.check(v4(i));
            if i % 1000 == 0 {
                clock.advance(Duration::from_millis(5));
                assert!(!limiter.check(victim), "fresh burst for the victim at {i}");
            }
            assert!(limiter.tracked_sources() <= 64);
        }
        assert!(limiter.turned_away() > 0);
        // Time refills the victim at the sustained rate, no faster.
        clock.advance(Duration::from_secs(1));
        assert!(limiter.check(victim));
        assert!(!limiter.check(victim));
    }

    #[test]
    fn new_sources_are_refused_while_the_table_is_full_of_active_ones_then_admitted() {
        let clock = ManualClock::new(UNIX_EPOCH);
        let mut limiter = SourceLimiter::with_clock(limit(10, 2, 8), clock.clone());
        for i in 0..8 {
            assert!(limiter.check(v4(i)));
        }
        // Every bucket has a token out: all eight are active for another 100 ms.
        assert!(!limiter.check(v4(100)));
        assert_eq!(limiter.turned_away(), 1);
        // The tracked ones keep their own budget meanwhile.
        assert!(limiter.check(v4(3)));
        assert!(!limiter.check(v4(3)));
        // Once buckets refill (200 ms covers the longest), room is made.
        clock.advance(Duration::from_millis(200));
        assert!(limiter.check(v4(100)));
        assert_eq!(limiter.tracked_sources(), 1);
    }

    #[test]
    fn snapshot_reads_every_counter() {
        let stats = Stats::default();
        Stats::bump(&stats.received);
        Stats::bump(&stats.received);
        Stats::bump(&stats.dropped_rate_limited);
        let snap = stats.snapshot();
        assert_eq!(snap.received, 2);
        assert_eq!(snap.dropped_rate_limited, 1);
        assert_eq!(snap.answered, 0);
        let json = serde_json::to_value(snap).unwrap();
        assert_eq!(json["dropped_rate_limited"], 1);
    }
}
