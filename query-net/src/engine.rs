//! The sans-I/O interfaces every protocol engine implements.
//!
//! An engine is a plain state machine: it is handed datagrams and the time, and asked what to
//! send and when to wake it up, in the style of quinn-proto. It never touches a socket or a
//! clock, so timeouts, retries and lost or spoofed replies are tested deterministically, and the
//! same engine runs under the single-query driver, the bulk driver, or a caller's own loop.
//!
//! - Client side: [`ClientSession`], one query to one server; [`Retry`] does the resending.
//! - Responder side: [`Responder`], which answers one request into a [`ReplySink`] and says
//!   what it did with a [`Verdict`].

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_wire::Encode;

use crate::clock::Now;
use crate::error::QueryError;
use crate::options::Options;

pub use crate::outcome::Outcome;

/// One query of one server, as a state machine.
///
/// A driver repeats: send everything [`poll_transmit`] yields, collect [`poll_result`], then wait
/// for a datagram (→ [`handle_datagram`]) or the [`poll_timeout`] deadline (→
/// [`handle_timeout`]). Once `poll_result` has returned `Some`, the session is finished and
/// further calls change nothing.
///
/// Implementors write [`on_reply`]; the provided [`handle_datagram`] has already dropped
/// datagrams whose source is not [`target`], so a spoofed reply from elsewhere never reaches
/// the protocol code.
///
/// [`poll_transmit`]: ClientSession::poll_transmit
/// [`poll_result`]: ClientSession::poll_result
/// [`handle_datagram`]: ClientSession::handle_datagram
/// [`poll_timeout`]: ClientSession::poll_timeout
/// [`handle_timeout`]: ClientSession::handle_timeout
/// [`on_reply`]: ClientSession::on_reply
/// [`target`]: ClientSession::target
pub trait ClientSession {
    /// What a successful session produces: a [`ServerStatus`](crate::ServerStatus) for status
    /// queries, other types for other exchanges (RCON output, a ping).
    type Output;

    /// The server's address: every datagram goes there, and only replies from there count.
    fn target(&self) -> SocketAddr;

    /// The next datagram to send to [`target`](ClientSession::target), if one is due.
    fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]>;

    /// A datagram from `from`. Ignored unless `from` is the target.
    fn handle_datagram(&mut self, from: SocketAddr, datagram: &[u8], now: Instant) {
        if same_endpoint(from, self.target()) {
            self.on_reply(datagram, now);
        }
    }

    /// A datagram known to come from the target. Replies that do not fit the current step
    /// (a wrong challenge, a late duplicate) must be ignored, not treated as errors, since
    /// anyone can send a datagram with a forged source address.
    fn on_reply(&mut self, datagram: &[u8], now: Instant);

    /// When the session wants [`handle_timeout`](ClientSession::handle_timeout) called.
    /// `None` while a transmit is pending or once finished.
    fn poll_timeout(&self) -> Option<Instant>;

    /// The deadline from [`poll_timeout`](ClientSession::poll_timeout) has passed.
    fn handle_timeout(&mut self, now: Instant);

    /// The outcome, once: `Some` exactly one time, then `None`.
    fn poll_result(&mut self) -> Option<Result<Self::Output, QueryError>>;

    /// The request whose reply (or the rest of it) the session is waiting for, as a timeout
    /// names it (`players request`): what [`Bounded`] reports when the deadline passes.
    fn waiting_for(&self) -> Option<&'static str> {
        None
    }

    /// The query's [`Bounded`] limits ran out (its deadline passed, or the server sent more
    /// bytes than one query may hold): end now with what arrived. `why` says which limit.
    ///
    /// The default fails with `why`; a session that has part of its answer returns it (a
    /// status with `complete: false`). Called at most once, and never after
    /// [`poll_result`](ClientSession::poll_result) returned `Some`.
    fn give_up(&mut self, why: QueryError, now: Instant) -> Result<Self::Output, QueryError> {
        let _ = now;
        Err(why)
    }
}

impl<S: ClientSession + ?Sized> ClientSession for Box<S> {
    type Output = S::Output;

