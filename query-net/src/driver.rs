//! Tokio drivers: the thin layer that moves datagrams between sockets and the sans-I/O engines.
//!
//! - [`query`] resolves a host, picks the protocol's engine and runs it; [`query_blocking`] does
//!   the same for code without an async runtime. [`query_sqp`], [`query_onequery`],
//!   [`query_samp`], [`query_gamespy1`], [`query_a2s`], [`query_quake3`], [`query_gamespy2`],
//!   [`query_gamespy3`], [`query_quake2`], [`query_fivem`], [`query_doom3`], [`query_minecraft`],
//!   [`query_minecraft_query`], [`query_bedrock`], [`query_teeworlds`], [`query_mumble`],
//!   [`query_eye`], [`query_unreal2`], [`query_frostbite`] and [`query_teamspeak3`] do it for one protocol each,
//!   one for every [`Protocol`].
//! - [`run_session`] runs any [`ClientSession`] on a socket you provide.
//! - [`serve`] answers requests with a [`Service`] until told to stop.

use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::sync::Arc;
use std::time::Instant;

use tokio::net::UdpSocket;
use tokio_util::sync::CancellationToken;

use crate::address::HostPort;
use crate::clock::Clock;
use crate::engine::{Bounded, ClientSession, DropReason, Responder, Verdict};
use crate::engines;
use crate::engines::a2s::A2sClient;
use crate::engines::gamespy1::GameSpy1Session;
use crate::engines::onequery::OneQueryClient;
use crate::engines::samp::SampSession;
use crate::engines::sqp::SqpClient;
use crate::error::QueryError;
use crate::learned::Learned;
use crate::limit::Stats;
use crate::options::Options;
use crate::protocol::Protocol;
use crate::refusal::{is_refusal, Refusals};
use crate::service::{classify_recv_error, RecvErrorKind, Service};
use crate::status::ServerStatus;

/// Receive buffer size: the largest datagram a socket can deliver. Real GameSpy replies exceed
/// 1024 bytes; a smaller buffer would silently cut them.
pub const RECV_BUFFER: usize = 65_535;

/// After this many receive errors in a row, [`serve`] pauses a little before each further
/// read, so that an error that repeats without end does not spin the CPU.
const RECV_ERRORS_BEFORE_PAUSING: u32 = 100;
const RECV_ERROR_PAUSE: std::time::Duration = std::time::Duration::from_millis(10);

/// Resolves `address` (`host:port`, `1.2.3.4:port` or `[v6]:port`) to its first address.
pub async fn resolve(address: &str) -> Result<SocketAddr, QueryError> {
    if let Ok(literal) = address.parse::<SocketAddr>() {
        return Ok(literal);
    }
    let resolve_error = |source| QueryError::Resolve {
        host: address.to_owned(),
        source,
    };
    tokio::net::lookup_host(address)
        .await
        .map_err(resolve_error)?
        .next()
        .ok_or_else(|| {
            resolve_error(io::Error::new(
                io::ErrorKind::NotFound,
                "the name has no addresses",
            ))
        })
}

/// Where a query goes: a name or an address, with or without a port, or a socket address.
///
/// Anything the query functions take converts into one: `&str` and `String` (`host`,
/// `host:port`, `1.2.3.4`, `1.2.3.4:port`, `::1`, `[::1]:port`), [`HostPort`], [`SocketAddr`]
/// and `(IpAddr, u16)`. Without a port, the protocol's [default port](Protocol::default_port)
/// is used.
///
/// ```
/// use query_net::driver::Target;
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let named = Target::from("localhost");
/// assert_eq!(named.resolve(7779).await?.port(), 7779);
/// let literal = Target::from("[::1]:5520");
/// assert_eq!(literal.resolve(7779).await?, "[::1]:5520".parse().unwrap());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Target {
    /// A host name or an IP address as text, with an optional port: parsed as a [`HostPort`]
    /// (a malformed one is [`QueryError::Address`]), then looked up if a name.
    Name(String),
    /// A parsed host and optional port: looked up if a name.
    Host(HostPort),
    /// A socket address, used as it is.
    Addr(SocketAddr),
}

impl Target {
    /// The socket address to send to: `default_port` when the target names none.
    pub async fn resolve(&self, default_port: u16) -> Result<SocketAddr, QueryError> {
        match self {
            Target::Addr(addr) => Ok(*addr),
            Target::Host(host) => host.resolve(default_port).await,
            Target::Name(text) => text.parse::<HostPort>()?.resolve(default_port).await,
        }
    }
}

impl From<&str> for Target {
    fn from(text: &str) -> Self {
        Target::Name(text.to_owned())
    }
}

impl From<String> for Target {
    fn from(text: String) -> Self {
        Target::Name(text)
    }
}

impl From<&String> for Target {
    fn from(text: &String) -> Self {
        Target::Name(text.clone())
    }
}

impl From<HostPort> for Target {
    fn from(host: HostPort) -> Self {
        Target::Host(host)
    }
}

impl From<SocketAddr> for Target {
    fn from(addr: SocketAddr) -> Self {
        Target::Addr(addr)
    }
}

impl From<SocketAddrV4> for Target {
    fn from(addr: SocketAddrV4) -> Self {
        Target::Addr(addr.into())
    }
}

impl From<SocketAddrV6> for Target {
    fn from(addr: SocketAddrV6) -> Self {
        Target::Addr(addr.into())
    }
}

