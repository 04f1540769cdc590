//! Protection for responders: a token bucket per source address, a byte budget per client
//! netblock and for the whole responder, all with bounded memory, and the counters that show
//! what was answered and what was dropped.
//!
//! A query responder is a classic amplification target (a small spoofed request, a large
//! reply), so each source gets a budget. Counting requests is not enough: one request can
//! cost 8 bytes and its reply 43 KB, and spoofed sources spread over a victim's /24 each get a
//! request budget of their own. So, as DNS Response Rate Limiting does (BIND, Knot, NSD), the
//! replies to sources that have not proved their address are also counted in bytes per client
//! netblock ([`ByteLimiter`], configured by [`ReplyBudget`]). The buckets are GCRA (the
//! "generic cell rate algorithm": one timestamp per key); this module adds the address
//! keying and the memory bound.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
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
    /// 10 requests per second with bursts of 40, 65,536 sources: generous for a server list
    /// polling every few seconds (a SQP client sends two datagrams per query; a OneQuery client
    /// paging through 100 players with 255-byte names about 25), tight for a flood. What a
    /// request may draw in bytes is bounded separately, by [`ReplyBudget`].
    fn default() -> Self {
        RateLimit {
            per_second: NonZeroU32::new(10).unwrap_or(NonZeroU32::MIN),
            burst: NonZeroU32::new(40).unwrap_or(NonZeroU32::MIN),
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
    table: Table,
    epoch: Instant,
    /// Nanoseconds per token.
    interval: u64,
    /// How far ahead of now a source's time may run and still be admitted: `burst - 1` tokens.
    tolerance: u64,
    clock: C,
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
            table: Table::new(limit.max_sources, tolerance.saturating_add(interval)),
            epoch: clock.now().instant,
            interval,
            tolerance,
            clock,
        }
    }

    /// Takes a token from `source`'s bucket: `true` if the request may be answered.
    pub fn check(&mut self, source: IpAddr) -> bool {
        let now = nanos_since(&self.clock, self.epoch);
        let (interval, tolerance) = (self.interval, self.tolerance);
        match self.table.slot(bucket_key(source), now) {
            Some(tat) => admit(tat, now, interval, tolerance),
            None => false,
        }
    }

    /// How many sources are tracked now.
    pub fn tracked_sources(&self) -> usize {
        self.table.map.len()
    }

    /// How many requests from new sources were refused because the table was full of active
    /// sources.
    pub fn turned_away(&self) -> u64 {
        self.table.turned_away
    }
}

fn nanos_since(clock: &impl Clock, epoch: Instant) -> u64 {
    let since = clock.now().instant.saturating_duration_since(epoch);
    u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)
}

/// GCRA timestamps per key, at most `max` of them.
#[derive(Debug)]
struct Table {
    /// Each tracked key's "theoretical arrival time", in nanoseconds since the limiter's
    /// epoch: the bucket is full again once the clock reaches it.
    map: HashMap<IpAddr, u64>,
    max: usize,
    /// How long a bucket takes to refill at most, for spacing sweeps.
    refill: u64,
    /// New keys seen since the last sweep of the table.
    new_since_sweep: usize,
    /// When the table was last swept.
    last_sweep: Option<u64>,
    turned_away: u64,
}

impl Table {
    fn new(max: usize, refill: u64) -> Self {
        Table {
            map: HashMap::new(),
            max: max.max(1),
            refill,
            new_since_sweep: 0,
            last_sweep: None,
            turned_away: 0,
        }
    }

    /// The timestamp of `key`, a new one (at `now`: a full bucket) if there is room; `None`
    /// when the table is full of active keys. When the table is full, keys whose bucket is
    /// full again are forgotten (forgetting them changes nothing: a new bucket is full too);
    /// an active key's bucket is never reset, so a flood cannot hand anyone a fresh burst.
    fn slot(&mut self, key: IpAddr, now: u64) -> Option<&mut u64> {
        if !self.map.contains_key(&key) {
            self.new_since_sweep = self.new_since_sweep.saturating_add(1);
            if self.map.len() >= self.max {
                self.make_room(now);
                if self.map.len() >= self.max {
                    self.turned_away += 1;
                    return None;
                }
            }
        }
        Some(self.map.entry(key).or_insert(now))
    }

