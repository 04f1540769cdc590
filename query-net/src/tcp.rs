//! The tokio layer for [`stream`](crate::stream) sessions: [`run_stream`] runs a
//! [`StreamSession`] over a `TcpStream`.

use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::address::HostPort;
use crate::driver::Target;
use crate::engines::frostbite::FrostbiteSession;
use crate::engines::minecraft::{JavaSession, LegacyPing, LegacySession, LEGACY_KICK};
use crate::engines::teamspeak3::Ts3Session;
use crate::error::QueryError;
use crate::options::Options;
use crate::protocol::Protocol;
use crate::srv::SrvResolver;
use crate::status::ServerStatus;
use crate::stream::StreamSession;

/// Bytes read from the socket at a time: what a session is handed at most per call, so that
/// a peer's bytes reach a session's frame cap in bounded steps.
pub const READ_CHUNK: usize = 8 * 1024;

/// What [`QueryError::Timeout`] names when the TCP connection was not made in time.
pub const CONNECTING: &str = "TCP connection request";

/// The limits of one stream query: the connect timeout, the overall deadline (connecting
/// included) and the most bytes read from the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    /// How long the TCP handshake may take.
    pub connect_timeout: Duration,
    /// How long the whole exchange may take, from the start of the connect.
    pub deadline: Duration,
    /// The most bytes read from the server in all.
    pub max_bytes: usize,
}

impl StreamLimits {
    /// [`Options::timeout`] to connect (each attempt's wait, as a datagram query has),
    /// [`Options::deadline`] and [`Options::max_reply_bytes`].
    pub fn from_options(options: &Options) -> Self {
        StreamLimits {
            connect_timeout: options.timeout,
            deadline: options.deadline,
            max_bytes: options.max_reply_bytes,
        }
    }
}

/// Connects to `target` and runs `session` over the connection until it has its result.
///
/// The connect must finish within [`StreamLimits::connect_timeout`], and everything within
/// [`StreamLimits::deadline`] from the start ([`QueryError::Timeout`] waiting for
/// [`CONNECTING`], or [`QueryError::Deadline`]); a server that sends more than
/// [`StreamLimits::max_bytes`] ends it with an error. The connection is closed when the
/// function returns: reset (an abortive close) once the session has its result, since nothing
/// more is wanted from it, which spares both sides the FIN exchange and the closing side its
/// `TIME_WAIT` socket.
///
/// Nagle's algorithm stays on (no `TCP_NODELAY`): it holds a small write back only while
/// earlier bytes are unacknowledged, and every session writes its request whole, then writes
/// again only after the peer's answer, which acknowledges it; so no write waits.
///
/// ```no_run
/// use query_net::engines::minecraft::LegacySession;
/// use query_net::tcp::{run_stream, StreamLimits};
/// use query_net::Options;
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let target = "203.0.113.5:25565".parse().unwrap();
/// let options = Options::default();
/// let session = LegacySession::new(target, &options);
/// let status = run_stream(target, session, StreamLimits::from_options(&options)).await?;
/// println!("{}", status.name);
/// # Ok(())
/// # }
/// ```
pub async fn run_stream<S: StreamSession>(
    target: SocketAddr,
    session: S,
    limits: StreamLimits,
) -> Result<S::Output, QueryError> {
    let started = Instant::now();
    let ends_at = started + limits.deadline;
    let connect_by = ends_at.min(started + limits.connect_timeout);
    let connect = tokio::time::timeout_at(connect_by.into(), TcpStream::connect(target));
    let mut stream = match connect.await {
        Ok(Ok(connected)) => connected,
        Ok(Err(e)) if e.kind() == io::ErrorKind::ConnectionRefused => {
            return Err(QueryError::ConnectionRefused { target })
        }
        Ok(Err(e)) => return Err(e.into()),
        Err(_) => {
            return Err(QueryError::Timeout {
                waiting_for: CONNECTING,
                attempts: 1,
                after: started.elapsed(),
            })
        }
    };
    let deadline = QueryError::Deadline {
        waiting_for: "request",
        attempts: 1,
        after: limits.deadline,
    };
    match tokio::time::timeout_at(ends_at.into(), exchange(&mut stream, session, limits)).await {
        Ok(result) => result,
        Err(_) => Err(deadline),
    }
}

