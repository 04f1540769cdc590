//! An RCON server (Source framing) a game written in Rust can embed.
//!
//! The game supplies a [`CommandHandler`]; [`serve`] accepts connections under
//! [`ListenerLimits`] (connections in total and per address, idle and whole-connection
//! timeouts), and runs a [`Connection`] on each: the password checked by an [`AuthGate`]
//! (compared in constant time, with a lockout per source address after repeated failures),
//! a deadline to authenticate, a cap on the packet size, and answers split as srcds splits
//! them (packets of at most 4,096 bytes; the end-marker request mirrored, then the packet
//! srcds adds after it). srcds's empty value before the auth response is an option
//! ([`ServerConfig::empty_value_before_auth`]), off by default for the clients it misleads.
//!
//! ```no_run
//! use std::net::SocketAddr;
//! use std::sync::Arc;
//! use query_net::rcon::server::{serve, AuthGate, CommandHandler, ServerConfig};
//!
//! struct Console;
//!
//! impl CommandHandler for Console {
//!     async fn execute(&self, command: String, _peer: SocketAddr) -> String {
//!         match command.as_str() {
//!             "status" => "hostname: My server\nmap: de_dust2\n".to_owned(),
//!             other => format!("Unknown command \"{other}\"\n"),
//!         }
//!     }
//! }
//!
//! # async fn example() -> std::io::Result<()> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:27015").await?;
//! let config = ServerConfig::default();
//! let gate = Arc::new(AuthGate::new("secret", config.lockout));
//! let shutdown = tokio_util::sync::CancellationToken::new();
//! serve(listener, gate, Arc::new(Console), config, Default::default(), shutdown).await;
//! # Ok(())
//! # }
//! ```

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use query_specs::rcon::{
    Frame, Packet, AUTH_REFUSED_ID, OVERHEAD, SERVERDATA_AUTH, SERVERDATA_AUTH_RESPONSE,
    SERVERDATA_EXECCOMMAND, SERVERDATA_RESPONSE_VALUE, SIZE_LEN, SOURCE_MAX_SIZE,
};
use query_wire::{Decode, Encode};
use subtle::ConstantTimeEq;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{frame_len, write_packet, Framing};
use crate::challenge::MacKey;
use crate::stream::FrameBuffer;
use crate::tcp::{serve_connections, ListenerLimits, ListenerStats, READ_CHUNK};

/// The longest body of one answer packet: srcds's 4,096-byte packets less the id, the type
/// and the NULs.
pub const MAX_ANSWER_BODY: usize = SOURCE_MAX_SIZE - OVERHEAD;
/// What follows the body's NUL in the packet srcds sends after mirroring an end marker: its
/// body reads as `00 01 00 00`, then the two NULs.
pub const MARKER_TRAILER: &[u8] = b"\x01\x00\x00\x00\x00";

/// What the game runs for an authenticated client's command.
///
/// The output is sent back split into packets of at most [`MAX_ANSWER_BODY`] bytes (at
/// character boundaries); NUL characters are left out, since the protocol ends a body at the
/// first. A command runs at most [`ServerConfig::command_timeout`]; one connection runs its
/// commands one after another, in the order they arrived.
pub trait CommandHandler: Send + Sync + 'static {
    /// Runs `command` (the client's bytes as UTF-8, invalid sequences replaced), sent from
    /// `peer`, and returns its output.
    fn execute(&self, command: String, peer: SocketAddr) -> impl Future<Output = String> + Send;
}

/// When a source address is locked out: after `max_failures` refused passwords within
/// `window`, its attempts are refused unchecked for `lockout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockoutPolicy {
    /// Refused passwords that lock an address out.
    pub max_failures: u32,
    /// The span they must fall in.
    pub window: Duration,
    /// How long the address stays locked out.
    pub lockout: Duration,
    /// Addresses remembered at most; past it, the one whose failures are oldest is forgotten
    /// (memory stays bounded whatever the number of addresses trying).
    pub max_tracked: usize,
}

