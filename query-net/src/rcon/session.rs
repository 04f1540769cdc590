//! The client's side of an RCON connection, without I/O.

use std::collections::VecDeque;

use query_specs::rcon::{
    Frame, AUTH_REFUSED_ID, SERVERDATA_AUTH, SERVERDATA_AUTH_RESPONSE, SERVERDATA_EXECCOMMAND,
    SERVERDATA_RESPONSE_VALUE,
};
use query_wire::Decode;

use super::{frame_len, write_packet, Flavour, Framing};
use crate::error::QueryError;
use crate::stream::{FrameBuffer, FrameError};

/// What a [`Session`] reports once a request of it is done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// The server accepted the password: commands may follow.
    Authenticated,
    /// A command's whole output, its parts joined, as the server's bytes (UTF-8 as a rule).
    Output(Vec<u8>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    /// Connected; nothing asked yet.
    Idle,
    /// The password was sent with this id.
    Authenticating { id: i32 },
    /// Authenticated, no command running.
    Ready,
    /// A command was sent with id `command`; the end marker, with id `marker`, follows once
    /// the first packet of the answer arrived (`marker_sent`).
    Running {
        command: i32,
        marker: i32,
        marker_sent: bool,
        output: Vec<u8>,
    },
    /// Refused, broken or closed: the connection is of no more use.
    Failed,
}

/// One RCON connection as a state machine: [`authenticate`](Session::authenticate), then
/// [`command`](Session::command), one at a time; the bytes the server sends go to
/// [`handle_bytes`](Session::handle_bytes) (split anywhere), what to write comes from
/// [`poll_transmit`](Session::poll_transmit), and each request's outcome from
/// [`poll_reply`](Session::poll_reply).
///
/// Answers are matched by id: the parts of a command's output carry its id, and the echo of
/// the end marker sent after it (an empty [`SERVERDATA_RESPONSE_VALUE`] with an id of its
/// own, which srcds mirrors and a Minecraft server answers with "Unknown request") ends the
/// output. The marker goes out once the first packet of the answer arrived, never in the
/// same write as the command: vanilla Minecraft handles one packet per read of its socket and
/// drops the connection when a read holds two, and other servers leave the second packet of
/// a read unhandled until more bytes come. Since the server answers a command's packets in
/// order, the marker's echo still comes after the last part. Packets with any other id (the extra packet srcds sends after the marker's echo,
/// a late part of an answer given up on, a broadcast some servers push) are dropped and
/// counted ([`dropped`](Session::dropped)).
///
/// ```
/// use query_net::rcon::{write_packet, Flavour, Reply, Session};
///
/// let mut session = Session::new(Flavour::Source, 1 << 20);
/// session.authenticate(b"secret")?;
/// let login = session.poll_transmit().unwrap();
/// // srcds: an empty response value, then the auth response with the same id (1).
/// let mut server = Vec::new();
/// write_packet(&mut server, 1, 0, b"")?;
/// write_packet(&mut server, 1, 2, b"")?;
/// session.handle_bytes(&server);
/// assert_eq!(session.poll_reply().unwrap()?, Reply::Authenticated);
///
/// session.command(b"status")?; // id 2
/// # let _ = (login, session.poll_transmit());
/// let mut server = Vec::new();
/// write_packet(&mut server, 2, 0, b"hostname: ")?;
/// session.handle_bytes(&server);
/// // The first part arrived: now the end marker (id 3) is sent.
/// let mut marker = Vec::new();
/// write_packet(&mut marker, 3, 0, b"")?;
/// assert_eq!(session.poll_transmit(), Some(marker));
/// let mut server = Vec::new();
/// write_packet(&mut server, 2, 0, b"Test")?;
/// write_packet(&mut server, 3, 0, b"")?;
/// session.handle_bytes(&server);
/// assert_eq!(session.poll_reply().unwrap()?, Reply::Output(b"hostname: Test".to_vec()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Session {
    flavour: Flavour,
    max_answer: usize,
    frames: FrameBuffer<Framing>,
    outgoing: Vec<u8>,
    next_id: i32,
    state: State,
    replies: VecDeque<Result<Reply, QueryError>>,
    dropped: u64,
    /// Why the session failed, for the requests made after.
    failure: Option<String>,
}