    fn target(&self) -> SocketAddr {
        (**self).target()
    }
    fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
        (**self).poll_transmit(now)
    }
    fn handle_datagram(&mut self, from: SocketAddr, datagram: &[u8], now: Instant) {
        (**self).handle_datagram(from, datagram, now);
    }
    fn on_reply(&mut self, datagram: &[u8], now: Instant) {
        (**self).on_reply(datagram, now);
    }
    fn poll_timeout(&self) -> Option<Instant> {
        (**self).poll_timeout()
    }
    fn handle_timeout(&mut self, now: Instant) {
        (**self).handle_timeout(now);
    }
    fn poll_result(&mut self) -> Option<Result<Self::Output, QueryError>> {
        (**self).poll_result()
    }
    fn give_up(&mut self, why: QueryError, now: Instant) -> Result<Self::Output, QueryError> {
        (**self).give_up(why, now)
    }
    fn waiting_for(&self) -> Option<&'static str> {
        (**self).waiting_for()
    }
}

/// A session held to the overall limits of one query, whatever the server does: a deadline
/// from its first send, and a cap on the bytes of the datagrams it accepts from the target.
///
/// Per-attempt timeouts alone do not bound a query: a server that drips GameSpy parts or
/// OneQuery pages, or answers each A2S step just before its timeout, keeps a session going for
/// many timeouts, and one that sends many large parts makes it hold them all. When a limit is
/// reached the wrapped session's [`give_up`](ClientSession::give_up) ends it with what arrived
/// (`complete: false`) or an error: a [`QueryError::Deadline`] naming the request that was
/// waiting ([`ClientSession::waiting_for`]), or a [`QueryError::Protocol`] naming the byte cap. The datagram that would pass the cap is
/// not handed on. Every session made by [`engines::new_session`](crate::engines::new_session)
/// and the [`driver`](crate::driver) is wrapped in one, with [`Options::deadline`] and
/// [`Options::max_reply_bytes`].
///
/// ```
/// use std::time::{Duration, Instant};
/// use query_net::engine::{Bounded, ClientSession};
/// use query_net::engines::gamespy1::GameSpy1Session;
/// use query_net::{Options, QueryError};
///
/// let options = Options { timeout: Duration::from_secs(1), ..Options::default() };
/// let target = "127.0.0.1:23000".parse().unwrap();
/// let mut session = Bounded::new(GameSpy1Session::new(target, &options), Duration::from_secs(3), 1 << 16);
/// let t0 = Instant::now();
/// assert!(session.poll_transmit(t0).is_some());
/// // Parts that never end: the deadline ends the query 3 s after it began, with what came.
/// let mut now = t0;
/// for part in 1..=40 {
///     now += Duration::from_millis(100);
///     session.handle_datagram(target, format!("\\p{part}\\x\\queryid\\1.{part}").as_bytes(), now);
/// }
/// let status = loop {
///     if let Some(result) = session.poll_result() {
///         break result?;
///     }
///     let wake = session.poll_timeout().unwrap();
///     session.handle_timeout(wake);
/// };
/// assert!(!status.complete);
/// # Ok::<(), QueryError>(())
/// ```
#[derive(Debug)]
pub struct Bounded<S: ClientSession> {
    inner: S,
    deadline: Duration,
    max_bytes: usize,
    started: Option<Instant>,
    received: usize,
    sends: u32,
    result: Option<Result<S::Output, QueryError>>,
    done: bool,
}

impl<S: ClientSession> Bounded<S> {
    /// `session`, ended `deadline` after its first send, or once the datagrams accepted from
    /// the target add up to more than `max_bytes`.
    pub fn new(session: S, deadline: Duration, max_bytes: usize) -> Self {
        Bounded {
            inner: session,
            deadline,
            max_bytes,
            started: None,
            received: 0,
            sends: 0,
            result: None,
            done: false,
        }
    }

    /// `session` with [`Options::deadline`] and [`Options::max_reply_bytes`].
    pub fn from_options(session: S, options: &Options) -> Self {
        Self::new(session, options.deadline, options.max_reply_bytes)
    }

    /// The bytes accepted from the target so far.
    pub fn bytes_received(&self) -> usize {
        self.received
    }