impl Default for LockoutPolicy {
    /// 5 failures within 5 minutes lock an address out for 15 minutes; 4,096 addresses
    /// remembered.
    fn default() -> Self {
        LockoutPolicy {
            max_failures: 5,
            window: Duration::from_secs(300),
            lockout: Duration::from_secs(900),
            max_tracked: 4096,
        }
    }
}

/// The outcome of a password attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthOutcome {
    /// The password is right.
    Accepted,
    /// The password is wrong (or the server has none: RCON is off).
    Refused,
    /// The address is locked out: the password was not even compared.
    LockedOut,
}

#[derive(Debug, Clone, Copy)]
struct Failures {
    count: u32,
    first: Instant,
    locked_until: Option<Instant>,
}

/// The password and the failures of each source address, shared by every connection of a
/// server.
///
/// The password is compared in constant time: both it and the attempt are run through an
/// HMAC under a random key and the digests compared with `subtle`, so neither the content nor
/// the length of the password shows in the time an answer takes. An empty password refuses
/// every attempt (RCON is off, as on srcds).
pub struct AuthGate {
    key: MacKey,
    expected: Option<[u8; 32]>,
    policy: LockoutPolicy,
    sources: Mutex<HashMap<IpAddr, Failures>>,
}

impl std::fmt::Debug for AuthGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthGate")
            .field("password", &"<redacted>")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl AuthGate {
    /// A gate for `password`, locking addresses out as `policy` says.
    pub fn new(password: &str, policy: LockoutPolicy) -> Self {
        let mut gate = AuthGate {
            key: MacKey::random(),
            expected: None,
            policy,
            sources: Mutex::new(HashMap::new()),
        };
        if !password.is_empty() {
            gate.expected = Some(gate.digest(password.as_bytes()));
        }
        gate
    }

    fn digest(&self, bytes: &[u8]) -> [u8; 32] {
        self.key.digest(&[bytes])
    }

    /// Whether `ip` is locked out at `now`.
    pub fn is_locked_out(&self, ip: IpAddr, now: Instant) -> bool {
        let ip = ip.to_canonical();
        self.sources.lock().is_ok_and(|sources| {
            sources
                .get(&ip)
                .and_then(|f| f.locked_until)
                .is_some_and(|until| now < until)
        })
    }

    /// Checks `attempt` from `ip` at `now`, and counts a failure against the address.
    pub fn check(&self, ip: IpAddr, attempt: &[u8], now: Instant) -> AuthOutcome {
        let ip = ip.to_canonical();
        let Ok(mut sources) = self.sources.lock() else {
            return AuthOutcome::LockedOut;
        };
        if let Some(failures) = sources.get(&ip) {
            if failures.locked_until.is_some_and(|until| now < until) {
                return AuthOutcome::LockedOut;
            }
        }
        let digest = self.digest(attempt);
        let right = self
            .expected
            .is_some_and(|expected| bool::from(expected.ct_eq(&digest)));
        if right {
            sources.remove(&ip);
            return AuthOutcome::Accepted;
        }
        if !sources.contains_key(&ip) && sources.len() >= self.policy.max_tracked {
            self.forget_one(&mut sources, now);
        }
        let policy = self.policy;
        let failures = sources.entry(ip).or_insert(Failures {
            count: 0,
            first: now,
            locked_until: None,
        });
        if failures.locked_until.is_some() || now.duration_since(failures.first) > policy.window {
            *failures = Failures {
                count: 0,
                first: now,
                locked_until: None,
            };
        }
        failures.count += 1;
        if failures.count >= policy.max_failures {
            failures.locked_until = Some(now + policy.lockout);
        }
        AuthOutcome::Refused
    }

    /// Makes room for one address: expired entries go first, else the oldest.
    fn forget_one(&self, sources: &mut HashMap<IpAddr, Failures>, now: Instant) {
        let policy = self.policy;
        sources.retain(|_, f| match f.locked_until {
            Some(until) => now < until,
            None => now.duration_since(f.first) <= policy.window,
        });
        if sources.len() >= policy.max_tracked {
            if let Some(oldest) = sources
                .iter()
                .filter(|(_, f)| f.locked_until.is_none())
                .min_by_key(|(_, f)| f.first)
                .or_else(|| sources.iter().min_by_key(|(_, f)| f.first))
                .map(|(ip, _)| *ip)
            {
                sources.remove(&oldest);
            }
        }
    }
}