    /// Forgets the keys whose bucket is full again. Amortised: a sweep reads the whole
    /// table, so it runs only when the table is full and either a quarter of `max` new keys
    /// came since the last one, or enough time passed for every bucket then tracked to refill.
    fn make_room(&mut self, now: u64) {
        let recently = self
            .last_sweep
            .is_some_and(|last| now < last.saturating_add(self.refill));
        if recently && self.new_since_sweep < self.max / 4 {
            return;
        }
        self.map.retain(|_, tat| *tat > now);
        self.last_sweep = Some(now);
        self.new_since_sweep = 0;
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
    netblock(source, 32, 64)
}

/// `source` with all but its first `v4_prefix` (IPv4, also when mapped into IPv6) or
/// `v6_prefix` bits cleared.
pub fn netblock(source: IpAddr, v4_prefix: u8, v6_prefix: u8) -> IpAddr {
    match source.to_canonical() {
        IpAddr::V4(v4) => {
            let keep = u32::MAX
                .checked_shl(32 - u32::from(v4_prefix.min(32)))
                .unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(u32::from(v4) & keep))
        }
        IpAddr::V6(v6) => {
            let keep = u128::MAX
                .checked_shl(128 - u32::from(v6_prefix.min(128)))
                .unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(u128::from(v6) & keep))
        }
    }
}

/// A byte rate: `per_second` sustained, and `burst` bytes a quiet client may take at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteRate {
    /// Sustained bytes per second.
    pub per_second: NonZeroU32,
    /// Bytes that may go out at once after a quiet spell, beyond the sustained rate.
    pub burst: u32,
}

/// How many reply bytes may go to sources that have not proved their address.
///
/// A reply is sent if its netblock's bucket (and the responder's total bucket) is at most
/// `burst` bytes in debt *before* it, and then charged in full: the size of a reply is known
/// only once it is encoded, and a reply larger than the burst must still be answerable. So
/// over any `T` seconds a netblock receives at most `per_second × T + burst` plus one reply.
/// Replies marked [proven](crate::engine::ReplySink::mark_proven) (SQP, OneQuery and A2S
/// requests carrying a valid challenge or token) are neither checked nor charged: they cannot
/// be reflected, and their sources have their request rate limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplyBudget {
    /// Per client netblock.
    pub netblock: ByteRate,
    /// For everything this responder sends to unproven sources, across netblocks: the bound
    /// when spoofed sources are spread over many netblocks.
    pub total: ByteRate,
    /// Bits of an IPv4 source that name its netblock.
    pub ipv4_prefix: u8,
    /// Bits of an IPv6 source that name its netblock.
    pub ipv6_prefix: u8,
    /// How many netblocks to track at most; when the table is full of netblocks still in debt,
    /// replies to new ones are refused (as [`RateLimit::max_sources`]).
    pub max_netblocks: usize,
}

impl ReplyBudget {
    /// Per netblock: 32 KiB/s, bursts of 16 KiB. The largest GameSpy v1 reply the responder
    /// sends (about 43 KB: 100 players with 255-byte names and 300 rules) then goes out at most
    /// once a second and a half to a netblock, and a flood from one netblock gets at most
    /// `32 KiB × T + 16 KiB + 43 KB` in `T` seconds: under 64 KiB/s from two seconds on. A
    /// client polling every few seconds never comes near it; SA:MP's five queries in a row
    /// (at most 1,400 bytes each) fit in the burst.
    pub const DEFAULT_NETBLOCK: ByteRate = ByteRate {
        per_second: match NonZeroU32::new(32 * 1024) {
            Some(n) => n,
            None => NonZeroU32::MIN,
        },
        burst: 16 * 1024,
    };

    /// In total: 2 MiB/s, bursts of 256 KiB, about 50 full-size GameSpy v1 replies a second
    /// to unproven clients.
    pub const DEFAULT_TOTAL: ByteRate = ByteRate {
        per_second: match NonZeroU32::new(2 * 1024 * 1024) {
            Some(n) => n,
            None => NonZeroU32::MIN,
        },
        burst: 256 * 1024,
    };
}

