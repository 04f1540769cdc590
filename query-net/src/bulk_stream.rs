//! Stream (TCP) targets in a bulk run, beside the datagram ones of [`bulk`].
//!
//! A datagram session shares a few sockets with thousands of others; a stream query needs a
//! connection, and so a file descriptor, of its own. [`bulk_streams`] runs such queries with
//! a bound on the connections open at once, and [`bulk_mixed`] splits one list of targets
//! between the two engines and streams both results in completion order.
//!
//! ```no_run
//! use query_net::bulk::BulkConfig;
//! use query_net::bulk_stream::bulk_mixed;
//! use query_net::{driver, engines, learned::Learned, Options, Protocol};
//! use tokio_stream::StreamExt;
//!
//! # async fn example() {
//! let targets = vec![
//!     (Protocol::Minecraft, "192.0.2.1:25565".parse().unwrap()),
//!     (Protocol::A2s, "192.0.2.2:27015".parse().unwrap()),
//! ];
//! let options = Options::default();
//! let for_streams = options.clone();
//! let mut results = bulk_mixed(
//!     tokio_stream::iter(targets),
//!     |&(protocol, _)| protocol.is_stream(),
//!     move |&(protocol, address)| engines::new_session(protocol, address, &options),
//!     move |&(protocol, address)| {
//!         let options = for_streams.clone();
//!         async move {
//!             let host = address.ip().to_string();
//!             driver::query_at(protocol, address, &host, &options, &Learned::default()).await
//!         }
//!     },
//!     BulkConfig::default(),
//! );
//! while let Some(done) = results.next().await {
//!     println!("{:?}: {:?}", done.target, done.result.map(|s| s.name));
//! }
//! # }
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::sync::mpsc;
use tokio::task::{JoinHandle, JoinSet};
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::{Stream, StreamExt};

use crate::bulk::{bulk, bump, BulkConfig, BulkCounters, BulkResult, BulkStream};
use crate::engine::ClientSession;
use crate::error::QueryError;

/// Stream queries in flight at once unless configured otherwise: 256, as many as datagram
/// sessions. A connection costs a descriptor and kernel buffers, and a status ping is two
/// round trips, so 256 connections keep a loopback fleet's thousands of targets a second
/// going while staying far below the usual open-file limit of 1,024.
pub const DEFAULT_CONNECTIONS: usize = 256;

/// Descriptors left to the rest of the process (standard streams, the runtime, a log file,
/// the exporter's HTTP connections) besides the datagram sockets of the run.
pub const RESERVED_DESCRIPTORS: usize = 64;

/// How many connections a run that wants `wanted` of them, beside `other_sockets` sockets of
/// its own, may open: the open-file limit is raised towards the hard limit if it is short
/// (Linux), and the connections are lowered to what then fits, at least one. A bound that
/// fits means a full run meets no "too many open files"; a lowered one only slows it.
pub fn connection_budget(wanted: usize, other_sockets: usize) -> usize {
    let wanted = wanted.max(1);
    let reserved = RESERVED_DESCRIPTORS.saturating_add(other_sockets);
    match open_file_limit(wanted.saturating_add(reserved)) {
        Some(limit) => wanted.min(limit.saturating_sub(reserved)).max(1),
        None => wanted,
    }
}

/// The open-file limit after raising the soft limit towards `needed` (never past the hard
/// limit), or `None` where it cannot be read.
#[cfg(target_os = "linux")]
fn open_file_limit(needed: usize) -> Option<usize> {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let needed = u64::try_from(needed).unwrap_or(u64::MAX);
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    let soft = if soft < needed {
        let raised = needed.min(hard);
        match setrlimit(Resource::RLIMIT_NOFILE, raised, hard) {
            Ok(()) => raised,
            Err(_) => soft,
        }
    } else {
        soft
    };
    Some(usize::try_from(soft).unwrap_or(usize::MAX))
}

#[cfg(not(target_os = "linux"))]
fn open_file_limit(_needed: usize) -> Option<usize> {
    None
}

/// Runs `query` for every item of `targets`, at most `connections` at once (each is a task of
/// its own, holding one connection), and streams the results as they complete.
///
/// `targets` is consumed lazily, a target only when a query ends; results wait in a queue no
/// longer than `connections`, so memory depends on the bound, never on the number of targets.
/// Each query must end by itself (the stream driver's deadline sees to it). Dropping the
/// stream stops the run and closes its connections. Must be called inside a tokio runtime.
pub fn bulk_streams<T, I, F, Fut, O>(targets: I, query: F, connections: usize) -> BulkStream<T, O>
where
    I: Stream<Item = T> + Send + 'static,
    F: FnMut(&T) -> Fut + Send + 'static,
    Fut: Future<Output = Result<O, QueryError>> + Send + 'static,
    T: Send + 'static,
    O: Send + 'static,
{
    let connections = connections.max(1);
    let (tx, rx) = mpsc::channel(connections);
    let counters = Arc::new(BulkCounters::default());
    let task = tokio::spawn(run_streams(
        targets,
        query,
        connections,
        tx,
        Arc::clone(&counters),
    ));
    BulkStream::new(rx, task, counters)
}

