//! Querying many servers at once through a few sockets.
//!
//! One task owns a handful of sockets and every session in flight. Replies are routed to their
//! session by the socket they arrived on and their source address, so two sessions to the same
//! address never share a socket. Targets are pulled from a stream only when a slot is free, and
//! finished results wait in a queue no longer than the concurrency limit: memory depends on the
//! concurrency, never on how many targets there are.
//!
//! ```no_run
//! use query_net::bulk::{bulk, BulkConfig};
//! use query_net::{engines, Options, Protocol};
//! use tokio_stream::StreamExt;
//!
//! # async fn example() {
//! let targets = vec![
//!     (Protocol::Sqp, "192.0.2.1:7779".parse().unwrap()),
//!     (Protocol::Samp, "192.0.2.2:7777".parse().unwrap()),
//! ];
//! let options = Options::default();
//! let mut results = bulk(
//!     tokio_stream::iter(targets),
//!     move |&(protocol, address)| engines::new_session(protocol, address, &options),
//!     BulkConfig::default(),
//! );
//! while let Some(done) = results.next().await {
//!     println!("{:?}: {:?}", done.target, done.result.map(|s| s.name));
//! }
//! # }
//! ```

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::Future as _;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::num::NonZeroU32;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::net::UdpSocket;
use tokio::sync::mpsc;
use tokio::task::{JoinHandle, JoinSet};
use tokio_stream::{Stream, StreamExt};
use tokio_util::time::{delay_queue, DelayQueue};

use crate::batch::RecvBatch;
use crate::engine::ClientSession;
use crate::error::QueryError;
use crate::refusal::{is_refusal, Refusals};
use crate::service::{classify_recv_error, RecvErrorKind};

/// How a bulk run uses the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkConfig {
    /// Sockets per address family (1 to 64; a few are enough: more only spread the kernel's
    /// receive buffers and allow more sessions to one address at once).
    pub sockets: usize,
    /// Sessions in flight at most. Also bounds the results waiting for the consumer.
    pub concurrency: usize,
    /// Datagrams per second over all sockets, if limited. Bursts are at most 1/20 s worth.
    pub send_rate: Option<NonZeroU32>,
    /// Where IPv4 sockets bind (`0.0.0.0:0` by default).
    pub bind_v4: SocketAddr,
    /// Where IPv6 sockets bind (`[::]:0` by default); bound only if an IPv6 target comes.
    pub bind_v6: SocketAddr,
    /// Read up to [`BATCH`](crate::batch::BATCH) waiting replies per system call where the
    /// platform can (`recvmmsg` on Linux; on by default). Off: one receive per datagram, the
    /// path other platforms always take.
    pub batch_receive: bool,
}

impl Default for BulkConfig {
    fn default() -> Self {
        BulkConfig {
            sockets: 4,
            concurrency: 256,
            send_rate: None,
            bind_v4: SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)),
            bind_v6: SocketAddr::from((Ipv6Addr::UNSPECIFIED, 0)),
            batch_receive: true,
        }
    }
}

/// One finished target.
#[derive(Debug)]
pub struct BulkResult<T, O> {
    /// The target as it came from the input.
    pub target: T,
    /// The session's outcome.
    pub result: Result<O, QueryError>,
}

/// Counters of a bulk run.
#[derive(Debug, Default)]
struct BulkCounters {
    sessions_started: AtomicU64,
    sessions_finished: AtomicU64,
    peak_in_flight: AtomicU64,
    datagrams_sent: AtomicU64,
    datagrams_received: AtomicU64,
    stray_datagrams: AtomicU64,
    recv_errors: AtomicU64,
    refusals: AtomicU64,
}

