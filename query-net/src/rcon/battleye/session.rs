//! The client's side of a BattlEye RCon session, without I/O.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use query_specs::battleye::{Packet, PacketView, Part, Payload, PART_MARKER};
use query_wire::{Decode, Encode, Text};

use crate::engine::Retry;
use crate::error::QueryError;
use crate::part_wait::PartWait;

use super::{KEEP_ALIVE, MAX_DATAGRAM};

/// What a [`Session`] reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The server accepted the password: commands may follow.
    LoggedIn,
    /// A command's whole output, its parts joined in index order, as the server's bytes.
    Output(Vec<u8>),
    /// A console message the server pushed (a chat line, an admin logging in, a kick),
    /// already acknowledged.
    Message(Vec<u8>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nothing sent yet.
    Idle,
    /// The password was sent.
    LoggingIn,
    /// Logged in.
    Ready,
    /// Refused, or the server stopped answering: the session is of no more use.
    Failed,
}

/// The command waiting for its answer.
#[derive(Debug)]
struct Running {
    sequence: u8,
    /// An empty command sent to keep the session: its answer is no [`Event`].
    keep_alive: bool,
    /// The parts of a split answer, by index; empty until the first part.
    parts: Vec<Option<Vec<u8>>>,
    arrived: usize,
    bytes: usize,
    /// The round trip to the first part.
    round_trip: Option<Duration>,
    /// The wait for the rest once a part arrived: the command is not resent then (that
    /// would run it twice), and the answer fails once the parts stop coming.
    rest: Option<PartWait>,
}

/// Which server message sequences were delivered lately, to drop the resends of a message
/// whose acknowledgement the server did not get. Sequences wrap at 255: the half of them
/// behind the latest one are remembered, the half ahead count as new.
#[derive(Debug, Clone)]
struct MessageWindow {
    next: Option<u8>,
    seen: [bool; 256],
}

impl MessageWindow {
    /// Whether `sequence` is new (then it is remembered).
    fn accept(&mut self, sequence: u8) -> bool {
        let Some(next) = self.next else {
            self.next = Some(sequence.wrapping_add(1));
            self.seen[usize::from(sequence)] = true;
            return true;
        };
        let ahead = sequence.wrapping_sub(next);
        if ahead < 128 {
            // New, perhaps after a few lost ones: those between stay unseen, and what falls
            // out of the window behind is forgotten.
            let mut s = next;
            loop {
                self.seen[usize::from(s)] = false;
                self.seen[usize::from(s.wrapping_add(128))] = false;
                if s == sequence {
                    break;
                }
                s = s.wrapping_add(1);
            }
            self.seen[usize::from(sequence)] = true;
            self.next = Some(sequence.wrapping_add(1));
            return true;
        }
        // Behind: a resend of a delivered message, or a late one.
        let slot = &mut self.seen[usize::from(sequence)];
        !std::mem::replace(slot, true)
    }
}