impl Session {
    /// A session for a freshly opened connection to a `flavour` server; one command's output
    /// may take at most `max_answer` bytes.
    pub fn new(flavour: Flavour, max_answer: usize) -> Self {
        let framing: Framing = frame_len;
        Session {
            flavour,
            max_answer,
            frames: FrameBuffer::new(framing, flavour.max_frame(max_answer)),
            outgoing: Vec::new(),
            next_id: 1,
            state: State::Idle,
            replies: VecDeque::new(),
            dropped: 0,
            failure: None,
        }
    }

    /// The flavour whose rules the session follows.
    pub fn flavour(&self) -> Flavour {
        self.flavour
    }

    /// Whether the password was accepted and no command is running.
    pub fn is_ready(&self) -> bool {
        self.state == State::Ready
    }

    /// Whether the connection is of no more use (refused, broken, closed).
    pub fn is_failed(&self) -> bool {
        self.state == State::Failed
    }

    /// Packets received whose id matched nothing outstanding.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// What the session waits for, for timeouts: `auth response` or `command answer`.
    pub fn waiting_for(&self) -> Option<&'static str> {
        match self.state {
            State::Authenticating { .. } => Some("RCON auth response"),
            State::Running { .. } => Some("RCON command answer"),
            _ => None,
        }
    }

    fn take_id(&mut self) -> i32 {
        let id = self.next_id;
        // Positive ids only: -1 is the refusal, and some servers push broadcasts with id 0.
        self.next_id = if id == i32::MAX { 1 } else { id + 1 };
        id
    }

    /// The error for a request made after the session failed.
    fn broken(&self) -> Option<QueryError> {
        let reason = self.failure.as_deref()?;
        Some(QueryError::Io(std::io::Error::new(
            std::io::ErrorKind::NotConnected,
            format!("the RCON connection is of no more use: {reason}"),
        )))
    }

    /// Sends the password. Only on a fresh session.
    pub fn authenticate(&mut self, password: &[u8]) -> Result<(), QueryError> {
        if let Some(broken) = self.broken() {
            return Err(broken);
        }
        if self.state != State::Idle {
            return Err(QueryError::protocol(
                "RCON: authenticate once, on a fresh connection",
            ));
        }
        if password.contains(&0) {
            return Err(QueryError::protocol(
                "RCON: a password cannot hold a NUL byte",
            ));
        }
        let id = self.take_id();
        write_packet(&mut self.outgoing, id, SERVERDATA_AUTH, password)?;
        self.state = State::Authenticating { id };
        Ok(())
    }

    /// Sends `command` (the end marker follows its first answer packet). Refused before
    /// anything is sent when the
    /// session is not ready (not authenticated, or a command still running), when the
    /// command is longer than the flavour's [`max_command`](Flavour::max_command), or when it
    /// holds a NUL byte.
    pub fn command(&mut self, command: &[u8]) -> Result<(), QueryError> {
        if let Some(broken) = self.broken() {
            return Err(broken);
        }
        if self.state != State::Ready {
            return Err(QueryError::protocol(
                "RCON: a command needs an authenticated connection with no command running",
            ));
        }
        if command.len() > self.flavour.max_command() {
            return Err(QueryError::protocol(format!(
                "RCON: the command is {} bytes long, over the {} bytes a {} server reads",
                command.len(),
                self.flavour.max_command(),
                self.flavour
            )));
        }
        if command.contains(&0) {
            return Err(QueryError::protocol(
                "RCON: a command cannot hold a NUL byte",
            ));
        }
        let id = self.take_id();
        let marker = self.take_id();
        write_packet(&mut self.outgoing, id, SERVERDATA_EXECCOMMAND, command)?;
        self.state = State::Running {
            command: id,
            marker,
            marker_sent: false,
            output: Vec::new(),
        };
        Ok(())
    }

    /// Bytes to write to the server, if any.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        (!self.outgoing.is_empty()).then(|| std::mem::take(&mut self.outgoing))
    }

    /// The outcome of each request, in order, once it is known; after the session failed, the
    /// failure (once).
    pub fn poll_reply(&mut self) -> Option<Result<Reply, QueryError>> {
        self.replies.pop_front()
    }

    /// Bytes that arrived from the server, split anywhere.
    pub fn handle_bytes(&mut self, bytes: &[u8]) {
        if self.state == State::Failed {
            return;
        }
        self.frames.push(bytes);
        loop {
            let frame = match self.frames.next_frame() {
                Ok(Some(frame)) => frame,
                Ok(None) => return,
                Err(error) => return self.fail(error.into()),
            };
            let event = match Frame::from_bytes(frame) {
                Ok(frame) => Self::step(&mut self.state, self.max_answer, &frame.packet),
                Err(error) => Step::Fail(error.into()),
            };
            match event {
                Step::Continue => {}
                Step::SendMarker(marker) => {
                    // An empty body always fits a packet.
                    let _ =
                        write_packet(&mut self.outgoing, marker, SERVERDATA_RESPONSE_VALUE, b"");
                }
                Step::Dropped => self.dropped += 1,
                Step::Done(reply) => self.replies.push_back(Ok(reply)),
                Step::Fail(error) => return self.fail(error),
            }
        }
    }

    /// The server closed the connection.
    pub fn handle_eof(&mut self) {
        if self.state == State::Failed {
            return;
        }
        let error = match self.frames.finish() {
            Err(FrameError::Truncated { have, .. }) => format!(
                "the server closed the RCON connection in the middle of a packet ({have} bytes of it received)"
            ),
            _ => "the server closed the RCON connection".to_owned(),
        };
        self.fail(QueryError::Io(std::io::Error::new(
            std::io::ErrorKind::ConnectionAborted,
            error,
        )));
    }

    /// Ends the session: `error` is the reply to the request outstanding, or to the next one
    /// polled (a reply queued before it stays first).
    fn fail(&mut self, error: QueryError) {
        self.state = State::Failed;
        self.failure = Some(error.to_string());
        self.replies.push_back(Err(error));
    }

    fn step(state: &mut State, max_answer: usize, packet: &query_specs::rcon::Packet<'_>) -> Step {
        match state {
            State::Authenticating { id } => match (packet.kind, packet.id) {
                (SERVERDATA_AUTH_RESPONSE, got) if got == *id => {
                    *state = State::Ready;
                    Step::Done(Reply::Authenticated)
                }
                (SERVERDATA_AUTH_RESPONSE, AUTH_REFUSED_ID) => Step::Fail(
                    QueryError::AuthRequired("the server refused the RCON password".into()),
                ),
                // srcds's empty response value before the auth response.
                (SERVERDATA_RESPONSE_VALUE, got) if got == *id => Step::Continue,
                _ => Step::Dropped,
            },
            State::Running {
                command,
                marker,
                marker_sent,
                output,
            } => {
                if packet.id == *marker && *marker_sent {
                    let output = std::mem::take(output);
                    *state = State::Ready;
                    Step::Done(Reply::Output(output))
                } else if packet.id == *command {
                    if output.len().saturating_add(packet.body.len()) > max_answer {
                        return Step::Fail(QueryError::protocol(format!(
                            "the RCON answer is longer than the {max_answer} bytes one answer may take"
                        )));
                    }
                    output.extend_from_slice(packet.body);
                    if *marker_sent {
                        Step::Continue
                    } else {
                        *marker_sent = true;
                        Step::SendMarker(*marker)
                    }
                } else if packet.kind == SERVERDATA_AUTH_RESPONSE && packet.id == AUTH_REFUSED_ID {
                    // Some servers answer a command on a connection they no longer trust so.
                    Step::Fail(QueryError::AuthRequired(
                        "the server refused the command: not authenticated".into(),
                    ))
                } else {
                    Step::Dropped
                }
            }
            State::Idle | State::Ready => Step::Dropped,
            State::Failed => Step::Continue,
        }
    }
}