/// The limits of an RCON server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerConfig {
    /// Connection caps and timeouts of the listener.
    pub limits: ListenerLimits,
    /// When an address is locked out.
    pub lockout: LockoutPolicy,
    /// How long a connection may take to authenticate.
    pub auth_timeout: Duration,
    /// How long one command may run; past it, the client is told so and the connection goes
    /// on.
    pub command_timeout: Duration,
    /// The largest packet read from a client, size word included.
    pub max_packet: usize,
    /// Send an empty response value before each auth response, as srcds does. Off by
    /// default: clients written for Minecraft (mcrcon, `rcon-client` on npm, `rcon` on PyPI)
    /// take the first packet after their password for the auth response, so they would read
    /// a refusal as success, or lose the auth response in the buffer they throw away.
    /// Clients written for srcds skip the empty value when it is there and wait for the auth
    /// response either way.
    pub empty_value_before_auth: bool,
}

impl Default for ServerConfig {
    /// 64 connections, 4 per address, cut after 10 minutes of silence or 12 hours in all; 10 s
    /// to authenticate; commands of at most 30 s; packets of at most 4,100 bytes (srcds's);
    /// no empty value before the auth response.
    fn default() -> Self {
        ServerConfig {
            limits: ListenerLimits {
                max_connections: 64,
                max_per_source: 4,
                idle_timeout: Duration::from_secs(600),
                session_timeout: Duration::from_secs(12 * 3600),
            },
            lockout: LockoutPolicy::default(),
            auth_timeout: Duration::from_secs(10),
            command_timeout: Duration::from_secs(30),
            max_packet: SIZE_LEN + SOURCE_MAX_SIZE,
            empty_value_before_auth: false,
        }
    }
}

/// A command an authenticated client sent, for the game to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The packet's id, which the answer echoes.
    pub id: i32,
    /// The command.
    pub text: String,
}

/// One client's connection, as a state machine: fed the bytes that arrive (split anywhere)
/// and the time; asked what to write, which command to run, and whether to close.
///
/// Before authentication only [`SERVERDATA_AUTH`] is read: anything else closes the
/// connection, as does a frame that does not decode or is over the packet cap, and a client
/// that has not authenticated by the deadline. One command runs at a time: the packets after
/// it wait in the buffer until [`answer`](Connection::answer) is called, so answers keep the
/// order of requests.
#[derive(Debug)]
pub struct Connection {
    gate: Arc<AuthGate>,
    peer: IpAddr,
    frames: FrameBuffer<Framing>,
    outgoing: Vec<u8>,
    authenticated: bool,
    auth_deadline: Instant,
    empty_value_before_auth: bool,
    pending: Option<Command>,
    running: Option<i32>,
    closing: bool,
}

impl Connection {
    /// A connection from `peer` accepted at `now`, which must authenticate within
    /// `config.auth_timeout`.
    pub fn new(gate: Arc<AuthGate>, peer: IpAddr, now: Instant, config: &ServerConfig) -> Self {
        let framing: Framing = frame_len;
        Connection {
            gate,
            peer,
            frames: FrameBuffer::new(framing, config.max_packet),
            outgoing: Vec::new(),
            authenticated: false,
            auth_deadline: now + config.auth_timeout,
            empty_value_before_auth: config.empty_value_before_auth,
            pending: None,
            running: None,
            closing: false,
        }
    }