/// One BattlEye RCon session as a state machine: [`login`](Session::login), then
/// [`command`](Session::command), one at a time; datagrams from the server go to
/// [`handle_datagram`](Session::handle_datagram), what to send comes from
/// [`poll_transmit`](Session::poll_transmit), and what happened from
/// [`poll_event`](Session::poll_event); the time goes to
/// [`handle_timeout`](Session::handle_timeout) at [`poll_timeout`](Session::poll_timeout).
///
/// - The login and each command are resent after the attempt's timeout, up to the attempts
///   given, while nothing of their answer arrived; then the session fails (the server is
///   gone, or dropped the session).
/// - Commands carry a sequence number, 0 to 255 and wrapping; an answer with another
///   sequence (a late answer to a command given up on, a duplicate) is dropped.
/// - A split answer is joined once every part arrived, in index order, whatever order they
///   came in; duplicates are dropped. Once a part is in, the command is not resent (it would
///   run twice): when the parts stop coming ([`PartWait`]) the command fails, naming how many
///   arrived, and the session goes on.
/// - Every server message is acknowledged, its resends too; a resend is not reported twice.
/// - Logged in and idle for [`KEEP_ALIVE`], the session sends an empty command, which keeps
///   the server from dropping it after its 45 s; an unanswered keep-alive fails the session.
/// - A datagram whose checksum does not match, or that is no BattlEye packet, is dropped and
///   counted ([`dropped`](Session::dropped)): it is never taken for an answer.
///
/// ```
/// use std::time::{Duration, Instant};
/// use query_net::rcon::battleye::{Event, Session};
/// use query_specs::battleye::{PacketView, Payload};
/// use query_wire::{Encode, Text};
///
/// let t0 = Instant::now();
/// let mut session = Session::new(Duration::from_secs(2), 3, 1 << 20);
/// session.login(b"secret")?;
/// assert!(session.poll_transmit(t0).is_some());
/// let accepted = PacketView { payload: Payload::Login { password: Text::from_bytes(b"\x01") } };
/// session.handle_datagram(&accepted.to_vec()?, t0);
/// assert_eq!(session.poll_event().unwrap()?, Event::LoggedIn);
///
/// session.command(b"players")?;
/// session.poll_transmit(t0).unwrap();
/// // The answer in two parts, the second first: `00`, the count, the index.
/// for part in [&b"\x00\x02\x01 2 players"[..], b"\x00\x02\x00Players:"] {
///     let answer = PacketView {
///         payload: Payload::Command { sequence: 0, command: Text::from_bytes(part) },
///     };
///     session.handle_datagram(&answer.to_vec()?, t0);
/// }
/// assert_eq!(session.poll_event().unwrap()?, Event::Output(b"Players: 2 players".to_vec()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Session {
    state: State,
    retry: Retry,
    timeout: Duration,
    keep_alive: Duration,
    max_answer: usize,
    next_sequence: u8,
    running: Option<Running>,
    acks: VecDeque<Vec<u8>>,
    /// When the login or a command was last sent (acknowledgements do not count: the
    /// server's cut-off is for clients that send no commands).
    last_request: Option<Instant>,
    messages: MessageWindow,
    events: VecDeque<Result<Event, QueryError>>,
    dropped: u64,
}

impl Session {
    /// A session that waits `timeout` for each attempt, sends the login and each command at
    /// most `attempts` times, and takes at most `max_answer` bytes of one command's output.
    pub fn new(timeout: Duration, attempts: u32, max_answer: usize) -> Self {
        Session {
            state: State::Idle,
            retry: Retry::new(timeout, attempts),
            timeout,
            keep_alive: KEEP_ALIVE,
            max_answer,
            next_sequence: 0,
            running: None,
            acks: VecDeque::new(),
            last_request: None,
            messages: MessageWindow {
                next: None,
                seen: [false; 256],
            },
            events: VecDeque::new(),
            dropped: 0,
        }
    }

    /// Sends an empty command after `idle` without sending, instead of [`KEEP_ALIVE`].
    #[must_use]
    pub fn with_keep_alive(mut self, idle: Duration) -> Self {
        self.keep_alive = idle;
        self
    }

    /// Whether the password was accepted and no command (other than a keep-alive) is running.
    pub fn is_ready(&self) -> bool {
        self.state == State::Ready && self.running.as_ref().is_none_or(|r| r.keep_alive)
    }

    /// Whether the session is of no more use (refused, or the server stopped answering).
    pub fn is_failed(&self) -> bool {
        self.state == State::Failed
    }