    /// The wrapped session.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    fn ends_at(&self) -> Option<Instant> {
        self.started.map(|start| start + self.deadline)
    }

    fn end(&mut self, why: QueryError, now: Instant) {
        self.done = true;
        // A result the session reached but nobody collected yet wins over giving up.
        let result = match self.inner.poll_result() {
            Some(result) => result,
            None => self.inner.give_up(why, now),
        };
        self.result = Some(result);
    }

    fn deadline_error(&self, now: Instant) -> QueryError {
        QueryError::Deadline {
            waiting_for: self.inner.waiting_for().unwrap_or("request"),
            attempts: self.sends,
            after: self
                .started
                .map_or(Duration::ZERO, |start| now.saturating_duration_since(start)),
        }
    }

    fn past_deadline(&self, now: Instant) -> bool {
        self.ends_at().is_some_and(|end| now >= end)
    }
}

impl<S: ClientSession> ClientSession for Bounded<S> {
    type Output = S::Output;

    fn target(&self) -> SocketAddr {
        self.inner.target()
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
        if self.done {
            return None;
        }
        self.started.get_or_insert(now);
        if self.past_deadline(now) {
            let why = self.deadline_error(now);
            self.end(why, now);
            return None;
        }
        let sent = self.inner.poll_transmit(now);
        if sent.is_some() {
            self.sends = self.sends.saturating_add(1);
        }
        sent
    }

    fn on_reply(&mut self, datagram: &[u8], now: Instant) {
        if self.done {
            return;
        }
        if self.past_deadline(now) {
            let why = self.deadline_error(now);
            self.end(why, now);
            return;
        }
        self.received = self.received.saturating_add(datagram.len());
        if self.received > self.max_bytes {
            let why = QueryError::protocol(format!(
                "the server sent more than the {} bytes one query may hold",
                self.max_bytes
            ));
            self.end(why, now);
            return;
        }
        self.inner.on_reply(datagram, now);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if self.done {
            return None;
        }
        match (self.inner.poll_timeout(), self.ends_at()) {
            (Some(wake), Some(end)) => Some(wake.min(end)),
            (wake, end) => wake.or(end),
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.done {
            return;
        }
        if self.past_deadline(now) {
            let why = self.deadline_error(now);
            self.end(why, now);
        } else {
            self.inner.handle_timeout(now);
        }
    }

    fn poll_result(&mut self) -> Option<Result<Self::Output, QueryError>> {
        if let Some(result) = self.result.take() {
            return Some(result);
        }
        if self.done {
            return None;
        }
        let result = self.inner.poll_result();
        self.done |= result.is_some();
        result
    }

    fn give_up(&mut self, why: QueryError, now: Instant) -> Result<Self::Output, QueryError> {
        self.done = true;
        self.inner.give_up(why, now)
    }

    fn waiting_for(&self) -> Option<&'static str> {
        self.inner.waiting_for()
    }
}

/// Whether two socket addresses name the same endpoint, treating an IPv4-mapped IPv6 address
/// (as a dual-stack socket reports IPv4 peers) as the IPv4 address it maps.
pub fn same_endpoint(a: SocketAddr, b: SocketAddr) -> bool {
    a.port() == b.port() && a.ip().to_canonical() == b.ip().to_canonical()
}

/// Sends one request until it is answered or its attempts run out.
///
/// An engine [`start`](Retry::start)s a step with the request bytes, forwards its own
/// `poll_transmit` / `poll_timeout` / `handle_timeout` here, and calls
/// [`finish`](Retry::finish) when a reply is accepted.
///
/// ```
/// use std::time::{Duration, Instant};
/// use query_net::engine::Retry;
///
/// let mut retry = Retry::new(Duration::from_secs(1), 2);
/// retry.start("challenge request", b"\x00\x00\x00\x00\x00");
/// let t0 = Instant::now();
/// assert_eq!(retry.poll_transmit(t0), Some(&b"\x00\x00\x00\x00\x00"[..]));
/// assert_eq!(retry.poll_transmit(t0), None);
/// let deadline = retry.poll_timeout().unwrap();
/// retry.handle_timeout(deadline)?;            // resend due
/// assert!(retry.poll_transmit(deadline).is_some());
/// let end = retry.poll_timeout().unwrap();
/// assert!(retry.handle_timeout(end).is_err()); // second attempt unanswered: give up
/// # Ok::<(), query_net::QueryError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Retry {
    timeout: Duration,
    max_attempts: u32,
    waiting_for: &'static str,
    payload: Vec<u8>,
    attempts: u32,
    first_sent: Option<Instant>,
    last_sent: Option<Instant>,
    send_due: bool,
    active: bool,
}

