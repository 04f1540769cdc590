//! The SA:MP RCON client: one console command, its output lines.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_specs::samp::{Header, Reply, ReplyBody, RequestBody, HEADER_LEN, OP_INFO, OP_RCON};
use query_wire::{Decode, Encode, Text, TextEncoding};

use crate::engine::{ClientSession, Outcome, Retry};
use crate::error::QueryError;
use crate::options::{Options, RconCommand};
use crate::outcome::bookkeeping;

use super::{request, Exchange, BAD_RCON_PASSWORD, DEFAULT_ENCODING, MAX_RCON_LINES, RCON_QUIET};

/// An RCON command for `target`: `command` is sent once, and the console lines it prints are
/// the output. See the [module](super) docs.
pub fn rcon_session(
    target: SocketAddr,
    command: &RconCommand,
    options: &Options,
) -> Result<RconSession, QueryError> {
    RconSession::new(target, command, options)
}

/// An SA:MP RCON command as a sans-I/O state machine, whose output is the console lines.
#[derive(Debug)]
pub struct RconSession {
    target: SocketAddr,
    encoding: TextEncoding,
    timeout: Duration,
    attempts: u32,
    quiet: Duration,
    /// The `x` request, sent once.
    command: Vec<u8>,
    command_sent: Option<Instant>,
    /// An `i` request, retried, that tells a silent command from a silent server.
    probe: Exchange,
    lines: Vec<String>,
    last_line: Option<Instant>,
    outcome: Outcome<Vec<String>>,
}

impl RconSession {
    /// Runs `command` on `target`, waiting and retrying the server probe per `options`, and
    /// decoding lines in `options`' encoding (Windows-1252 by default).
    pub fn new(
        target: SocketAddr,
        command: &RconCommand,
        options: &Options,
    ) -> Result<Self, QueryError> {
        let encoding = options.encoding_or(DEFAULT_ENCODING);
        let x = request(
            target,
            RequestBody::Rcon {
                password: Text::encode(&command.password, encoding),
                command: Text::encode(&command.command, encoding),
            },
        );
        let bytes = x.to_vec().map_err(|e| {
            QueryError::protocol(format!(
                "the RCON password or command does not fit SA:MP's 65535-byte fields: {e}"
            ))
        })?;
        let mut probe = Exchange::new(
            "server probe sent with the RCON command",
            Retry::from_options(options),
        );
        probe.ask(&request(target, RequestBody::Info))?;
        Ok(RconSession {
            target,
            encoding,
            timeout: options.timeout,
            attempts: options.attempts(),
            quiet: RCON_QUIET,
            command: bytes,
            command_sent: None,
            probe,
            lines: Vec::new(),
            last_line: None,
            outcome: Outcome::new(),
        })
    }

    /// Waits `quiet` after the latest line for another, instead of [`RCON_QUIET`].
    #[must_use]
    pub fn with_quiet_period(mut self, quiet: Duration) -> Self {
        self.quiet = quiet;
        self
    }

    /// The latest moment lines are collected until, however many keep coming.
    fn hard_end(&self, sent: Instant) -> Instant {
        sent + self.timeout.saturating_mul(self.attempts) + self.quiet
    }

    fn finish(&mut self, result: Result<Vec<String>, QueryError>, now: Instant) {
        self.probe.cancel(now);
        self.outcome.finish(result);
    }

    fn advance(&mut self, now: Instant) {
        let Some(sent) = self.command_sent else {
            return;
        };
        if self.outcome.is_finished() {
            return;
        }
        if let Some(last) = self.last_line {
            if now >= last + self.quiet || now >= self.hard_end(sent) {
                let lines = std::mem::take(&mut self.lines);
                self.finish(Ok(lines), now);
            }
        } else if self.probe.is_answered() && now >= sent + self.timeout {
            // The server is up and the command printed nothing (or RCON is off there).
            self.finish(Ok(Vec::new()), now);
        } else if let Some(error) = self.probe.take_failure() {
            self.finish(Err(error), now);
        }
    }
}

impl ClientSession for RconSession {
    type Output = Vec<String>;

    bookkeeping!(target, poll_result);

    fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
        if self.outcome.is_finished() {
            return None;
        }
        if self.command_sent.is_none() {
            self.command_sent = Some(now);
            return Some(&self.command);
        }
        self.probe.retry.poll_transmit(now)
    }

    fn on_reply(&mut self, datagram: &[u8], now: Instant) {
        if self.outcome.is_finished() || self.command_sent.is_none() {
            return;
        }
        match datagram.get(Header::OPCODE_RANGE.start) {
            Some(&OP_RCON) if datagram.get(..HEADER_LEN) == self.command.get(..HEADER_LEN) => {
                let Ok(Reply {
                    body: ReplyBody::Rcon(line),
                    ..
                }) = Reply::from_bytes(datagram)
                else {
                    return;
                };
                let line = line.decode(self.encoding).into_owned();
                if line.trim_end() == BAD_RCON_PASSWORD {
                    self.finish(Err(QueryError::AuthRequired(BAD_RCON_PASSWORD.into())), now);
                    return;
                }
                if self.lines.len() < MAX_RCON_LINES {
                    self.lines.push(line);
                }
                self.last_line = Some(now);
            }
            Some(&OP_INFO) if self.probe.expects(datagram) => self.probe.offer(datagram, now),
            _ => return,
        }
        self.advance(now);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if self.outcome.is_finished() {
            return None;
        }
        let sent = self.command_sent?;
        let silent_end =
            (self.last_line.is_none() && self.probe.is_answered()).then_some(sent + self.timeout);
        let quiet_end = self.last_line.map(|last| last + self.quiet);
        [self.probe.retry.poll_timeout(), silent_end, quiet_end]
            .into_iter()
            .flatten()
            .chain([self.hard_end(sent)])
            .min()
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        self.probe.handle_timeout(now);
        self.advance(now);
    }
}