impl Default for ReplyBudget {
    /// [`DEFAULT_NETBLOCK`](Self::DEFAULT_NETBLOCK) per IPv4 /24 or IPv6 /56 (the netblocks
    /// DNS Response Rate Limiting uses), [`DEFAULT_TOTAL`](Self::DEFAULT_TOTAL) in total,
    /// 65,536 netblocks tracked.
    fn default() -> Self {
        ReplyBudget {
            netblock: Self::DEFAULT_NETBLOCK,
            total: Self::DEFAULT_TOTAL,
            ipv4_prefix: 24,
            ipv6_prefix: 56,
            max_netblocks: 65_536,
        }
    }
}

/// Why [`ByteLimiter::spend`] refused a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverBudget {
    /// The source's netblock is over its budget (or the netblock table is full of active ones).
    Netblock,
    /// The responder is over its total budget.
    Total,
}

/// The byte budgets of a [`ReplyBudget`]: one bucket per netblock and one in total, counted in
/// nanoseconds of debt, memory bounded by [`ReplyBudget::max_netblocks`].
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use query_net::clock::ManualClock;
/// use query_net::limit::{ByteLimiter, OverBudget, ReplyBudget};
///
/// let clock = ManualClock::new(UNIX_EPOCH);
/// let mut limiter = ByteLimiter::with_clock(ReplyBudget::default(), clock.clone());
/// let victim = "192.0.2.1".parse().unwrap();
/// let neighbour = "192.0.2.200".parse().unwrap();
/// assert_eq!(limiter.spend(victim, 40_000), Ok(()));
/// // The same /24 is in debt now; another netblock is not.
/// assert_eq!(limiter.spend(neighbour, 100), Err(OverBudget::Netblock));
/// assert_eq!(limiter.spend("198.51.100.1".parse().unwrap(), 100), Ok(()));
/// clock.advance(Duration::from_secs(1));
/// assert_eq!(limiter.spend(neighbour, 100), Ok(()));
/// ```
#[derive(Debug)]
pub struct ByteLimiter<C: Clock + Clone = SystemClock> {
    table: Table,
    total_tat: u64,
    epoch: Instant,
    netblock: Rate,
    total: Rate,
    ipv4_prefix: u8,
    ipv6_prefix: u8,
    clock: C,
}

/// A [`ByteRate`] in nanoseconds.
#[derive(Debug, Clone, Copy)]
struct Rate {
    per_second: u64,
    tolerance: u64,
}

impl Rate {
    fn new(rate: ByteRate) -> Self {
        let (per_second, burst) = (u64::from(rate.per_second.get()), rate.burst);
        let mut rate = Rate {
            per_second,
            tolerance: 0,
        };
        rate.tolerance = rate.cost(u64::from(burst));
        rate
    }

    /// Nanoseconds `bytes` take at this rate.
    fn cost(&self, bytes: u64) -> u64 {
        let nanos = u128::from(bytes) * 1_000_000_000 / u128::from(self.per_second);
        u64::try_from(nanos).unwrap_or(u64::MAX)
    }

    /// Whether a bucket at `tat` is at most the burst in debt at `now`.
    fn open(&self, tat: u64, now: u64) -> bool {
        tat.saturating_sub(now) <= self.tolerance
    }

    /// Charges `bytes` to a bucket at `tat`.
    fn charge(&self, tat: &mut u64, now: u64, bytes: u64) {
        *tat = (*tat).max(now).saturating_add(self.cost(bytes));
    }
}

impl ByteLimiter<SystemClock> {
    /// A limiter on the system clock.
    pub fn new(budget: ReplyBudget) -> Self {
        Self::with_clock(budget, SystemClock)
    }
}

impl<C: Clock + Clone> ByteLimiter<C> {
    /// A limiter reading time from `clock`.
    pub fn with_clock(budget: ReplyBudget, clock: C) -> Self {
        let netblock = Rate::new(budget.netblock);
        let total = Rate::new(budget.total);
        ByteLimiter {
            table: Table::new(budget.max_netblocks, netblock.tolerance.max(1_000_000_000)),
            total_tat: 0,
            epoch: clock.now().instant,
            netblock,
            total,
            ipv4_prefix: budget.ipv4_prefix,
            ipv6_prefix: budget.ipv6_prefix,
            clock,
        }
    }