    /// Whether the client has authenticated.
    pub fn is_authenticated(&self) -> bool {
        self.authenticated
    }

    /// Bytes that arrived from the client.
    pub fn handle_bytes(&mut self, bytes: &[u8], now: Instant) {
        if self.closing {
            return;
        }
        self.frames.push(bytes);
        self.process(now);
    }

    /// The command to run now, if one arrived; [`answer`](Connection::answer) it before the
    /// next is read.
    pub fn poll_command(&mut self) -> Option<Command> {
        let command = self.pending.take()?;
        self.running = Some(command.id);
        Some(command)
    }

    /// The output of the command [`poll_command`](Connection::poll_command) gave, split into
    /// packets; then the requests that waited behind it are read.
    pub fn answer(&mut self, output: &str, now: Instant) {
        let Some(id) = self.running.take() else {
            return;
        };
        for part in split_answer(output) {
            self.send(id, SERVERDATA_RESPONSE_VALUE, part.as_bytes());
        }
        self.process(now);
    }

    /// Bytes to write to the client, if any.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        (!self.outgoing.is_empty()).then(|| std::mem::take(&mut self.outgoing))
    }

    /// When [`handle_timeout`](Connection::handle_timeout) is due: the deadline to
    /// authenticate, while the client has not.
    pub fn poll_timeout(&self) -> Option<Instant> {
        (!self.authenticated && !self.closing).then_some(self.auth_deadline)
    }

    /// The time passed: a client that has not authenticated by its deadline is cut.
    pub fn handle_timeout(&mut self, now: Instant) {
        if !self.authenticated && now >= self.auth_deadline {
            self.closing = true;
        }
    }

    /// Whether the connection should be closed once what [`poll_transmit`] gives is written.
    ///
    /// [`poll_transmit`]: Connection::poll_transmit
    pub fn is_closed(&self) -> bool {
        self.closing
    }

    fn send(&mut self, id: i32, kind: i32, body: &[u8]) {
        // Bodies come from split_answer or are empty: they hold no NUL, so this cannot fail.
        if write_packet(&mut self.outgoing, id, kind, body).is_err() {
            self.closing = true;
        }
    }

    fn process(&mut self, now: Instant) {
        while !self.closing && self.pending.is_none() && self.running.is_none() {
            let frame = match self.frames.next_frame() {
                Ok(Some(frame)) => frame,
                Ok(None) => return,
                Err(_) => {
                    self.closing = true;
                    return;
                }
            };
            let Ok(Frame { packet }) = Frame::from_bytes(frame) else {
                self.closing = true;
                return;
            };
            let (id, kind) = (packet.id, packet.kind);
            match kind {
                SERVERDATA_AUTH => {
                    let outcome = self.gate.check(self.peer, packet.body, now);
                    self.authenticate(id, outcome, now);
                }
                _ if !self.authenticated => self.closing = true,
                SERVERDATA_EXECCOMMAND => {
                    let text = String::from_utf8_lossy(packet.body).into_owned();
                    self.pending = Some(Command { id, text });
                }
                SERVERDATA_RESPONSE_VALUE => {
                    // The end marker: mirrored, then srcds's extra packet.
                    self.send(id, SERVERDATA_RESPONSE_VALUE, b"");
                    let extra = Packet {
                        trailer: MARKER_TRAILER,
                        ..Packet::new(id, SERVERDATA_RESPONSE_VALUE, b"")
                    };
                    match extra.framed().to_vec() {
                        Ok(bytes) => self.outgoing.extend_from_slice(&bytes),
                        Err(_) => self.closing = true,
                    }
                }
                // srcds ignores the types it does not know.
                _ => {}
            }
        }
    }

    fn authenticate(&mut self, id: i32, outcome: AuthOutcome, now: Instant) {
        if self.empty_value_before_auth {
            self.send(id, SERVERDATA_RESPONSE_VALUE, b"");
        }
        match outcome {
            AuthOutcome::Accepted => {
                self.authenticated = true;
                self.send(id, SERVERDATA_AUTH_RESPONSE, b"");
            }
            AuthOutcome::Refused => {
                self.authenticated = false;
                self.send(AUTH_REFUSED_ID, SERVERDATA_AUTH_RESPONSE, b"");
                if self.gate.is_locked_out(self.peer, now) {
                    self.closing = true;
                }
            }
            AuthOutcome::LockedOut => {
                self.authenticated = false;
                self.send(AUTH_REFUSED_ID, SERVERDATA_AUTH_RESPONSE, b"");
                self.closing = true;
            }
        }
    }
}