/// What a bulk run has done so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct BulkStats {
    /// Sessions created by the factory.
    pub sessions_started: u64,
    /// Results produced (including factory failures).
    pub sessions_finished: u64,
    /// The most sessions in flight at once.
    pub peak_in_flight: u64,
    /// Datagrams sent.
    pub datagrams_sent: u64,
    /// Datagrams received.
    pub datagrams_received: u64,
    /// Datagrams from an address no session on that socket was waiting for.
    pub stray_datagrams: u64,
    /// Receive errors (ICMP reports on some systems).
    pub recv_errors: u64,
    /// ICMP "port unreachable" answers to requests (Linux), each ending its target's wait.
    pub refusals: u64,
}

impl BulkCounters {
    fn snapshot(&self) -> BulkStats {
        let read = |c: &AtomicU64| c.load(Ordering::Relaxed);
        BulkStats {
            sessions_started: read(&self.sessions_started),
            sessions_finished: read(&self.sessions_finished),
            peak_in_flight: read(&self.peak_in_flight),
            datagrams_sent: read(&self.datagrams_sent),
            datagrams_received: read(&self.datagrams_received),
            stray_datagrams: read(&self.stray_datagrams),
            recv_errors: read(&self.recv_errors),
            refusals: read(&self.refusals),
        }
    }
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// The results of [`bulk`], in completion order. Dropping it stops the run.
pub struct BulkStream<T, O> {
    results: mpsc::Receiver<BulkResult<T, O>>,
    task: JoinHandle<()>,
    counters: Arc<BulkCounters>,
}

impl<T, O> BulkStream<T, O> {
    /// Counters so far.
    pub fn stats(&self) -> BulkStats {
        self.counters.snapshot()
    }
}

impl<T, O> Stream for BulkStream<T, O> {
    type Item = BulkResult<T, O>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.results.poll_recv(cx) {
            Poll::Ready(None) => {
                // The run ended: if it ended by a panic, let the consumer see it.
                if let Poll::Ready(Err(e)) = Pin::new(&mut self.task).poll(cx) {
                    if e.is_panic() {
                        std::panic::resume_unwind(e.into_panic());
                    }
                }
                Poll::Ready(None)
            }
            other => other,
        }
    }
}

impl<T, O> Drop for BulkStream<T, O> {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl<T, O> fmt::Debug for BulkStream<T, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BulkStream")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

/// Runs a session for every item of `targets`, made by `factory`, and streams the results as
/// they complete.
///
/// `targets` is consumed lazily, so it may be endless or huge; the factory may fail for one
/// target (an unsupported protocol) without affecting the others. Must be called inside a tokio
/// runtime: the run is a spawned task.
pub fn bulk<T, S, F, I>(targets: I, factory: F, config: BulkConfig) -> BulkStream<T, S::Output>
where
    I: Stream<Item = T> + Send + 'static,
    F: FnMut(&T) -> Result<S, QueryError> + Send + 'static,
    S: ClientSession + Send + 'static,
    S::Output: Send + 'static,
    T: Send + 'static,
{
    let concurrency = config.concurrency.max(1);
    let (tx, rx) = mpsc::channel(concurrency);
    let counters = Arc::new(BulkCounters::default());
    let run = Run {
        targets: Box::pin(targets),
        targets_done: false,
        factory,
        concurrency,
        sockets_per_family: config.sockets.clamp(1, 64),
        binds: [config.bind_v4, config.bind_v6],
        pools: [None, None],
        recv_rotation: 0,
        slots: Vec::new(),
        free_slots: Vec::new(),
        in_flight: 0,
        routes: HashMap::new(),
        deferred: VecDeque::new(),
        ready: VecDeque::new(),
        timers: DelayQueue::new(),
        pacer: config.send_rate.map(Pacer::new),
        pacer_wait: None,
        batch_receive: config.batch_receive,
        outbox: VecDeque::new(),
        error_watch: JoinSet::new(),
        counters: Arc::clone(&counters),
    };
    let task = tokio::spawn(run.run(tx));
    BulkStream {
        results: rx,
        task,
        counters,
    }
}

/// Spaces datagrams out to a rate, allowing short bursts.
///
/// governor's limiters take a token when asked; here the driver must know whether a datagram
/// may go *before* it asks the engine for one, so that the engine's retry clock starts when the
/// datagram really leaves. That needs a look without taking, which this GCRA-style pacer gives.
#[derive(Debug)]
struct Pacer {
    interval: Duration,
    burst_allowance: Duration,
    /// When the next datagram would be due if sends were perfectly spaced.
    theoretical: Option<Instant>,
}

impl Pacer {
    fn new(per_second: NonZeroU32) -> Self {
        let interval = Duration::from_secs(1) / per_second.get();
        let burst = (per_second.get() / 20).max(1);
        Pacer {
            interval,
            burst_allowance: interval * (burst - 1),
            theoretical: None,
        }
    }

