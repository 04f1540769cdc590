//! Protection for responders: a token bucket per source address with bounded memory, and the
//! counters that show what was answered and what was dropped.
//!
//! A query responder is a classic amplification target (a small spoofed request, a large
//! reply), so each source gets a budget. The buckets are [`governor`]'s GCRA; this module adds
//! the address keying and the memory bound.

use std::net::{IpAddr, Ipv6Addr};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};

use governor::state::keyed::HashMapStateStore;
use governor::Quota;
use serde::Serialize;

use crate::clock::{Clock, SystemClock};

/// How much one source address may ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Sustained requests per second per source.
    pub per_second: NonZeroU32,
    /// Requests a source may send at once after being quiet.
    pub burst: NonZeroU32,
    /// How many sources to track at most. Beyond it, sources that are back to a full bucket are
    /// forgotten; if most are still active (a flood from many addresses), all are forgotten and
    /// [`SourceLimiter::resets`] counts it: memory stays bounded, at the price of a fresh burst
    /// for everyone.
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

/// Adapts a [`Clock`] to the clock trait governor reads, so the limiter sees the same time as
/// the engines (a [`ManualClock`](crate::clock::ManualClock) in tests).
#[derive(Debug, Clone)]
struct GovernorClock<C>(C);

impl<C: Clock> governor::clock::Clock for GovernorClock<C> {
    type Instant = std::time::Instant;

    fn now(&self) -> Self::Instant {
        self.0.now().instant
    }
}

type Buckets<C> = governor::RateLimiter<IpAddr, HashMapStateStore<IpAddr>, GovernorClock<C>>;

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
    buckets: Buckets<C>,
    quota: Quota,
    clock: C,
    max_sources: usize,
    resets: u64,
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
        let quota = Quota::per_second(limit.per_second).allow_burst(limit.burst);
        SourceLimiter {
            buckets: Self::fresh_buckets(quota, &clock),
            quota,
            clock,
            max_sources: limit.max_sources.max(1),
            resets: 0,
        }
    }

    fn fresh_buckets(quota: Quota, clock: &C) -> Buckets<C> {
        governor::RateLimiter::new(
            quota,
            HashMapStateStore::default(),
            GovernorClock(clock.clone()),
        )
    }

    /// Takes a token from `source`'s bucket: `true` if the request may be answered.
    pub fn check(&mut self, source: IpAddr) -> bool {
        if self.buckets.len() >= self.max_sources {
            self.make_room();
        }
        self.buckets.check_key(&bucket_key(source)).is_ok()
    }

    /// Forgets sources whose bucket is full again. Amortised: it runs only when the table is full
    /// and leaves it at most three quarters full, so at least a quarter of `max_sources` new
    /// sources arrive before it runs again.
    fn make_room(&mut self) {
        self.buckets.retain_recent();
        if self.buckets.len() > self.max_sources / 4 * 3 {
            self.buckets = Self::fresh_buckets(self.quota, &self.clock);
            self.resets += 1;
        } else {
            self.buckets.shrink_to_fit();
        }
    }

    /// How many sources are tracked now.
    pub fn tracked_sources(&self) -> usize {
        self.buckets.len()
    }

    /// How many times the table was full of active sources and had to be cleared.
    pub fn resets(&self) -> u64 {
        self.resets
    }
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
        assert_eq!(limiter.resets(), 0);
    }

    #[test]
    fn a_flood_of_distinct_sources_never_grows_the_table_past_its_bound() {
        let clock = ManualClock::new(UNIX_EPOCH);
        let mut limiter = SourceLimiter::with_clock(limit(1, 1, 64), clock.clone());
        let mut max_seen = 0;
        for i in 0..10_000 {
            limiter.check(v4(i));
            max_seen = max_seen.max(limiter.tracked_sources());
        }
        assert!(max_seen <= 64, "tracked {max_seen}");
        assert!(limiter.resets() > 0);
        // A source that was limited before a reset is limited again right after its next burst.
        let victim = v4(20_000);
        assert!(limiter.check(victim));
        assert!(!limiter.check(victim));
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
