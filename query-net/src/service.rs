//! One responder made ready to face the network: rate limit first, then the protocol, then the
//! byte budget, then the counters. This is everything [`serve`](crate::driver::serve) does per
//! datagram except the socket calls, so it is tested without sockets.
//!
//! A responder plugs in by implementing [`Responder`] and nothing else: the service caps its
//! datagrams ([`Service::max_datagram`], 1,400 bytes by default; the responder splits or cuts
//! to [`ReplySink::max_datagram`]), counts the bytes of its replies against the budgets of
//! [`ReplyBudget`], and counts every drop. The one thing a responder with a challenge must do
//! is call [`ReplySink::mark_proven`] when a request carried a valid one, so that its replies
//! to proven clients are not charged to the budget for unproven ones.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use crate::clock::{Clock, SystemClock};
use crate::engine::{DropReason, ReplySink, Responder, Verdict};
use crate::limit::{ByteLimiter, OverBudget, RateLimit, ReplyBudget, SourceLimiter, Stats};

/// A [`Responder`] with its per-source rate limiter, its byte budgets, its counters and its
/// reply buffer.
///
/// ```
/// use std::net::SocketAddr;
/// use query_net::clock::Now;
/// use query_net::engine::{ReplySink, Responder, Verdict};
/// use query_net::service::Service;
///
/// /// Answers every datagram with "pong".
/// struct Pong;
/// impl Responder for Pong {
///     fn handle(&mut self, _: SocketAddr, _: &[u8], _: Now, replies: &mut ReplySink) -> Verdict {
///         match replies.push(b"pong") {
///             Ok(()) => Verdict::Answered,
///             Err(_) => Verdict::Dropped(query_net::engine::DropReason::Unsupported),
///         }
///     }
/// }
///
/// let mut service = Service::new(Pong);
/// let from: SocketAddr = "192.0.2.1:5000".parse().unwrap();
/// let replies: Vec<&[u8]> = service.handle(from, b"ping").collect();
/// assert_eq!(replies, [&b"pong"[..]]);
/// assert_eq!(service.stats().snapshot().answered, 1);
/// ```
#[derive(Debug)]
pub struct Service<R, C: Clock + Clone = SystemClock> {
    responder: R,
    limiter: Option<SourceLimiter<C>>,
    budget: Option<ByteLimiter<C>>,
    stats: Arc<Stats>,
    sink: ReplySink,
    clock: C,
    /// What happened to the latest request, for drivers that report drops per source.
    last_verdict: Verdict,
}

impl<R> Service<R> {
    /// The default cap on one reply datagram: under the 1,500-byte Ethernet MTU with room for
    /// IP, UDP and tunnel headers, so replies are not fragmented at the IP layer.
    pub const DEFAULT_MAX_DATAGRAM: usize = 1400;
}

impl<R: Responder> Service<R> {
    /// `responder` on the system clock, with the default [`RateLimit`] and [`ReplyBudget`].
    pub fn new(responder: R) -> Self {
        Self::with_clock(responder, SystemClock)
    }
}

impl<R: Responder, C: Clock + Clone> Service<R, C> {
    /// `responder` reading time from `clock`, with the default [`RateLimit`] and
    /// [`ReplyBudget`], and datagrams of at most [`DEFAULT_MAX_DATAGRAM`](Service::DEFAULT_MAX_DATAGRAM).
    pub fn with_clock(responder: R, clock: C) -> Self {
        Service {
            responder,
            limiter: Some(SourceLimiter::with_clock(
                RateLimit::default(),
                clock.clone(),
            )),
            budget: Some(ByteLimiter::with_clock(
                ReplyBudget::default(),
                clock.clone(),
            )),
            stats: Arc::default(),
            sink: ReplySink::new(Service::<R>::DEFAULT_MAX_DATAGRAM),
            clock,
            last_verdict: Verdict::Answered,
        }
    }

    /// Sets the per-source rate limit; `None` answers every request (for tests and trusted
    /// networks only).
    #[must_use]
    pub fn rate_limit(mut self, limit: Option<RateLimit>) -> Self {
        self.limiter = limit.map(|limit| SourceLimiter::with_clock(limit, self.clock.clone()));
        self
    }

    /// Sets the byte budgets for replies to sources that have not proved their address;
    /// `None` sends them whatever their request rate allows (for tests and trusted networks
    /// only).
    #[must_use]
    pub fn reply_budget(mut self, budget: Option<ReplyBudget>) -> Self {
        self.budget = budget.map(|budget| ByteLimiter::with_clock(budget, self.clock.clone()));
        self
    }