/// `output` in the pieces srcds would send: at most [`MAX_ANSWER_BODY`] bytes each, cut at
/// character boundaries, NUL characters left out; an empty output is one empty piece.
pub fn split_answer(output: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    for c in output.chars().filter(|&c| c != '\0') {
        let last = parts.last_mut().expect("parts is never empty");
        if last.len() + c.len_utf8() > MAX_ANSWER_BODY {
            parts.push(String::new());
        }
        parts.last_mut().expect("parts is never empty").push(c);
    }
    parts
}

/// Runs `command` with `handler` for at most `timeout`; past it, the output says so.
pub(crate) async fn run_command<H: CommandHandler>(
    handler: &H,
    command: String,
    peer: SocketAddr,
    timeout: Duration,
) -> String {
    tokio::time::timeout(timeout, handler.execute(command, peer))
        .await
        .unwrap_or_else(|_| format!("the command did not finish within {timeout:?}"))
}

/// Serves RCON on `listener` until `shutdown` is cancelled: each connection is a
/// [`Connection`] whose commands `handler` runs, under `config`'s caps.
pub async fn serve<H: CommandHandler>(
    listener: tokio::net::TcpListener,
    gate: Arc<AuthGate>,
    handler: Arc<H>,
    config: ServerConfig,
    stats: Arc<ListenerStats>,
    shutdown: tokio_util::sync::CancellationToken,
) {
    let serve_one = move |stream, peer| {
        serve_connection(
            stream,
            peer,
            Arc::clone(&gate),
            Arc::clone(&handler),
            config,
        )
    };
    serve_connections(listener, serve_one, config.limits, stats, shutdown).await;
}