async fn run_streams<T, I, F, Fut, O>(
    targets: I,
    mut query: F,
    connections: usize,
    tx: mpsc::Sender<BulkResult<T, O>>,
    counters: Arc<BulkCounters>,
) where
    I: Stream<Item = T> + Send + 'static,
    F: FnMut(&T) -> Fut + Send + 'static,
    Fut: Future<Output = Result<O, QueryError>> + Send + 'static,
    T: Send + 'static,
    O: Send + 'static,
{
    let mut targets = std::pin::pin!(targets);
    let mut targets_done = false;
    let mut running = JoinSet::new();
    loop {
        let admitting = !targets_done && running.len() < connections;
        tokio::select! {
            // Results first: a finished query frees its slot before a new one starts.
            biased;
            Some(joined) = running.join_next(), if !running.is_empty() => {
                let (target, result) = match joined {
                    Ok(done) => done,
                    Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                    // Tasks are aborted only when the run is dropped.
                    Err(_) => return,
                };
                bump(&counters.sessions_finished);
                // The consumer dropped the stream: nobody wants the rest.
                if tx.send(BulkResult { target, result }).await.is_err() {
                    return;
                }
            }
            next = targets.next(), if admitting => match next {
                Some(target) => {
                    let pending = query(&target);
                    running.spawn(async move { (target, pending.await) });
                    bump(&counters.sessions_started);
                    counters
                        .peak_in_flight
                        .fetch_max(running.len() as u64, Ordering::Relaxed);
                }
                None => targets_done = true,
            },
            else => return,
        }
    }
}

/// Splits `targets` between the datagram engine ([`bulk`], sessions made by `datagram`) and
/// [`bulk_streams`] (queries made by `stream`), as `is_stream` says, and streams the results
/// of both in completion order.
///
/// The stream side holds at most [`BulkConfig::connections`] connections, lowered by
/// [`connection_budget`] to what the open-file limit leaves beside the datagram sockets.
/// Targets are handed out in input order: when the side a target goes to is full, the
/// next targets wait for it, so memory stays bounded by the two engines' limits.
pub fn bulk_mixed<T, I, P, F, S, Q, Fut>(
    targets: I,
    is_stream: P,
    datagram: F,
    stream: Q,
    config: BulkConfig,
) -> MixedBulk<T, S::Output>
where
    I: Stream<Item = T> + Send + 'static,
    P: Fn(&T) -> bool + Send + 'static,
    F: FnMut(&T) -> Result<S, QueryError> + Send + 'static,
    S: ClientSession + Send + 'static,
    S::Output: Send + 'static,
    Q: FnMut(&T) -> Fut + Send + 'static,
    Fut: Future<Output = Result<S::Output, QueryError>> + Send + 'static,
    T: Send + 'static,
{
    let connections = connection_budget(config.connections, 2 * config.sockets.clamp(1, 64));
    let (to_datagrams, datagram_targets) = mpsc::channel(1);
    let (to_streams, stream_targets) = mpsc::channel(1);
    let router = tokio::spawn(async move {
        let mut targets = std::pin::pin!(targets);
        while let Some(target) = targets.next().await {
            let side = if is_stream(&target) {
                &to_streams
            } else {
                &to_datagrams
            };
            if side.send(target).await.is_err() {
                return;
            }
        }
    });
    MixedBulk {
        datagrams: Some(bulk(
            ReceiverStream::new(datagram_targets),
            datagram,
            config,
        )),
        streams: Some(bulk_streams(
            ReceiverStream::new(stream_targets),
            stream,
            connections,
        )),
        router,
        connections,
        streams_first: false,
    }
}

/// The results of [`bulk_mixed`], in completion order. Dropping it stops the run.
pub struct MixedBulk<T, O> {
    datagrams: Option<BulkStream<T, O>>,
    streams: Option<BulkStream<T, O>>,
    router: JoinHandle<()>,
    connections: usize,
    /// Which side is polled first, alternating so that neither starves the other.
    streams_first: bool,
}

impl<T, O> MixedBulk<T, O> {
    /// The connections the stream side may hold at once (after [`connection_budget`]).
    pub fn connections(&self) -> usize {
        self.connections
    }

    /// The datagram side's counters and the stream side's, so far.
    pub fn stats(&self) -> (crate::bulk::BulkStats, crate::bulk::BulkStats) {
        let of = |side: &Option<BulkStream<T, O>>| side.as_ref().map(BulkStream::stats);
        (
            of(&self.datagrams).unwrap_or_default(),
            of(&self.streams).unwrap_or_default(),
        )
    }
}

impl<T, O> Stream for MixedBulk<T, O> {
    type Item = BulkResult<T, O>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        this.streams_first = !this.streams_first;
        let order = if this.streams_first {
            [&mut this.streams, &mut this.datagrams]
        } else {
            [&mut this.datagrams, &mut this.streams]
        };
        for side in order {
            if let Some(results) = side {
                match Pin::new(results).poll_next(cx) {
                    Poll::Ready(Some(done)) => return Poll::Ready(Some(done)),
                    Poll::Ready(None) => *side = None,
                    Poll::Pending => {}
                }
            }
        }
        if this.datagrams.is_some() || this.streams.is_some() {
            return Poll::Pending;
        }
        // Both sides ended, so the router did: if it ended by a panic (of the target
        // stream), let the consumer see it rather than a run cut short.
        if let Poll::Ready(Err(e)) = Pin::new(&mut this.router).poll(cx) {
            if e.is_panic() {
                std::panic::resume_unwind(e.into_panic());
            }
        }
        Poll::Ready(None)
    }
}

impl<T, O> Drop for MixedBulk<T, O> {
    fn drop(&mut self) {
        self.router.abort();
    }
}

impl<T, O> std::fmt::Debug for MixedBulk<T, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MixedBulk")
            .field("connections", &self.connections)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}
