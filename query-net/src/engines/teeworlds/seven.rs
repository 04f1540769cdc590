//! The client's side of Teeworlds 0.7's token exchange: the token request, then the info
//! request with the server's token, each resent on its own timeout.
//!
//! The session runs it beside the 0.6 / DDNet request; see the [parent module](super).

use std::time::{Duration, Instant};

use query_specs::teeworlds::seven::{InfoReply, Reply, Request, TokenReply};

use crate::engine::Retry;
use crate::error::QueryError;
use crate::options::Options;

/// What a 0.7 packet from the target meant to the exchange.
pub(super) enum Step<'r, 'a> {
    /// Not for this exchange (another client's token, a reply already had), or the exchange
    /// has stopped: ignored.
    Ignored,
    /// The server's token came: the info request is due.
    GotToken,
    /// The info reply, after `rtt`.
    Answered(&'r InfoReply<'a>, Duration),
}

/// One 0.7 exchange; see the [module](self) docs.
#[derive(Debug)]
pub(super) struct SevenExchange {
    /// Ours: the token reply and the info reply's header carry it.
    client_token: u32,
    /// The browser's token, echoed in the info reply's body.
    browser_token: i32,
    /// The server's, once its token reply came.
    server_token: Option<u32>,
    retry: Retry,
    /// The attempts of the current request ran out.
    exhausted: Option<QueryError>,
    stopped: bool,
}

impl SevenExchange {
    /// An exchange with random tokens; its token request is due.
    pub(super) fn new(options: &Options) -> Result<Self, QueryError> {
        let client_token = rand::random::<u32>();
        // TOKEN_NONE means "no token": never use it as ours.
        let client_token = if client_token == u32::MAX {
            0
        } else {
            client_token
        };
        let mut retry = Retry::from_options(options);
        retry.start_encoded("0.7 token request", &Request::token(client_token), ())?;
        Ok(SevenExchange {
            client_token,
            // Any non-negative 31-bit number.
            browser_token: (rand::random::<u32>() >> 1).cast_signed(),
            server_token: None,
            retry,
            exhausted: None,
            stopped: false,
        })
    }

    /// Sends nothing more and ignores every later 0.7 packet (the 0.6 / DDNet reply came).
    pub(super) fn stop(&mut self, now: Instant) {
        self.stopped = true;
        self.retry.finish(now);
    }

    /// Whether the exchange still waits for a reply.
    pub(super) fn is_waiting(&self) -> bool {
        !self.stopped && self.exhausted.is_none()
    }

    /// Whether the server answered the token request: a 0.7 server (or DDNet) is there.
    pub(super) fn has_token(&self) -> bool {
        self.server_token.is_some()
    }

    /// The request to send, when one is due.
    pub(super) fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
        if !self.is_waiting() {
            return None;
        }
        self.retry.poll_transmit(now)
    }

    pub(super) fn poll_timeout(&self) -> Option<Instant> {
        if !self.is_waiting() {
            return None;
        }
        self.retry.poll_timeout()
    }

    /// Resends the current request when its attempt has timed out; notes the timeout once
    /// its attempts ran out.
    pub(super) fn handle_timeout(&mut self, now: Instant) {
        if !self.is_waiting() {
            return;
        }
        if let Err(timeout) = self.retry.handle_timeout(now) {
            self.exhausted = Some(timeout);
        }
    }

    /// The timeout of the request whose attempts ran out, if they did.
    pub(super) fn take_timeout(&mut self) -> Option<QueryError> {
        self.exhausted.take()
    }

    /// The request the exchange waits for the reply to, once sent.
    pub(super) fn waiting_for(&self) -> Option<&'static str> {
        self.retry.waiting_for()
    }

    /// A 0.7 packet from the target. Strict: the token reply and the info reply must carry
    /// our token (32 random bits, so a forged reply has to guess it), and the info reply the
    /// browser's token too. Lenient: the server's token in the info reply is not compared
    /// with the one it gave, since a server may move to a new one between the two.
    pub(super) fn on_reply<'r, 'a>(&mut self, reply: &'r Reply<'a>, now: Instant) -> Step<'r, 'a> {
        if self.stopped {
            return Step::Ignored;
        }
        match reply {
            Reply::Token(TokenReply {
                client_token,
                server_token,
                ..
            }) if *client_token == self.client_token && self.server_token.is_none() => {
                self.server_token = Some(*server_token);
                let request = Request::info(*server_token, self.client_token, self.browser_token);
                self.exhausted = None;
                match self
                    .retry
                    .start_encoded("0.7 server info request", &request, ())
                {
                    Ok(()) => Step::GotToken,
                    Err(error) => {
                        self.exhausted = Some(QueryError::Malformed(error));
                        Step::Ignored
                    }
                }
            }
            Reply::Info(info)
                if info.client_token == self.client_token
                    && info.token == self.browser_token
                    && self.server_token.is_some() =>
            {
                let rtt = self.retry.finish(now).unwrap_or_default();
                self.stopped = true;
                Step::Answered(info, rtt)
            }
            _ => Step::Ignored,
        }
    }
}
