//! A BattlEye RCon server (UDP) a game written in Rust can embed, and the peer of the
//! client's tests.
//!
//! [`Server`] keeps every logged-in client ("admin") of one socket, sans-I/O; [`serve`] runs
//! it on a tokio `UdpSocket` with the [`CommandHandler`] and [`AuthGate`] of the Source RCON
//! server (constant-time password check, lockout per address). As BattlEye servers do, it
//! answers a login with `1` or `0`, announces every login to the logged-in admins as a server
//! message, splits long answers into parts, sends server messages with a sequence of their
//! own and resends them until acknowledged, and forgets an admin silent for 45 seconds.
//!
//! Safe on the internet: a datagram that is no packet, or from an address that has not
//! logged in, gets no answer; a login answer is never longer than the login (an empty
//! password gets none), so the server cannot be used as a reflector; admins are capped.
//!
//! ```no_run
//! use std::net::SocketAddr;
//! use std::sync::Arc;
//! use query_net::rcon::battleye::server::{serve, BattlEyeConfig};
//! use query_net::rcon::server::{AuthGate, CommandHandler};
//!
//! struct Console;
//!
//! impl CommandHandler for Console {
//!     async fn execute(&self, command: String, _peer: SocketAddr) -> String {
//!         match command.as_str() {
//!             "players" => "Players on server:\n(0 players in total)".to_owned(),
//!             other => format!("Unknown command: {other}"),
//!         }
//!     }
//! }
//!
//! # async fn example() -> std::io::Result<()> {
//! let socket = tokio::net::UdpSocket::bind("127.0.0.1:2306").await?;
//! let config = BattlEyeConfig::default();
//! let gate = Arc::new(AuthGate::new("secret", config.lockout));
//! let (say, messages) = tokio::sync::mpsc::channel(64);
//! let shutdown = tokio_util::sync::CancellationToken::new();
//! tokio::spawn(serve(socket, gate, Arc::new(Console), config, messages, shutdown));
//! say.send("(Global) Server: restart in 5 minutes".to_owned()).await.ok();
//! # Ok(())
//! # }
//! ```

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use query_specs::battleye::{Packet, Part, Payload, PART_HEADER_LEN, SERVER_IDLE_CUTOFF_SECS};
use query_wire::{Decode, Encode, Text};
use tokio::net::UdpSocket;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::session::encode;
use super::{sleep_until, MAX_DATAGRAM};
use crate::rcon::server::{run_command, AuthGate, AuthOutcome, CommandHandler, LockoutPolicy};

/// The most output bytes one answer packet carries before the answer is split: packets stay
/// under a common path MTU, as the answers of real servers (a few hundred bytes to about
/// 1.4 kB each) do.
pub const MAX_PART_BODY: usize = 1400 - 9 - PART_HEADER_LEN;

/// The limits of a BattlEye server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BattlEyeConfig {
    /// When an address is locked out.
    pub lockout: LockoutPolicy,
    /// Admins logged in at once, at most; a login past it is refused.
    pub max_admins: usize,
    /// How long an admin may send nothing before it is forgotten (BattlEye's 45 s).
    pub idle_cutoff: Duration,
    /// How long a server message waits for its acknowledgement before it is resent.
    pub resend_after: Duration,
    /// How many times a server message is sent before an admin that never acknowledges it
    /// is forgotten.
    pub max_sends: u32,
    /// How long one command may run; past it, the admin is told so.
    pub command_timeout: Duration,
    /// The largest datagram read; longer ones are dropped.
    pub max_packet: usize,
}

impl Default for BattlEyeConfig {
    /// 5 failures lock an address out for 15 minutes; 16 admins; 45 s of silence; messages
    /// resent every 2 s, 5 times; commands of at most 30 s; datagrams of at most 4,096 bytes.
    fn default() -> Self {
        BattlEyeConfig {
            lockout: LockoutPolicy::default(),
            max_admins: 16,
            idle_cutoff: Duration::from_secs(SERVER_IDLE_CUTOFF_SECS),
            resend_after: Duration::from_secs(2),
            max_sends: 5,
            command_timeout: Duration::from_secs(30),
            max_packet: 4096,
        }
    }
}