impl Retry {
    /// Waits `timeout` for each attempt, and sends at most `attempts` times (at least once).
    pub fn new(timeout: Duration, attempts: u32) -> Self {
        Retry {
            timeout,
            max_attempts: attempts.max(1),
            waiting_for: "request",
            payload: Vec::new(),
            attempts: 0,
            first_sent: None,
            last_sent: None,
            send_due: false,
            active: false,
        }
    }

    /// The timeout and attempts of `options`.
    pub fn from_options(options: &Options) -> Self {
        Self::new(options.timeout, options.attempts())
    }

    /// Starts a new step: `payload` is sent at the next `poll_transmit` and resent after each
    /// timeout. `waiting_for` names the request in a timeout error.
    pub fn start(&mut self, waiting_for: &'static str, payload: &[u8]) {
        self.payload.clear();
        self.payload.extend_from_slice(payload);
        self.arm(waiting_for);
    }

    /// [`start`](Retry::start) with a declared packet, encoded into the reused payload buffer.
    pub fn start_encoded<P>(
        &mut self,
        waiting_for: &'static str,
        packet: &P,
        ctx: P::Ctx,
    ) -> Result<(), query_wire::Error>
    where
        P: Encode + ?Sized,
    {
        self.payload.clear();
        self.payload.resize(packet.encoded_len(ctx), 0);
        let written = packet.encode_into_with(&mut self.payload, ctx)?;
        self.payload.truncate(written);
        self.arm(waiting_for);
        Ok(())
    }

    fn arm(&mut self, waiting_for: &'static str) {
        self.waiting_for = waiting_for;
        self.attempts = 0;
        self.first_sent = None;
        self.last_sent = None;
        self.send_due = true;
        self.active = true;
    }

    /// The request, when a first send or a resend is due.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
        if !(self.active && self.send_due) {
            return None;
        }
        self.send_due = false;
        self.attempts += 1;
        self.first_sent.get_or_insert(now);
        self.last_sent = Some(now);
        Some(&self.payload)
    }

    /// When the current attempt times out.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match (self.active && !self.send_due, self.last_sent) {
            (true, Some(sent)) => Some(sent + self.timeout),
            _ => None,
        }
    }

    /// Schedules a resend if the attempt has timed out and attempts remain; an error once the
    /// last attempt has timed out. Early or spurious calls change nothing.
    pub fn handle_timeout(&mut self, now: Instant) -> Result<(), QueryError> {
        match self.poll_timeout() {
            Some(deadline) if now >= deadline => {}
            _ => return Ok(()),
        }
        if self.attempts < self.max_attempts {
            self.send_due = true;
            return Ok(());
        }
        self.active = false;
        let first = self.first_sent.unwrap_or(now);
        Err(QueryError::Timeout {
            waiting_for: self.waiting_for,
            attempts: self.attempts,
            after: now.saturating_duration_since(first),
        })
    }

    /// The step got its reply: stop resending. Returns the time since the latest send, the
    /// round trip if the reply answers that send.
    pub fn finish(&mut self, now: Instant) -> Option<Duration> {
        self.active = false;
        self.send_due = false;
        self.last_sent
            .map(|sent| now.saturating_duration_since(sent))
    }

    /// The request of the latest step that was sent, as [`start`](Retry::start) named it.
    pub fn waiting_for(&self) -> Option<&'static str> {
        self.first_sent.map(|_| self.waiting_for)
    }

    /// Whether a step is in progress (started, neither finished nor given up).
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// Whether [`poll_transmit`](Retry::poll_transmit) would return the request now: a
    /// session that runs several steps at once asks each in turn.
    pub fn is_send_due(&self) -> bool {
        self.active && self.send_due
    }

    /// How many times the current step's request has been sent.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The request of the current step, as sent.
    pub fn payload(&self) -> &[u8] {
        &self.payload
    }
}