/// One connection: `Err(())` when it was cut for silence or for taking too long.
async fn serve_connection<H: CommandHandler>(
    mut stream: TcpStream,
    peer: SocketAddr,
    gate: Arc<AuthGate>,
    handler: Arc<H>,
    config: ServerConfig,
) -> Result<(), ()> {
    let started = Instant::now();
    let mut connection = Connection::new(gate, peer.ip(), started, &config);
    let limits = config.limits;
    let exchange = async {
        let mut buf = vec![0u8; READ_CHUNK];
        loop {
            if let Some(bytes) = connection.poll_transmit() {
                if stream.write_all(&bytes).await.is_err() {
                    return Ok(());
                }
            }
            if let Some(command) = connection.poll_command() {
                let output =
                    run_command(handler.as_ref(), command.text, peer, config.command_timeout).await;
                connection.answer(&output, Instant::now());
                continue;
            }
            if connection.is_closed() {
                let _ = stream.shutdown().await;
                return Ok(());
            }
            let idle_until = Instant::now() + limits.idle_timeout;
            let wake = connection
                .poll_timeout()
                .map_or(idle_until, |at| at.min(idle_until));
            tokio::select! {
                read = stream.read(&mut buf) => match read {
                    Ok(0) | Err(_) => return Ok(()),
                    Ok(len) => connection.handle_bytes(&buf[..len], Instant::now()),
                },
                () = tokio::time::sleep_until(wake.into()) => {
                    let now = Instant::now();
                    if now >= idle_until {
                        return Err(());
                    }
                    connection.handle_timeout(now);
                }
            }
        }
    };
    tokio::time::timeout_at((started + limits.session_timeout).into(), exchange)
        .await
        .unwrap_or(Err(()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rcon::{Flavour, Reply, Session};

    const PEER: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

    fn connection(password: &str) -> Connection {
        let gate = Arc::new(AuthGate::new(password, LockoutPolicy::default()));
        Connection::new(gate, PEER, Instant::now(), &ServerConfig::default())
    }

    /// Feeds what `session` writes to `server` and back, running commands with `run`, until
    /// neither has more to say.
    fn pump(session: &mut Session, server: &mut Connection, run: impl Fn(&str) -> String) {
        let now = Instant::now();
        loop {
            let mut moved = false;
            if let Some(bytes) = session.poll_transmit() {
                server.handle_bytes(&bytes, now);
                moved = true;
            }
            if let Some(command) = server.poll_command() {
                server.answer(&run(&command.text), now);
                moved = true;
            }
            if let Some(bytes) = server.poll_transmit() {
                session.handle_bytes(&bytes);
                moved = true;
            }
            if !moved {
                return;
            }
        }
    }

    #[test]
    fn our_client_and_server_agree_on_long_split_answers() {
        let mut server = connection("pw");
        let mut session = Session::new(Flavour::Source, 1 << 20);
        session.authenticate(b"pw").unwrap();
        pump(&mut session, &mut server, |_| unreachable!());
        assert_eq!(session.poll_reply().unwrap().unwrap(), Reply::Authenticated);
        let long = "é".repeat(10_000);
        session.command(b"long").unwrap();
        pump(&mut session, &mut server, |_| long.clone());
        assert_eq!(
            session.poll_reply().unwrap().unwrap(),
            Reply::Output(long.clone().into_bytes())
        );
        // srcds's extra packet after the marker's echo was dropped as stale.
        assert_eq!(session.dropped(), 1);
        session.command(b"again").unwrap();
        pump(&mut session, &mut server, |c| format!("ran {c}"));
        assert_eq!(
            session.poll_reply().unwrap().unwrap(),
            Reply::Output(b"ran again".to_vec())
        );
    }

    #[test]
    fn the_srcds_empty_value_before_the_auth_response_is_an_option() {
        for empty_value_before_auth in [false, true] {
            let config = ServerConfig {
                empty_value_before_auth,
                ..ServerConfig::default()
            };
            let gate = Arc::new(AuthGate::new("pw", config.lockout));
            let mut server = Connection::new(gate, PEER, Instant::now(), &config);
            let mut auth = Vec::new();
            write_packet(&mut auth, 9, SERVERDATA_AUTH, b"pw").unwrap();
            server.handle_bytes(&auth, Instant::now());
            let mut expected = Vec::new();
            if empty_value_before_auth {
                write_packet(&mut expected, 9, SERVERDATA_RESPONSE_VALUE, b"").unwrap();
            }
            write_packet(&mut expected, 9, SERVERDATA_AUTH_RESPONSE, b"").unwrap();
            assert_eq!(server.poll_transmit().unwrap(), expected);

            let mut server = Connection::new(
                Arc::new(AuthGate::new("pw", config.lockout)),
                PEER,
                Instant::now(),
                &config,
            );
            let mut session = Session::new(Flavour::Source, 4096);
            session.authenticate(b"pw").unwrap();
            pump(&mut session, &mut server, |_| unreachable!());
            assert_eq!(session.poll_reply().unwrap().unwrap(), Reply::Authenticated);
        }
    }

    #[test]
    fn answers_are_split_at_4096_byte_packets_on_char_boundaries() {
        let parts = split_answer(&"€".repeat(3000));
        assert!(parts.iter().all(|p| p.len() <= MAX_ANSWER_BODY));
        assert_eq!(parts.concat(), "€".repeat(3000));
        assert_eq!(parts.len(), 3);
        assert_eq!(split_answer(""), [""]);
        assert_eq!(split_answer("a\0b"), ["ab"]);
    }

    #[test]
    fn a_wrong_password_is_refused_with_minus_one_and_locks_out_after_five() {
        let gate = Arc::new(AuthGate::new("right", LockoutPolicy::default()));
        let now = Instant::now();
        for attempt in 1..=5 {
            let mut server =
                Connection::new(Arc::clone(&gate), PEER, now, &ServerConfig::default());
            let mut session = Session::new(Flavour::Source, 4096);
            session.authenticate(b"wrong").unwrap();
            pump(&mut session, &mut server, |_| unreachable!());
            assert!(matches!(
                session.poll_reply().unwrap(),
                Err(crate::QueryError::AuthRequired(_))
            ));
            assert_eq!(server.is_closed(), attempt == 5, "attempt {attempt}");
        }
        // Locked out: even the right password is refused, unchecked.
        assert_eq!(gate.check(PEER, b"right", now), AuthOutcome::LockedOut);
        let other = IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 1));
        assert_eq!(gate.check(other, b"right", now), AuthOutcome::Accepted);
        let later = now + LockoutPolicy::default().lockout + Duration::from_secs(1);
        assert_eq!(gate.check(PEER, b"right", later), AuthOutcome::Accepted);
    }

    #[test]
    fn an_empty_password_turns_rcon_off() {
        let gate = AuthGate::new("", LockoutPolicy::default());
        assert_eq!(gate.check(PEER, b"", Instant::now()), AuthOutcome::Refused);
    }

    #[test]
    fn the_failure_table_stays_bounded() {
        let policy = LockoutPolicy {
            max_tracked: 16,
            ..LockoutPolicy::default()
        };
        let gate = AuthGate::new("pw", policy);
        let now = Instant::now();
        for i in 0..1000u32 {
            let ip = IpAddr::V4(std::net::Ipv4Addr::from(i));
            gate.check(ip, b"x", now);
        }
        assert!(gate.sources.lock().unwrap().len() <= 16);
    }

    #[test]
    fn commands_before_auth_and_garbage_close_the_connection() {
        let mut server = connection("pw");
        let mut bytes = Vec::new();
        write_packet(&mut bytes, 1, SERVERDATA_EXECCOMMAND, b"status").unwrap();
        server.handle_bytes(&bytes, Instant::now());
        assert!(server.is_closed());
        assert_eq!(server.poll_command(), None);

        let mut server = connection("pw");
        server.handle_bytes(b"\xff\xff\xff\x7fgarbage", Instant::now());
        assert!(server.is_closed(), "a size over the cap");
        let mut server = connection("pw");
        server.handle_bytes(b"\x02\x00\x00\x00ab", Instant::now());
        assert!(server.is_closed(), "a size too small for id and type");
    }

    #[test]
    fn a_client_that_does_not_authenticate_in_time_is_cut() {
        let now = Instant::now();
        let mut server = connection("pw");
        let deadline = server.poll_timeout().unwrap();
        server.handle_timeout(now);
        assert!(!server.is_closed());
        server.handle_timeout(deadline);
        assert!(server.is_closed());
    }

    #[test]
    fn pipelined_commands_are_answered_in_order() {
        let mut server = connection("pw");
        let mut bytes = Vec::new();
        write_packet(&mut bytes, 1, SERVERDATA_AUTH, b"pw").unwrap();
        write_packet(&mut bytes, 2, SERVERDATA_EXECCOMMAND, b"first").unwrap();
        write_packet(&mut bytes, 3, SERVERDATA_EXECCOMMAND, b"second").unwrap();
        let now = Instant::now();
        server.handle_bytes(&bytes, now);
        let first = server.poll_command().unwrap();
        assert_eq!((first.id, first.text.as_str()), (2, "first"));
        assert_eq!(server.poll_command(), None, "one at a time");
        server.answer("1", now);
        let second = server.poll_command().unwrap();
        assert_eq!((second.id, second.text.as_str()), (3, "second"));
    }
}