/// A command a logged-in admin sent, for the game to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// Who sent it.
    pub peer: SocketAddr,
    /// Its sequence, which the answer carries.
    pub sequence: u8,
    /// The command (the admin's bytes as UTF-8, invalid sequences replaced).
    pub text: String,
}

#[derive(Debug)]
struct Unacknowledged {
    packet: Vec<u8>,
    sent_at: Instant,
    sends: u32,
}

#[derive(Debug)]
struct Admin {
    number: u32,
    heard_at: Instant,
    next_message: u8,
    unacknowledged: BTreeMap<u8, Unacknowledged>,
    running: Option<u8>,
    /// The latest answer, by its sequence: a command resent because its answer was lost is
    /// answered again, not run twice.
    latest: Option<(u8, Vec<Vec<u8>>)>,
}

/// Every admin of one BattlEye socket, as a state machine: fed datagrams and the time; asked
/// what to send where, which command to run, and when to wake.
#[derive(Debug)]
pub struct Server {
    gate: Arc<AuthGate>,
    config: BattlEyeConfig,
    admins: HashMap<SocketAddr, Admin>,
    next_number: u32,
    outgoing: VecDeque<(SocketAddr, Vec<u8>)>,
    commands: VecDeque<Command>,
    dropped: u64,
}

impl Server {
    /// A server checking passwords with `gate`, under `config`.
    pub fn new(gate: Arc<AuthGate>, config: BattlEyeConfig) -> Self {
        Server {
            gate,
            config,
            admins: HashMap::new(),
            next_number: 0,
            outgoing: VecDeque::new(),
            commands: VecDeque::new(),
            dropped: 0,
        }
    }

    /// How many admins are logged in.
    pub fn admins(&self) -> usize {
        self.admins.len()
    }

    /// Datagrams dropped unanswered: no packet, a bad checksum, too long, not logged in.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// A datagram from `from`.
    pub fn handle_datagram(&mut self, from: SocketAddr, datagram: &[u8], now: Instant) {
        if datagram.len() > self.config.max_packet || !self.accept(from, datagram, now) {
            self.dropped += 1;
        }
    }

    fn accept(&mut self, from: SocketAddr, datagram: &[u8], now: Instant) -> bool {
        let Ok(packet) = Packet::from_bytes(datagram) else {
            return false;
        };
        match packet.payload {
            Payload::Login { password } => self.login(from, password.as_bytes(), now),
            Payload::Command { sequence, command } => {
                let Some(admin) = self.admins.get_mut(&from) else {
                    return false;
                };
                admin.heard_at = now;
                if admin.running == Some(sequence) {
                    return true;
                }
                if let Some((latest, parts)) = &admin.latest {
                    if *latest == sequence {
                        for part in parts {
                            self.outgoing.push_back((from, part.clone()));
                        }
                        return true;
                    }
                }
                if admin.running.is_some() {
                    // One command at a time: the admin resends this one if it still wants it.
                    return false;
                }
                if command.as_bytes().is_empty() {
                    // The keep-alive: an empty answer.
                    let parts = answer_packets(sequence, "");
                    for part in &parts {
                        self.outgoing.push_back((from, part.clone()));
                    }
                    admin.latest = Some((sequence, parts));
                    return true;
                }
                admin.running = Some(sequence);
                self.commands.push_back(Command {
                    peer: from,
                    sequence,
                    text: String::from_utf8_lossy(command.as_bytes()).into_owned(),
                });
                true
            }
            Payload::ServerMessage { sequence, .. } => {
                let Some(admin) = self.admins.get_mut(&from) else {
                    return false;
                };
                admin.heard_at = now;
                admin.unacknowledged.remove(&sequence).is_some()
            }
        }
    }