async fn exchange<S: StreamSession>(
    stream: &mut TcpStream,
    mut session: S,
    limits: StreamLimits,
) -> Result<S::Output, QueryError> {
    let mut buf = vec![0u8; READ_CHUNK];
    let mut received = 0usize;
    let mut eof = false;
    loop {
        let now = Instant::now();
        while let Some(bytes) = session.poll_transmit(now) {
            stream.write_all(bytes).await?;
        }
        if let Some(result) = session.poll_result() {
            // Whatever else the peer would send is not wanted: reset on close. Best effort;
            // a socket that refuses it closes as usual.
            let _ = stream.set_zero_linger();
            return result;
        }
        let wake = session.poll_timeout();
        if eof && wake.is_none() {
            return Err(QueryError::protocol(
                "the session neither finished at the end of the stream nor asked to be woken up",
            ));
        }
        let sleep = async {
            match wake {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            read = stream.read(&mut buf), if !eof => match read {
                Ok(0) => {
                    eof = true;
                    session.handle_eof(Instant::now());
                }
                Ok(len) => {
                    received = received.saturating_add(len);
                    if received > limits.max_bytes {
                        return Err(QueryError::protocol(format!(
                            "the server sent more than the {} bytes one query may hold",
                            limits.max_bytes
                        )));
                    }
                    session.handle_bytes(&buf[..len], Instant::now());
                }
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset && received > 0 => {
                    // Some servers reset the connection right after their last byte.
                    eof = true;
                    session.handle_eof(Instant::now());
                }
                Err(e) => return Err(e.into()),
            },
            () = sleep => session.handle_timeout(Instant::now()),
        }
    }
}

/// Queries a Minecraft Java server (port 25565 unless `target` names one): the status ping of
/// 1.7 and later, then, if the server does not speak it (it kicks, closes the connection or
/// sends what is no status), the 1.6 legacy ping, which servers back to Beta 1.8 answer. Both
/// tries share [`Options::deadline`]; a timeout or a refused connection is not retried.
/// When both fail, the status ping's error is returned (the legacy ping's, if the server
/// kicked the status ping as pre-1.7 servers do). A name without a port is looked up as
/// its `_minecraft._tcp` SRV record first ([`srv`](crate::srv)), with the system's resolver.
///
/// ```no_run
/// use query_net::{tcp, Options};
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let status = tcp::query_minecraft("mc.example.org", &Options::default()).await?;
/// println!("{} ({}/{}), {:.0} ms", status.name, status.num_players, status.max_players, status.ping_ms);
/// # Ok(())
/// # }
/// ```
pub async fn query_minecraft(
    target: impl Into<Target>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    let target = target.into();
    let wants_srv = match &target {
        Target::Name(text) => text
            .parse::<HostPort>()
            .is_ok_and(|host| host.is_name() && host.port().is_none()),
        Target::Host(host) => host.is_name() && host.port().is_none(),
        Target::Addr(_) => false,
    };
    // Without a readable DNS configuration, the name is looked up as any other.
    let resolver = wants_srv.then(SrvResolver::system).and_then(Result::ok);
    query_minecraft_with(target, resolver.as_ref(), options).await
}

/// [`query_minecraft`], with the SRV records (if any) asked of `resolver`.
pub async fn query_minecraft_with(
    target: impl Into<Target>,
    resolver: Option<&SrvResolver>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    let target = target.into();
    let port = Protocol::Minecraft.default_port();
    let host = match &target {
        Target::Name(text) => Some(text.parse::<HostPort>()?),
        Target::Host(host) => Some(host.clone()),
        Target::Addr(_) => None,
    };
    let address = match (&host, resolver) {
        (Some(host), Some(resolver)) => resolver.resolve_minecraft(host).await?,
        _ => target.resolve(port).await?,
    };
    let name = host.map_or_else(|| address.ip().to_string(), |host| host.host());
    query_minecraft_at(address, &name, options).await
}

/// Queries the Minecraft Java server at `address` as [`query_minecraft`] does; `host` is the
/// name it was found by, which the handshake carries (proxies route by it).
pub async fn query_minecraft_at(
    address: SocketAddr,
    host: &str,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    let started = Instant::now();
    let limits = StreamLimits::from_options(options);
    let session = JavaSession::new(address, host, options);
    let error = match run_stream(address, session, limits).await {
        Ok(status) => return Ok(status),
        Err(error) if !falls_back(&error) => return Err(error),
        Err(error) => error,
    };
    let left = limits.deadline.saturating_sub(started.elapsed());
    let legacy = LegacySession::with_request(
        address,
        LegacyPing::V1_6 {
            host: host.to_owned(),
            port: address.port(),
        },
    );
    let limits = StreamLimits {
        deadline: left,
        ..limits
    };
    let kicked = matches!(&error, QueryError::Protocol(m) if m == LEGACY_KICK);
    run_stream(address, legacy, limits)
        .await
        .map_err(|legacy_error| if kicked { legacy_error } else { error })
}

/// Queries `address` in a stream protocol: Minecraft's status ping (with its fallback, `host`
/// being the name the handshake carries), Frostbite or TeamSpeak 3, each over one TCP
/// connection within [`StreamLimits::from_options`].
pub async fn query_stream_at(
    protocol: Protocol,
    address: SocketAddr,
    host: &str,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    let limits = StreamLimits::from_options(options);
    match protocol {
        Protocol::Minecraft => query_minecraft_at(address, host, options).await,
        Protocol::Frostbite => run_stream(address, FrostbiteSession::new(address), limits).await,
        Protocol::TeamSpeak3 => {
            let session =
                Ts3Session::new(address, options.virtual_server, options.query_login.clone());
            run_stream(address, session, limits).await
        }
        datagram => Err(QueryError::Unsupported(datagram)),
    }
}

/// Whether a failed status ping is worth a legacy ping: the server answered, but not in the
/// 1.7 protocol.
fn falls_back(error: &QueryError) -> bool {
    matches!(error, QueryError::Protocol(_) | QueryError::Malformed(_))
}

/// The caps a TCP listener holds every connection to, so that it cannot be held open or made
/// to buffer: connections in total and per source address, how long a peer may stay silent,
/// how long a whole exchange may take (a peer that drips a byte a second is cut), and the
/// bytes read at a time (the responder caps its frames).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListenerLimits {
    /// Connections open at once; more are closed as soon as they are accepted.
    pub max_connections: usize,
    /// Connections open at once from one IP address.
    pub max_per_source: usize,
    /// The longest silence before the connection is cut.
    pub idle_timeout: Duration,
    /// The longest a connection may stay open, whatever it sends.
    pub session_timeout: Duration,
}

