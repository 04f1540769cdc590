//! A lossy UDP proxy for loopback tests: it sits between clients and one responder and drops,
//! duplicates, reorders, delays and corrupts datagrams in both directions.
//!
//! The decisions come from [`Chaos`], a seeded random source that is tested on its own; the
//! proxy only carries them out. Everything is bounded: clients tracked, datagrams held.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde::Serialize;
use tokio::net::UdpSocket;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::time::{delay_queue, DelayQueue};

use crate::driver::RECV_BUFFER;

/// What the proxy does to datagrams. Probabilities are per datagram, from 0.0 to 1.0, and
/// apply in both directions.
#[derive(Debug, Clone, PartialEq)]
pub struct Impairments {
    /// Probability that a datagram vanishes.
    pub drop: f64,
    /// Probability that a datagram arrives twice.
    pub duplicate: f64,
    /// Probability that a datagram is held back until the next one of its direction has gone
    /// (or `reorder_hold` passes), so the two arrive swapped.
    pub reorder: f64,
    /// Probability that one byte of a datagram is changed.
    pub corrupt: f64,
    /// Each datagram is delayed by a uniformly random time up to this.
    pub max_delay: Duration,
    /// How long a held datagram waits for a successor to overtake it.
    pub reorder_hold: Duration,
    /// Datagrams waiting (delayed or held) at most; more are dropped and counted as overflow.
    pub max_pending: usize,
    /// Clients tracked at most; the oldest is forgotten to make room.
    pub max_clients: usize,
}

impl Default for Impairments {
    /// A perfect link.
    fn default() -> Self {
        Impairments {
            drop: 0.0,
            duplicate: 0.0,
            reorder: 0.0,
            corrupt: 0.0,
            max_delay: Duration::ZERO,
            reorder_hold: Duration::from_millis(50),
            max_pending: 1024,
            max_clients: 64,
        }
    }
}

/// What happens to one datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// It is lost.
    Drop,
    /// It is sent `copies` times after `delay`; if `hold`, it waits for the next datagram of
    /// its direction to overtake it.
    Deliver {
        /// 1, or 2 when duplicated.
        copies: u8,
        /// Extra delay before sending.
        delay: Duration,
        /// Held back for reordering.
        hold: bool,
    },
}

/// The seeded source of every decision: the same seed and the same datagrams give the same
/// fates.
#[derive(Debug)]
pub struct Chaos {
    rng: StdRng,
    impairments: Impairments,
}

impl Chaos {
    /// Decisions for `impairments` from `seed`.
    pub fn new(impairments: Impairments, seed: u64) -> Self {
        Chaos {
            rng: StdRng::seed_from_u64(seed),
            impairments,
        }
    }

    /// Decides the fate of `datagram`, corrupting it in place if so decided. Returns whether it
    /// was corrupted with the fate.
    pub fn decide(&mut self, datagram: &mut [u8]) -> (Fate, bool) {
        let imp = &self.impairments;
        if self.rng.random_bool(imp.drop.clamp(0.0, 1.0)) {
            return (Fate::Drop, false);
        }
        let corrupted = !datagram.is_empty() && self.rng.random_bool(imp.corrupt.clamp(0.0, 1.0));
        if corrupted {
            let at = self.rng.random_range(0..datagram.len());
            let flip: u8 = self.rng.random_range(1..=255);
            datagram[at] ^= flip;
        }
        let copies = if self.rng.random_bool(imp.duplicate.clamp(0.0, 1.0)) {
            2
        } else {
            1
        };
        let delay = if imp.max_delay.is_zero() {
            Duration::ZERO
        } else {
            let nanos = u64::try_from(imp.max_delay.as_nanos()).unwrap_or(u64::MAX);
            Duration::from_nanos(self.rng.random_range(0..=nanos))
        };
        let hold = self.rng.random_bool(imp.reorder.clamp(0.0, 1.0));
        (
            Fate::Deliver {
                copies,
                delay,
                hold,
            },
            corrupted,
        )
    }
}

#[derive(Debug, Default)]
struct Counters {
    received: AtomicU64,
    sent: AtomicU64,
    dropped: AtomicU64,
    duplicated: AtomicU64,
    reordered: AtomicU64,
    corrupted: AtomicU64,
    delayed: AtomicU64,
    overflowed: AtomicU64,
}