    fn login(&mut self, from: SocketAddr, password: &[u8], now: Instant) -> bool {
        // An empty password is never right, and its 8-byte login would get a 9-byte answer.
        if password.is_empty() {
            return false;
        }
        let room = self.admins.contains_key(&from) || self.admins.len() < self.config.max_admins;
        let accepted = room && self.gate.check(from.ip(), password, now) == AuthOutcome::Accepted;
        let answer = encode(Payload::Login {
            password: Text::from_bytes(if accepted { b"\x01" } else { b"\x00" }),
        });
        if let Ok(answer) = answer {
            self.outgoing.push_back((from, answer));
        }
        if accepted {
            let number = self.next_number;
            self.next_number = self.next_number.wrapping_add(1);
            self.admins.insert(
                from,
                Admin {
                    number,
                    heard_at: now,
                    next_message: 0,
                    unacknowledged: BTreeMap::new(),
                    running: None,
                    latest: None,
                },
            );
            self.broadcast(&format!("RCon admin #{number} ({from}) logged in"), now);
        }
        true
    }

    /// The next command to run; [`answer`](Server::answer) it.
    pub fn poll_command(&mut self) -> Option<Command> {
        self.commands.pop_front()
    }

    /// The output of `command`, split into parts when it is long. Nothing is sent if the
    /// admin was forgotten meanwhile.
    pub fn answer(&mut self, command: &Command, output: &str) {
        let Some(admin) = self.admins.get_mut(&command.peer) else {
            return;
        };
        if admin.running != Some(command.sequence) {
            return;
        }
        admin.running = None;
        let parts = answer_packets(command.sequence, output);
        for part in &parts {
            self.outgoing.push_back((command.peer, part.clone()));
        }
        admin.latest = Some((command.sequence, parts));
    }

    /// Sends `message` to every logged-in admin, each with its own sequence, resent until
    /// acknowledged. An admin with 256 messages unacknowledged is forgotten.
    pub fn broadcast(&mut self, message: &str, now: Instant) {
        let mut text = message.as_bytes();
        text = &text[..text.len().min(MAX_DATAGRAM - 9)];
        let mut gone = Vec::new();
        for (peer, admin) in &mut self.admins {
            let sequence = admin.next_message;
            if admin.unacknowledged.contains_key(&sequence) {
                gone.push(*peer);
                continue;
            }
            admin.next_message = sequence.wrapping_add(1);
            let Ok(packet) = encode(Payload::ServerMessage {
                sequence,
                message: Text::from_bytes(text),
            }) else {
                continue;
            };
            self.outgoing.push_back((*peer, packet.clone()));
            admin.unacknowledged.insert(
                sequence,
                Unacknowledged {
                    packet,
                    sent_at: now,
                    sends: 1,
                },
            );
        }
        for peer in gone {
            self.admins.remove(&peer);
        }
    }

    /// The next datagram to send, and where.
    pub fn poll_transmit(&mut self) -> Option<(SocketAddr, Vec<u8>)> {
        self.outgoing.pop_front()
    }

    /// When [`handle_timeout`](Server::handle_timeout) is due: a resend, or an admin's cut-off.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.admins
            .values()
            .flat_map(|admin| {
                let resends = admin
                    .unacknowledged
                    .values()
                    .map(|u| u.sent_at + self.config.resend_after);
                resends.chain([admin.heard_at + self.config.idle_cutoff])
            })
            .min()
    }

    /// The time passed: silent admins are forgotten, unacknowledged messages resent, and
    /// admins that never acknowledge forgotten.
    pub fn handle_timeout(&mut self, now: Instant) {
        let config = self.config;
        let outgoing = &mut self.outgoing;
        self.admins.retain(|peer, admin| {
            if now >= admin.heard_at + config.idle_cutoff {
                return false;
            }
            for message in admin.unacknowledged.values_mut() {
                if now < message.sent_at + config.resend_after {
                    continue;
                }
                if message.sends >= config.max_sends {
                    return false;
                }
                message.sends += 1;
                message.sent_at = now;
                outgoing.push_back((*peer, message.packet.clone()));
            }
            true
        });
    }

    /// The number the server gave the admin at `peer` when it logged in.
    pub fn admin_number(&self, peer: SocketAddr) -> Option<u32> {
        self.admins.get(&peer).map(|admin| admin.number)
    }
}