    /// `None` if a datagram may go at `now`, else when it may.
    fn blocked_until(&self, now: Instant) -> Option<Instant> {
        let due = self.theoretical?;
        let allowed_from = due.checked_sub(self.burst_allowance).unwrap_or(due);
        (now < allowed_from).then_some(allowed_from)
    }

    fn sent(&mut self, now: Instant) {
        let base = match self.theoretical {
            Some(due) if due > now => due,
            _ => now,
        };
        self.theoretical = Some(base + self.interval);
    }
}

/// The sockets of one address family.
#[derive(Debug)]
struct Pool {
    sockets: Vec<PoolSocket>,
    next: usize,
}

#[derive(Debug)]
struct PoolSocket {
    /// Shared with the task that waits for its ICMP errors (Linux).
    socket: Arc<UdpSocket>,
    /// The socket reported itself closed: it is no longer polled. Other receive errors
    /// (ICMP reports from unreachable targets, a connection reset on Windows) are per
    /// datagram and only counted.
    closed: bool,
}

/// A socket pool of one family: not bound yet, bound, or failed to bind (kept to report to
/// each target of that family).
type PoolState = Option<Result<Pool, (io::ErrorKind, String)>>;

/// Datagrams (as many as were waiting, up to a batch) or a receive error from one socket of
/// a pool; the datagrams are in the run's [`RecvBatch`].
struct Received {
    family: usize,
    socket: usize,
    result: io::Result<usize>,
}

/// Where a reply is routed: address family, socket index, peer address.
type Route = (usize, usize, SocketAddr);

struct Slot<T, S> {
    target: T,
    session: S,
    route: Route,
    timer: Option<(delay_queue::Key, Instant)>,
    queued: bool,
    /// Requests sent and refused by ICMP, replies heard: a closed port ends its query early.
    seen: Refusals,
}

enum Event<T> {
    Datagram(Received),
    /// A socket (family, index) has ICMP errors queued.
    SocketError(usize, usize),
    Timer(usize),
    Target(Option<T>),
    Delivered,
    ConsumerGone,
    PacerReady,
}

struct Run<T, S: ClientSession, F> {
    targets: Pin<Box<dyn Stream<Item = T> + Send>>,
    targets_done: bool,
    factory: F,
    concurrency: usize,
    sockets_per_family: usize,
    binds: [SocketAddr; 2],
    /// IPv4 then IPv6; bound on first use. `Err` keeps the bind failure to report per target.
    pools: [PoolState; 2],
    recv_rotation: usize,
    slots: Vec<Option<Slot<T, S>>>,
    free_slots: Vec<usize>,
    in_flight: usize,
    routes: HashMap<Route, usize>,
    /// Sessions whose address is already in flight on every socket.
    deferred: VecDeque<(T, S)>,
    /// Slots to drive: something happened to them.
    ready: VecDeque<usize>,
    timers: DelayQueue<usize>,
    pacer: Option<Pacer>,
    pacer_wait: Option<Instant>,
    batch_receive: bool,
    outbox: VecDeque<BulkResult<T, S::Output>>,
    counters: Arc<BulkCounters>,
    /// One task per socket waiting for its next ICMP error (Linux; aborted with the run).
    error_watch: JoinSet<(usize, usize)>,
}

fn family(addr: SocketAddr) -> usize {
    usize::from(addr.is_ipv6())
}

fn canonical(addr: SocketAddr) -> SocketAddr {
    SocketAddr::new(addr.ip().to_canonical(), addr.port())
}

impl<T, S, F> Run<T, S, F>
where
    T: Send + 'static,
    S: ClientSession + Send + 'static,
    S::Output: Send + 'static,
    F: FnMut(&T) -> Result<S, QueryError> + Send + 'static,
{
    async fn run(mut self, tx: mpsc::Sender<BulkResult<T, S::Output>>) {
        let mut batch = if self.batch_receive {
            RecvBatch::new()
        } else {
            RecvBatch::plain()
        };
        loop {
            self.drive_ready().await;
            if self.targets_done
                && self.in_flight == 0
                && self.deferred.is_empty()
                && self.outbox.is_empty()
            {
                return;
            }
            let event = self.next_event(&tx, &mut batch).await;
            match event {
                Event::Datagram(received) => self.on_datagrams(received, &batch),
                Event::SocketError(fam, socket_index) => {
                    self.take_refusals(fam, socket_index);
                    self.watch_errors(fam, socket_index);
                }
                Event::Timer(slot) => {
                    if let Some(Some(s)) = self.slots.get_mut(slot) {
                        s.timer = None;
                        s.session.handle_timeout(Instant::now());
                        self.enqueue(slot);
                    }
                }
                Event::Target(Some(target)) => self.admit(target).await,
                Event::Target(None) => self.targets_done = true,
                Event::Delivered => {}
                // The consumer dropped the stream: nobody wants the rest.
                Event::ConsumerGone => return,
                Event::PacerReady => self.pacer_wait = None,
            }
        }
    }

    /// Waits for the next thing to happen.
    async fn next_event(
        &mut self,
        tx: &mpsc::Sender<BulkResult<T, S::Output>>,
        batch: &mut RecvBatch,
    ) -> Event<T> {
        let admitting = !self.targets_done
            && self.in_flight + self.deferred.len() + self.outbox.len() < self.concurrency;
        let delivering = !self.outbox.is_empty();
        let has_timers = !self.timers.is_empty();
        let pacer_wait = self.pacer_wait;
        self.recv_rotation = self.recv_rotation.wrapping_add(1);
        let rotation = self.recv_rotation;
        let pools = &self.pools;
        let timers = &mut self.timers;
        let targets = &mut self.targets;
        let outbox = &mut self.outbox;
        let error_watch = &mut self.error_watch;
        let watching = !error_watch.is_empty();
        tokio::select! {
            Some(Ok((fam, socket_index))) = error_watch.join_next(), if watching => {
                Event::SocketError(fam, socket_index)
            }
            received = std::future::poll_fn(|cx| poll_recv_any(pools, rotation, batch, cx)) => {
                Event::Datagram(received)
            }
            Some(expired) = std::future::poll_fn(|cx| timers.poll_expired(cx)), if has_timers => {
                Event::Timer(expired.into_inner())
            }
            permit = tx.reserve(), if delivering => match (permit, outbox.pop_front()) {
                (Ok(permit), Some(result)) => {
                    permit.send(result);
                    Event::Delivered
                }
                (Ok(_), None) => Event::Delivered,
                (Err(_), _) => Event::ConsumerGone,
            },
            () = tokio::time::sleep_until(pacer_wait.unwrap_or_else(Instant::now).into()), if pacer_wait.is_some() => {
                Event::PacerReady
            }
            target = targets.next(), if admitting => Event::Target(target),
        }
    }

    /// Drives every slot something happened to: sends what is due (as the pacer allows),
    /// collects results, and re-arms timers.
    async fn drive_ready(&mut self) {
        while let Some(&index) = self.ready.front() {
            if self.pacer_wait.is_some() {
                return;
            }
            // Unmark first: driving may retire the slot and start a parked session in the same
            // index, which must be able to queue itself anew.
            self.set_queued(index, false);
            match self.drive(index).await {
                Drive::Paced(until) => {
                    self.set_queued(index, true);
                    self.pacer_wait = Some(until);
                    return;
                }
                Drive::Done => {
                    self.ready.pop_front();
                }
            }
        }
    }

    fn set_queued(&mut self, index: usize, queued: bool) {
        if let Some(Some(slot)) = self.slots.get_mut(index) {
            slot.queued = queued;
        }
    }

    async fn drive(&mut self, index: usize) -> Drive {
        let Run {
            slots,
            pools,
            pacer,
            counters,
            timers,
            ..
        } = self;
        let Some(Some(slot)) = slots.get_mut(index) else {
            return Drive::Done;
        };
        let mut refused_on_send = false;
        let (fam, socket_index, _) = slot.route;
        let finished = 'step: {
            if let Some(result) = slot.session.poll_result() {
                break 'step Some(result);
            }
            let Some(Ok(pool)) = &pools[fam] else {
                break 'step Some(Err(QueryError::protocol("the session lost its socket")));
            };
            let socket = &pool.sockets[socket_index].socket;
            let target = slot.session.target();
            loop {
                let now = Instant::now();
                if let Some(until) = pacer.as_ref().and_then(|p| p.blocked_until(now)) {
                    return Drive::Paced(until);
                }
                let Some(datagram) = slot.session.poll_transmit(now) else {
                    break;
                };
                // A shared socket's send reports (and clears) an ICMP error of any earlier
                // send, not of this one, and is itself not made: send again once.
                let mut sent = socket.send_to(datagram, target).await;
                if matches!(&sent, Err(e) if is_refusal(e)) {
                    refused_on_send = true;
                    sent = socket.send_to(datagram, target).await;
                }
                if let Err(e) = sent {
                    break 'step Some(Err(QueryError::Io(e)));
                }
                slot.seen.sent();
                bump(&counters.datagrams_sent);
                if let Some(pacer) = pacer.as_mut() {
                    pacer.sent(now);
                }
            }
            if let Some(result) = slot.session.poll_result() {
                break 'step Some(result);
            }
            match (slot.session.poll_timeout(), slot.timer.take()) {
                (Some(deadline), Some((key, armed))) => {
                    if deadline != armed {
                        timers.reset_at(&key, deadline.into());
                    }
                    slot.timer = Some((key, deadline));
                    None
                }
                (Some(deadline), None) => {
                    let key = timers.insert_at(index, deadline.into());
                    slot.timer = Some((key, deadline));
                    None
                }
                // Neither finished nor waiting: an engine bug that would strand the slot.
                (None, _) => Some(Err(QueryError::protocol(
                    "the engine neither finished nor asked to be woken up",
                ))),
            }
        };
        if let Some(result) = finished {
            self.complete(index, result);
        }
        if refused_on_send {
            self.take_refusals(fam, socket_index);
        }
        Drive::Done
    }

