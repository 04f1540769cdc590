//! Responder throughput: a closed-loop load generator against a responder on loopback.
//!
//! Each of `clients` sockets (one source port each) runs query pairs back to back: a
//! challenge request, then a query request with the challenge it got, each waiting for its
//! reply (SQP's, or for the A2S subject an INFO request without a challenge, then with it). The same clients run against a bare tokio echo server, which answers each datagram
//! with itself: it does the socket work and nothing else, so its rate stands for the socket
//! layer's limit on this machine, and a responder's rate divided by it says how much the
//! protocol work costs on top.
//!
//! The responder runs on one thread (a current-thread runtime, as an embedding game server
//! would run it) and the load generator on another; with two or more cores each is pinned to
//! its own. Only replies received inside the measuring window count, after a warm-up; the CPU
//! time of both threads is read at the window's edges.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use query_net::driver;
use query_net::limit::StatsSnapshot;
use query_net::state::SharedState;
use query_specs::a2s;
use serde::Serialize;
use tokio::net::UdpSocket;
use tokio_util::sync::CancellationToken;

use crate::cpu::{pin_current_thread, ThreadCpu};
use crate::requests::{self, A2S_KIND_AT, SQP_CHALLENGE, SQP_QUERY};
use crate::subjects;

/// What answers the load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Subject {
    /// A bare tokio UDP echo server: the socket layer's limit.
    Echo,
    /// The SQP responder under `driver::serve` (batched system calls on Linux).
    Sqp,
    /// The SQP responder under `driver::serve_plain_with`: one system call per datagram.
    SqpPlain,
    /// The all-protocols responder under `driver::serve`, fed the same SQP load.
    All,
    /// The A2S responder under `driver::serve`, fed INFO challenge and INFO pairs.
    A2s,
    /// The echo server again, fed the pipelined SA:MP `i` load.
    EchoPipelined,
    /// The SA:MP responder under `driver::serve_segmented_with` (`gsq serve --gso`), fed the
    /// pipelined `i` load: batched calls, each port's replies leaving segmented.
    SampPipelined,
    /// The same under `driver::serve` (the default): batched calls, every reply a message of
    /// its own, as replies to distinct clients go anyway.
    SampPipelinedUnsegmented,
}

impl Subject {
    /// The name in reports.
    pub fn label(self) -> &'static str {
        match self {
            Subject::Echo => "tokio UDP echo",
            Subject::Sqp => "SQP responder",
            Subject::SqpPlain => "SQP responder, one call per datagram",
            Subject::All => "all-protocols responder (SQP load)",
            Subject::A2s => "A2S responder (INFO load)",
            Subject::EchoPipelined => "tokio UDP echo, pipelined load",
            Subject::SampPipelined => "SA:MP responder with --gso, pipelined `i` load",
            Subject::SampPipelinedUnsegmented => "SA:MP responder, pipelined `i` load",
        }
    }

    /// What the load generator sends it.
    fn load(self) -> LoadKind {
        match self {
            Subject::A2s => LoadKind::A2sInfo,
            Subject::EchoPipelined | Subject::SampPipelined | Subject::SampPipelinedUnsegmented => {
                LoadKind::SampPipelined
            }
            Subject::Echo | Subject::Sqp | Subject::SqpPlain | Subject::All => LoadKind::Sqp,
        }
    }
}

/// How hard and how long to drive a subject.
#[derive(Debug, Clone, Copy)]
pub struct LoadConfig {
    /// Client sockets, each with one query pair in flight (the pipelined load has its own
    /// sockets).
    pub clients: usize,
    /// Time before the measuring window, for buffers and caches to settle.
    pub warmup: Duration,
    /// The measuring window.
    pub duration: Duration,
    /// How long a client waits for a reply before counting it lost and starting over.
    pub reply_timeout: Duration,
    /// Pin the responder and the load generator to separate cores.
    pub pin: bool,
}