impl Default for ListenerLimits {
    /// 1,024 connections, 8 per address, 2 s of silence, 5 s in all: a status ping takes two
    /// round trips.
    fn default() -> Self {
        ListenerLimits {
            max_connections: 1024,
            max_per_source: 8,
            idle_timeout: Duration::from_secs(2),
            session_timeout: Duration::from_secs(5),
        }
    }
}

/// What a listener did, for the log and the tests.
#[derive(Debug, Default)]
pub struct ListenerStats {
    /// Connections served to their end.
    pub served: std::sync::atomic::AtomicU64,
    /// Connections closed at accept: over the total or per-source cap.
    pub refused: std::sync::atomic::AtomicU64,
    /// Connections cut for silence or for taking too long.
    pub timed_out: std::sync::atomic::AtomicU64,
}

/// Accepts connections on `listener` and runs a responder made by `new_responder` on each,
/// under `limits`, until `shutdown` is cancelled.
///
/// Accept errors (out of file descriptors, a connection reset before it was accepted) are
/// counted by a short pause, not returned: the listener keeps serving.
pub async fn serve_stream<R, F>(
    listener: tokio::net::TcpListener,
    new_responder: F,
    limits: ListenerLimits,
    stats: std::sync::Arc<ListenerStats>,
    shutdown: tokio_util::sync::CancellationToken,
) where
    R: crate::stream::StreamResponder + Send + 'static,
    F: Fn() -> R,
{
    let serve = |stream, _peer| serve_connection(stream, new_responder(), limits);
    serve_connections(listener, serve, limits, stats, shutdown).await;
}