/// The packets of an answer: one when it fits [`MAX_PART_BODY`], else parts of at most that
/// many bytes (cut at character boundaries), each with the part header; at most 255 parts
/// (about 350 kB), past which the output is cut: the count is a byte.
pub fn answer_packets(sequence: u8, output: &str) -> Vec<Vec<u8>> {
    let command = |text: &[u8]| {
        encode(Payload::Command {
            sequence,
            command: Text::from_bytes(text),
        })
        .unwrap_or_default()
    };
    if output.len() <= MAX_PART_BODY && !output.starts_with('\0') {
        return vec![command(output.as_bytes())];
    }
    let mut pieces: Vec<&str> = Vec::new();
    let mut rest = output;
    while !rest.is_empty() && pieces.len() < 255 {
        let mut end = rest.len().min(MAX_PART_BODY);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        pieces.push(&rest[..end]);
        rest = &rest[end..];
    }
    let count = u8::try_from(pieces.len()).unwrap_or(u8::MAX);
    pieces
        .iter()
        .enumerate()
        .map(|(index, body)| {
            let part = Part {
                count,
                index: u8::try_from(index).unwrap_or(u8::MAX),
                body: body.as_bytes(),
            };
            command(&part.to_vec().unwrap_or_default())
        })
        .collect()
}