    /// Datagrams dropped: a bad checksum, no BattlEye packet, an answer to nothing running,
    /// a duplicate part, a resent server message.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// What the session waits for, for timeouts.
    pub fn waiting_for(&self) -> Option<&'static str> {
        match (&self.state, &self.running) {
            (State::LoggingIn, _) => Some("BattlEye login answer"),
            (State::Ready, Some(r)) if !r.keep_alive => Some("BattlEye command answer"),
            _ => None,
        }
    }

    /// Sends the password. Only on a fresh session.
    pub fn login(&mut self, password: &[u8]) -> Result<(), QueryError> {
        if self.state != State::Idle {
            return Err(QueryError::protocol(
                "BattlEye: log in once, on a fresh session",
            ));
        }
        let packet = encode(Payload::Login {
            password: Text::from_bytes(password),
        })?;
        self.retry.start("BattlEye login answer", &packet);
        self.state = State::LoggingIn;
        Ok(())
    }

    /// Sends `command` with the next sequence number. Refused before anything is sent when
    /// the session is not logged in, a command is running, or the command cannot fit a
    /// datagram. An empty command is the keep-alive: its answer is empty.
    pub fn command(&mut self, command: &[u8]) -> Result<(), QueryError> {
        if self.state == State::Failed {
            return Err(QueryError::Io(std::io::Error::new(
                std::io::ErrorKind::NotConnected,
                "the BattlEye session is of no more use: log in again",
            )));
        }
        if !self.is_ready() {
            return Err(QueryError::protocol(
                "BattlEye: a command needs a logged-in session with no command running",
            ));
        }
        if command.len() > MAX_DATAGRAM - 9 {
            return Err(QueryError::protocol(format!(
                "BattlEye: the command is {} bytes long, over the {} bytes a datagram holds",
                command.len(),
                MAX_DATAGRAM - 9
            )));
        }
        self.start_command(command, false)
    }

    fn start_command(&mut self, command: &[u8], keep_alive: bool) -> Result<(), QueryError> {
        let sequence = self.next_sequence;
        let packet = encode(Payload::Command {
            sequence,
            command: Text::from_bytes(command),
        })?;
        self.next_sequence = sequence.wrapping_add(1);
        self.retry.start("BattlEye command answer", &packet);
        self.running = Some(Running {
            sequence,
            keep_alive,
            parts: Vec::new(),
            arrived: 0,
            bytes: 0,
            round_trip: None,
            rest: None,
        });
        Ok(())
    }

    /// Gives up on the running command (its deadline passed): its answer, if it still comes,
    /// is dropped, and the next command may be sent.
    pub fn abandon(&mut self, now: Instant) {
        if self.running.take().is_some() {
            self.retry.finish(now);
        }
    }

    /// The next datagram to send: acknowledgements first, then a login or command (re)send.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        if let Some(ack) = self.acks.pop_front() {
            return Some(ack);
        }
        let datagram = self.retry.poll_transmit(now)?.to_vec();
        self.last_request = Some(now);
        Some(datagram)
    }

    /// The next event, in the order they happened.
    pub fn poll_event(&mut self) -> Option<Result<Event, QueryError>> {
        self.events.pop_front()
    }

    /// When [`handle_timeout`](Session::handle_timeout) is due.
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.state == State::Failed {
            return None;
        }
        let rest = self
            .running
            .as_ref()
            .and_then(|r| r.rest.as_ref())
            .and_then(PartWait::until);
        let keep_alive = match (&self.state, &self.running, self.last_request) {
            (State::Ready, None, Some(sent)) => Some(sent + self.keep_alive),
            _ => None,
        };
        [self.retry.poll_timeout(), rest, keep_alive]
            .into_iter()
            .flatten()
            .min()
    }

    /// The time passed: resends, the end of the wait for parts, keep-alives.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.state == State::Failed {
            return;
        }
        if let Err(error) = self.retry.handle_timeout(now) {
            let error = match self.running.as_ref() {
                Some(r) if r.keep_alive => QueryError::Io(std::io::Error::new(
                    std::io::ErrorKind::ConnectionAborted,
                    "the BattlEye server stopped answering (keep-alive unanswered): the \
                     session is lost",
                )),
                _ => error,
            };
            self.running = None;
            self.state = State::Failed;
            self.events.push_back(Err(error));
            return;
        }
        if let Some(running) = &self.running {
            if running.rest.is_some_and(|rest| rest.is_over(now)) {
                let error = QueryError::protocol(format!(
                    "BattlEye: the answer is incomplete, {} of its {} parts arrived",
                    running.arrived,
                    running.parts.len()
                ));
                let keep_alive = running.keep_alive;
                self.running = None;
                if !keep_alive {
                    self.events.push_back(Err(error));
                }
            }
            return;
        }
        if self.state == State::Ready
            && self
                .last_request
                .is_some_and(|s| now >= s + self.keep_alive)
        {
            // An empty command never fails to encode.
            let _ = self.start_command(b"", true);
        }
    }

    /// A datagram from the server.
    pub fn handle_datagram(&mut self, datagram: &[u8], now: Instant) {
        let Ok(packet) = Packet::from_bytes(datagram) else {
            self.dropped += 1;
            return;
        };
        let accepted = match packet.payload {
            Payload::Login { password } => self.on_login(password.as_bytes(), now),
            Payload::Command { sequence, command } => {
                self.on_answer(sequence, command.as_bytes(), now)
            }
            Payload::ServerMessage { sequence, message } => {
                self.on_message(sequence, message.as_bytes())
            }
        };
        if !accepted {
            self.dropped += 1;
        }
    }

    fn on_login(&mut self, answer: &[u8], now: Instant) -> bool {
        if self.state != State::LoggingIn {
            return false;
        }
        match answer {
            [1] => {
                self.retry.finish(now);
                self.state = State::Ready;
                self.events.push_back(Ok(Event::LoggedIn));
            }
            [0] => {
                self.retry.finish(now);
                self.state = State::Failed;
                self.events.push_back(Err(QueryError::AuthRequired(
                    "the BattlEye server refused the password".into(),
                )));
            }
            _ => return false,
        }
        true
    }

    fn on_message(&mut self, sequence: u8, message: &[u8]) -> bool {
        if !matches!(self.state, State::Ready) {
            // Not logged in: no server would push to us, so it is not acknowledged either.
            return false;
        }
        // A resend is acknowledged again: the server resends because our ack was lost.
        if let Ok(ack) = encode(Payload::ServerMessage {
            sequence,
            message: Text::from_bytes(b""),
        }) {
            self.acks.push_back(ack);
        }
        if !self.messages.accept(sequence) {
            return false;
        }
        self.events.push_back(Ok(Event::Message(message.to_vec())));
        true
    }

    fn on_answer(&mut self, sequence: u8, text: &[u8], now: Instant) -> bool {
        let Some(running) = self.running.as_mut().filter(|r| r.sequence == sequence) else {
            return false;
        };
        let (count, index, body) = if text.first() == Some(&PART_MARKER) {
            match Part::from_bytes(text) {
                Ok(part) if part.count >= 1 && part.index < part.count => {
                    (usize::from(part.count), usize::from(part.index), part.body)
                }
                _ => return false,
            }
        } else {
            (1, 0, text)
        };
        if running.parts.is_empty() {
            running.parts.resize(count, None);
        }
        if running.parts.len() != count || running.parts[index].is_some() {
            return false;
        }
        if running.bytes + body.len() > self.max_answer {
            let error = QueryError::protocol(format!(
                "BattlEye: the answer is over the {} bytes one answer may take",
                self.max_answer
            ));
            self.abandon(now);
            self.events.push_back(Err(error));
            return true;
        }
        running.bytes += body.len();
        running.parts[index] = Some(body.to_vec());
        running.arrived += 1;
        if running.arrived < count {
            let round_trip = *running
                .round_trip
                .get_or_insert_with(|| self.retry.finish(now).unwrap_or(self.timeout));
            running
                .rest
                .get_or_insert_with(|| PartWait::new(self.timeout))
                .part_arrived(round_trip, now);
            return true;
        }
        let running = self.running.take().expect("matched above");
        self.retry.finish(now);
        if !running.keep_alive {
            let output = running.parts.into_iter().flatten().flatten().collect();
            self.events.push_back(Ok(Event::Output(output)));
        }
        true
    }
}