/// The figures of one subject.
#[derive(Debug, Clone, Serialize)]
pub struct Throughput {
    /// What was measured.
    pub subject: Subject,
    /// Client sockets (each with one request in flight, or for the pipelined load,
    /// `PIPELINE_DEPTH`).
    pub clients: usize,
    /// The measuring window in seconds.
    pub seconds: f64,
    /// Replies received in the window.
    pub replies: u64,
    /// `replies / seconds`.
    pub replies_per_sec: f64,
    /// The rate of each round, to show how steady it was.
    pub rounds_per_sec: Vec<f64>,
    /// Median time from a request's send to its reply, in microseconds.
    pub p50_us: f64,
    /// 99th percentile of the same.
    pub p99_us: f64,
    /// Responder thread CPU time per reply, in nanoseconds.
    pub server_ns_per_reply: f64,
    /// Share of the window the responder thread was on a CPU (1.0: it was the bottleneck).
    pub server_busy: f64,
    /// Load-generator thread CPU time per reply, in nanoseconds.
    pub client_ns_per_reply: f64,
    /// Share of the window the load generator was on a CPU.
    pub client_busy: f64,
    /// Requests whose reply did not come within the reply timeout (whole run).
    pub timeouts: u64,
    /// The responder's own counters (not for the echo server).
    pub server_stats: Option<StatsSnapshot>,
}

/// Measures every subject under the load `config` describes, in `rounds` interleaved
/// rounds (echo, SQP, all, echo, SQP, all, ...) of `config.duration / rounds` each, so that a
/// disturbance from elsewhere on the machine falls on all subjects alike. Each subject's
/// figures add up its rounds; `rounds_per_sec` shows their spread.
pub fn measure(
    subjects: &[Subject],
    config: LoadConfig,
    rounds: u32,
) -> io::Result<Vec<Throughput>> {
    let rounds = rounds.max(1);
    let round = LoadConfig {
        duration: config.duration / rounds,
        ..config
    };
    let mut measured: Vec<Vec<Round>> = vec![Vec::new(); subjects.len()];
    for _ in 0..rounds {
        for (i, &subject) in subjects.iter().enumerate() {
            measured[i].push(measure_round(subject, round)?);
        }
    }
    Ok(subjects
        .iter()
        .zip(measured)
        .map(|(&subject, rounds)| {
            Round::combine(subject, subject.load().sockets(config.clients), rounds)
        })
        .collect())
}

/// One subject's figures over one window.
#[derive(Debug, Clone)]
struct Round {
    seconds: f64,
    latencies_ns: Vec<u32>,
    server_cpu: Duration,
    client_cpu: Duration,
    timeouts: u64,
    server_stats: Option<StatsSnapshot>,
}

impl Round {
    fn combine(subject: Subject, clients: usize, rounds: Vec<Round>) -> Throughput {
        let seconds: f64 = rounds.iter().map(|r| r.seconds).sum();
        let rounds_per_sec: Vec<f64> = rounds
            .iter()
            .map(|r| r.latencies_ns.len() as f64 / r.seconds)
            .collect();
        let server_cpu: Duration = rounds.iter().map(|r| r.server_cpu).sum();
        let client_cpu: Duration = rounds.iter().map(|r| r.client_cpu).sum();
        let timeouts = rounds.iter().map(|r| r.timeouts).sum();
        let server_stats = rounds.last().and_then(|r| r.server_stats);
        let mut latencies: Vec<u32> = rounds.into_iter().flat_map(|r| r.latencies_ns).collect();
        latencies.sort_unstable();
        let replies = latencies.len() as u64;
        let per_reply = |spent: Duration| spent.as_nanos() as f64 / replies.max(1) as f64;
        let busy = |spent: Duration| spent.as_secs_f64() / seconds;
        Throughput {
            subject,
            clients,
            seconds,
            replies,
            replies_per_sec: replies as f64 / seconds,
            rounds_per_sec,
            p50_us: percentile(&latencies, 50.0) / 1e3,
            p99_us: percentile(&latencies, 99.0) / 1e3,
            server_ns_per_reply: per_reply(server_cpu),
            server_busy: busy(server_cpu),
            client_ns_per_reply: per_reply(client_cpu),
            client_busy: busy(client_cpu),
            timeouts,
            server_stats,
        }
    }
}

