//! The Quake 3 remote console client: one `rcon` command, its printed output.
//!
//! The request is `FF FF FF FF rcon PASSWORD COMMAND` ([`Rcon`]); the server runs the
//! command and sends what it printed in `FF FF FF FF print\n` datagrams ([`Print`]), one or
//! several, unnumbered. They are joined in arrival order until a short quiet gap after the
//! latest ([`PartWait`]), or the query's deadline; the request is resent while nothing came.
//! A wrong password is answered with [`BAD_RCON_PASSWORD`], a server without one with
//! [`NO_RCON_PASSWORD`]: both are [`QueryError::AuthRequired`]. Datagrams that are not
//! `print` (a status reply, garbage) are dropped.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_specs::quake3::{Print, Rcon, BAD_RCON_PASSWORD, NO_RCON_PASSWORD};
use query_wire::{Decode, TextEncoding};

use crate::engine::{ClientSession, Outcome, Retry};
use crate::error::QueryError;
use crate::options::{Options, RconCommand};
use crate::outcome::bookkeeping;
use crate::part_wait::PartWait;

/// One Quake 3 `rcon` command as a sans-I/O session, whose output is the printed text.
#[derive(Debug)]
pub struct RconSession {
    target: SocketAddr,
    encoding: TextEncoding,
    retry: Retry,
    rest: PartWait,
    round_trip: Option<Duration>,
    text: Vec<u8>,
    max_bytes: usize,
    outcome: Outcome<String>,
}

impl RconSession {
    /// Runs `command` on `target` with its password, per `options` (timeout and attempts,
    /// the encoding, Windows-1252 by default, and [`Options::max_reply_bytes`] of output).
    ///
    /// Refused before sending: a password that is empty or holds a space or a control
    /// character (the server would read it wrong), a command holding a line break.
    pub fn new(
        target: SocketAddr,
        command: &RconCommand,
        options: &Options,
    ) -> Result<Self, QueryError> {
        let encoding = options.encoding_or(query_specs::quake3::ENCODING);
        let password = encoding.encode_lossy(&command.password);
        if password.is_empty() || password.iter().any(|&b| b <= b' ' || b == 0x7f) {
            return Err(QueryError::protocol(
                "Quake 3 rcon: the password must be set and hold no space or control character",
            ));
        }
        let line = encoding.encode_lossy(&command.command);
        if line.iter().any(|&b| matches!(b, b'\n' | b'\r' | 0)) {
            return Err(QueryError::protocol(
                "Quake 3 rcon: a command is one line (no line break or NUL)",
            ));
        }
        let mut retry = Retry::from_options(options);
        retry.start_encoded(
            "Quake 3 rcon output",
            &Rcon {
                password: &password,
                command: &line,
            },
            (),
        )?;
        Ok(RconSession {
            target,
            encoding,
            retry,
            rest: PartWait::new(options.timeout),
            round_trip: None,
            text: Vec::new(),
            max_bytes: options.max_reply_bytes,
            outcome: Outcome::new(),
        })
    }

    fn finish(&mut self) {
        let text = self.encoding.decode_lossy(&self.text).into_owned();
        let first_line = text.lines().next().unwrap_or("").trim_end();
        if first_line == BAD_RCON_PASSWORD || first_line == NO_RCON_PASSWORD {
            self.outcome
                .finish(Err(QueryError::AuthRequired(first_line.to_owned().into())));
        } else {
            self.outcome.finish(Ok(text));
        }
    }
}

impl ClientSession for RconSession {
    type Output = String;

    bookkeeping!(target, poll_transmit, poll_result);