/// Answers requests: the server side of a protocol.
///
/// `handle` decodes one request, checks its challenge, and encodes the reply datagrams into
/// `replies`. It must never panic on any input; whatever it cannot answer it reports in the
/// [`Verdict`], and the caller counts it. It takes `&mut self` because some protocols keep
/// short-lived state per client (SQP's single-use challenges).
pub trait Responder {
    /// Handles one datagram from `from` at `now`, pushing zero or more replies into `replies`
    /// (empty on entry).
    fn handle(
        &mut self,
        from: SocketAddr,
        datagram: &[u8],
        now: Now,
        replies: &mut ReplySink,
    ) -> Verdict;
}

impl<R: Responder + ?Sized> Responder for Box<R> {
    fn handle(
        &mut self,
        from: SocketAddr,
        datagram: &[u8],
        now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        (**self).handle(from, datagram, now, replies)
    }
}

/// What a responder did with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Replies were pushed.
    Answered,
    /// Nothing is sent back, for this reason.
    Dropped(DropReason),
}

impl Verdict {
    /// The verdict on a request whose replies were pushed with `pushed`: answered, or dropped
    /// as [`Unsupported`](DropReason::Unsupported) when they could not be encoded within the
    /// datagram cap.
    pub fn pushed<T, E>(pushed: Result<T, E>) -> Verdict {
        match pushed {
            Ok(_) => Verdict::Answered,
            Err(_) => Verdict::Dropped(DropReason::Unsupported),
        }
    }
}

/// Why a request got no reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DropReason {
    /// The request did not decode.
    Malformed,
    /// Missing, wrong or expired challenge or token.
    BadChallenge,
    /// Well-formed, but not a request this responder answers.
    Unsupported,
    /// Over the source's rate limit.
    RateLimited,
    /// Answered, but the replies would overrun the byte budget of the source's netblock or of
    /// the whole responder (see [`ReplyBudget`](crate::limit::ReplyBudget)).
    OverByteBudget,
    /// A request the responder knows but chooses not to answer (SA:MP `o` on a server that is
    /// not open.mp): counted, not worth a log line.
    Declined,
}

/// The reply datagrams for one request, encoded back to back into one reusable buffer.
///
/// After the first few requests the buffer has grown to its working size and answering
/// allocates nothing. Several datagrams per request are normal: GameSpy replies in parts,
/// SA:MP RCON answers one datagram per console line.
///
/// ```
/// use query_net::engine::ReplySink;
///
/// let mut sink = ReplySink::new(1400);
/// sink.push(b"part 1")?;
/// sink.push_with(|buf| {
///     buf[..6].copy_from_slice(b"part 2");
///     Ok::<usize, query_wire::Error>(6)
/// })?;
/// assert_eq!(sink.datagrams().collect::<Vec<_>>(), [&b"part 1"[..], &b"part 2"[..]]);
/// # Ok::<(), query_wire::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ReplySink {
    /// Never shrinks: `len()` is the high-water mark, so pushes do not re-zero memory.
    buf: Vec<u8>,
    used: usize,
    ends: Vec<usize>,
    max_datagram: usize,
    /// Set by a responder whose request carried a valid challenge or token.
    proven: bool,
}

impl ReplySink {
    /// The largest UDP payload over IPv4, the default datagram cap.
    pub const MAX_UDP_PAYLOAD: usize = 65_507;

    /// A sink whose datagrams are at most `max_datagram` bytes each.
    pub fn new(max_datagram: usize) -> Self {
        ReplySink {
            buf: Vec::new(),
            used: 0,
            ends: Vec::new(),
            max_datagram,
            proven: false,
        }
    }

    /// Marks the replies as going to a source that proved its address (it echoed a challenge
    /// or token only that address received), so they are not charged to the byte budget of
    /// unproven sources. Responders call it only after checking the challenge; everything
    /// else is charged.
    pub fn mark_proven(&mut self) {
        self.proven = true;
    }

    /// Whether [`mark_proven`](ReplySink::mark_proven) was called since the last
    /// [`clear`](ReplySink::clear).
    pub fn is_proven(&self) -> bool {
        self.proven
    }

    /// The bytes of every datagram pushed so far.
    pub fn total_bytes(&self) -> usize {
        self.used
    }

    /// The per-datagram cap.
    pub fn max_datagram(&self) -> usize {
        self.max_datagram
    }