/// Accepts connections on `listener` under the connection caps of `limits` (in total and per
/// source address) and runs `serve(stream, peer)` on each in a task of its own, until
/// `shutdown` is cancelled. `serve` answers `Err(())` for a connection it cut for silence or
/// for taking too long ([`ListenerStats::timed_out`]); it enforces the timeouts of `limits`
/// itself, as [`serve_stream`] does for a [`StreamResponder`](crate::stream::StreamResponder).
pub async fn serve_connections<S, Fut>(
    listener: tokio::net::TcpListener,
    serve: S,
    limits: ListenerLimits,
    stats: std::sync::Arc<ListenerStats>,
    shutdown: tokio_util::sync::CancellationToken,
) where
    S: Fn(TcpStream, SocketAddr) -> Fut,
    Fut: std::future::Future<Output = Result<(), ()>> + Send + 'static,
{
    use std::sync::atomic::Ordering;
    let open = std::sync::Arc::new(std::sync::Mutex::new(OpenConnections::default()));
    let mut tasks = tokio::task::JoinSet::new();
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => accepted,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => continue,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let ip = peer.ip().to_canonical();
        let admitted = open
            .lock()
            .map(|mut open| open.admit(ip, &limits))
            .unwrap_or(false);
        if !admitted {
            stats.refused.fetch_add(1, Ordering::Relaxed);
            drop(stream);
            continue;
        }
        let connection = serve(stream, peer);
        let open = std::sync::Arc::clone(&open);
        let stats = std::sync::Arc::clone(&stats);
        let stop = shutdown.clone();
        tasks.spawn(async move {
            let outcome = tokio::select! {
                outcome = connection => outcome,
                () = stop.cancelled() => Ok(()),
            };
            match outcome {
                Ok(()) => stats.served.fetch_add(1, Ordering::Relaxed),
                Err(()) => stats.timed_out.fetch_add(1, Ordering::Relaxed),
            };
            if let Ok(mut open) = open.lock() {
                open.release(ip);
            }
        });
    }
    tasks.shutdown().await;
}

#[derive(Debug, Default)]
struct OpenConnections {
    total: usize,
    per_source: std::collections::HashMap<std::net::IpAddr, usize>,
}

impl OpenConnections {
    fn admit(&mut self, ip: std::net::IpAddr, limits: &ListenerLimits) -> bool {
        let from_source = self.per_source.get(&ip).copied().unwrap_or(0);
        if self.total >= limits.max_connections || from_source >= limits.max_per_source {
            return false;
        }
        self.total += 1;
        *self.per_source.entry(ip).or_insert(0) += 1;
        true
    }

    fn release(&mut self, ip: std::net::IpAddr) {
        self.total = self.total.saturating_sub(1);
        if let Some(count) = self.per_source.get_mut(&ip) {
            *count -= 1;
            if *count == 0 {
                self.per_source.remove(&ip);
            }
        }
    }
}

/// One connection: `Err(())` when it was cut for silence or for taking too long.
async fn serve_connection<R: crate::stream::StreamResponder>(
    mut stream: TcpStream,
    mut responder: R,
    limits: ListenerLimits,
) -> Result<(), ()> {
    let ends_at = Instant::now() + limits.session_timeout;
    let exchange = async {
        let mut buf = vec![0u8; READ_CHUNK];
        loop {
            while let Some(bytes) = responder.poll_transmit() {
                if stream.write_all(&bytes).await.is_err() {
                    return Ok(());
                }
            }
            if responder.is_closed() {
                let _ = stream.shutdown().await;
                return Ok(());
            }
            let idle_until = Instant::now() + limits.idle_timeout;
            let wake = responder
                .poll_timeout()
                .map_or(idle_until, |at| at.min(idle_until));
            tokio::select! {
                read = stream.read(&mut buf) => match read {
                    Ok(0) | Err(_) => return Ok(()),
                    Ok(len) => responder.handle_bytes(&buf[..len], Instant::now()),
                },
                () = tokio::time::sleep_until(wake.into()) => {
                    let now = Instant::now();
                    if now >= idle_until {
                        return Err(());
                    }
                    responder.handle_timeout(now);
                }
            }
        }
    };
    tokio::time::timeout_at(ends_at.into(), exchange)
        .await
        .unwrap_or(Err(()))
}