fn measure_round(subject: Subject, config: LoadConfig) -> io::Result<Round> {
    let server = Server::start(subject, config.pin)?;
    let setup = Duration::from_millis(200);
    let window_start = Instant::now() + setup + config.warmup;
    let window = Window {
        start: window_start,
        end: window_start + config.duration,
    };
    let load = Load::start(server.addr, subject.load(), config, window)?;

    sleep_until(window.start);
    let (server_cpu0, client_cpu0) = (server.cpu.used()?, load.cpu.used()?);
    sleep_until(window.end);
    let (server_cpu1, client_cpu1) = (server.cpu.used()?, load.cpu.used()?);

    let tally = load.finish()?;
    let server_stats = server.stop()?;
    Ok(Round {
        seconds: config.duration.as_secs_f64(),
        latencies_ns: tally.latencies_ns,
        server_cpu: server_cpu1 - server_cpu0,
        client_cpu: client_cpu1 - client_cpu0,
        timeouts: tally.timeouts,
        server_stats,
    })
}

/// The value below which `pct` percent of the sorted `values` lie (nearest rank), as f64.
fn percentile(sorted: &[u32], pct: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((pct / 100.0) * sorted.len() as f64).ceil() as usize;
    f64::from(sorted[rank.clamp(1, sorted.len()) - 1])
}

fn sleep_until(deadline: Instant) {
    let now = Instant::now();
    if deadline > now {
        std::thread::sleep(deadline - now);
    }
}

fn current_thread_runtime() -> io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

/// The responder side: one thread, one socket.
struct Server {
    addr: SocketAddr,
    cpu: ThreadCpu,
    stop: CancellationToken,
    thread: JoinHandle<io::Result<Option<StatsSnapshot>>>,
}

impl Server {
    fn start(subject: Subject, pin: bool) -> io::Result<Self> {
        let stop = CancellationToken::new();
        let (ready_tx, ready_rx) = mpsc::channel();
        let thread_stop = stop.clone();
        let thread = std::thread::Builder::new()
            .name(format!("{subject:?} responder"))
            .spawn(move || {
                if pin {
                    pin_current_thread(0)?;
                }
                let runtime = current_thread_runtime()?;
                runtime.block_on(async move {
                    let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).await?;
                    // The receiver may have gone if the caller failed meanwhile: nothing to do.
                    let _ = ready_tx.send((socket.local_addr()?, ThreadCpu::current()));
                    serve(subject, &socket, &thread_stop).await
                })
            })?;
        let (addr, cpu) = ready_rx
            .recv()
            .map_err(|_| io::Error::other("the responder thread failed to start"))?;
        Ok(Server {
            addr,
            cpu,
            stop,
            thread,
        })
    }

    fn stop(self) -> io::Result<Option<StatsSnapshot>> {
        self.stop.cancel();
        self.thread
            .join()
            .map_err(|_| io::Error::other("the responder thread panicked"))?
    }
}

async fn serve(
    subject: Subject,
    socket: &UdpSocket,
    stop: &CancellationToken,
) -> io::Result<Option<StatsSnapshot>> {
    let state = SharedState::new(subjects::server_state());
    match subject {
        Subject::Echo | Subject::EchoPipelined => echo(socket, stop).await.map(|()| None),
        Subject::SampPipelined => {
            let mut service = subjects::unlimited(subjects::samp(&state));
            #[cfg(target_os = "linux")]
            driver::serve_segmented_with(socket, &mut service, stop, |_, _| {}).await?;
            #[cfg(not(target_os = "linux"))]
            driver::serve(socket, &mut service, stop).await?;
            Ok(Some(service.stats().snapshot()))
        }
        Subject::SampPipelinedUnsegmented => {
            let mut service = subjects::unlimited(subjects::samp(&state));
            driver::serve(socket, &mut service, stop).await?;
            Ok(Some(service.stats().snapshot()))
        }
        Subject::Sqp => {
            let mut service = subjects::unlimited(subjects::sqp(&state));
            driver::serve(socket, &mut service, stop).await?;
            Ok(Some(service.stats().snapshot()))
        }
        Subject::SqpPlain => {
            let mut service = subjects::unlimited(subjects::sqp(&state));
            driver::serve_plain_with(socket, &mut service, stop, |_, _| {}).await?;
            Ok(Some(service.stats().snapshot()))
        }
        Subject::All => {
            let mut service = subjects::unlimited(subjects::all_protocols(&state));
            driver::serve(socket, &mut service, stop).await?;
            Ok(Some(service.stats().snapshot()))
        }
        Subject::A2s => {
            let mut service = subjects::unlimited(subjects::a2s(&state));
            driver::serve(socket, &mut service, stop).await?;
            Ok(Some(service.stats().snapshot()))
        }
    }
}