/// What the proxy did so far, over both directions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ProxyStats {
    /// Datagrams that reached the proxy.
    pub received: u64,
    /// Datagrams the proxy sent on (copies included).
    pub sent: u64,
    /// Datagrams dropped on purpose.
    pub dropped: u64,
    /// Datagrams sent twice.
    pub duplicated: u64,
    /// Datagrams held back for reordering.
    pub reordered: u64,
    /// Datagrams with a changed byte.
    pub corrupted: u64,
    /// Datagrams sent late.
    pub delayed: u64,
    /// Datagrams dropped because too many were waiting.
    pub overflowed: u64,
}

/// Which way a datagram travels, and for which client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Flow {
    ToServer(SocketAddr),
    ToClient(SocketAddr),
}

/// A running proxy. Dropping it stops it.
///
/// ```
/// # async fn example() -> std::io::Result<()> {
/// use query_net::testing::lossy::{Impairments, LossyProxy};
///
/// let server = tokio::net::UdpSocket::bind("127.0.0.1:0").await?;
/// let proxy = LossyProxy::start(
///     server.local_addr()?,
///     Impairments { drop: 0.2, duplicate: 0.1, ..Impairments::default() },
///     7,
/// )
/// .await?;
/// // Clients send to proxy.addr() instead of the server's address.
/// # let _ = proxy.addr();
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct LossyProxy {
    addr: SocketAddr,
    counters: Arc<Counters>,
    shutdown: CancellationToken,
    task: JoinHandle<()>,
}

impl LossyProxy {
    /// Starts a proxy in front of `upstream` on a loopback port, with decisions seeded by
    /// `seed`. Must be called inside a tokio runtime.
    pub async fn start(
        upstream: SocketAddr,
        impairments: Impairments,
        seed: u64,
    ) -> io::Result<Self> {
        let loopback = loopback_for(upstream);
        let front = Arc::new(UdpSocket::bind(loopback).await?);
        let addr = front.local_addr()?;
        let counters = Arc::new(Counters::default());
        let shutdown = CancellationToken::new();
        let (events_tx, events) = mpsc::channel(1024);
        let proxy = Proxy {
            front,
            upstream,
            loopback,
            clients: HashMap::new(),
            client_order: VecDeque::new(),
            events_tx,
            pending: DelayQueue::new(),
            held: HashMap::new(),
            max_pending: impairments.max_pending.max(1),
            max_clients: impairments.max_clients.max(1),
            reorder_hold: impairments.reorder_hold,
            chaos: Chaos::new(impairments, seed),
            counters: Arc::clone(&counters),
        };
        let task = tokio::spawn(proxy.run(events, shutdown.clone()));
        Ok(LossyProxy {
            addr,
            counters,
            shutdown,
            task,
        })
    }

    /// Where clients send to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Counters so far.
    pub fn stats(&self) -> ProxyStats {
        let c = &self.counters;
        let read = |x: &AtomicU64| x.load(Ordering::Relaxed);
        ProxyStats {
            received: read(&c.received),
            sent: read(&c.sent),
            dropped: read(&c.dropped),
            duplicated: read(&c.duplicated),
            reordered: read(&c.reordered),
            corrupted: read(&c.corrupted),
            delayed: read(&c.delayed),
            overflowed: read(&c.overflowed),
        }
    }
}

impl Drop for LossyProxy {
    fn drop(&mut self) {
        self.shutdown.cancel();
        self.task.abort();
    }
}