    fn on_reply(&mut self, datagram: &[u8], now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        let print = match Print::from_bytes(datagram) {
            Ok(print) => print,
            Err(error) => {
                self.outcome.note_malformed(error);
                return;
            }
        };
        if self.text.len() + print.text.len() > self.max_bytes {
            self.outcome.finish(Err(QueryError::protocol(format!(
                "Quake 3 rcon: the output is over the {} bytes one answer may take",
                self.max_bytes
            ))));
            return;
        }
        self.text.extend_from_slice(print.text);
        let round_trip = *self.round_trip.get_or_insert_with(|| {
            self.outcome
                .answered(&mut self.retry, now)
                .unwrap_or_default()
        });
        self.rest.part_arrived(round_trip, now);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if self.outcome.is_finished() {
            return None;
        }
        self.rest
            .until()
            .or_else(|| self.outcome.poll_timeout(&self.retry))
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        if self.rest.is_over(now) {
            self.finish();
            return;
        }
        if self.round_trip.is_none() {
            self.outcome.handle_timeout(&mut self.retry, now);
        }
    }

    fn waiting_for(&self) -> Option<&'static str> {
        Some("Quake 3 rcon output")
    }

    fn give_up(&mut self, why: QueryError, _now: Instant) -> Result<String, QueryError> {
        if self.round_trip.is_some() {
            self.finish();
            if let Some(result) = self.outcome.poll_result() {
                return result;
            }
        }
        Err(why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(password: &str, command: &str) -> RconSession {
        let options = Options {
            timeout: Duration::from_secs(1),
            ..Options::default()
        };
        let command = RconCommand {
            password: password.to_owned(),
            command: command.to_owned(),
        };
        RconSession::new("127.0.0.1:27960".parse().unwrap(), &command, &options).unwrap()
    }

    #[test]
    fn the_request_is_the_engine_layout_and_prints_are_joined_after_a_quiet_gap() {
        let t0 = Instant::now();
        let mut rcon = session("secret", "status");
        assert_eq!(
            rcon.poll_transmit(t0).unwrap(),
            b"\xff\xff\xff\xffrcon secret status"
        );
        let t1 = t0 + Duration::from_millis(2);
        rcon.on_reply(b"\xff\xff\xff\xffprint\nmap: oa_dm4\n", t1);
        rcon.on_reply(b"\xff\xff\xff\xffstatusResponse\n\\x\\y\n", t1);
        rcon.on_reply(b"\xff\xff\xff\xffprint\nnum score ping name\n", t1);
        let quiet = rcon.poll_timeout().unwrap();
        assert!(quiet < t0 + Duration::from_secs(1));
        rcon.handle_timeout(quiet);
        assert_eq!(
            rcon.poll_result().unwrap().unwrap(),
            "map: oa_dm4\nnum score ping name\n"
        );
    }

    #[test]
    fn a_bad_password_is_an_auth_error() {
        let t0 = Instant::now();
        for answer in [BAD_RCON_PASSWORD, NO_RCON_PASSWORD] {
            let mut rcon = session("wrong", "status");
            rcon.poll_transmit(t0);
            let mut datagram = b"\xff\xff\xff\xffprint\n".to_vec();
            datagram.extend_from_slice(answer.as_bytes());
            datagram.push(b'\n');
            rcon.on_reply(&datagram, t0);
            let at = rcon.poll_timeout().unwrap();
            rcon.handle_timeout(at);
            assert!(matches!(
                rcon.poll_result().unwrap(),
                Err(QueryError::AuthRequired(_))
            ));
        }
    }

    #[test]
    fn silence_resends_then_times_out_and_bad_passwords_are_refused_before_sending() {
        let t0 = Instant::now();
        let mut rcon = session("pw", "status");
        let mut now = t0;
        let mut sends = 0;
        loop {
            if rcon.poll_transmit(now).is_some() {
                sends += 1;
            }
            if let Some(result) = rcon.poll_result() {
                assert!(matches!(result, Err(QueryError::Timeout { .. })));
                break;
            }
            now = rcon.poll_timeout().unwrap();
            rcon.handle_timeout(now);
        }
        assert_eq!(sends, Options::default().attempts());
        let options = Options::default();
        let target = "127.0.0.1:1".parse().unwrap();
        for (password, command) in [("two words", "status"), ("", "status"), ("pw", "a\nb")] {
            let command = RconCommand {
                password: password.to_owned(),
                command: command.to_owned(),
            };
            assert!(RconSession::new(target, &command, &options).is_err());
        }
    }
}