impl<I: Into<IpAddr>> From<(I, u16)> for Target {
    fn from((ip, port): (I, u16)) -> Self {
        Target::Addr(SocketAddr::new(ip.into(), port))
    }
}

/// A socket on an ephemeral port of the same address family as `target`.
pub async fn bind_for(target: SocketAddr) -> io::Result<UdpSocket> {
    let local = match target {
        SocketAddr::V4(_) => SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)),
        SocketAddr::V6(_) => SocketAddr::from((Ipv6Addr::UNSPECIFIED, 0)),
    };
    UdpSocket::bind(local).await
}

/// Runs `session` on `socket` until it produces its result.
///
/// Datagrams from other sources are handed to the session, which ignores them; the socket may
/// therefore be shared with nothing else that expects to read it meanwhile.
///
/// Where the socket hears of ICMP "port unreachable" answers to its requests (connected to
/// the target, or with [`report_refusals`](crate::refusal::report_refusals) on Linux), the session resends at once
/// instead of at its timeout, and when its attempts run out with every request refused, the
/// query fails with [`QueryError::NothingListens`]: a closed port fails in a few round
/// trips, not after every timeout (see [`refusal`](crate::refusal) for when a refusal is believed). With
/// `retries` 0 there is a single attempt, so one refusal ends it. A timeout while another
/// address of the target's port sent datagrams is [`QueryError::AnsweredElsewhere`].
pub async fn run_session<S: ClientSession>(
    socket: &UdpSocket,
    mut session: S,
) -> Result<S::Output, QueryError> {
    let target = session.target();
    let mut buf = vec![0u8; RECV_BUFFER];
    let mut seen = Refusals::default();
    loop {
        let now = Instant::now();
        while let Some(datagram) = session.poll_transmit(now) {
            // A send reports (and clears) the refusal of an earlier one, and is itself not
            // made: count the refusal and send again.
            let mut attempt = 0;
            loop {
                match socket.send_to(datagram, target).await {
                    Ok(_) => break,
                    Err(e) if is_refusal(&e) && attempt == 0 => {
                        seen.refused();
                        attempt += 1;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            seen.sent();
        }
        if let Some(result) = session.poll_result() {
            return seen.conclude(target, result);
        }
        let Some(deadline) = session.poll_timeout() else {
            return Err(QueryError::protocol(
                "the engine neither finished nor asked to be woken up",
            ));
        };
        tokio::select! {
            received = socket.recv_from(&mut buf) => match received {
                Ok((len, from)) => {
                    seen.received(from, target);
                    session.handle_datagram(from, &buf[..len], Instant::now());
                }
                // An ICMP "port unreachable" for an earlier send: the attempt is over, so the
                // session moves on (resends, or gives up) as at its timeout, now.
                Err(e) if is_refusal(&e) => {
                    #[cfg(target_os = "linux")]
                    crate::refusal::drain_refused(socket, |_| {});
                    seen.refused();
                    session.handle_timeout(deadline);
                }
                Err(e) => return Err(e.into()),
            },
            () = tokio::time::sleep_until(deadline.into()) => {
                // What arrived before the timer fired counts first: a part waiting in the
                // socket must not be lost to a wait that ends because the task woke late.
                // The timeout still comes unless what was waiting moved it (a flood of
                // foreign datagrams does not), and a bounded number are read here.
                for _ in 0..WAITING_BEFORE_TIMEOUT {
                    let Some((len, from)) = take_waiting(socket, &mut buf) else {
                        break;
                    };
                    seen.received(from, target);
                    session.handle_datagram(from, &buf[..len], Instant::now());
                }
                let now = Instant::now();
                if session.poll_timeout().is_some_and(|due| due <= now) {
                    session.handle_timeout(now);
                }
            }
        }
    }
}

/// How many datagrams already waiting are read before a timeout is handled.
const WAITING_BEFORE_TIMEOUT: usize = 64;

/// A datagram already in `socket`'s receive queue, or `None`.
///
/// Asks the kernel directly rather than the runtime: a task woken late by its timer finds the
/// timer and a datagram ready at once, and the runtime may not have seen that datagram's
/// readiness yet. Errors (a queued ICMP refusal) are left to the next receive.
#[cfg(target_os = "linux")]
fn take_waiting(socket: &UdpSocket, buf: &mut [u8]) -> Option<(usize, SocketAddr)> {
    use std::os::fd::AsRawFd;

    use nix::sys::socket::{recvfrom, SockaddrStorage};

    // The socket is non-blocking: an empty queue is `EAGAIN`, not a wait.
    let (len, from) = recvfrom::<SockaddrStorage>(socket.as_raw_fd(), buf).ok()?;
    let from = from?;
    let from = from
        .as_sockaddr_in()
        .map(|v4| SocketAddr::V4((*v4).into()))
        .or_else(|| {
            from.as_sockaddr_in6()
                .map(|v6| SocketAddr::V6((*v6).into()))
        })?;
    Some((len, from))
}

/// A datagram already in `socket`'s receive queue, as far as the runtime knows, or `None`.
#[cfg(not(target_os = "linux"))]
fn take_waiting(socket: &UdpSocket, buf: &mut [u8]) -> Option<(usize, SocketAddr)> {
    socket.try_recv_from(buf).ok()
}

/// Runs `session` on a socket of its own. The session is run as given: wrap it in a
/// [`Bounded`] for an overall deadline and byte cap (the other query functions do).
///
/// A closed port fails early, with [`QueryError::NothingListens`] (see [`run_session`]): on
/// Linux the socket hears of ICMP errors with `IP_RECVERR` and stays unconnected, so that a
/// reply from another address of the port is seen and named
/// ([`QueryError::AnsweredElsewhere`]); elsewhere it is connected to the target.
pub async fn query_session<S: ClientSession>(session: S) -> Result<S::Output, QueryError> {
    let target = session.target();
    let socket = bind_for(target).await?;
    #[cfg(target_os = "linux")]
    let hears_refusals = crate::refusal::report_refusals(&socket, target.is_ipv6());
    #[cfg(not(target_os = "linux"))]
    let hears_refusals = false;
    if !hears_refusals {
        socket.connect(target).await?;
    }
    run_session(&socket, session).await
}

/// Queries the server at `target` with `protocol`: the one generic call.
///
/// `target` is anything that converts into a [`Target`]: `"host"`, `"host:port"`, an IP
/// address as text, a [`SocketAddr`]... Without a port, the protocol's default one is used.
///
/// ```no_run
/// use query_net::{driver, Options, Protocol};
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let status = driver::query(Protocol::Sqp, "play.example.com:7779", &Options::default()).await?;
/// println!("{} on {:?}: {}/{}", status.name, status.map, status.num_players, status.max_players);
/// # Ok(())
/// # }
/// ```
pub async fn query(
    protocol: Protocol,
    target: impl Into<Target>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    if protocol == Protocol::Minecraft {
        return crate::tcp::query_minecraft(target, options).await;
    }
    let target = target.into().resolve(protocol.default_port()).await?;
    if protocol == Protocol::Fivem {
        return query_fivem_at(target, options).await;
    }
    if protocol.is_stream() {
        return crate::tcp::query_stream_at(protocol, target, "", options).await;
    }
    let session = engines::new_session(protocol, target, options)?;
    query_session(session).await
}

/// Queries `address` in `protocol`, as [`query`] does, with what `learned` holds of the
/// server (see [`engines::new_session_learning`]); `host` is the name the address was found
/// by, which Minecraft Java's handshake carries (proxies route by it).
pub async fn query_at(
    protocol: Protocol,
    address: SocketAddr,
    host: &str,
    options: &Options,
    learned: &Learned,
) -> Result<ServerStatus, QueryError> {
    if protocol.is_stream() {
        return crate::tcp::query_stream_at(protocol, address, host, options).await;
    }
    if protocol == Protocol::Fivem {
        return query_fivem_at(address, options).await;
    }
    let session = engines::new_session_learning(protocol, address, options, learned)?;
    query_session(session).await
}

/// A FiveM query of `address`: `getinfo` over UDP, then, when the server counts players,
/// `/players.json` over TCP on the same port, both within [`Options::deadline`]; see
/// [`engines::fivem`].
async fn query_fivem_at(
    address: SocketAddr,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    let started = std::time::Instant::now();
    let session = engines::new_session(Protocol::Fivem, address, options)?;
    let status = query_session(session).await?;
    if status.num_players == 0 {
        return Ok(status);
    }
    let left = options.deadline.saturating_sub(started.elapsed());
    let max_body = engines::fivem::MAX_PLAYERS_JSON.min(options.max_reply_bytes);
    let body = crate::http::get(
        address,
        query_specs::fivem::PLAYERS_PATH,
        options,
        left,
        max_body,
    )
    .await;
    Ok(engines::fivem::with_players(status, body))
}

/// Queries an SQP server (port 7779 unless `target` names one). Asks for the chunks
/// [`Options::sqp_chunks`] names, ServerInfo alone by default; for other chunk sets without
/// changing the options, run [`SqpClient::with_chunks`] with [`query_session`].
///
/// ```no_run
/// use query_net::engines::sqp::ChunkSet;
/// use query_net::{driver, Options};
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let status = driver::query_sqp("play.example.com", &Options::default()).await?;
/// println!("{}: {}/{}", status.name, status.num_players, status.max_players);
///
/// let everything = Options { sqp_chunks: ChunkSet::all(), ..Options::default() };
/// let status = driver::query_sqp("203.0.113.5:7779", &everything).await?;
/// println!("{} players, {} rules", status.players.len(), status.rules.len());
/// # Ok(())
/// # }
/// ```
pub async fn query_sqp(
    target: impl Into<Target>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    let target = target.into().resolve(Protocol::Sqp.default_port()).await?;
    query_session(Bounded::from_options(
        SqpClient::new(target, options),
        options,
    ))
    .await
}

/// Queries a OneQuery server (port 5520 unless `target` names one): BASIC, then the players
/// when [`Options::players`] is set, with [`Options::auth_token`] if the server wants one.
///
/// ```no_run
/// use query_net::{driver, Options};
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let options = Options { auth_token: Some("shared secret".into()), ..Options::default() };
/// let status = driver::query_onequery("hytale.example.org", &options).await?;
/// for player in &status.players {
///     println!("{} {:?}", player.name, player.uuid);
/// }
/// # Ok(())
/// # }
/// ```
pub async fn query_onequery(
    target: impl Into<Target>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    let target = target
        .into()
        .resolve(Protocol::OneQuery.default_port())
        .await?;
    query_session(Bounded::from_options(
        OneQueryClient::new(target, options)?,
        options,
    ))
    .await
}

/// Queries an SA:MP or open.mp server (port 7777 unless `target` names one). For an RCON
/// command, see [`samp::rcon_session`](crate::engines::samp::rcon_session).
///
/// ```no_run
/// use query_net::{driver, Options};
/// use std::net::{Ipv4Addr, SocketAddr};
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let server = SocketAddr::from((Ipv4Addr::new(203, 0, 113, 5), 7777));
/// let status = driver::query_samp(server, &Options::default()).await?;
/// println!("{} ({} ms)", status.name, status.ping_ms);
/// # Ok(())
/// # }
/// ```
pub async fn query_samp(
    target: impl Into<Target>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    let target = target.into().resolve(Protocol::Samp.default_port()).await?;
    query_session(Bounded::from_options(
        SampSession::new(target, options)?,
        options,
    ))
    .await
}

/// Queries a GameSpy v1 server (port 23000 unless `target` names one) with
/// [`Options::gamespy_request`]. Parts of the reply lost on the way leave the status
/// `complete: false` rather than failing the query.
///
/// ```no_run
/// use query_net::{driver, Options};
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let status = driver::query_gamespy1("ut.example.org:7778", &Options::default()).await?;
/// if !status.complete {
///     eprintln!("some parts of the reply never came");
/// }
/// # Ok(())
/// # }
/// ```
pub async fn query_gamespy1(
    target: impl Into<Target>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    let target = target
        .into()
        .resolve(Protocol::GameSpy1.default_port())
        .await?;
    query_session(Bounded::from_options(
        GameSpy1Session::new(target, options),
        options,
    ))
    .await
}

/// Queries a Valve A2S server (port 27015 unless `target` names one): INFO, then PLAYER and
/// RULES unless [`Options::players`] / [`Options::rules`] are off, each with the challenge
/// the server asks for. A PLAYER or RULES reply that never comes whole leaves the status
/// `complete: false` with what arrived.
///
/// ```no_run
/// use query_net::{driver, Options};
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let status = driver::query_a2s("tf2.example.org:27015", &Options::default()).await?;
/// println!("{} on {:?}: {} players", status.name, status.map, status.players.len());
/// # Ok(())
/// # }
/// ```
pub async fn query_a2s(
    target: impl Into<Target>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    let target = target.into().resolve(Protocol::A2s.default_port()).await?;
    query_session(Bounded::from_options(
        A2sClient::new(target, options),
        options,
    ))
    .await
}

/// Queries a Quake 3 engine server (port 27960 unless `target` names one; Call of Duty
/// servers listen on 28960) with `getstatus`: the info, the rules and the players in one reply.
///
/// ```no_run
/// use query_net::{driver, Options};
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let status = driver::query_quake3("203.0.113.5:28960", &Options::default()).await?;
/// println!("{} on {:?}", status.name, status.map);
/// # Ok(())
/// # }
/// ```
pub async fn query_quake3(
    target: impl Into<Target>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    query(Protocol::Quake3, target, options).await
}

/// Queries a Quake 2 or QuakeWorld server (port 27910 unless `target` names one; QuakeWorld
/// servers listen on 27500) with `status`: the info, the rules and the players in one reply.
///
/// ```no_run
/// use query_net::{driver, Options};
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let status = driver::query_quake2("203.0.113.5:27910", &Options::default()).await?;
/// println!("{} on {:?}", status.name, status.map);
/// # Ok(())
/// # }
/// ```
pub async fn query_quake2(
    target: impl Into<Target>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    query(Protocol::Quake2, target, options).await
}

/// Queries a FiveM or RedM server (port 30120 unless `target` names one): `getinfo` over
/// UDP for the settings and counts, then the player list from its HTTP `/players.json`.
///
/// ```no_run
/// use query_net::{driver, Options};
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let status = driver::query_fivem("203.0.113.5:30120", &Options::default()).await?;
/// println!("{}: {}/{}", status.name, status.num_players, status.max_players);
/// # Ok(())
/// # }
/// ```
pub async fn query_fivem(
    target: impl Into<Target>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    query(Protocol::Fivem, target, options).await
}

/// Queries a Doom 3 engine server (Doom 3, Quake 4, Prey, ETQW; port 27666 unless `target`
/// names one) with `getInfo`: the settings and the players in one reply.
///
/// ```no_run
/// use query_net::{driver, Options};
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let status = driver::query_doom3("203.0.113.5:28004", &Options::default()).await?;
/// println!("{} on {:?}", status.name, status.map);
/// # Ok(())
/// # }
/// ```
pub async fn query_doom3(
    target: impl Into<Target>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    query(Protocol::Doom3, target, options).await
}

/// Queries a GameSpy 2 server (port 2302 unless `target` names one): the details, players
/// and teams in one request, or asked apart from a server that answers only the details.
///
/// ```no_run
/// use query_net::{driver, Options};
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let status = driver::query_gamespy2("halo.example.org", &Options::default()).await?;
/// println!("{}: {} teams", status.name, status.teams.len());
/// # Ok(())
/// # }
/// ```
pub async fn query_gamespy2(
    target: impl Into<Target>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    query(Protocol::GameSpy2, target, options).await
}

/// Queries a GameSpy 3 or 4 server (port 29900 unless `target` names one), with the
/// challenge the server asks for.
///
/// ```no_run
/// use query_net::{driver, Options};
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let status = driver::query_gamespy3("bf2142.example.org", &Options::default()).await?;
/// println!("{}: {}/{}", status.name, status.num_players, status.max_players);
/// # Ok(())
/// # }
/// ```
pub async fn query_gamespy3(
    target: impl Into<Target>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    query(Protocol::GameSpy3, target, options).await
}

/// Queries a Minecraft Java server's status ping over TCP (port 25565 unless `target` names
/// one), with the legacy ping for servers before 1.7: see [`crate::tcp::query_minecraft`].
///
/// ```no_run
/// use query_net::{driver, Options};
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let status = driver::query_minecraft("mc.example.org", &Options::default()).await?;
/// println!("{} ({:?}), {:.0} ms", status.name, status.version, status.ping_ms);
/// # Ok(())
/// # }
/// ```
pub async fn query_minecraft(
    target: impl Into<Target>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    crate::tcp::query_minecraft(target, options).await
}

/// Queries a Minecraft server's "Query" port (`enable-query`; port 25565 unless `target`
/// names one): GameSpy 4 with the game's own session ids, the full player list and plugins.
///
/// ```no_run
/// use query_net::{driver, Options};
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let status = driver::query_minecraft_query("mc.example.org", &Options::default()).await?;
/// println!("{}: {} players", status.name, status.players.len());
/// # Ok(())
/// # }
/// ```
pub async fn query_minecraft_query(
    target: impl Into<Target>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    query(Protocol::MinecraftQuery, target, options).await
}

/// Queries a Minecraft Bedrock server (RakNet unconnected ping; port 19132 unless `target`
/// names one).
///
/// ```no_run
/// use query_net::{driver, Options};
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let status = driver::query_bedrock("bedrock.example.org", &Options::default()).await?;
/// println!("{}: {}/{}", status.name, status.num_players, status.max_players);
/// # Ok(())
/// # }
/// ```
pub async fn query_bedrock(
    target: impl Into<Target>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    query(Protocol::Bedrock, target, options).await
}

/// Queries a Teeworlds or DDNet server (port 8303 unless `target` names one): DDNet's
/// extended server info, every client over several datagrams, or a 0.6 server's `inf3`.
///
/// ```no_run
/// use query_net::{driver, Options};
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let status = driver::query_teeworlds("ddnet.example.org", &Options::default()).await?;
/// println!("{} on {:?}: {} clients", status.name, status.map, status.players.len());
/// # Ok(())
/// # }
/// ```
pub async fn query_teeworlds(
    target: impl Into<Target>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    query(Protocol::Teeworlds, target, options).await
}

/// Pings a Mumble server (port 64738 unless `target` names one): version, users and slots.
///
/// ```no_run
/// use query_net::{driver, Options};
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let status = driver::query_mumble("voice.example.org", &Options::default()).await?;
/// println!("{:?}: {}/{}", status.version, status.num_players, status.max_players);
/// # Ok(())
/// # }
/// ```
pub async fn query_mumble(
    target: impl Into<Target>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    query(Protocol::Mumble, target, options).await
}

/// Queries an All-Seeing Eye server (Multi Theft Auto, Far Cry) on its query port: the
/// game port + 123, 22126 unless `target` names one.
///
/// ```no_run
/// use query_net::{driver, Options};
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let status = driver::query_eye("mta.example.org", &Options::default()).await?;
/// println!("{}: {}/{}", status.name, status.num_players, status.max_players);
/// # Ok(())
/// # }
/// ```
pub async fn query_eye(
    target: impl Into<Target>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    query(Protocol::Ase, target, options).await
}

/// Queries an Unreal Engine 2 server (UT2003, UT2004, Killing Floor, Red Orchestra) on its
/// query port: the game port + 1, 7778 unless `target` names one.
///
/// ```no_run
/// use query_net::{driver, Options};
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let status = driver::query_unreal2("ut2004.example.org:7778", &Options::default()).await?;
/// println!("{}: {}/{}", status.name, status.num_players, status.max_players);
/// # Ok(())
/// # }
/// ```
pub async fn query_unreal2(
    target: impl Into<Target>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    query(Protocol::Unreal2, target, options).await
}

/// Queries a Frostbite server (Battlefield 3, 4 and Hardline on port 47200 unless `target`
/// names one; Bad Company 2 listens on 48888): `serverInfo`, `version` and `listPlayers all`
/// over one TCP connection.
///
/// ```no_run
/// use query_net::{driver, Options};
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let status = driver::query_frostbite("203.0.113.5:47200", &Options::default()).await?;
/// println!("{} on {:?}: {}/{}", status.name, status.map, status.num_players, status.max_players);
/// # Ok(())
/// # }
/// ```
pub async fn query_frostbite(
    target: impl Into<Target>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    query(Protocol::Frostbite, target, options).await
}

/// Queries a TeamSpeak 3 server's ServerQuery port (10011 unless `target` names one): the
/// virtual server of [`Options::virtual_server`] (voice port 9987 by default), logged in as
/// [`Options::query_login`] when set.
///
/// ```no_run
/// use query_net::{driver, Options};
///
/// # async fn example() -> Result<(), query_net::QueryError> {
/// let status = driver::query_teamspeak3("voice.example.org", &Options::default()).await?;
/// println!("{}: {} of {} slots", status.name, status.num_players, status.max_players);
/// # Ok(())
/// # }
/// ```
pub async fn query_teamspeak3(
    target: impl Into<Target>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    query(Protocol::TeamSpeak3, target, options).await
}

/// [`query`] for code without an async runtime: runs one on the current thread.
///
/// Returns an error if called from inside a tokio runtime (await [`query`] there instead).
pub fn query_blocking(
    protocol: Protocol,
    target: impl Into<Target>,
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    block_on(query(protocol, target, options))?
}

/// [`query_session`] for code without an async runtime.
pub fn query_session_blocking<S: ClientSession>(session: S) -> Result<S::Output, QueryError> {
    block_on(query_session(session))?
}

/// Runs `future` on a new current-thread runtime.
fn block_on<F: Future>(future: F) -> Result<F::Output, QueryError> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(QueryError::Io(io::Error::other(
            "a blocking query cannot run inside an async runtime: await the async function instead",
        )));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    Ok(runtime.block_on(future))
}

/// Answers requests arriving on `socket` with `service` until `shutdown` is cancelled.
///
/// Never stops because of a request: malformed, spoofed or rate-limited datagrams are counted
/// and dropped, and a reply the socket refuses to send is counted in
/// [`Stats::send_errors`]. Returns an error only if the socket itself keeps failing.
///
/// ```no_run
/// use tokio::net::UdpSocket;
/// use tokio_util::sync::CancellationToken;
/// use query_net::{driver, service::Service};
/// # use query_net::{clock::Now, engine::{ReplySink, Responder, Verdict}};
/// # struct MyResponder;
/// # impl Responder for MyResponder {
/// #     fn handle(&mut self, _: std::net::SocketAddr, _: &[u8], _: Now, _: &mut ReplySink) -> Verdict {
/// #         Verdict::Dropped(query_net::engine::DropReason::Unsupported)
/// #     }
/// # }
///
/// # async fn example() -> std::io::Result<()> {
/// let socket = UdpSocket::bind("0.0.0.0:7779").await?;
/// let mut service = Service::new(MyResponder);
/// let shutdown = CancellationToken::new();
/// // Whoever owns the server (a signal handler, the game's exit path) cancels a clone.
/// let stop = shutdown.clone();
/// tokio::spawn(async move {
///     tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
///     stop.cancel();
/// });
/// driver::serve(&socket, &mut service, &shutdown).await
/// # }
/// ```
pub async fn serve<R: Responder, C: Clock + Clone>(
    socket: &UdpSocket,
    service: &mut Service<R, C>,
    shutdown: &CancellationToken,
) -> io::Result<()> {
    serve_with(socket, service, shutdown, |_, _| {}).await
}

/// [`serve`], calling `on_drop` with the source and the reason of every request that got no
/// reply, so a server can log abusive or broken sources.
///
/// On Linux, datagrams are read and replies sent in batches of up to
/// [`batch::BATCH`](crate::batch::BATCH) per system call (`recvmmsg`, `sendmmsg`), and a
/// socket bound to a wildcard address answers each request from the address it was sent to
/// ([`batch::answer_from_destination`](crate::batch::answer_from_destination)); elsewhere
/// this is [`serve_plain_with`].
pub async fn serve_with<R: Responder, C: Clock + Clone>(
    socket: &UdpSocket,
    service: &mut Service<R, C>,
    shutdown: &CancellationToken,
    on_drop: impl FnMut(SocketAddr, DropReason),
) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    return serve_batched_with(socket, service, shutdown, on_drop).await;
    #[cfg(not(target_os = "linux"))]
    return serve_plain_with(socket, service, shutdown, on_drop).await;
}

/// [`serve_with`] with one system call per datagram each way: the path for platforms
/// without batched calls, public so that both paths can be compared and tested everywhere.
pub async fn serve_plain_with<R: Responder, C: Clock + Clone>(
    socket: &UdpSocket,
    service: &mut Service<R, C>,
    shutdown: &CancellationToken,
    mut on_drop: impl FnMut(SocketAddr, DropReason),
) -> io::Result<()> {
    let stats = Arc::clone(service.stats());
    let mut buf = vec![0u8; RECV_BUFFER];
    let mut errors = RecvErrors::default();
    loop {
        let received = tokio::select! {
            biased;
            () = shutdown.cancelled() => return Ok(()),
            received = socket.recv_from(&mut buf) => received,
        };
        let (len, from) = match received {
            Ok(received) => {
                errors.clear();
                received
            }
            Err(e) => {
                if errors.pause_after(e, &stats, shutdown).await? {
                    return Ok(());
                }
                continue;
            }
        };
        for reply in service.handle(from, &buf[..len]) {
            match socket.send_to(reply, from).await {
                Ok(_) => Stats::bump(&stats.replies_sent),
                Err(_) => Stats::bump(&stats.send_errors),
            }
        }
        if let Verdict::Dropped(reason) = service.last_verdict() {
            on_drop(from, reason);
        }
    }
}

/// [`serve_with`]'s batched path (Linux): what is waiting is read with one `recvmmsg`,
/// answered in order, and the replies leave with one `sendmmsg` per [`BATCH`] of them, each
/// datagram a message of its own.
///
/// [`BATCH`]: crate::batch::BATCH
#[cfg(target_os = "linux")]
pub async fn serve_batched_with<R: Responder, C: Clock + Clone>(
    socket: &UdpSocket,
    service: &mut Service<R, C>,
    shutdown: &CancellationToken,
    on_drop: impl FnMut(SocketAddr, DropReason),
) -> io::Result<()> {
    let replies = crate::batch::SendBatch::unsegmented(crate::engine::ReplySink::MAX_UDP_PAYLOAD);
    serve_batches(socket, service, shutdown, on_drop, replies).await
}

/// [`serve_batched_with`], with a run of reply datagrams to one client (a reply in several
/// datagrams, or the replies to a client that sent several requests) leaving as one
/// segmented message (UDP GSO, [`SendBatch`]): one trip through the kernel's send path for
/// the run. Not the default: a packet capture on the server's host (on loopback, or where the
/// network card segments) then shows each run as one datagram, which misleads whoever reads
/// it, `gsq decode` included. `gsq serve --gso` turns it on.
///
/// [`SendBatch`]: crate::batch::SendBatch
#[cfg(target_os = "linux")]
pub async fn serve_segmented_with<R: Responder, C: Clock + Clone>(
    socket: &UdpSocket,
    service: &mut Service<R, C>,
    shutdown: &CancellationToken,
    on_drop: impl FnMut(SocketAddr, DropReason),
) -> io::Result<()> {
    let replies = crate::batch::SendBatch::new(crate::engine::ReplySink::MAX_UDP_PAYLOAD);
    serve_batches(socket, service, shutdown, on_drop, replies).await
}

#[cfg(target_os = "linux")]
async fn serve_batches<R: Responder, C: Clock + Clone>(
    socket: &UdpSocket,
    service: &mut Service<R, C>,
    shutdown: &CancellationToken,
    mut on_drop: impl FnMut(SocketAddr, DropReason),
    mut replies: crate::batch::SendBatch,
) -> io::Result<()> {
    let stats = Arc::clone(service.stats());
    let mut requests = crate::batch::RecvBatch::new();
    // On a wildcard address, each reply leaves from the address its request was sent to.
    crate::batch::answer_from_destination(socket);
    let mut errors = RecvErrors::default();
    let refused = |_: SocketAddr, _: io::Error| Stats::bump(&stats.send_errors);
    loop {
        tokio::select! {
            biased;
            () = shutdown.cancelled() => return Ok(()),
            ready = socket.readable() => ready?,
        }
        let count = match requests.recv(socket) {
            Ok(count) => {
                errors.clear();
                count
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => {
                if errors.pause_after(e, &stats, shutdown).await? {
                    return Ok(());
                }
                continue;
            }
        };
        for i in 0..count {
            let (Some(from), datagram) = requests.datagram(i) else {
                continue;
            };
            let destination = requests.destination(i);
            for reply in service.handle(from, datagram) {
                if replies.is_full() {
                    let sent = replies.flush(socket, refused).await;
                    Stats::add(&stats.replies_sent, sent);
                }
                if !replies.push_from(reply, from, destination) {
                    // Longer than UDP allows: the kernel would refuse it.
                    Stats::bump(&stats.send_errors);
                }
            }
            if let Verdict::Dropped(reason) = service.last_verdict() {
                on_drop(from, reason);
            }
        }
        let sent = replies.flush(socket, refused).await;
        Stats::add(&stats.replies_sent, sent);
    }
}

/// Receive errors in a row: only a closed socket ends serving; after many others in a row
/// (ICMP reports of earlier replies and the like) the loop pauses briefly, so that a socket
/// failing every call does not spin.
#[derive(Default)]
struct RecvErrors {
    in_a_row: u32,
}

impl RecvErrors {
    fn clear(&mut self) {
        self.in_a_row = 0;
    }

    /// Counts `error`; `Err` when it ends serving, `Ok(true)` when shutdown came during the
    /// pause.
    async fn pause_after(
        &mut self,
        error: io::Error,
        stats: &Stats,
        shutdown: &CancellationToken,
    ) -> io::Result<bool> {
        Stats::bump(&stats.recv_errors);
        if classify_recv_error(&error) == RecvErrorKind::Closed {
            return Err(error);
        }
        self.in_a_row += 1;
        if self.in_a_row >= RECV_ERRORS_BEFORE_PAUSING {
            tokio::select! {
                biased;
                () = shutdown.cancelled() => return Ok(true),
                () = tokio::time::sleep(RECV_ERROR_PAUSE) => {}
            }
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn literal_addresses_resolve_without_a_lookup() {
        assert_eq!(
            resolve("127.0.0.1:7777").await.unwrap(),
            "127.0.0.1:7777".parse().unwrap()
        );
        assert_eq!(
            resolve("[::1]:7777").await.unwrap(),
            "[::1]:7777".parse().unwrap()
        );
    }

    #[tokio::test]
    async fn localhost_resolves_to_a_loopback_address() {
        let addr = resolve("localhost:7777").await.unwrap();
        assert!(addr.ip().is_loopback(), "{addr}");
        assert_eq!(addr.port(), 7777);
    }

    #[tokio::test]
    async fn missing_port_or_unknown_host_is_a_resolve_error() {
        for bad in ["localhost", "no-such-host.invalid:7777"] {
            match resolve(bad).await {
                Err(QueryError::Resolve { host, .. }) => assert_eq!(host, bad),
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[tokio::test]
    async fn sockets_match_the_target_family() {
        let v4 = bind_for("127.0.0.1:1".parse().unwrap()).await.unwrap();
        assert!(v4.local_addr().unwrap().is_ipv4());
        if let Ok(v6) = bind_for("[::1]:1".parse().unwrap()).await {
            assert!(v6.local_addr().unwrap().is_ipv6());
        }
    }

    #[tokio::test]
    async fn query_runs_the_protocols_engine_until_it_gives_up() {
        // A bound socket that never answers: no ICMP, only silence.
        let silent = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let options = Options {
            timeout: std::time::Duration::from_millis(20),
            retries: 1,
            ..Options::default()
        };
        let address = silent.local_addr().unwrap().to_string();
        let err = query(Protocol::Sqp, &address, &options).await.unwrap_err();
        assert!(
            matches!(
                err,
                QueryError::Timeout {
                    waiting_for: "challenge request",
                    attempts: 2,
                    ..
                }
            ),
            "{err}"
        );
    }

    #[tokio::test]
    async fn blocking_wrapper_refuses_to_nest_in_a_runtime() {
        let err = query_blocking(Protocol::Samp, "127.0.0.1:9", &Options::default()).unwrap_err();
        assert!(err.to_string().contains("inside an async runtime"), "{err}");
    }

    #[test]
    fn blocking_wrapper_runs_its_own_runtime() {
        let err = query_blocking(Protocol::Samp, "no-such-host.invalid", &Options::default())
            .unwrap_err();
        assert!(matches!(err, QueryError::Resolve { .. }), "{err}");
    }

    #[tokio::test]
    async fn targets_without_a_port_get_the_default_one() {
        let resolved = |target: Target| async move { target.resolve(7779).await.unwrap() };
        let v4: SocketAddr = "127.0.0.1:7779".parse().unwrap();
        let v6: SocketAddr = "[::1]:7779".parse().unwrap();
        assert_eq!(resolved("127.0.0.1".into()).await, v4);
        assert_eq!(resolved(" 127.0.0.1 ".into()).await, v4);
        assert_eq!(resolved("::1".into()).await, v6);
        assert_eq!(resolved("[::1]".into()).await, v6);
        assert_eq!(resolved("[::1]:80".into()).await.port(), 80);
        assert_eq!(resolved("127.0.0.1:80".to_owned().into()).await.port(), 80);
        assert_eq!(resolved((Ipv4Addr::LOCALHOST, 80).into()).await.port(), 80);
        assert_eq!(resolved(v6.into()).await, v6);
        let named = resolved("localhost".into()).await;
        assert!(named.ip().is_loopback() && named.port() == 7779, "{named}");
        assert_eq!(resolved("localhost:80".into()).await.port(), 80);
        match Target::from("no-such-host.invalid").resolve(1).await {
            Err(QueryError::Resolve { host, .. }) => assert_eq!(host, "no-such-host.invalid:1"),
            other => panic!("{other:?}"),
        }
    }

    /// Every protocol's own function: the `match` has no catch-all, so a new protocol does
    /// not compile until it has one.
    async fn typed_query(
        protocol: Protocol,
        target: SocketAddr,
        options: &Options,
    ) -> Result<ServerStatus, QueryError> {
        match protocol {
            Protocol::Sqp => query_sqp(target, options).await,
            Protocol::OneQuery => query_onequery(target, options).await,
            Protocol::Samp => query_samp(target, options).await,
            Protocol::GameSpy1 => query_gamespy1(target, options).await,
            Protocol::A2s => query_a2s(target, options).await,
            Protocol::Quake3 => query_quake3(target, options).await,
            Protocol::Quake2 => query_quake2(target, options).await,
            Protocol::Fivem => query_fivem(target, options).await,
            Protocol::Doom3 => query_doom3(target, options).await,
            Protocol::GameSpy2 => query_gamespy2(target, options).await,
            Protocol::GameSpy3 => query_gamespy3(target, options).await,
            Protocol::Minecraft => query_minecraft(target, options).await,
            Protocol::MinecraftQuery => query_minecraft_query(target, options).await,
            Protocol::Bedrock => query_bedrock(target, options).await,
            Protocol::Teeworlds => query_teeworlds(target, options).await,
            Protocol::Mumble => query_mumble(target, options).await,
            Protocol::Ase => query_eye(target, options).await,
            Protocol::Unreal2 => query_unreal2(target, options).await,
            Protocol::Frostbite => query_frostbite(target, options).await,
            Protocol::TeamSpeak3 => query_teamspeak3(target, options).await,
        }
    }

    #[tokio::test]
    async fn each_protocols_call_runs_its_engine() {
        let silent = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let target = silent.local_addr().unwrap();
        let options = Options {
            timeout: std::time::Duration::from_millis(20),
            retries: 0,
            ..Options::default()
        };
        let waiting_for = |result: Result<ServerStatus, QueryError>| match result {
            Err(QueryError::Timeout { waiting_for, .. }) => waiting_for,
            other => panic!("{other:?}"),
        };
        for protocol in Protocol::ALL {
            if protocol.is_stream() {
                // Nothing listens on the port over TCP: both connections are refused.
                let refused = |r: Result<ServerStatus, QueryError>| matches!(r, Err(QueryError::ConnectionRefused { target: t }) if t == target);
                assert!(refused(typed_query(protocol, target, &options).await));
                assert!(refused(query(protocol, target, &options).await));
                continue;
            }
            // The typed function asks what the generic one asks, first of all.
            let typed = waiting_for(typed_query(protocol, target, &options).await);
            let generic = waiting_for(query(protocol, target, &options).await);
            assert_eq!(typed, generic, "{protocol}");
            assert!(typed.ends_with("request"), "{protocol}: {typed}");
        }
        assert_eq!(
            waiting_for(query_sqp(target, &options).await),
            "challenge request"
        );
        assert_eq!(
            waiting_for(query_a2s(target, &options).await),
            "info request"
        );
    }
}
