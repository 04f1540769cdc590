//! The TeamSpeak 3 status query as a [`StreamSession`].
//!
//! Reads the [`BANNER`] line (anything else is no ServerQuery server) and the welcome line,
//! then sends one command at a time, each after the previous one's answer: `login` when an
//! account is given, `use port=N` (or `sid=N`), `serverinfo`, `clientlist`, `channellist`.
//! Five commands at most on one connection, within what the flood protection of a default
//! server allows a guest (10 commands in 3 seconds).
//!
//! - Strict: an answer's error line with an id other than 0 ends the query with that error,
//!   in one line: a missing permission (id 2568) names the permission the command needs and
//!   the `failed_permid`, a refused login says so ([`QueryError::AuthRequired`] both); a
//!   line that does not decode is an error at its byte.
//! - Lenient: `\n\r`, `\r\n` and `\n` all end lines; `notify...` lines (events of clients
//!   that registered for them) are skipped.

use std::fmt;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_specs::teamspeak3::{
    ErrorLine, Line, Login, UsePort, UseSid, BANNER, DEFAULT_VOICE_PORT, INSUFFICIENT_PERMISSIONS,
    INVALID_LOGIN, OK,
};
use query_wire::kv::{FromKeyValues, QueryText, ToKeyValues};
use query_wire::Decode;

use super::status::{from_answers, Answers};
use super::{LineFraming, MAX_LINE};
use crate::error::QueryError;
use crate::outcome::Outcome;
use crate::status::ServerStatus;
use crate::stream::{FrameBuffer, StreamSession};

/// Which virtual server to select.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VirtualServer {
    /// The one on this voice port (9987 for a server's first).
    Port(u16),
    /// The one with this id.
    Sid(u32),
}

impl Default for VirtualServer {
    fn default() -> Self {
        VirtualServer::Port(DEFAULT_VOICE_PORT)
    }
}

/// A query account to log in with, for servers whose guest query group may not read.
#[derive(Clone, PartialEq, Eq)]
pub struct QueryLogin {
    /// The account name (`serveradmin`, or one made with `queryloginadd`).
    pub name: String,
    /// Its password.
    pub password: String,
}

impl fmt::Debug for QueryLogin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueryLogin")
            .field("name", &self.name)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// The commands a status query sends, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Command {
    Login,
    Use,
    ServerInfo,
    ClientList,
    ChannelList,
}

impl Command {
    fn name(self) -> &'static str {
        match self {
            Command::Login => "login",
            Command::Use => "use",
            Command::ServerInfo => "serverinfo",
            Command::ClientList => "clientlist",
            Command::ChannelList => "channellist",
        }
    }

    /// The permission the guest query group needs for the command.
    fn permission(self) -> Option<&'static str> {
        match self {
            Command::Login => None,
            Command::Use => Some("b_virtualserver_select"),
            Command::ServerInfo => Some("b_virtualserver_info_view"),
            Command::ClientList => Some("b_virtualserver_client_list"),
            Command::ChannelList => Some("b_virtualserver_channel_list"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Banner,
    Welcome,
    Answer,
}

/// A TeamSpeak 3 status query; see the [module](self) docs.
pub struct Ts3Session {
    target: SocketAddr,
    virtual_server: VirtualServer,
    login: Option<QueryLogin>,
    commands: Vec<Command>,
    next: usize,
    outbox: Vec<u8>,
    send_due: bool,
    step: Step,
    sent_at: Option<Instant>,
    rtt: Option<std::time::Duration>,
    lines: FrameBuffer<LineFraming>,
    data: Vec<Vec<u8>>,
    answers: Answers,
    /// Answers are told apart by their first field, not by the command sent (a recorded
    /// stream, whose client may have sent other commands or `use` before each).
    by_shape: bool,
    outcome: Outcome<ServerStatus>,
}

impl fmt::Debug for Ts3Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ts3Session")
            .field("target", &self.target)
            .field("virtual_server", &self.virtual_server)
            .field("login", &self.login)
            .field("step", &self.step)
            .field("next", &self.next)
            .finish_non_exhaustive()
    }
}