    /// Counts into `stats` instead of a counter set of its own, so several services (one per
    /// port or protocol) report together.
    #[must_use]
    pub fn with_stats(mut self, stats: Arc<Stats>) -> Self {
        self.stats = stats;
        self
    }

    /// Caps each reply datagram at `max_datagram` bytes.
    #[must_use]
    pub fn max_datagram(mut self, max_datagram: usize) -> Self {
        self.sink = ReplySink::new(max_datagram);
        self
    }

    /// The counters.
    pub fn stats(&self) -> &Arc<Stats> {
        &self.stats
    }

    /// The responder.
    pub fn responder(&self) -> &R {
        &self.responder
    }

    /// The responder, to reconfigure it between requests.
    pub fn responder_mut(&mut self) -> &mut R {
        &mut self.responder
    }

    /// What [`handle`](Service::handle) did with the latest datagram, including
    /// [`DropReason::RateLimited`] for one the limiter stopped before the responder saw it.
    pub fn last_verdict(&self) -> Verdict {
        self.last_verdict
    }

    /// Handles one datagram and returns the replies to send back to `from` (possibly none).
    pub fn handle(&mut self, from: SocketAddr, datagram: &[u8]) -> impl Iterator<Item = &[u8]> {
        self.sink.clear();
        Stats::bump(&self.stats.received);
        let allowed = match &mut self.limiter {
            Some(limiter) => limiter.check(from.ip()),
            None => true,
        };
        let verdict = if allowed {
            let now = self.clock.now();
            self.responder.handle(from, datagram, now, &mut self.sink)
        } else {
            Verdict::Dropped(DropReason::RateLimited)
        };
        let verdict = match verdict {
            Verdict::Answered if !self.sink.is_proven() && !self.sink.is_empty() => {
                let bytes = self.sink.total_bytes();
                match &mut self.budget {
                    Some(budget) => match budget.spend(from.ip(), bytes) {
                        Ok(()) => verdict,
                        Err(over) => {
                            Stats::bump(match over {
                                OverBudget::Netblock => &self.stats.dropped_netblock_budget,
                                OverBudget::Total => &self.stats.dropped_total_budget,
                            });
                            self.sink.clear();
                            self.last_verdict = Verdict::Dropped(DropReason::OverByteBudget);
                            return self.sink.datagrams();
                        }
                    },
                    None => verdict,
                }
            }
            other => other,
        };
        self.last_verdict = verdict;
        match verdict {
            Verdict::Answered if self.sink.is_empty() => {
                // An engine that claims an answer but wrote none: count it as unanswered.
                self.last_verdict = Verdict::Dropped(DropReason::Unsupported);
                Stats::bump(&self.stats.dropped_unsupported);
            }
            Verdict::Answered => {
                Stats::bump(&self.stats.answered);
                let bytes = self.sink.total_bytes();
                Stats::add(&self.stats.reply_bytes, bytes);
                if !self.sink.is_proven() {
                    Stats::add(&self.stats.unproven_reply_bytes, bytes);
                }
            }
            Verdict::Dropped(reason) => {
                self.sink.clear();
                Stats::bump(match reason {
                    DropReason::Malformed => &self.stats.dropped_malformed,
                    DropReason::BadChallenge => &self.stats.dropped_bad_challenge,
                    DropReason::RateLimited => &self.stats.dropped_rate_limited,
                    DropReason::Unsupported => &self.stats.dropped_unsupported,
                    DropReason::Declined => &self.stats.dropped_declined,
                    // Only the service itself drops for the byte budget; a responder that
                    // says so is counted the same way.
                    DropReason::OverByteBudget => &self.stats.dropped_netblock_budget,
                });
            }
        }
        self.sink.datagrams()
    }
}

/// What a failed receive on a UDP socket means for the loop reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecvErrorKind {
    /// About one datagram or one peer, not the socket: count it and read on. An ICMP "port
    /// unreachable" for an earlier send arrives this way (a connection reset on Windows,
    /// refused or unreachable on Linux), as do a datagram larger than the buffer (Windows), an
    /// interrupted call and a passing shortage of kernel buffers. Errors not known to be fatal
    /// are counted here too: a server that stops on a surprise is an easy target.
    Datagram,
    /// The socket itself is gone (closed, not a socket, shut down): nothing more will arrive.
    Closed,
}