/// Serves BattlEye RCon on `socket` until `shutdown` is cancelled: logins checked by `gate`,
/// commands run by `handler` (one at a time per admin, several admins at once), and each
/// string from `messages` sent to every admin as a server message.
pub async fn serve<H: CommandHandler>(
    socket: UdpSocket,
    gate: Arc<AuthGate>,
    handler: Arc<H>,
    config: BattlEyeConfig,
    mut messages: mpsc::Receiver<String>,
    shutdown: tokio_util::sync::CancellationToken,
) {
    let mut server = Server::new(gate, config);
    let mut running: JoinSet<(Command, String)> = JoinSet::new();
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let mut messages_open = true;
    loop {
        while let Some((peer, datagram)) = server.poll_transmit() {
            // A send that fails (an address that went away) loses that datagram only.
            let _ = socket.send_to(&datagram, peer).await;
        }
        while let Some(command) = server.poll_command() {
            let handler = Arc::clone(&handler);
            running.spawn(async move {
                let text = command.text.clone();
                let output =
                    run_command(handler.as_ref(), text, command.peer, config.command_timeout).await;
                (command, output)
            });
        }
        let wake = server.poll_timeout();
        tokio::select! {
            biased;
            () = shutdown.cancelled() => return,
            Some(done) = running.join_next() => {
                if let Ok((command, output)) = done {
                    server.answer(&command, &output);
                }
            }
            // Messages before datagrams: a message the game sent while running a command
            // goes out before the answers to the commands read after it.
            message = messages.recv(), if messages_open => match message {
                Some(message) => server.broadcast(&message, Instant::now()),
                None => messages_open = false,
            },
            received = socket.recv_from(&mut buf) => {
                if let Ok((len, from)) = received {
                    server.handle_datagram(from, &buf[..len], Instant::now());
                }
            }
            () = sleep_until(wake) => server.handle_timeout(Instant::now()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rcon::battleye::{Event, Session};

    fn peer(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    fn server(password: &str) -> Server {
        let config = BattlEyeConfig::default();
        Server::new(Arc::new(AuthGate::new(password, config.lockout)), config)
    }

    /// Carries datagrams between `session` (at `from`) and `server`, running commands with
    /// `run`, until neither has more to send. Datagrams to other admins are dropped.
    fn pump(
        session: &mut Session,
        from: SocketAddr,
        server: &mut Server,
        now: Instant,
        run: impl Fn(&str) -> String,
    ) {
        loop {
            let mut moved = false;
            while let Some(datagram) = session.poll_transmit(now) {
                server.handle_datagram(from, &datagram, now);
                moved = true;
            }
            while let Some(command) = server.poll_command() {
                server.answer(&command, &run(&command.text));
                moved = true;
            }
            while let Some((to, datagram)) = server.poll_transmit() {
                if to == from {
                    session.handle_datagram(&datagram, now);
                }
                moved = true;
            }
            if !moved {
                return;
            }
        }
    }

    fn events(session: &mut Session) -> Vec<Event> {
        std::iter::from_fn(|| session.poll_event())
            .map(Result::unwrap)
            .collect()
    }

    #[test]
    fn our_client_and_server_agree_on_login_messages_and_split_answers() {
        let t0 = Instant::now();
        let mut server = server("pw");
        let mut session = Session::new(Duration::from_secs(1), 3, 1 << 20);
        session.login(b"pw").unwrap();
        pump(&mut session, peer(1), &mut server, t0, |_| unreachable!());
        assert_eq!(
            events(&mut session),
            [
                Event::LoggedIn,
                Event::Message(b"RCon admin #0 (127.0.0.1:1) logged in".to_vec())
            ]
        );
        // The login message was acknowledged: nothing to resend.
        assert_eq!(server.poll_timeout(), Some(t0 + server.config.idle_cutoff));

        let long = "Ünïcode ban list\n".repeat(1000);
        session.command(b"bans").unwrap();
        pump(&mut session, peer(1), &mut server, t0, |_| long.clone());
        assert_eq!(events(&mut session), [Event::Output(long.into_bytes())]);
        assert_eq!(session.dropped(), 0);
    }

    #[test]
    fn long_answers_are_split_into_numbered_parts_on_char_boundaries() {
        let output = "€".repeat(2000);
        let packets = answer_packets(7, &output);
        assert_eq!(packets.len(), 5);
        let mut joined = Vec::new();
        for (index, packet) in packets.iter().enumerate() {
            assert!(packet.len() <= 1400);
            let Payload::Command { sequence, command } =
                Packet::from_bytes(packet).unwrap().payload
            else {
                panic!("not a command answer");
            };
            assert_eq!(sequence, 7);
            let part = Part::from_bytes(command.as_bytes()).unwrap();
            assert_eq!((part.count, usize::from(part.index)), (5, index));
            std::str::from_utf8(part.body).unwrap();
            joined.extend_from_slice(part.body);
        }
        assert_eq!(joined, output.as_bytes());
        assert_eq!(answer_packets(0, "short").len(), 1);
        // An output that starts with a NUL would read as a part header: it is sent as parts.
        assert_eq!(answer_packets(0, "\0x").len(), 1);
        assert_eq!(
            answer_packets(0, &"x".repeat(300 * MAX_PART_BODY)).len(),
            255
        );
    }

    #[test]
    fn a_resent_command_is_answered_again_not_run_twice() {
        let t0 = Instant::now();
        let mut server = server("pw");
        let mut session = Session::new(Duration::from_secs(1), 3, 1 << 20);
        session.login(b"pw").unwrap();
        pump(&mut session, peer(1), &mut server, t0, |_| unreachable!());
        events(&mut session);
        session.command(b"#lock").unwrap();
        let command = session.poll_transmit(t0).unwrap();
        server.handle_datagram(peer(1), &command, t0);
        let run = server.poll_command().unwrap();
        server.answer(&run, "locked");
        let (_, lost) = server.poll_transmit().unwrap();
        server.handle_datagram(peer(1), &command, t0);
        assert_eq!(server.poll_command(), None);
        assert_eq!(server.poll_transmit().unwrap().1, lost);
    }

    #[test]
    fn messages_are_resent_until_acknowledged_then_the_admin_is_dropped() {
        let t0 = Instant::now();
        let mut server = server("pw");
        let login = encode(Payload::Login {
            password: Text::from_bytes(b"pw"),
        })
        .unwrap();
        server.handle_datagram(peer(1), &login, t0);
        let sent: Vec<_> = std::iter::from_fn(|| server.poll_transmit()).collect();
        assert_eq!(sent.len(), 2, "the login answer, then the login message");
        for _ in 1..server.config.max_sends {
            let now = server.poll_timeout().unwrap();
            server.handle_timeout(now);
            assert_eq!(server.poll_transmit().unwrap().1, sent[1].1);
        }
        let now = server.poll_timeout().unwrap();
        server.handle_timeout(now);
        assert_eq!(server.admins(), 0);
    }

    #[test]
    fn silent_admins_are_forgotten_after_45_seconds() {
        let t0 = Instant::now();
        let mut server = server("pw");
        let mut session = Session::new(Duration::from_secs(1), 3, 1 << 20);
        session.login(b"pw").unwrap();
        pump(&mut session, peer(1), &mut server, t0, |_| unreachable!());
        assert_eq!(server.admins(), 1);
        server.handle_timeout(t0 + Duration::from_secs(44));
        assert_eq!(server.admins(), 1);
        server.handle_timeout(t0 + Duration::from_secs(45));
        assert_eq!(server.admins(), 0);
    }

    #[test]
    fn strangers_get_no_answer_and_logins_no_amplification() {
        let t0 = Instant::now();
        let mut server = server("pw");
        let command = encode(Payload::Command {
            sequence: 0,
            command: Text::from_bytes(b"players"),
        })
        .unwrap();
        server.handle_datagram(peer(1), &command, t0);
        server.handle_datagram(peer(1), b"BE\0\0\0\0\xff\x01\x00", t0);
        let empty = encode(Payload::Login {
            password: Text::from_bytes(b""),
        })
        .unwrap();
        server.handle_datagram(peer(1), &empty, t0);
        assert_eq!(server.poll_transmit(), None);
        assert_eq!(server.dropped(), 3);
        let wrong = encode(Payload::Login {
            password: Text::from_bytes(b"x"),
        })
        .unwrap();
        server.handle_datagram(peer(1), &wrong, t0);
        let (_, refused) = server.poll_transmit().unwrap();
        assert!(refused.len() <= wrong.len());
        assert_eq!(&refused[7..], b"\x00\x00");
    }

    #[test]
    fn repeated_failures_lock_the_address_out() {
        let t0 = Instant::now();
        let mut server = server("pw");
        for password in ["a", "b", "c", "d", "e", "pw"] {
            let mut session = Session::new(Duration::from_secs(1), 1, 1024);
            session.login(password.as_bytes()).unwrap();
            pump(&mut session, peer(1), &mut server, t0, |_| unreachable!());
            assert!(matches!(
                session.poll_event().unwrap(),
                Err(crate::QueryError::AuthRequired(_))
            ));
        }
        assert_eq!(server.admins(), 0);
        let elsewhere = SocketAddr::from(([192, 0, 2, 1], 2));
        let mut session = Session::new(Duration::from_secs(1), 1, 1024);
        session.login(b"pw").unwrap();
        pump(&mut session, elsewhere, &mut server, t0, |_| unreachable!());
        assert_eq!(session.poll_event().unwrap().unwrap(), Event::LoggedIn);
    }

    #[test]
    fn admins_are_capped() {
        let t0 = Instant::now();
        let config = BattlEyeConfig {
            max_admins: 1,
            ..BattlEyeConfig::default()
        };
        let mut server = Server::new(Arc::new(AuthGate::new("pw", config.lockout)), config);
        for (port, accepted) in [(1, true), (2, false), (1, true)] {
            let mut session = Session::new(Duration::from_secs(1), 1, 1024);
            session.login(b"pw").unwrap();
            pump(
                &mut session,
                peer(port),
                &mut server,
                t0,
                |_| unreachable!(),
            );
            assert_eq!(
                session.poll_event().unwrap().is_ok(),
                accepted,
                "port {port}"
            );
        }
        assert_eq!(server.admins(), 1);
    }
}