    /// Writes one datagram: `write` gets a zeroed-or-reused buffer of `max_datagram` bytes and
    /// returns how many it used. If `write` fails, nothing is added.
    pub fn push_with<E>(
        &mut self,
        write: impl FnOnce(&mut [u8]) -> Result<usize, E>,
    ) -> Result<(), E> {
        let start = self.used;
        let end = start + self.max_datagram;
        if self.buf.len() < end {
            self.buf.resize(end, 0);
        }
        let written = write(&mut self.buf[start..end])?;
        self.used = start + written.min(self.max_datagram);
        self.ends.push(self.used);
        Ok(())
    }

    /// Copies `bytes` in as one datagram.
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), query_wire::Error> {
        self.push_with(|buf| match buf.get_mut(..bytes.len()) {
            Some(slot) => {
                slot.copy_from_slice(bytes);
                Ok(bytes.len())
            }
            None => Err(query_wire::Error::new(
                query_wire::ErrorKind::BufferTooSmall {
                    need: bytes.len(),
                    have: buf.len(),
                },
                0,
            )),
        })
    }

    /// Encodes a declared packet as one datagram.
    pub fn push_encoded<P>(&mut self, packet: &P, ctx: P::Ctx) -> Result<(), query_wire::Error>
    where
        P: Encode + ?Sized,
    {
        self.push_with(|buf| packet.encode_into_with(buf, ctx))
    }

    /// The datagrams pushed so far, in order.
    pub fn datagrams(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.ends.len()).map(move |i| {
            let start = if i == 0 { 0 } else { self.ends[i - 1] };
            &self.buf[start..self.ends[i]]
        })
    }

    /// How many datagrams were pushed.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether nothing was pushed.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Forgets the datagrams, keeping the memory for the next request.
    pub fn clear(&mut self) {
        self.used = 0;
        self.ends.clear();
        self.proven = false;
    }
}

