//! A minimal protocol for testing drivers: the client sends `ECHO` and a payload, the responder
//! sends the datagram back, and the client accepts only an exact copy of what it sent.
//!
//! It exercises everything a real engine relies on (retries, timeouts, spoofed or corrupted
//! replies, multi-datagram answers) without depending on any packet declaration.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::clock::Now;
use crate::engine::{ClientSession, DropReason, Outcome, ReplySink, Responder, Retry, Verdict};
use crate::outcome::bookkeeping;

/// The first bytes of every echo request.
pub const MAGIC: &[u8] = b"ECHO";

/// What a successful echo session returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EchoReply {
    /// The payload that came back.
    pub payload: Vec<u8>,
    /// Time from the latest send to the reply.
    pub rtt: Duration,
    /// How many times the request was sent.
    pub attempts: u32,
    /// Replies from the target that were not an exact copy (corrupted, or meant for another
    /// session) and were ignored.
    pub ignored: u32,
}

/// A client session of the echo protocol.
#[derive(Debug)]
pub struct EchoSession {
    target: SocketAddr,
    retry: Retry,
    ignored: u32,
    outcome: Outcome<EchoReply>,
}

impl EchoSession {
    /// Echoes `payload` off `target`, waiting `timeout` per attempt, `attempts` times at most.
    pub fn new(target: SocketAddr, payload: &[u8], timeout: Duration, attempts: u32) -> Self {
        let mut request = MAGIC.to_vec();
        request.extend_from_slice(payload);
        let mut retry = Retry::new(timeout, attempts);
        retry.start("echo request", &request);
        EchoSession {
            target,
            retry,
            ignored: 0,
            outcome: Outcome::new(),
        }
    }
}

impl ClientSession for EchoSession {
    type Output = EchoReply;

    bookkeeping!(target, sending, poll_result);

    fn on_reply(&mut self, datagram: &[u8], now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        if datagram != self.retry.payload() {
            self.ignored += 1;
            return;
        }
        let attempts = self.retry.attempts();
        let rtt = self.retry.finish(now).unwrap_or_default();
        self.outcome.finish(Ok(EchoReply {
            payload: datagram[MAGIC.len()..].to_vec(),
            rtt,
            attempts,
            ignored: self.ignored,
        }));
    }
}

/// The echo responder: sends each `ECHO` request back `copies` times (several datagrams per
/// request, as GameSpy parts or RCON lines are); anything else is malformed.
#[derive(Debug, Clone)]
pub struct EchoResponder {
    /// How many copies of each request to send back.
    pub copies: usize,
    /// Requests answered so far.
    pub answered: u64,
}

impl Default for EchoResponder {
    fn default() -> Self {
        EchoResponder {
            copies: 1,
            answered: 0,
        }
    }
}

impl Responder for EchoResponder {
    fn handle(
        &mut self,
        _from: SocketAddr,
        datagram: &[u8],
        _now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        if !datagram.starts_with(MAGIC) {
            return Verdict::Dropped(DropReason::Malformed);
        }
        for _ in 0..self.copies {
            if replies.push(datagram).is_err() {
                return Verdict::Dropped(DropReason::Unsupported);
            }
        }
        self.answered += 1;
        Verdict::Answered
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    use crate::error::QueryError;

    fn target() -> SocketAddr {
        "127.0.0.1:4000".parse().unwrap()
    }

    #[test]
    fn accepts_only_an_exact_copy_from_the_target() {
        let t0 = Instant::now();
        let mut session = EchoSession::new(target(), b"42", Duration::from_millis(100), 2);
        let sent = session.poll_transmit(t0).unwrap().to_vec();
        assert_eq!(sent, b"ECHO42");
        session.handle_datagram("127.0.0.1:4001".parse().unwrap(), &sent, t0);
        session.on_reply(b"ECHO43", t0);
        assert!(session.poll_result().is_none());
        session.handle_datagram(target(), &sent, t0 + Duration::from_millis(7));
        let reply = session.poll_result().unwrap().unwrap();
        assert_eq!(reply.payload, b"42");
        assert_eq!(reply.rtt, Duration::from_millis(7));
        assert_eq!(reply.ignored, 1);
        assert!(session.poll_result().is_none(), "result is given once");
        assert_eq!(session.poll_timeout(), None);
    }

    #[test]
    fn times_out_after_its_attempts() {
        let t0 = Instant::now();
        let mut session = EchoSession::new(target(), b"x", Duration::from_millis(100), 2);
        session.poll_transmit(t0).unwrap();
        session.handle_timeout(session.poll_timeout().unwrap());
        let t1 = t0 + Duration::from_millis(100);
        session.poll_transmit(t1).unwrap();
        session.handle_timeout(session.poll_timeout().unwrap());
        match session.poll_result() {
            Some(Err(QueryError::Timeout { attempts: 2, .. })) => {}
            other => panic!("{other:?}"),
        }
        session.on_reply(b"ECHOx", t1);
        assert!(
            session.poll_result().is_none(),
            "a late reply changes nothing"
        );
    }

    #[test]
    fn responder_copies_and_rejects() {
        let mut responder = EchoResponder {
            copies: 3,
            ..EchoResponder::default()
        };
        let mut sink = ReplySink::new(64);
        let now = Now {
            instant: Instant::now(),
            wall: UNIX_EPOCH,
        };
        assert_eq!(
            responder.handle(target(), b"ECHOhi", now, &mut sink),
            Verdict::Answered
        );
        assert_eq!(sink.len(), 3);
        sink.clear();
        assert_eq!(
            responder.handle(target(), b"PING", now, &mut sink),
            Verdict::Dropped(DropReason::Malformed)
        );
        assert!(sink.is_empty());
    }
}