    /// Whether `bytes` of replies may go to `source` now; if so they are charged to its
    /// netblock and to the total.
    pub fn spend(&mut self, source: IpAddr, bytes: usize) -> Result<(), OverBudget> {
        let now = nanos_since(&self.clock, self.epoch);
        let bytes = u64::try_from(bytes).unwrap_or(u64::MAX);
        let key = netblock(source, self.ipv4_prefix, self.ipv6_prefix);
        let (netblock, total) = (self.netblock, self.total);
        let Some(tat) = self.table.slot(key, now) else {
            return Err(OverBudget::Netblock);
        };
        if !netblock.open(*tat, now) {
            return Err(OverBudget::Netblock);
        }
        if !total.open(self.total_tat, now) {
            return Err(OverBudget::Total);
        }
        netblock.charge(tat, now, bytes);
        total.charge(&mut self.total_tat, now, bytes);
        Ok(())
    }

    /// How many netblocks are tracked now.
    pub fn tracked_netblocks(&self) -> usize {
        self.table.map.len()
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

        impl StatsSnapshot {
            /// What was counted between `earlier` and this snapshot.
            pub fn since(&self, earlier: &StatsSnapshot) -> StatsSnapshot {
                StatsSnapshot { $( $name: self.$name.saturating_sub(earlier.$name), )* }
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
    /// Requests whose replies would overrun their netblock's byte budget (or that came from a
    /// new netblock while the table was full of netblocks in debt).
    dropped_netblock_budget,
    /// Requests whose replies would overrun the responder's total byte budget.
    dropped_total_budget,
    /// Requests the responder knows but chose not to answer.
    dropped_declined,
    /// Requests with a missing, wrong or expired challenge or token.
    dropped_bad_challenge,
    /// Well-formed requests the responder does not answer (unknown query types, other protocols).
    dropped_unsupported,
    /// Replies the socket refused to send.
    send_errors,
    /// Errors reading from the socket.
    recv_errors,
    /// Bytes of reply datagrams handed to the socket (payload, without UDP and IP headers).
    reply_bytes,
    /// Of those, bytes to sources that had not proved their address: the part a spoofed
    /// source could aim at someone else.
    unproven_reply_bytes,
}

impl Stats {
    /// Adds one to `counter`.
    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Adds `n` to `counter`.
    pub fn add(counter: &AtomicU64, n: usize) {
        counter.fetch_add(u64::try_from(n).unwrap_or(u64::MAX), Ordering::Relaxed);
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

    fn budget(per_second: u32, burst: u32, total: u32, max_netblocks: usize) -> ReplyBudget {
        ReplyBudget {
            netblock: ByteRate {
                per_second: NonZeroU32::new(per_second).unwrap(),
                burst,
            },
            total: ByteRate {
                per_second: NonZeroU32::new(total).unwrap(),
                burst: total,
            },
            max_netblocks,
            ..ReplyBudget::default()
        }
    }

    #[test]
    fn netblocks_keep_the_configured_prefix() {
        let v4: IpAddr = "192.0.2.77".parse().unwrap();
        assert_eq!(netblock(v4, 24, 56), "192.0.2.0".parse::<IpAddr>().unwrap());
        assert_eq!(netblock(v4, 32, 56), v4);
        assert_eq!(netblock(v4, 0, 56), "0.0.0.0".parse::<IpAddr>().unwrap());
        let mapped: IpAddr = "::ffff:192.0.2.77".parse().unwrap();
        assert_eq!(
            netblock(mapped, 24, 56),
            "192.0.2.0".parse::<IpAddr>().unwrap()
        );
        let v6: IpAddr = "2001:db8:aaaa:bbcc:1:2:3:4".parse().unwrap();
        assert_eq!(
            netblock(v6, 24, 56),
            "2001:db8:aaaa:bb00::".parse::<IpAddr>().unwrap()
        );
        assert_eq!(netblock(v6, 24, 128), v6);
        assert_eq!(netblock(v6, 24, 0), "::".parse::<IpAddr>().unwrap());
        // Prefixes past the address length keep it whole.
        assert_eq!(netblock(v4, 40, 200), v4);
        assert_eq!(netblock(v6, 40, 200), v6);
    }

    #[test]
    fn a_netblock_gets_its_burst_then_its_rate_in_bytes() {
        let clock = ManualClock::new(UNIX_EPOCH);
        let mut limiter = ByteLimiter::with_clock(budget(1000, 500, 1_000_000, 64), clock.clone());
        let ip = |last: u8| IpAddr::V4(std::net::Ipv4Addr::new(198, 51, 100, last));
        // 400 + 400 bytes: the second goes while the debt (400) is within the burst (500).
        assert_eq!(limiter.spend(ip(1), 400), Ok(()));
        assert_eq!(limiter.spend(ip(2), 400), Ok(()));
        // 800 in debt: refused, for every address of the /24.
        assert_eq!(limiter.spend(ip(3), 1), Err(OverBudget::Netblock));
        assert_eq!(limiter.spend(ip(1), 1), Err(OverBudget::Netblock));
        // 300 ms pay 300 bytes: 500 in debt, admitted again.
        clock.advance(Duration::from_millis(299));
        assert_eq!(limiter.spend(ip(3), 1), Err(OverBudget::Netblock));
        clock.advance(Duration::from_millis(1));
        assert_eq!(limiter.spend(ip(3), 1), Ok(()));
        // Over ten seconds of constant asking, the rate holds.
        let mut sent = 0;
        for _ in 0..10_000 {
            clock.advance(Duration::from_millis(1));
            if limiter.spend(ip(9), 100).is_ok() {
                sent += 100;
            }
        }
        assert!((10_000..=10_000 + 500 + 100).contains(&sent), "{sent}");
        // Another netblock was never touched.
        assert_eq!(limiter.spend("203.0.113.1".parse().unwrap(), 400), Ok(()));
    }

    #[test]
    fn a_reply_larger_than_the_burst_still_goes_to_a_quiet_netblock() {
        let clock = ManualClock::new(UNIX_EPOCH);
        let mut limiter = ByteLimiter::with_clock(budget(1000, 100, 1_000_000, 64), clock.clone());
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        assert_eq!(limiter.spend(ip, 5000), Ok(()));
        clock.advance(Duration::from_millis(4899));
        assert_eq!(limiter.spend(ip, 5000), Err(OverBudget::Netblock));
        clock.advance(Duration::from_millis(1));
        assert_eq!(limiter.spend(ip, 5000), Ok(()));
    }

    #[test]
    fn the_total_budget_bounds_many_netblocks_together() {
        let clock = ManualClock::new(UNIX_EPOCH);
        let mut limiter = ByteLimiter::with_clock(budget(1000, 1000, 3000, 1024), clock.clone());
        let block = |i: u32| IpAddr::V4(std::net::Ipv4Addr::from(0x0a00_0000 + (i << 8)));
        let admitted = (0..100)
            .filter(|&i| limiter.spend(block(i), 1000).is_ok())
            .count();
        // 3000 of burst: admitted while the total debt is at most 3000, so four replies.
        assert_eq!(admitted, 4);
        assert_eq!(limiter.spend(block(500), 1), Err(OverBudget::Total));
        clock.advance(Duration::from_secs(1));
        assert_eq!(limiter.spend(block(501), 1), Ok(()));
    }

    #[test]
    fn a_flood_of_netblocks_never_grows_the_table_past_its_bound() {
        let clock = ManualClock::new(UNIX_EPOCH);
        let mut limiter = ByteLimiter::with_clock(budget(1000, 0, u32::MAX, 64), clock.clone());
        let victim: IpAddr = "192.0.2.1".parse().unwrap();
        assert_eq!(limiter.spend(victim, 2000), Ok(()));
        for i in 0..100_000u32 {
            let _ = limiter.spend(IpAddr::V4(std::net::Ipv4Addr::from(i << 8)), 2000);
            assert!(limiter.tracked_netblocks() <= 64);
            if i % 1000 == 0 {
                clock.advance(Duration::from_millis(10));
                // The victim's debt is never forgotten while it lasts.
                assert_eq!(limiter.spend(victim, 1), Err(OverBudget::Netblock), "{i}");
            }
        }
        clock.advance(Duration::from_secs(2));
        assert_eq!(limiter.spend(victim, 1), Ok(()));
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
        Stats::add(&stats.reply_bytes, 1400);
        let later = stats.snapshot();
        let delta = later.since(&snap);
        assert_eq!((delta.received, delta.reply_bytes), (0, 1400));
    }
}