/// The baseline: every datagram goes back where it came from, unchanged.
async fn echo(socket: &UdpSocket, stop: &CancellationToken) -> io::Result<()> {
    let mut buf = vec![0u8; driver::RECV_BUFFER];
    let cancelled = stop.cancelled();
    tokio::pin!(cancelled);
    loop {
        let (len, from) = tokio::select! {
            biased;
            received = socket.recv_from(&mut buf) => received?,
            () = &mut cancelled => return Ok(()),
        };
        // A refused send is the client's problem; an echo server carries on.
        let _ = socket.send_to(&buf[..len], from).await;
    }
}

#[derive(Debug, Clone, Copy)]
struct Window {
    start: Instant,
    end: Instant,
}

/// What the load generator saw.
#[derive(Debug, Default)]
struct Tally {
    /// Round trip of every reply received in the window.
    latencies_ns: Vec<u32>,
    timeouts: u64,
}

impl Tally {
    fn merge(&mut self, other: Tally) {
        self.latencies_ns.extend(other.latencies_ns);
        self.timeouts += other.timeouts;
    }
}

/// The load-generator side: one thread, `clients` sockets.
struct Load {
    cpu: ThreadCpu,
    /// Lets the thread exit: it waits, so that its CPU time can be read after the window.
    release: mpsc::Sender<()>,
    thread: JoinHandle<io::Result<Tally>>,
}

impl Load {
    fn start(
        server: SocketAddr,
        kind: LoadKind,
        config: LoadConfig,
        window: Window,
    ) -> io::Result<Self> {
        let (ready_tx, ready_rx) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("load generator".to_owned())
            .spawn(move || {
                if config.pin {
                    pin_current_thread(1)?;
                }
                let _ = ready_tx.send(ThreadCpu::current());
                let tally = current_thread_runtime()?.block_on(async move {
                    let timeout = config.reply_timeout;
                    let clients: Vec<_> = (0..kind.sockets(config.clients))
                        .map(|_| match kind {
                            LoadKind::Sqp => tokio::spawn(sqp_pairs(server, window, timeout)),
                            LoadKind::A2sInfo => {
                                tokio::spawn(a2s_info_pairs(server, window, timeout))
                            }
                            LoadKind::SampPipelined => {
                                tokio::spawn(samp_pipelined(server, window, timeout))
                            }
                        })
                        .collect();
                    let mut tally = Tally::default();
                    for client in clients {
                        tally.merge(client.await.map_err(io::Error::other)??);
                    }
                    Ok(tally)
                });
                // A thread that has exited has no CPU counter left to read: wait to be let go.
                let _ = released.recv();
                tally
            })?;
        let cpu = ready_rx
            .recv()
            .map_err(|_| io::Error::other("the load generator failed to start"))?;
        Ok(Load {
            cpu,
            release,
            thread,
        })
    }

    fn finish(self) -> io::Result<Tally> {
        let _ = self.release.send(());
        self.thread
            .join()
            .map_err(|_| io::Error::other("the load generator panicked"))?
    }
}

/// The requests a load generator sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LoadKind {
    /// SQP challenge and query pairs.
    Sqp,
    /// A2S INFO without a challenge, then with the one it got.
    A2sInfo,
    /// SA:MP `i` requests, [`PIPELINE_DEPTH`] in flight per socket, sent with one
    /// `sendmmsg` and read with one `recvmmsg` per batch where the platform has them.
    SampPipelined,
}