fn loopback_for(upstream: SocketAddr) -> SocketAddr {
    match upstream {
        SocketAddr::V4(_) => SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        SocketAddr::V6(_) => SocketAddr::from((Ipv6Addr::LOCALHOST, 0)),
    }
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// One client's socket towards the server, and the task reading the server's replies from it.
struct Client {
    socket: Arc<UdpSocket>,
    reader: JoinHandle<()>,
}

struct Proxy {
    front: Arc<UdpSocket>,
    upstream: SocketAddr,
    loopback: SocketAddr,
    clients: HashMap<SocketAddr, Client>,
    client_order: VecDeque<SocketAddr>,
    events_tx: mpsc::Sender<(Flow, Vec<u8>)>,
    pending: DelayQueue<(Flow, Vec<u8>)>,
    /// The datagram held back per flow, waiting to be overtaken.
    held: HashMap<Flow, delay_queue::Key>,
    max_pending: usize,
    max_clients: usize,
    reorder_hold: Duration,
    chaos: Chaos,
    counters: Arc<Counters>,
}

impl Proxy {
    async fn run(
        mut self,
        mut events: mpsc::Receiver<(Flow, Vec<u8>)>,
        shutdown: CancellationToken,
    ) {
        let mut buf = vec![0u8; RECV_BUFFER];
        loop {
            let has_pending = !self.pending.is_empty();
            tokio::select! {
                () = shutdown.cancelled() => break,
                received = self.front.recv_from(&mut buf) => {
                    if let Ok((len, client)) = received {
                        if self.client(client).await.is_some() {
                            self.process(Flow::ToServer(client), buf[..len].to_vec()).await;
                        }
                    }
                }
                Some((flow, datagram)) = events.recv() => self.process(flow, datagram).await,
                Some(expired) = std::future::poll_fn(|cx| self.pending.poll_expired(cx)), if has_pending => {
                    let key = expired.key();
                    self.held.retain(|_, held| *held != key);
                    let (flow, datagram) = expired.into_inner();
                    self.send(flow, &datagram).await;
                }
            }
        }
        for (_, client) in self.clients.drain() {
            client.reader.abort();
        }
    }

    /// The socket that carries `client`'s datagrams to the server, made on first contact.
    async fn client(&mut self, client: SocketAddr) -> Option<Arc<UdpSocket>> {
        if let Some(known) = self.clients.get(&client) {
            return Some(Arc::clone(&known.socket));
        }
        if self.clients.len() >= self.max_clients {
            if let Some(oldest) = self.client_order.pop_front() {
                if let Some(gone) = self.clients.remove(&oldest) {
                    gone.reader.abort();
                }
            }
        }
        let socket = Arc::new(UdpSocket::bind(self.loopback).await.ok()?);
        let reader = tokio::spawn(read_replies(
            Arc::clone(&socket),
            self.upstream,
            client,
            self.events_tx.clone(),
        ));
        self.clients.insert(
            client,
            Client {
                socket: Arc::clone(&socket),
                reader,
            },
        );
        self.client_order.push_back(client);
        Some(socket)
    }

    /// Applies the chaos to one datagram and sends or schedules what is left of it.
    async fn process(&mut self, flow: Flow, mut datagram: Vec<u8>) {
        bump(&self.counters.received);
        let (fate, corrupted) = self.chaos.decide(&mut datagram);
        if corrupted {
            bump(&self.counters.corrupted);
        }
        let Fate::Deliver {
            copies,
            delay,
            hold,
        } = fate
        else {
            bump(&self.counters.dropped);
            return;
        };
        if copies > 1 {
            bump(&self.counters.duplicated);
        }
        if hold {
            bump(&self.counters.reordered);
            self.hold(flow, datagram, delay);
            return;
        }
        let send_at = Instant::now() + delay;
        if delay.is_zero() {
            for _ in 0..copies {
                self.send(flow, &datagram).await;
            }
        } else {
            bump(&self.counters.delayed);
            for _ in 0..copies {
                self.schedule(flow, datagram.clone(), send_at);
            }
        }
        // A datagram held back in this flow goes right after this one: they arrive swapped.
        if let Some(key) = self.held.remove(&flow) {
            self.pending
                .reset_at(&key, send_at + Duration::from_millis(1));
        }
    }

    fn hold(&mut self, flow: Flow, datagram: Vec<u8>, delay: Duration) {
        // Only one datagram waits per flow; an earlier one is released now.
        if let Some(previous) = self.held.remove(&flow) {
            self.pending.reset_at(&previous, Instant::now());
        }
        let release_at = Instant::now() + delay + self.reorder_hold;
        if let Some(key) = self.schedule(flow, datagram, release_at) {
            self.held.insert(flow, key);
        }
    }

    fn schedule(&mut self, flow: Flow, datagram: Vec<u8>, at: Instant) -> Option<delay_queue::Key> {
        if self.pending.len() >= self.max_pending {
            bump(&self.counters.overflowed);
            return None;
        }
        Some(self.pending.insert_at((flow, datagram), at))
    }

    async fn send(&mut self, flow: Flow, datagram: &[u8]) {
        let sent = match flow {
            Flow::ToServer(client) => match self.clients.get(&client) {
                Some(known) => known.socket.send_to(datagram, self.upstream).await.is_ok(),
                None => false,
            },
            Flow::ToClient(client) => self.front.send_to(datagram, client).await.is_ok(),
        };
        if sent {
            bump(&self.counters.sent);
        }
    }
}

/// Forwards the server's replies on one client's socket to the proxy's main task.
async fn read_replies(
    socket: Arc<UdpSocket>,
    upstream: SocketAddr,
    client: SocketAddr,
    events: mpsc::Sender<(Flow, Vec<u8>)>,
) {
    let mut buf = vec![0u8; RECV_BUFFER];
    loop {
        match socket.recv_from(&mut buf).await {
            Ok((len, from)) if from == upstream => {
                if events
                    .send((Flow::ToClient(client), buf[..len].to_vec()))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            // Datagrams from elsewhere and transient errors are not the server's replies.
            Ok(_) | Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fates(impairments: &Impairments, seed: u64, n: usize) -> Vec<(Fate, bool, Vec<u8>)> {
        let mut chaos = Chaos::new(impairments.clone(), seed);
        (0..n)
            .map(|i| {
                let mut datagram = vec![i as u8; 16];
                let (fate, corrupted) = chaos.decide(&mut datagram);
                (fate, corrupted, datagram)
            })
            .collect()
    }

    #[test]
    fn a_perfect_link_delivers_everything_once_unchanged() {
        for (i, (fate, corrupted, datagram)) in fates(&Impairments::default(), 1, 100)
            .into_iter()
            .enumerate()
        {
            assert_eq!(
                fate,
                Fate::Deliver {
                    copies: 1,
                    delay: Duration::ZERO,
                    hold: false
                }
            );
            assert!(!corrupted);
            assert_eq!(datagram, vec![i as u8; 16]);
        }
    }

    #[test]
    fn same_seed_same_fates_other_seed_other_fates() {
        let imp = Impairments {
            drop: 0.3,
            duplicate: 0.3,
            reorder: 0.3,
            corrupt: 0.3,
            max_delay: Duration::from_millis(20),
            ..Impairments::default()
        };
        assert_eq!(fates(&imp, 42, 200), fates(&imp, 42, 200));
        assert_ne!(fates(&imp, 42, 200), fates(&imp, 43, 200));
    }

    #[test]
    fn rates_are_roughly_the_configured_probabilities() {
        let imp = Impairments {
            drop: 0.25,
            duplicate: 0.5,
            corrupt: 0.1,
            max_delay: Duration::from_millis(10),
            ..Impairments::default()
        };
        let all = fates(&imp, 9, 4000);
        let dropped = all.iter().filter(|(f, ..)| *f == Fate::Drop).count();
        let delivered: Vec<_> = all.iter().filter(|(f, ..)| *f != Fate::Drop).collect();
        let duplicated = delivered
            .iter()
            .filter(|(f, ..)| matches!(f, Fate::Deliver { copies: 2, .. }))
            .count();
        let corrupted = delivered.iter().filter(|(_, c, _)| *c).count();
        assert!((900..1100).contains(&dropped), "dropped {dropped}");
        assert!(
            (1300..1700).contains(&duplicated),
            "duplicated {duplicated} of {}",
            delivered.len()
        );
        assert!((200..400).contains(&corrupted), "corrupted {corrupted}");
        for (i, (fate, corrupted, datagram)) in all.iter().enumerate() {
            if let Fate::Deliver { delay, .. } = fate {
                assert!(*delay <= Duration::from_millis(10));
                let changed = datagram.iter().any(|&b| b != i as u8);
                assert_eq!(*corrupted, changed, "datagram {i}");
            }
        }
    }

    #[test]
    fn corruption_changes_exactly_one_byte() {
        let imp = Impairments {
            corrupt: 1.0,
            ..Impairments::default()
        };
        let mut chaos = Chaos::new(imp, 5);
        for _ in 0..100 {
            let original = vec![0x55u8; 32];
            let mut datagram = original.clone();
            let (_, corrupted) = chaos.decide(&mut datagram);
            assert!(corrupted);
            let changed = original
                .iter()
                .zip(&datagram)
                .filter(|(a, b)| a != b)
                .count();
            assert_eq!(changed, 1);
        }
        let mut empty = Vec::new();
        assert!(!chaos.decide(&mut empty).1);
    }
}