/// A packet's bytes, its checksum computed.
pub(super) fn encode(payload: Payload<'_>) -> Result<Vec<u8>, QueryError> {
    Ok(PacketView { payload }.to_vec()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMEOUT: Duration = Duration::from_secs(2);

    fn packet(payload: Payload<'_>) -> Vec<u8> {
        encode(payload).unwrap()
    }

    fn answer(sequence: u8, text: &[u8]) -> Vec<u8> {
        packet(Payload::Command {
            sequence,
            command: Text::from_bytes(text),
        })
    }

    fn part(sequence: u8, count: u8, index: u8, body: &[u8]) -> Vec<u8> {
        let part = Part { count, index, body };
        answer(sequence, &part.to_vec().unwrap())
    }

    fn message(sequence: u8, text: &[u8]) -> Vec<u8> {
        packet(Payload::ServerMessage {
            sequence,
            message: Text::from_bytes(text),
        })
    }

    fn logged_in(t0: Instant) -> Session {
        let mut session = Session::new(TIMEOUT, 3, 1 << 20);
        session.login(b"pw").unwrap();
        assert!(session.poll_transmit(t0).is_some());
        session.handle_datagram(
            &packet(Payload::Login {
                password: Text::from_bytes(b"\x01"),
            }),
            t0,
        );
        assert_eq!(session.poll_event().unwrap().unwrap(), Event::LoggedIn);
        session
    }

    #[test]
    fn the_login_is_the_documented_packet_and_a_refusal_is_an_auth_error() {
        let t0 = Instant::now();
        let mut session = Session::new(TIMEOUT, 3, 1024);
        session.login(b"password").unwrap();
        assert_eq!(
            session.poll_transmit(t0).unwrap(),
            b"BE\xde\x26\x2d\x52\xff\x00password"
        );
        session.handle_datagram(
            &packet(Payload::Login {
                password: Text::from_bytes(b"\x00"),
            }),
            t0,
        );
        let error = session.poll_event().unwrap().unwrap_err();
        assert!(matches!(error, QueryError::AuthRequired(_)), "{error}");
        assert!(session.is_failed());
        assert!(session.command(b"players").is_err());
    }

    #[test]
    fn an_unanswered_login_is_resent_then_times_out() {
        let t0 = Instant::now();
        let mut session = Session::new(TIMEOUT, 2, 1024);
        session.login(b"pw").unwrap();
        let first = session.poll_transmit(t0).unwrap();
        assert_eq!(session.poll_transmit(t0), None);
        let t1 = session.poll_timeout().unwrap();
        assert_eq!(t1, t0 + TIMEOUT);
        session.handle_timeout(t1);
        assert_eq!(session.poll_transmit(t1).unwrap(), first);
        let t2 = session.poll_timeout().unwrap();
        session.handle_timeout(t2);
        assert!(matches!(
            session.poll_event().unwrap(),
            Err(QueryError::Timeout { attempts: 2, .. })
        ));
        assert!(session.is_failed());
    }

    #[test]
    fn a_bad_checksum_is_dropped_not_taken_for_the_answer() {
        let t0 = Instant::now();
        let mut session = logged_in(t0);
        session.command(b"players").unwrap();
        session.poll_transmit(t0).unwrap();
        let mut forged = answer(0, b"forged");
        forged[2] ^= 1;
        session.handle_datagram(&forged, t0);
        session.handle_datagram(b"garbage", t0);
        assert!(session.poll_event().is_none());
        assert_eq!(session.dropped(), 2);
        session.handle_datagram(&answer(0, b"real"), t0);
        assert_eq!(
            session.poll_event().unwrap().unwrap(),
            Event::Output(b"real".to_vec())
        );
    }

    #[test]
    fn sequences_wrap_at_255_and_stale_answers_are_dropped() {
        let t0 = Instant::now();
        let mut session = logged_in(t0);
        for round in 0..=256u16 {
            let sequence = (round % 256) as u8;
            session.command(b"x").unwrap();
            let sent = session.poll_transmit(t0).unwrap();
            assert_eq!(sent[8], sequence, "round {round}");
            // The previous command's answer, late: dropped.
            session.handle_datagram(&answer(sequence.wrapping_sub(1), b"old"), t0);
            assert!(session.poll_event().is_none());
            session.handle_datagram(&answer(sequence, b"ok"), t0);
            assert_eq!(
                session.poll_event().unwrap().unwrap(),
                Event::Output(b"ok".to_vec())
            );
        }
    }

    #[test]
    fn parts_are_joined_in_index_order_whatever_order_they_came_in() {
        let t0 = Instant::now();
        let mut session = logged_in(t0);
        session.command(b"bans").unwrap();
        session.poll_transmit(t0).unwrap();
        session.handle_datagram(&part(0, 3, 2, b"c"), t0);
        session.handle_datagram(&part(0, 3, 0, b"a"), t0);
        // A duplicate, and a part whose count disagrees: dropped.
        session.handle_datagram(&part(0, 3, 0, b"A"), t0);
        session.handle_datagram(&part(0, 4, 1, b"B"), t0);
        assert!(session.poll_event().is_none());
        // No resend once a part is in: it would run the command twice.
        assert_eq!(session.poll_timeout().map(|t| t < t0 + TIMEOUT), Some(true));
        session.handle_datagram(&part(0, 3, 1, b"b"), t0);
        assert_eq!(
            session.poll_event().unwrap().unwrap(),
            Event::Output(b"abc".to_vec())
        );
        assert_eq!(session.dropped(), 2);
    }

    #[test]
    fn a_missing_part_is_an_error_not_a_short_answer() {
        let t0 = Instant::now();
        let mut session = logged_in(t0);
        session.command(b"bans").unwrap();
        session.poll_transmit(t0).unwrap();
        let t1 = t0 + Duration::from_millis(20);
        session.handle_datagram(&part(0, 3, 0, b"a"), t1);
        session.handle_datagram(&part(0, 3, 2, b"c"), t1);
        let end = session.poll_timeout().unwrap();
        assert!(end < t0 + TIMEOUT);
        session.handle_timeout(end);
        assert_eq!(
            session.poll_transmit(end),
            None,
            "the command is not resent"
        );
        let error = session.poll_event().unwrap().unwrap_err();
        assert!(error.to_string().contains("2 of its 3 parts"), "{error}");
        // The session goes on, and the late part is stale.
        assert!(session.is_ready());
        session.handle_datagram(&part(0, 3, 1, b"b"), end);
        assert!(session.poll_event().is_none());
        session.command(b"players").unwrap();
        assert_eq!(session.poll_transmit(end).unwrap()[8], 1);
    }

    #[test]
    fn bad_part_headers_are_dropped() {
        let t0 = Instant::now();
        let mut session = logged_in(t0);
        session.command(b"bans").unwrap();
        session.poll_transmit(t0).unwrap();
        session.handle_datagram(&part(0, 0, 0, b"zero parts"), t0);
        session.handle_datagram(&part(0, 2, 2, b"index past the count"), t0);
        session.handle_datagram(&answer(0, b"\x00\x02"), t0);
        assert!(session.poll_event().is_none());
        assert_eq!(session.dropped(), 3);
    }

    #[test]
    fn an_answer_over_the_cap_fails_the_command() {
        let t0 = Instant::now();
        let mut session = Session::new(TIMEOUT, 1, 10);
        session.login(b"pw").unwrap();
        session.handle_datagram(
            &packet(Payload::Login {
                password: Text::from_bytes(b"\x01"),
            }),
            t0,
        );
        session.poll_event();
        session.command(b"bans").unwrap();
        session.handle_datagram(&part(0, 2, 0, b"123456"), t0);
        session.handle_datagram(&part(0, 2, 1, b"789012"), t0);
        let error = session.poll_event().unwrap().unwrap_err();
        assert!(error.to_string().contains("10 bytes"), "{error}");
        assert!(session.is_ready());
    }

    #[test]
    fn server_messages_are_acknowledged_every_time_and_reported_once() {
        let t0 = Instant::now();
        let mut session = logged_in(t0);
        session.handle_datagram(&message(0, b"RCon admin #0 logged in"), t0);
        session.handle_datagram(&message(0, b"RCon admin #0 logged in"), t0);
        session.handle_datagram(&message(1, b"(Global) hi"), t0);
        let ack = |sequence| message(sequence, b"");
        assert_eq!(session.poll_transmit(t0).unwrap(), ack(0));
        assert_eq!(session.poll_transmit(t0).unwrap(), ack(0));
        assert_eq!(session.poll_transmit(t0).unwrap(), ack(1));
        assert_eq!(
            session.poll_event().unwrap().unwrap(),
            Event::Message(b"RCon admin #0 logged in".to_vec())
        );
        assert_eq!(
            session.poll_event().unwrap().unwrap(),
            Event::Message(b"(Global) hi".to_vec())
        );
        assert!(session.poll_event().is_none());
    }

    #[test]
    fn message_sequences_wrap_and_late_ones_still_count() {
        let mut window = MessageWindow {
            next: None,
            seen: [false; 256],
        };
        for sequence in 0..=255u8 {
            assert!(window.accept(sequence));
        }
        assert!(window.accept(0), "wrapped");
        assert!(!window.accept(255), "a resend of the one before");
        assert!(window.accept(3), "two lost");
        assert!(window.accept(1), "a lost one arrives late");
        assert!(!window.accept(1));
    }

    #[test]
    fn an_idle_session_sends_keep_alives_and_fails_when_they_go_unanswered() {
        let t0 = Instant::now();
        let mut session = logged_in(t0);
        let due = session.poll_timeout().unwrap();
        assert_eq!(due, t0 + KEEP_ALIVE);
        assert!(due < t0 + Duration::from_secs(SERVER_CUTOFF));
        session.handle_timeout(due);
        assert_eq!(session.poll_transmit(due).unwrap(), answer(0, b""));
        assert!(session.is_ready(), "a command may replace a keep-alive");
        session.handle_datagram(&answer(0, b""), due);
        assert!(
            session.poll_event().is_none(),
            "a keep-alive's answer is no event"
        );

        let next = session.poll_timeout().unwrap();
        assert_eq!(next, due + KEEP_ALIVE);
        let mut now = next;
        session.handle_timeout(now);
        while !session.is_failed() {
            session.poll_transmit(now);
            now = session.poll_timeout().unwrap();
            session.handle_timeout(now);
        }
        let error = session.poll_event().unwrap().unwrap_err();
        assert!(error.to_string().contains("keep-alive"), "{error}");
    }

    const SERVER_CUTOFF: u64 = query_specs::battleye::SERVER_IDLE_CUTOFF_SECS;
}