impl LoadKind {
    /// The client sockets this load opens when asked for `clients`.
    fn sockets(self, clients: usize) -> usize {
        match self {
            LoadKind::SampPipelined => PIPELINE_SOCKETS,
            LoadKind::Sqp | LoadKind::A2sInfo => clients,
        }
    }
}

/// Requests one socket of the pipelined load keeps in flight.
const PIPELINE_DEPTH: usize = 64;

/// Sockets of the pipelined load (whatever `clients` says): with [`PIPELINE_DEPTH`] each,
/// few enough that the replies in flight fit the sockets' receive buffers.
const PIPELINE_SOCKETS: usize = 2;

/// Which replies a step waits for: those with `kind` at `offset`.
#[derive(Debug, Clone, Copy)]
struct Expect {
    offset: usize,
    kind: u8,
}

/// One client: SQP challenge and query pairs from one source port until the window closes.
async fn sqp_pairs(server: SocketAddr, window: Window, timeout: Duration) -> io::Result<Tally> {
    let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).await?;
    socket.connect(server).await?;
    let challenge_request = requests::sqp_challenge();
    let mut buf = vec![0u8; driver::RECV_BUFFER];
    let mut tally = Tally::default();
    while Instant::now() < window.end {
        let Some(len) = exchange(
            &socket,
            &challenge_request,
            Expect {
                offset: 0,
                kind: SQP_CHALLENGE,
            },
            &mut buf,
            timeout,
            window,
            &mut tally,
        )
        .await?
        else {
            continue;
        };
        let challenge = requests::sqp_challenge_of(&buf[..len])
            .ok_or_else(|| io::Error::other("the subject's challenge reply does not decode"))?;
        let query_request = requests::sqp_query(challenge);
        exchange(
            &socket,
            &query_request,
            Expect {
                offset: 0,
                kind: SQP_QUERY,
            },
            &mut buf,
            timeout,
            window,
            &mut tally,
        )
        .await?;
    }
    Ok(tally)
}

/// One client: A2S INFO without a challenge, then with the challenge it got, from one source
/// port until the window closes (the benchmark state's INFO is one datagram).
async fn a2s_info_pairs(
    server: SocketAddr,
    window: Window,
    timeout: Duration,
) -> io::Result<Tally> {
    let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).await?;
    socket.connect(server).await?;
    let (challenge_request, challenge_len) = requests::a2s_info(None);
    let mut buf = vec![0u8; driver::RECV_BUFFER];
    let mut tally = Tally::default();
    while Instant::now() < window.end {
        let Some(len) = exchange(
            &socket,
            &challenge_request[..challenge_len],
            Expect {
                offset: A2S_KIND_AT,
                kind: a2s::KIND_CHALLENGE,
            },
            &mut buf,
            timeout,
            window,
            &mut tally,
        )
        .await?
        else {
            continue;
        };
        let challenge = requests::a2s_challenge_of(&buf[..len])
            .ok_or_else(|| io::Error::other("the subject's challenge reply does not decode"))?;
        let (info_request, info_len) = requests::a2s_info(Some(challenge));
        exchange(
            &socket,
            &info_request[..info_len],
            Expect {
                offset: A2S_KIND_AT,
                kind: a2s::KIND_INFO,
            },
            &mut buf,
            timeout,
            window,
            &mut tally,
        )
        .await?;
    }
    Ok(tally)
}