/// Sorts a receive error into [`RecvErrorKind`]s, so that only a closed socket ends a serve
/// loop or a bulk run's polling of it.
///
/// ```
/// use std::io;
/// use query_net::service::{classify_recv_error, RecvErrorKind};
///
/// let reset = io::Error::from(io::ErrorKind::ConnectionReset);
/// assert_eq!(classify_recv_error(&reset), RecvErrorKind::Datagram);
/// ```
pub fn classify_recv_error(error: &io::Error) -> RecvErrorKind {
    if let Some(code) = error.raw_os_error() {
        if CLOSED_SOCKET_ERRORS.contains(&code) {
            return RecvErrorKind::Closed;
        }
        return RecvErrorKind::Datagram;
    }
    match error.kind() {
        io::ErrorKind::NotConnected | io::ErrorKind::Unsupported => RecvErrorKind::Closed,
        _ => RecvErrorKind::Datagram,
    }
}

/// OS error codes that mean the socket cannot be read any more.
#[cfg(unix)]
const CLOSED_SOCKET_ERRORS: &[i32] = &[
    // EBADF: the descriptor was closed.
    9,
    // ENOTSOCK: Linux, then the BSDs and macOS.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    88,
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    38,
];
/// OS error codes that mean the socket cannot be read any more: WSAEBADF, WSAEINVAL (not
/// bound), WSAENOTSOCK, WSAESHUTDOWN, WSANOTINITIALISED.
#[cfg(windows)]
const CLOSED_SOCKET_ERRORS: &[i32] = &[10009, 10022, 10038, 10058, 10093];
#[cfg(not(any(unix, windows)))]
const CLOSED_SOCKET_ERRORS: &[i32] = &[];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::{ManualClock, Now};
    use std::num::NonZeroU32;
    use std::time::{Duration, UNIX_EPOCH};

    /// Answers `ok` with two datagrams, refuses `bad-token`, drops `?` as malformed, and
    /// misbehaves on `liar` (claims an answer, writes none, then on `half` drops after writing).
    #[derive(Default)]
    struct Script {
        seen_at: Vec<Now>,
    }

    impl Responder for Script {
        fn handle(
            &mut self,
            _: SocketAddr,
            datagram: &[u8],
            now: Now,
            replies: &mut ReplySink,
        ) -> Verdict {
            self.seen_at.push(now);
            match datagram {
                b"ok" => {
                    replies.push(b"part 1").unwrap();
                    replies.push(b"part 2").unwrap();
                    Verdict::Answered
                }
                b"bad-token" => Verdict::Dropped(DropReason::BadChallenge),
                b"liar" => Verdict::Answered,
                b"half" => {
                    replies.push(b"leaked").unwrap();
                    Verdict::Dropped(DropReason::Malformed)
                }
                _ => Verdict::Dropped(DropReason::Malformed),
            }
        }
    }

    fn from(port: u16) -> SocketAddr {
        SocketAddr::from(([192, 0, 2, 1], port))
    }

    fn unlimited() -> Service<Script, ManualClock> {
        Service::with_clock(Script::default(), ManualClock::new(UNIX_EPOCH)).rate_limit(None)
    }

    #[test]
    fn counts_each_outcome_and_returns_only_real_answers() {
        let mut service = unlimited();
        assert_eq!(service.handle(from(1), b"ok").count(), 2);
        assert_eq!(service.handle(from(1), b"bad-token").count(), 0);
        assert_eq!(service.handle(from(1), b"\xff").count(), 0);
        assert_eq!(service.handle(from(1), b"liar").count(), 0);
        assert_eq!(service.handle(from(1), b"half").count(), 0);
        let s = service.stats().snapshot();
        assert_eq!(s.received, 5);
        assert_eq!(s.answered, 1);
        assert_eq!(s.dropped_bad_challenge, 1);
        assert_eq!(s.dropped_malformed, 2);
        assert_eq!(s.dropped_unsupported, 1);
    }

    #[test]
    fn last_verdict_names_why_the_latest_request_went_unanswered() {
        let mut service = unlimited();
        let mut verdict_of = |datagram: &[u8]| {
            service.handle(from(1), datagram).for_each(drop);
            service.last_verdict()
        };
        assert_eq!(verdict_of(b"ok"), Verdict::Answered);
        assert_eq!(
            verdict_of(b"bad-token"),
            Verdict::Dropped(DropReason::BadChallenge)
        );
        assert_eq!(verdict_of(b"\xff"), Verdict::Dropped(DropReason::Malformed));
        // Claimed an answer but wrote none.
        assert_eq!(
            verdict_of(b"liar"),
            Verdict::Dropped(DropReason::Unsupported)
        );

        let limit = RateLimit {
            per_second: NonZeroU32::new(1).unwrap(),
            burst: NonZeroU32::new(1).unwrap(),
            max_sources: 16,
        };
        let mut limited = Service::with_clock(Script::default(), ManualClock::new(UNIX_EPOCH))
            .rate_limit(Some(limit));
        limited.handle(from(1), b"ok").for_each(drop);
        limited.handle(from(1), b"ok").for_each(drop);
        assert_eq!(
            limited.last_verdict(),
            Verdict::Dropped(DropReason::RateLimited)
        );
    }

    #[test]
    fn replies_of_one_request_do_not_leak_into_the_next() {
        let mut service = unlimited();
        let first: Vec<Vec<u8>> = service.handle(from(1), b"ok").map(<[u8]>::to_vec).collect();
        assert_eq!(first, [b"part 1".to_vec(), b"part 2".to_vec()]);
        assert_eq!(service.handle(from(1), b"bad-token").count(), 0);
    }

    #[test]
    fn rate_limited_requests_never_reach_the_responder() {
        let clock = ManualClock::new(UNIX_EPOCH);
        let limit = RateLimit {
            per_second: NonZeroU32::new(1).unwrap(),
            burst: NonZeroU32::new(2).unwrap(),
            max_sources: 16,
        };
        let mut service =
            Service::with_clock(Script::default(), clock.clone()).rate_limit(Some(limit));
        for _ in 0..5 {
            service.handle(from(1), b"ok").for_each(drop);
        }
        // Another port of the same host shares the budget; another host does not.
        assert_eq!(service.handle(from(2), b"ok").count(), 0);
        assert_eq!(
            service
                .handle(SocketAddr::from(([192, 0, 2, 2], 1)), b"ok")
                .count(),
            2
        );
        clock.advance(Duration::from_secs(1));
        assert_eq!(service.handle(from(1), b"ok").count(), 2);

        let s = service.stats().snapshot();
        assert_eq!(s.received, 8);
        assert_eq!(s.answered, 4);
        assert_eq!(s.dropped_rate_limited, 4);
        assert_eq!(service.responder().seen_at.len(), 4);
    }

    #[test]
    fn the_responder_sees_the_injected_time() {
        let clock = ManualClock::new(UNIX_EPOCH + Duration::from_secs(1_740_000_000));
        let mut service = Service::with_clock(Script::default(), clock.clone()).rate_limit(None);
        service.handle(from(1), b"ok").for_each(drop);
        clock.advance(Duration::from_secs(30));
        service.handle(from(1), b"ok").for_each(drop);
        let seen = &service.responder().seen_at;
        assert_eq!(seen[1].instant - seen[0].instant, Duration::from_secs(30));
        assert_eq!(
            seen[1].wall,
            UNIX_EPOCH + Duration::from_secs(1_740_000_030)
        );
    }

    /// Answers anything with `size` bytes, marking the reply proven when the request says so.
    struct Sized {
        size: usize,
    }

    impl Responder for Sized {
        fn handle(
            &mut self,
            _: SocketAddr,
            datagram: &[u8],
            _: Now,
            replies: &mut ReplySink,
        ) -> Verdict {
            if datagram == b"proven" {
                replies.mark_proven();
            }
            let size = self.size;
            match replies.push_with(|buf| Ok::<usize, ()>(size.min(buf.len()))) {
                Ok(()) => Verdict::Answered,
                Err(()) => Verdict::Dropped(DropReason::Unsupported),
            }
        }
    }

    #[test]
    fn unproven_replies_are_charged_to_their_netblock_and_proven_ones_are_not() {
        let clock = ManualClock::new(UNIX_EPOCH);
        let budget = ReplyBudget {
            netblock: crate::limit::ByteRate {
                per_second: NonZeroU32::new(1000).unwrap(),
                burst: 1000,
            },
            ..ReplyBudget::default()
        };
        let mut service = Service::with_clock(Sized { size: 800 }, clock.clone())
            .rate_limit(None)
            .reply_budget(Some(budget));
        let attacker = |last: u8| SocketAddr::from(([192, 0, 2, last], 1000));
        let answered = (1..=10)
            .filter(|&i| service.handle(attacker(i), b"spoofed").count() == 1)
            .count();
        // 800 + 800 (within the 1000-byte burst), then the /24 is in debt.
        assert_eq!(answered, 2);
        assert_eq!(
            service.last_verdict(),
            Verdict::Dropped(DropReason::OverByteBudget)
        );
        // A client of that /24 that proved its address is still answered.
        assert_eq!(service.handle(attacker(1), b"proven").count(), 1);
        // Another netblock is untouched.
        assert_eq!(
            service
                .handle(SocketAddr::from(([198, 51, 100, 1], 1)), b"x")
                .count(),
            1
        );
        let s = service.stats().snapshot();
        assert_eq!(s.dropped_netblock_budget, 8);
        assert_eq!(s.answered, 4);
        assert_eq!(s.reply_bytes, 4 * 800);
        assert_eq!(s.unproven_reply_bytes, 3 * 800);
        clock.advance(Duration::from_secs(1));
        assert_eq!(service.handle(attacker(7), b"x").count(), 1);
    }

    #[test]
    fn replies_are_capped_at_1400_bytes_by_default() {
        let mut service =
            Service::with_clock(Sized { size: 100_000 }, ManualClock::new(UNIX_EPOCH));
        let lens: Vec<usize> = service.handle(from(1), b"x").map(<[u8]>::len).collect();
        assert_eq!(lens, [1400]);
    }

    #[test]
    fn receive_errors_about_a_peer_or_a_datagram_are_skipped() {
        for kind in [
            io::ErrorKind::ConnectionReset,
            io::ErrorKind::ConnectionRefused,
            io::ErrorKind::HostUnreachable,
            io::ErrorKind::NetworkUnreachable,
            io::ErrorKind::Interrupted,
            io::ErrorKind::WouldBlock,
            io::ErrorKind::TimedOut,
            io::ErrorKind::OutOfMemory,
            io::ErrorKind::Other,
        ] {
            assert_eq!(
                classify_recv_error(&io::Error::from(kind)),
                RecvErrorKind::Datagram,
                "{kind:?}"
            );
        }
        assert_eq!(
            classify_recv_error(&io::Error::from(io::ErrorKind::NotConnected)),
            RecvErrorKind::Closed
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn linux_error_codes_are_classified() {
        // ECONNREFUSED, EHOSTUNREACH, ENETUNREACH (ICMP reports), EINTR, EAGAIN, ENOBUFS,
        // ENOMEM, EMSGSIZE: per datagram. EBADF, ENOTSOCK: the socket is gone.
        for code in [111, 113, 101, 4, 11, 105, 12, 90] {
            let error = io::Error::from_raw_os_error(code);
            assert_eq!(
                classify_recv_error(&error),
                RecvErrorKind::Datagram,
                "{error}"
            );
        }
        for code in [9, 88] {
            let error = io::Error::from_raw_os_error(code);
            assert_eq!(
                classify_recv_error(&error),
                RecvErrorKind::Closed,
                "{error}"
            );
        }
    }

    #[cfg(windows)]
    #[test]
    fn windows_error_codes_are_classified() {
        // WSAECONNRESET (ICMP port unreachable), WSAEMSGSIZE, WSAENETRESET, WSAEINTR,
        // WSAEWOULDBLOCK: per datagram. WSAENOTSOCK, WSAESHUTDOWN: the socket is gone.
        for code in [10054, 10040, 10052, 10004, 10035] {
            let error = io::Error::from_raw_os_error(code);
            assert_eq!(
                classify_recv_error(&error),
                RecvErrorKind::Datagram,
                "{error}"
            );
        }
        for code in [10038, 10058, 10009] {
            let error = io::Error::from_raw_os_error(code);
            assert_eq!(
                classify_recv_error(&error),
                RecvErrorKind::Closed,
                "{error}"
            );
        }
    }

    #[test]
    fn shared_stats_add_up_across_services() {
        let stats = Arc::new(Stats::default());
        let mut a = unlimited().with_stats(Arc::clone(&stats));
        let mut b = unlimited().with_stats(Arc::clone(&stats));
        a.handle(from(1), b"ok").for_each(drop);
        b.handle(from(1), b"ok").for_each(drop);
        assert_eq!(stats.snapshot().answered, 2);
    }
}