impl Ts3Session {
    /// A status query of the ServerQuery port `target`, reading `virtual_server`, logged in
    /// as `login` when given.
    pub fn new(
        target: SocketAddr,
        virtual_server: VirtualServer,
        login: Option<QueryLogin>,
    ) -> Self {
        let mut commands = Vec::with_capacity(5);
        if login.is_some() {
            commands.push(Command::Login);
        }
        commands.extend([
            Command::Use,
            Command::ServerInfo,
            Command::ClientList,
            Command::ChannelList,
        ]);
        Ts3Session {
            target,
            virtual_server,
            login,
            commands,
            next: 0,
            outbox: Vec::new(),
            send_due: false,
            step: Step::Banner,
            sent_at: None,
            rtt: None,
            lines: FrameBuffer::new(LineFraming::default(), MAX_LINE),
            data: Vec::new(),
            answers: Answers::default(),
            by_shape: false,
            outcome: Outcome::new(),
        }
    }

    /// A session that reads a recorded stream: it sends nothing, and takes each data line for
    /// the answer its first field says (`virtualserver_...`: `serverinfo`; `clid=`:
    /// `clientlist`; `cid=`: `channellist`), whatever commands the recording client sent.
    pub fn replaying(target: SocketAddr) -> Self {
        let mut session = Self::new(target, VirtualServer::default(), None);
        session.by_shape = true;
        session
    }

    fn finish(&mut self, result: Result<ServerStatus, QueryError>) {
        self.send_due = false;
        self.outcome.finish(result);
    }

    /// The line of the next command.
    fn command_line(&self, command: Command) -> Result<Vec<u8>, QueryError> {
        let mut line = match command {
            Command::Login => {
                let login = self
                    .login
                    .as_ref()
                    .ok_or_else(|| QueryError::protocol("a login without an account"))?;
                Login {
                    command: true,
                    client_login_name: QueryText::from(login.name.as_str()),
                    client_login_password: QueryText::from(login.password.as_str()),
                }
                .to_vec()?
            }
            Command::Use => match self.virtual_server {
                VirtualServer::Port(port) => UsePort {
                    command: true,
                    port,
                }
                .to_vec()?,
                VirtualServer::Sid(sid) => UseSid { command: true, sid }.to_vec()?,
            },
            other => other.name().as_bytes().to_vec(),
        };
        line.push(b'\n');
        Ok(line)
    }

    fn send_next(&mut self) {
        match self.commands.get(self.next).copied() {
            Some(command) => match self.command_line(command) {
                Ok(line) => {
                    self.outbox = line;
                    self.send_due = true;
                    self.step = Step::Answer;
                }
                Err(error) => self.finish(Err(error)),
            },
            None => {
                let answers = std::mem::take(&mut self.answers);
                let rtt = self.rtt.unwrap_or_default();
                self.finish(from_answers(self.target, &answers, rtt));
            }
        }
    }

    fn read_lines(&mut self, now: Instant) {
        // A command's answer is read only once the command went out.
        while !self.outcome.is_finished() && !self.send_due {
            let frame = match self.lines.next_frame() {
                Ok(Some(frame)) => frame.to_vec(),
                Ok(None) => return,
                Err(error) => return self.finish(Err(error.into())),
            };
            if let Err(error) = self.on_line(&frame, now) {
                self.finish(Err(error));
            }
        }
    }

    fn on_line(&mut self, frame: &[u8], now: Instant) -> Result<(), QueryError> {
        let line = Line::from_bytes(frame)?;
        let text = line.text();
        match self.step {
            Step::Banner => {
                if text != BANNER {
                    return Err(QueryError::protocol(
                        "the server's first line is not TS3: no TeamSpeak 3 ServerQuery",
                    ));
                }
                self.step = Step::Welcome;
            }
            Step::Welcome if self.by_shape => self.step = Step::Answer,
            Step::Welcome => self.send_next(),
            Step::Answer if self.by_shape => return self.on_recorded_line(text),
            Step::Answer if text.starts_with(b"notify") || text.is_empty() => {}
            Step::Answer if text == b"error" || text.starts_with(b"error ") => {
                let command = self.commands[self.next];
                let error = ErrorLine::from_bytes(text)?;
                if error.id != OK {
                    return Err(command_error(command, &error, self.login.as_ref()));
                }
                if let Some(sent) = self.sent_at.filter(|_| self.rtt.is_none()) {
                    self.rtt = Some(now.saturating_duration_since(sent));
                }
                let data = std::mem::take(&mut self.data);
                match command {
                    Command::ServerInfo => self.answers.server_info = data,
                    Command::ClientList => self.answers.clients = data,
                    Command::ChannelList => self.answers.channels = data,
                    Command::Login | Command::Use => {}
                }
                self.next += 1;
                self.send_next();
            }
            Step::Answer => self.data.push(text.to_vec()),
        }
        Ok(())
    }
}