    /// Starts waiting for the next ICMP error on a socket (Linux, where the socket hears of
    /// them: [`crate::refusal::report_refusals`]).
    fn watch_errors(&mut self, fam: usize, socket_index: usize) {
        #[cfg(target_os = "linux")]
        if let Some(Ok(pool)) = &self.pools[fam] {
            if let Some(entry) = pool.sockets.get(socket_index) {
                let socket = Arc::clone(&entry.socket);
                self.error_watch.spawn(async move {
                    // An error ends the wait as readiness does; either way the run reads
                    // the queue and waits again.
                    let _ = socket.ready(tokio::io::Interest::ERROR).await;
                    (fam, socket_index)
                });
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (fam, socket_index);
    }

    /// Reads the ICMP errors queued on a socket and ends the wait of each refused target's
    /// current attempt (it resends, or gives up as at its timeout, now).
    fn take_refusals(&mut self, fam: usize, socket_index: usize) {
        #[cfg(target_os = "linux")]
        {
            let Some(Ok(pool)) = &self.pools[fam] else {
                return;
            };
            let mut refused = Vec::new();
            crate::refusal::drain_refused(&pool.sockets[socket_index].socket, |destination| {
                refused.push(destination);
            });
            for destination in refused {
                bump(&self.counters.refusals);
                let route = (fam, socket_index, canonical(destination));
                let Some(&index) = self.routes.get(&route) else {
                    continue;
                };
                if let Some(Some(slot)) = self.slots.get_mut(index) {
                    slot.seen.refused();
                    if let Some((_, deadline)) = slot.timer {
                        slot.session.handle_timeout(deadline);
                    }
                    self.enqueue(index);
                }
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (fam, socket_index);
    }

    fn on_datagrams(&mut self, received: Received, batch: &RecvBatch) {
        let Received {
            family: fam,
            socket: socket_index,
            result: received,
        } = received;
        let closed = match &mut self.pools[fam] {
            Some(Ok(pool)) => &mut pool.sockets[socket_index].closed,
            _ => return,
        };
        let count = match received {
            Ok(count) => count,
            Err(e) => {
                bump(&self.counters.recv_errors);
                if classify_recv_error(&e) == RecvErrorKind::Closed {
                    *closed = true;
                } else if is_refusal(&e) {
                    self.take_refusals(fam, socket_index);
                }
                return;
            }
        };
        let now = Instant::now();
        for i in 0..count {
            bump(&self.counters.datagrams_received);
            let (Some(from), datagram) = batch.datagram(i) else {
                bump(&self.counters.stray_datagrams);
                continue;
            };
            let Some(&index) = self.routes.get(&(fam, socket_index, canonical(from))) else {
                bump(&self.counters.stray_datagrams);
                continue;
            };
            if let Some(Some(slot)) = self.slots.get_mut(index) {
                slot.seen.received(from, slot.session.target());
                slot.session.handle_datagram(from, datagram, now);
                self.enqueue(index);
            }
        }
    }

    fn enqueue(&mut self, index: usize) {
        if let Some(Some(slot)) = self.slots.get_mut(index) {
            if !slot.queued {
                slot.queued = true;
                self.ready.push_back(index);
            }
        }
    }

    /// Makes a session for a new target and starts it, or parks it if its address is busy on
    /// every socket.
    async fn admit(&mut self, target: T) {
        let session = match (self.factory)(&target) {
            Ok(session) => session,
            Err(e) => {
                self.finish(target, Err(e));
                return;
            }
        };
        bump(&self.counters.sessions_started);
        let fam = family(session.target());
        if self.pools[fam].is_none() {
            self.pools[fam] = Some(bind_pool(self.binds[fam], self.sockets_per_family).await);
            for socket_index in 0..self.sockets_per_family {
                self.watch_errors(fam, socket_index);
            }
        }
        if let Some(Err((kind, message))) = &self.pools[fam] {
            let error = io::Error::new(*kind, message.clone());
            self.finish(target, Err(QueryError::Io(error)));
            return;
        }
        if let Err(parked) = self.place(target, session) {
            self.deferred.push_back(parked);
        }
    }

    /// Starts `session` on a socket where its address is not in flight yet.
    fn place(&mut self, target: T, session: S) -> Result<(), (T, S)> {
        let addr = session.target();
        let fam = family(addr);
        let Some(Ok(pool)) = &mut self.pools[fam] else {
            return Err((target, session));
        };
        let count = pool.sockets.len();
        let free_socket = (0..count)
            .map(|k| (pool.next + k) % count)
            .find(|&i| !self.routes.contains_key(&(fam, i, canonical(addr))));
        let Some(socket_index) = free_socket else {
            return Err((target, session));
        };
        pool.next = (socket_index + 1) % count;
        let route = (fam, socket_index, canonical(addr));
        let slot = Slot {
            target,
            session,
            route,
            timer: None,
            queued: false,
            seen: Refusals::default(),
        };
        let index = match self.free_slots.pop() {
            Some(index) => {
                self.slots[index] = Some(slot);
                index
            }
            None => {
                self.slots.push(Some(slot));
                self.slots.len() - 1
            }
        };
        self.routes.insert(route, index);
        self.in_flight += 1;
        self.counters
            .peak_in_flight
            .fetch_max(self.in_flight as u64, Ordering::Relaxed);
        self.enqueue(index);
        Ok(())
    }

    /// Retires a slot and hands its result out; a parked session to the same address may start.
    fn complete(&mut self, index: usize, result: Result<S::Output, QueryError>) {
        let Some(slot) = self.slots.get_mut(index).and_then(Option::take) else {
            return;
        };
        if let Some((key, _)) = slot.timer {
            self.timers.remove(&key);
        }
        self.routes.remove(&slot.route);
        self.free_slots.push(index);
        self.in_flight -= 1;
        let result = slot.seen.conclude(slot.session.target(), result);
        self.finish(slot.target, result);
        self.start_deferred();
    }

    fn start_deferred(&mut self) {
        for _ in 0..self.deferred.len() {
            let Some((target, session)) = self.deferred.pop_front() else {
                break;
            };
            if let Err(parked) = self.place(target, session) {
                self.deferred.push_back(parked);
            }
        }
    }

    fn finish(&mut self, target: T, result: Result<S::Output, QueryError>) {
        bump(&self.counters.sessions_finished);
        self.outbox.push_back(BulkResult { target, result });
    }
}

enum Drive {
    Done,
    Paced(Instant),
}

/// The kernel receive buffer each bulk socket asks for. Replies come in bursts (sessions that
/// started together time out and resend together), and the default buffer (about 208 KiB on
/// Linux) overflows at a few thousand queries in flight, dropping answers. The kernel caps the
/// request at `net.core.rmem_max`, so this is a ceiling, not a reservation.
const BULK_RECV_BUFFER: usize = 8 << 20;

async fn bind_pool(bind: SocketAddr, count: usize) -> Result<Pool, (io::ErrorKind, String)> {
    let mut sockets = Vec::with_capacity(count);
    for _ in 0..count {
        match bind_bulk_socket(bind) {
            Ok(socket) => sockets.push(PoolSocket {
                socket: Arc::new(socket),
                closed: false,
            }),
            Err(e) => return Err((e.kind(), format!("cannot bind a socket on {bind}: {e}"))),
        }
    }
    Ok(Pool { sockets, next: 0 })
}

/// A non-blocking UDP socket bound to `bind`, with a receive buffer as large as the kernel
/// allows up to [`BULK_RECV_BUFFER`].
fn bind_bulk_socket(bind: SocketAddr) -> io::Result<UdpSocket> {
    use socket2::{Domain, Protocol, Socket, Type};

    let socket = Socket::new(Domain::for_address(bind), Type::DGRAM, Some(Protocol::UDP))?;
    // Best effort: a smaller buffer only means more loss under bursts, not failure.
    let _ = socket.set_recv_buffer_size(BULK_RECV_BUFFER);
    socket.set_nonblocking(true)?;
    socket.bind(&bind.into())?;
    // Best effort too: without it, a closed port's target waits for its timeouts.
    #[cfg(target_os = "linux")]
    crate::refusal::report_refusals(&socket, bind.is_ipv6());
    UdpSocket::from_std(socket.into())
}

/// Polls every live socket for datagrams, starting at a rotating position so that a busy
/// socket cannot starve the others; the first socket with any reads what it holds, up to a
/// batch, into `batch`.
fn poll_recv_any(
    pools: &[PoolState; 2],
    rotation: usize,
    batch: &mut RecvBatch,
    cx: &mut Context<'_>,
) -> Poll<Received> {
    let v4 = pool_sockets(&pools[0]);
    let v6 = pool_sockets(&pools[1]);
    let total = v4.len() + v6.len();
    for k in 0..total {
        let position = (rotation + k) % total;
        let (fam, index, entry) = match v4.get(position) {
            Some(entry) => (0, position, entry),
            None => (1, position - v4.len(), &v6[position - v4.len()]),
        };
        if entry.closed {
            continue;
        }
        // Ready may be stale: a read that would block clears it, and polling again registers
        // the waker.
        while let Poll::Ready(ready) = entry.socket.poll_recv_ready(cx) {
            let result = match ready {
                Ok(()) => match batch.recv(&entry.socket) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                    result => result,
                },
                Err(e) => Err(e),
            };
            return Poll::Ready(Received {
                family: fam,
                socket: index,
                result,
            });
        }
    }
    Poll::Pending
}

fn pool_sockets(pool: &PoolState) -> &[PoolSocket] {
    match pool {
        Some(Ok(pool)) => &pool.sockets,
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bulk_sockets_get_the_largest_receive_buffer_the_kernel_allows() {
        let bind = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
        let bulk = bind_bulk_socket(bind).unwrap();
        let bulk_size = socket2::SockRef::from(&bulk).recv_buffer_size().unwrap();
        let plain = std::net::UdpSocket::bind(bind).unwrap();
        let plain_size = socket2::SockRef::from(&plain).recv_buffer_size().unwrap();
        assert!(
            bulk_size >= plain_size,
            "{bulk_size} < default {plain_size}"
        );
        // Linux caps the request at rmem_max (and reports double what it grants).
        if let Ok(max) = std::fs::read_to_string("/proc/sys/net/core/rmem_max") {
            let max: usize = max.trim().parse().unwrap();
            assert!(
                bulk_size >= BULK_RECV_BUFFER.min(max),
                "{bulk_size} < min({BULK_RECV_BUFFER}, rmem_max {max})"
            );
        }
    }

    #[test]
    fn pacer_allows_a_burst_then_spaces_sends_at_the_rate() {
        let mut pacer = Pacer::new(NonZeroU32::new(100).unwrap()); // 10 ms apart, bursts of 5
        let t0 = Instant::now();
        for _ in 0..5 {
            assert_eq!(pacer.blocked_until(t0), None);
            pacer.sent(t0);
        }
        let next = pacer.blocked_until(t0).expect("burst used up");
        assert_eq!(next, t0 + Duration::from_millis(10));
        assert_eq!(pacer.blocked_until(next), None);
        pacer.sent(next);
        assert_eq!(
            pacer.blocked_until(next),
            Some(t0 + Duration::from_millis(20))
        );
    }

    #[test]
    fn pacer_does_not_bank_more_than_a_burst_while_idle() {
        let mut pacer = Pacer::new(NonZeroU32::new(100).unwrap());
        let t0 = Instant::now();
        pacer.sent(t0);
        let later = t0 + Duration::from_secs(10);
        for _ in 0..5 {
            assert_eq!(pacer.blocked_until(later), None);
            pacer.sent(later);
        }
        assert!(pacer.blocked_until(later).is_some());
    }

    #[test]
    fn slow_rates_send_one_at_a_time() {
        let mut pacer = Pacer::new(NonZeroU32::new(2).unwrap());
        let t0 = Instant::now();
        assert_eq!(pacer.blocked_until(t0), None);
        pacer.sent(t0);
        assert_eq!(
            pacer.blocked_until(t0),
            Some(t0 + Duration::from_millis(500))
        );
    }

    #[test]
    fn config_defaults_are_small_and_unlimited() {
        let config = BulkConfig::default();
        assert_eq!(config.sockets, 4);
        assert_eq!(config.concurrency, 256);
        assert_eq!(config.send_rate, None);
        assert!(config.bind_v4.ip().is_unspecified());
        assert!(config.bind_v6.is_ipv6());
        assert!(config.batch_receive);
    }
}