enum Step {
    Continue,
    /// The first packet of a command's answer arrived: the end marker with this id goes out.
    SendMarker(i32),
    Dropped,
    Done(Reply),
    Fail(QueryError),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::splits;

    fn packet(id: i32, kind: i32, body: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        write_packet(&mut out, id, kind, body).unwrap();
        out
    }

    fn ready(flavour: Flavour) -> Session {
        let mut session = Session::new(flavour, 1 << 16);
        session.authenticate(b"pw").unwrap();
        session.poll_transmit().unwrap();
        session.handle_bytes(&packet(1, SERVERDATA_AUTH_RESPONSE, b""));
        assert_eq!(session.poll_reply().unwrap().unwrap(), Reply::Authenticated);
        session
    }

    #[test]
    fn the_auth_packet_is_the_wiki_layout() {
        let mut session = Session::new(Flavour::Source, 4096);
        session.authenticate(b"passwrd").unwrap();
        assert_eq!(
            session.poll_transmit().unwrap(),
            b"\x11\x00\x00\x00\x01\x00\x00\x00\x03\x00\x00\x00passwrd\x00\x00"
        );
        assert_eq!(session.poll_transmit(), None);
    }

    #[test]
    fn srcds_empty_value_before_auth_response_in_every_split() {
        let mut stream = packet(1, SERVERDATA_RESPONSE_VALUE, b"");
        stream.extend(packet(1, SERVERDATA_AUTH_RESPONSE, b""));
        for pieces in splits(&stream, 0) {
            let mut session = Session::new(Flavour::Source, 4096);
            session.authenticate(b"pw").unwrap();
            for piece in &pieces {
                session.handle_bytes(piece);
            }
            assert_eq!(session.poll_reply().unwrap().unwrap(), Reply::Authenticated);
            assert!(session.is_ready());
            assert_eq!(session.dropped(), 0);
        }
    }