/// One socket of the pipelined load: SA:MP `i` requests numbered in the header's address
/// field (which the server copies into its reply, and an echo returns as is), up to
/// [`PIPELINE_DEPTH`] in flight, sent and read in batches. The pair-by-pair clients above pay
/// one system call per datagram, as one server-list client would; a load generator that
/// batches its own calls is what shows whether a responder's batching pays.
async fn samp_pipelined(
    server: SocketAddr,
    window: Window,
    timeout: Duration,
) -> io::Result<Tally> {
    use query_net::batch::{RecvBatch, SendBatch};
    use query_specs::samp::{HEADER_LEN, OP_INFO};

    let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).await?;
    let SocketAddr::V4(server_v4) = server else {
        return Err(io::Error::other("the pipelined load needs an IPv4 server"));
    };
    let template = requests::samp(server_v4, OP_INFO);
    // Send instants by sequence number modulo the ring; a reply counts once, if its slot
    // still holds its number.
    let mut sent_at: Vec<Option<(u32, Instant)>> = vec![None; PIPELINE_DEPTH * 4];
    let slot = |seq: u32| seq as usize % (PIPELINE_DEPTH * 4);
    let (mut next, mut in_flight) = (0u32, 0usize);
    let mut sends = SendBatch::new(template.len());
    let mut received = RecvBatch::new();
    let mut tally = Tally::default();
    let mut next_sweep = Instant::now() + timeout / 4;
    while Instant::now() < window.end {
        while in_flight < PIPELINE_DEPTH {
            let mut request = template;
            request[4..8].copy_from_slice(&next.to_le_bytes());
            if !sends.push(&request, server) {
                break;
            }
            // A slot still taken holds a request the ring has come round to: lost.
            if sent_at[slot(next)]
                .replace((next, Instant::now()))
                .is_some()
            {
                tally.timeouts += 1;
                in_flight = in_flight.saturating_sub(1);
            }
            next = next.wrapping_add(1);
            in_flight += 1;
        }
        sends.flush(&socket, |_, _| {}).await;
        let deadline = Instant::now() + timeout;
        let count = loop {
            match tokio::time::timeout_at(deadline.into(), socket.readable()).await {
                Err(_elapsed) => break 0,
                Ok(ready) => ready?,
            }
            match received.recv(&socket) {
                Ok(count) => break count,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        };
        let now = Instant::now();
        if count == 0 || now >= next_sweep {
            // Requests unanswered for a whole timeout are lost: their slots are freed.
            for entry in &mut sent_at {
                if entry.is_some_and(|(_, sent)| now - sent >= timeout) {
                    *entry = None;
                    tally.timeouts += 1;
                    in_flight = in_flight.saturating_sub(1);
                }
            }
            next_sweep = now + timeout / 4;
        }
        for i in 0..count {
            let (_, reply) = received.datagram(i);
            if reply.len() < HEADER_LEN || reply[HEADER_LEN - 1] != OP_INFO {
                continue;
            }
            let seq = u32::from_le_bytes([reply[4], reply[5], reply[6], reply[7]]);
            let Some((expected, sent)) = sent_at[slot(seq)] else {
                continue;
            };
            if expected != seq {
                continue;
            }
            sent_at[slot(seq)] = None;
            in_flight = in_flight.saturating_sub(1);
            if now >= window.start && now < window.end {
                let rtt = now - sent;
                tally
                    .latencies_ns
                    .push(u32::try_from(rtt.as_nanos()).unwrap_or(u32::MAX));
            }
        }
    }
    Ok(tally)
}

/// Sends `request` and waits for a reply of the kind `expect` says; the reply's length, or
/// `None` if none came in time. Replies of another kind (late ones) are skipped.
async fn exchange(
    socket: &UdpSocket,
    request: &[u8],
    expect: Expect,
    buf: &mut [u8],
    timeout: Duration,
    window: Window,
    tally: &mut Tally,
) -> io::Result<Option<usize>> {
    let sent = Instant::now();
    socket.send(request).await?;
    let deadline = sent + timeout;
    loop {
        match tokio::time::timeout_at(deadline.into(), socket.recv(buf)).await {
            Err(_elapsed) => {
                tally.timeouts += 1;
                return Ok(None);
            }
            Ok(Ok(len)) if len > expect.offset && buf[expect.offset] == expect.kind => {
                let received = Instant::now();
                if received >= window.start && received < window.end {
                    let rtt = received - sent;
                    tally
                        .latencies_ns
                        .push(u32::try_from(rtt.as_nanos()).unwrap_or(u32::MAX));
                }
                return Ok(Some(len));
            }
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_is_the_nearest_rank() {
        let values: Vec<u32> = (1..=100).collect();
        assert_eq!(percentile(&values, 50.0), 50.0);
        assert_eq!(percentile(&values, 99.0), 99.0);
        assert_eq!(percentile(&values, 100.0), 100.0);
        assert_eq!(percentile(&[7], 1.0), 7.0);
        assert!(percentile(&[], 50.0).is_nan());
    }
}