impl Ts3Session {
    fn on_recorded_line(&mut self, text: &[u8]) -> Result<(), QueryError> {
        if text.is_empty() || text.starts_with(b"notify") {
            return Ok(());
        }
        if text == b"error" || text.starts_with(b"error ") {
            let error = ErrorLine::from_bytes(text)?;
            if error.id != OK {
                return Err(QueryError::protocol(format!(
                    "the server refused a command: {} (error {})",
                    error.msg.as_str(),
                    error.id
                )));
            }
            return Ok(());
        }
        let answer = if text.starts_with(b"virtualserver_") {
            &mut self.answers.server_info
        } else if text.starts_with(b"clid=") {
            &mut self.answers.clients
        } else if text.starts_with(b"cid=") {
            &mut self.answers.channels
        } else {
            return Err(QueryError::protocol(
                "a line that answers none of serverinfo, clientlist and channellist",
            ));
        };
        answer.push(text.to_vec());
        Ok(())
    }
}

/// The one-line error of a command the server refused.
fn command_error(
    command: Command,
    error: &ErrorLine<'_>,
    login: Option<&QueryLogin>,
) -> QueryError {
    let name = command.name();
    let said = format!("{} (error {})", error.msg.as_str(), error.id);
    match (command, error.id) {
        (Command::Login, INVALID_LOGIN) => QueryError::AuthRequired(
            format!(
                "the server refused the login of {:?}: {said}",
                login.map_or("", |l| l.name.as_str())
            )
            .into(),
        ),
        (_, INSUFFICIENT_PERMISSIONS) => {
            let permission = command.permission().unwrap_or("a permission");
            let id = error
                .failed_permid
                .map_or_else(String::new, |id| format!(", failed_permid={id}"));
            let how = if login.is_some() {
                "grant it to the query account"
            } else {
                "grant it to the Guest Server Query group, or log in with a query account"
            };
            QueryError::AuthRequired(
                format!("{name} needs the permission {permission}{id}: {said}; {how}").into(),
            )
        }
        _ => QueryError::protocol(format!("the server refused {name}: {said}")),
    }
}

impl StreamSession for Ts3Session {
    type Output = ServerStatus;

    fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
        if !self.send_due || self.outcome.is_finished() {
            return None;
        }
        self.send_due = false;
        self.sent_at = Some(now);
        Some(&self.outbox)
    }

    fn handle_bytes(&mut self, bytes: &[u8], now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        self.lines.push(bytes);
        self.read_lines(now);
    }

    fn handle_eof(&mut self, now: Instant) {
        if self.lines.buffered() > 0 {
            // Lenient: a last line without its `\n` (or the `\r` of a server's `\n\r`).
            self.lines.push(b"\n");
        }
        self.read_lines(now);
        // No command can go out after the end: what is buffered is all the answers there are
        // (a recorded stream replayed in one piece).
        while self.send_due && !self.outcome.is_finished() {
            self.send_due = false;
            self.read_lines(now);
        }
        if self.outcome.is_finished() {
            return;
        }
        if self.by_shape && self.step == Step::Answer {
            let answers = std::mem::take(&mut self.answers);
            return self.finish(from_answers(self.target, &answers, Duration::ZERO));
        }
        let waiting = match self.step {
            Step::Banner => "the TS3 banner".to_owned(),
            Step::Welcome => "the welcome line".to_owned(),
            Step::Answer => format!("the answer to {}", self.commands[self.next].name()),
        };
        self.finish(Err(QueryError::protocol(format!(
            "the server closed the connection before {waiting}"
        ))));
    }

    fn poll_timeout(&self) -> Option<Instant> {
        None
    }

    fn handle_timeout(&mut self, _now: Instant) {}

    fn poll_result(&mut self) -> Option<Result<ServerStatus, QueryError>> {
        self.outcome.poll_result()
    }
}