    #[test]
    fn a_refused_password_is_an_auth_error() {
        let mut session = Session::new(Flavour::Source, 4096);
        session.authenticate(b"wrong").unwrap();
        let mut stream = packet(1, SERVERDATA_RESPONSE_VALUE, b"");
        stream.extend(packet(AUTH_REFUSED_ID, SERVERDATA_AUTH_RESPONSE, b""));
        session.handle_bytes(&stream);
        let error = session.poll_reply().unwrap().unwrap_err();
        assert!(matches!(error, QueryError::AuthRequired(_)), "{error}");
        assert!(session.is_failed());
        assert!(session.command(b"status").is_err());
    }

    #[test]
    fn split_answers_are_joined_up_to_the_marker_and_stale_packets_dropped() {
        let mut session = ready(Flavour::Source);
        session.command(b"cvarlist").unwrap();
        assert_eq!(session.poll_transmit().unwrap(), packet(2, 2, b"cvarlist"));
        // The end marker waits for the first packet of the answer, so that no server reads
        // it in one go with the command; an early packet with its id is not its echo.
        session.handle_bytes(&packet(3, 0, b""));
        assert_eq!(session.poll_transmit(), None);
        assert_eq!(session.dropped(), 1);
        session.handle_bytes(&packet(2, 0, b"first"));
        assert_eq!(session.poll_transmit().unwrap(), packet(3, 0, b""));
        session.handle_bytes(&packet(2, 0, b" second"));
        assert_eq!(session.poll_transmit(), None);
        session.handle_bytes(&packet(3, 0, b""));
        assert_eq!(
            session.poll_reply().unwrap().unwrap(),
            Reply::Output(b"first second".to_vec())
        );

        let part = vec![b'x'; 4086];
        let mut stream = packet(2, 0, &part);
        stream.extend(packet(99, 0, b"a broadcast"));
        stream.extend(packet(2, 0, b"tail"));
        stream.extend(packet(3, 0, b""));
        // A second packet with the marker's id: stale once the answer is whole.
        stream.extend(packet(3, 0, b""));
        for pieces in splits(&stream, 0).into_iter().step_by(97) {
            let mut session = ready(Flavour::Source);
            session.command(b"cvarlist").unwrap();
            for piece in &pieces {
                session.handle_bytes(piece);
            }
            let mut expected = part.clone();
            expected.extend_from_slice(b"tail");
            assert_eq!(
                session.poll_reply().unwrap().unwrap(),
                Reply::Output(expected)
            );
            assert_eq!(session.dropped(), 2);
            assert!(session.is_ready());
        }
    }