impl Default for ReplySink {
    fn default() -> Self {
        Self::new(Self::MAX_UDP_PAYLOAD)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn retry_sends_once_per_attempt_and_reports_the_step_that_timed_out() {
        let t0 = Instant::now();
        let mut retry = Retry::new(Duration::from_millis(100), 3);
        assert_eq!(retry.poll_transmit(t0), None, "nothing before start");
        retry.start("query request", b"q");
        assert_eq!(retry.poll_timeout(), None, "transmit pending");
        let mut now = t0;
        for attempt in 1..=3 {
            assert_eq!(retry.poll_transmit(now), Some(&b"q"[..]));
            assert_eq!(retry.poll_transmit(now), None);
            assert_eq!(retry.attempts(), attempt);
            let deadline = retry.poll_timeout().unwrap();
            assert_eq!(deadline, now + Duration::from_millis(100));
            // An early wake-up changes nothing.
            retry
                .handle_timeout(deadline - Duration::from_millis(1))
                .unwrap();
            assert_eq!(retry.poll_transmit(now), None);
            now = deadline;
            let outcome = retry.handle_timeout(now);
            if attempt < 3 {
                outcome.unwrap();
            } else {
                match outcome.unwrap_err() {
                    QueryError::Timeout {
                        waiting_for,
                        attempts,
                        after,
                    } => {
                        assert_eq!(waiting_for, "query request");
                        assert_eq!(attempts, 3);
                        assert_eq!(after, Duration::from_millis(300));
                    }
                    other => panic!("unexpected {other:?}"),
                }
            }
        }
        assert!(!retry.is_active());
        assert_eq!(retry.poll_timeout(), None);
        assert_eq!(retry.poll_transmit(now), None);
    }

    #[test]
    fn retry_finish_stops_resends_and_measures_from_the_latest_send() {
        let t0 = Instant::now();
        let mut retry = Retry::new(Duration::from_millis(100), 2);
        retry.start("challenge request", b"c");
        retry.poll_transmit(t0).unwrap();
        retry
            .handle_timeout(t0 + Duration::from_millis(100))
            .unwrap();
        retry
            .poll_transmit(t0 + Duration::from_millis(100))
            .unwrap();
        let rtt = retry.finish(t0 + Duration::from_millis(130));
        assert_eq!(rtt, Some(Duration::from_millis(30)));
        assert_eq!(retry.poll_timeout(), None);
        retry.handle_timeout(t0 + Duration::from_secs(10)).unwrap();
        assert_eq!(retry.poll_transmit(t0 + Duration::from_secs(10)), None);
    }

    #[test]
    fn retry_restart_resets_attempts_for_the_next_step() {
        let t0 = Instant::now();
        let mut retry = Retry::new(Duration::from_millis(100), 2);
        retry.start("challenge request", b"c");
        retry.poll_transmit(t0).unwrap();
        retry
            .handle_timeout(t0 + Duration::from_millis(100))
            .unwrap();
        retry
            .poll_transmit(t0 + Duration::from_millis(100))
            .unwrap();
        retry.finish(t0 + Duration::from_millis(150));
        retry.start("query request", b"query");
        assert_eq!(retry.attempts(), 0);
        assert_eq!(
            retry.poll_transmit(t0 + Duration::from_millis(150)),
            Some(&b"query"[..])
        );
        assert_eq!(retry.payload(), b"query");
    }

    #[test]
    fn retry_with_zero_attempts_still_sends_once() {
        let t0 = Instant::now();
        let mut retry = Retry::new(Duration::from_millis(10), 0);
        retry.start("request", b"x");
        assert!(retry.poll_transmit(t0).is_some());
        assert!(retry
            .handle_timeout(t0 + Duration::from_millis(10))
            .is_err());
    }

    /// A session that answers its one request with `answer` on the first datagram.
    struct OneShot {
        retry: Retry,
        result: Option<Result<u32, QueryError>>,
    }

    impl ClientSession for OneShot {
        type Output = u32;
        fn target(&self) -> SocketAddr {
            addr("127.0.0.1:7777")
        }
        fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
            self.retry.poll_transmit(now)
        }
        fn on_reply(&mut self, datagram: &[u8], now: Instant) {
            self.retry.finish(now);
            self.result = Some(Ok(datagram.len() as u32));
        }
        fn poll_timeout(&self) -> Option<Instant> {
            self.retry.poll_timeout()
        }
        fn handle_timeout(&mut self, now: Instant) {
            if let Err(e) = self.retry.handle_timeout(now) {
                self.result = Some(Err(e));
            }
        }
        fn poll_result(&mut self) -> Option<Result<u32, QueryError>> {
            self.result.take()
        }
        fn waiting_for(&self) -> Option<&'static str> {
            self.retry.waiting_for()
        }
    }

    fn one_shot() -> OneShot {
        let mut retry = Retry::new(Duration::from_secs(1), 10);
        retry.start("status request", b"?");
        OneShot {
            retry,
            result: None,
        }
    }

    #[test]
    fn bounded_passes_an_answer_in_time_through_and_ends_a_late_one() {
        let t0 = Instant::now();
        let mut session = Bounded::new(one_shot(), Duration::from_millis(2500), 100);
        assert!(session.poll_transmit(t0).is_some());
        session.handle_datagram(session.target(), b"four", t0 + Duration::from_millis(10));
        assert_eq!(session.poll_result().unwrap().unwrap(), 4);
        assert!(session.poll_result().is_none());
        assert!(session.poll_timeout().is_none());

        // Ten attempts of 1 s would take 10 s: the deadline ends it at 2.5 s.
        let mut session = Bounded::new(one_shot(), Duration::from_millis(2500), 100);
        let mut now = t0;
        let result = loop {
            while session.poll_transmit(now).is_some() {}
            if let Some(result) = session.poll_result() {
                break result;
            }
            now = session.poll_timeout().unwrap();
            session.handle_timeout(now);
        };
        assert_eq!(now - t0, Duration::from_millis(2500));
        match result {
            Err(
                error @ QueryError::Deadline {
                    waiting_for,
                    attempts: 3,
                    after,
                },
            ) => {
                assert_eq!(waiting_for, "status request");
                assert_eq!(after, Duration::from_millis(2500));
                assert_eq!(
                    error.to_string(),
                    "no whole reply to the status request before the query's deadline \
                     (2.5s after the first send, 3 request(s) sent)"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bounded_refuses_the_datagram_past_the_cap_and_keeps_an_uncollected_result() {
        let t0 = Instant::now();
        let mut session = Bounded::new(one_shot(), Duration::from_secs(5), 10);
        assert!(session.poll_transmit(t0).is_some());
        session.handle_datagram(session.target(), &[0; 11], t0);
        let error = session.poll_result().unwrap().unwrap_err();
        assert!(error.to_string().contains("10 bytes"), "{error}");
        assert_eq!(session.bytes_received(), 11);

        // The inner session finished but its result was not collected when the limit hit.
        let mut session = Bounded::new(one_shot(), Duration::from_secs(5), 10);
        assert!(session.poll_transmit(t0).is_some());
        session.inner.on_reply(b"abc", t0);
        session.handle_timeout(t0 + Duration::from_secs(5));
        assert_eq!(session.poll_result().unwrap().unwrap(), 3);
    }

    #[test]
    fn mapped_ipv4_is_the_same_endpoint() {
        assert!(same_endpoint(
            addr("[::ffff:127.0.0.1]:7777"),
            addr("127.0.0.1:7777")
        ));
        assert!(!same_endpoint(
            addr("127.0.0.1:7778"),
            addr("127.0.0.1:7777")
        ));
        assert!(!same_endpoint(
            addr("127.0.0.2:7777"),
            addr("127.0.0.1:7777")
        ));
    }

    /// A session that records what reached `on_reply`.
    struct Recorder {
        target: SocketAddr,
        seen: std::rc::Rc<std::cell::RefCell<Vec<Vec<u8>>>>,
    }

    impl ClientSession for Recorder {
        type Output = ();
        fn target(&self) -> SocketAddr {
            self.target
        }
        fn poll_transmit(&mut self, _now: Instant) -> Option<&[u8]> {
            None
        }
        fn on_reply(&mut self, datagram: &[u8], _now: Instant) {
            self.seen.borrow_mut().push(datagram.to_vec());
        }
        fn poll_timeout(&self) -> Option<Instant> {
            None
        }
        fn handle_timeout(&mut self, _now: Instant) {}
        fn poll_result(&mut self) -> Option<Result<(), QueryError>> {
            None
        }
    }

    #[test]
    fn datagrams_from_other_addresses_never_reach_the_engine_even_boxed() {
        let seen = std::rc::Rc::default();
        let mut session: Box<dyn ClientSession<Output = ()>> = Box::new(Recorder {
            target: addr("127.0.0.1:7777"),
            seen: std::rc::Rc::clone(&seen),
        });
        let now = Instant::now();
        session.handle_datagram(addr("127.0.0.1:9999"), b"spoof port", now);
        session.handle_datagram(addr("10.0.0.1:7777"), b"spoof host", now);
        session.handle_datagram(addr("127.0.0.1:7777"), b"real", now);
        session.handle_datagram(addr("[::ffff:127.0.0.1]:7777"), b"mapped", now);
        assert_eq!(*seen.borrow(), [b"real".to_vec(), b"mapped".to_vec()]);
    }

    #[test]
    fn sink_keeps_datagrams_in_order_and_reuses_its_buffer() {
        let mut sink = ReplySink::new(16);
        sink.push(b"one").unwrap();
        sink.push(b"three").unwrap();
        assert_eq!(sink.len(), 2);
        assert_eq!(
            sink.datagrams().collect::<Vec<_>>(),
            [&b"one"[..], &b"three"[..]]
        );
        let capacity = sink.buf.capacity();
        for _ in 0..100 {
            sink.clear();
            assert!(sink.is_empty());
            sink.push(b"again").unwrap();
            sink.push(b"and again").unwrap();
        }
        assert_eq!(sink.buf.capacity(), capacity, "no growth after warm-up");
        assert_eq!(sink.datagrams().nth(1), Some(&b"and again"[..]));
    }

    #[test]
    fn sink_refuses_an_oversized_datagram_and_keeps_the_rest() {
        let mut sink = ReplySink::new(4);
        sink.push(b"ok").unwrap();
        let err = sink.push(b"too long").unwrap_err();
        assert!(matches!(
            err.kind(),
            query_wire::ErrorKind::BufferTooSmall { need: 8, have: 4 }
        ));
        let failed: Result<(), &str> = sink.push_with(|_| Err("encoder failed"));
        assert_eq!(failed, Err("encoder failed"));
        assert_eq!(sink.datagrams().collect::<Vec<_>>(), [&b"ok"[..]]);
    }

    #[test]
    fn sink_encodes_declared_packets() {
        let mut sink = ReplySink::new(8);
        sink.push_encoded(&query_wire::Padding::<3>, ())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(sink.datagrams().next(), Some(&[0u8, 0, 0][..]));
    }
}