    #[test]
    fn srcds_marker_trailer_packet_is_read_and_dropped() {
        let mut session = ready(Flavour::Source);
        session.command(b"status").unwrap();
        let mut stream = packet(2, 0, b"ok");
        stream.extend(packet(3, 0, b""));
        // 00 01 00 00 as its body, then the two NULs.
        stream.extend(b"\x0e\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00");
        session.handle_bytes(&stream);
        assert_eq!(
            session.poll_reply().unwrap().unwrap(),
            Reply::Output(b"ok".to_vec())
        );
        assert_eq!(session.dropped(), 1);
        assert!(!session.is_failed());
    }

    #[test]
    fn minecraft_unknown_request_ends_the_answer() {
        let mut session = ready(Flavour::Minecraft);
        session.command(b"list").unwrap();
        let mut stream = packet(2, 0, b"There are 0 of a max of 20 players online: ");
        stream.extend(packet(3, 0, b"Unknown request 0"));
        session.handle_bytes(&stream);
        assert_eq!(
            session.poll_reply().unwrap().unwrap(),
            Reply::Output(b"There are 0 of a max of 20 players online: ".to_vec())
        );
    }

    #[test]
    fn minecraft_commands_over_1446_bytes_are_refused_before_sending() {
        let mut session = ready(Flavour::Minecraft);
        assert!(session.command(&[b'a'; 1447]).is_err());
        assert_eq!(session.poll_transmit(), None);
        session.command(&[b'a'; 1446]).unwrap();
        assert!(session.poll_transmit().is_some());
    }

    #[test]
    fn minecraft_fragments_over_4096_bytes_are_not_minecraft() {
        let mut session = ready(Flavour::Minecraft);
        session.command(b"list").unwrap();
        session.handle_bytes(&packet(2, 0, &[b'x'; 4097]));
        assert!(session.poll_reply().unwrap().is_err());
        assert!(session.is_failed());
    }

    #[test]
    fn an_answer_over_the_cap_fails_instead_of_growing() {
        let mut session = Session::new(Flavour::Source, 10_000);
        session.authenticate(b"pw").unwrap();
        session.handle_bytes(&packet(1, SERVERDATA_AUTH_RESPONSE, b""));
        session.poll_reply();
        session.command(b"x").unwrap();
        for _ in 0..3 {
            session.handle_bytes(&packet(2, 0, &[b'x'; 4000]));
        }
        let error = session.poll_reply().unwrap().unwrap_err();
        assert!(error.to_string().contains("10000 bytes"), "{error}");
    }

    #[test]
    fn garbage_and_eof_fail_the_running_command() {
        let mut session = ready(Flavour::Source);
        session.command(b"x").unwrap();
        // A size of 3 cannot hold an id and a type.
        session.handle_bytes(b"\x03\x00\x00\x00abc");
        assert!(session.poll_reply().unwrap().is_err());

        let mut session = ready(Flavour::Source);
        session.command(b"x").unwrap();
        session.handle_bytes(&packet(2, 0, b"part")[..7]);
        session.handle_eof();
        let error = session.poll_reply().unwrap().unwrap_err();
        assert!(error.to_string().contains("middle of a packet"), "{error}");
    }

    #[test]
    fn a_failure_after_a_reply_is_reported_after_it_and_to_later_requests() {
        let mut session = Session::new(Flavour::Source, 4096);
        session.authenticate(b"pw").unwrap();
        let mut stream = packet(1, SERVERDATA_AUTH_RESPONSE, b"");
        stream.extend_from_slice(b"\x03\x00\x00\x00abc");
        session.handle_bytes(&stream);
        assert_eq!(session.poll_reply().unwrap().unwrap(), Reply::Authenticated);
        assert!(session.poll_reply().unwrap().is_err());
        assert!(session.poll_reply().is_none());
        let error = session.command(b"status").unwrap_err();
        assert!(error.to_string().contains("no more use"), "{error}");
    }

    #[test]
    fn ids_wrap_past_the_largest_without_using_minus_one_or_zero() {
        let mut session = Session::new(Flavour::Source, 4096);
        session.next_id = i32::MAX;
        assert_eq!(session.take_id(), i32::MAX);
        assert_eq!(session.take_id(), 1);
    }
}
