//! One responder for all four protocols on one port, dispatching on the first bytes.
//!
//! The four request formats cannot be mistaken for one another:
//!
//! | first bytes | length | protocol |
//! |---|---|---|
//! | `ONEQUERY` or `HYQUERY2` | any | OneQuery |
//! | `SAMP` | any | SA:MP / open.mp |
//! | `\` | any | GameSpy v1 |
//! | `00` | 5 | SQP challenge request |
//! | `01` | 8 | SQP query request |
//!
//! Anything else is dropped as malformed without reaching any protocol's decoder.

use std::net::SocketAddr;

use super::onequery::OneQueryResponder;
use super::sqp::SqpResponder;
use crate::clock::Now;
use crate::engine::{DropReason, ReplySink, Responder, Verdict};
use crate::protocol::Protocol;
use crate::state::SharedState;

/// Which protocol a request is in, from its first bytes and length (see the module table);
/// `None` for a datagram no protocol would answer.
///
/// ```
/// use query_net::engines::all::route;
/// use query_net::Protocol;
///
/// assert_eq!(route(b"ONEQUERY\x00"), Some(Protocol::OneQuery));
/// assert_eq!(route(b"\\status\\"), Some(Protocol::GameSpy1));
/// assert_eq!(route(&[0, 0, 0, 0, 0]), Some(Protocol::Sqp));
/// assert_eq!(route(&[0, 0, 0, 0]), None);
/// ```
pub fn route(datagram: &[u8]) -> Option<Protocol> {
    match datagram {
        [b'O', b'N', b'E', b'Q', b'U', b'E', b'R', b'Y', ..]
        | [b'H', b'Y', b'Q', b'U', b'E', b'R', b'Y', b'2', ..] => Some(Protocol::OneQuery),
        [b'S', b'A', b'M', b'P', ..] => Some(Protocol::Samp),
        [b'\\', ..] => Some(Protocol::GameSpy1),
        [0x00, _, _, _, _] | [0x01, _, _, _, _, _, _, _] => Some(Protocol::Sqp),
        _ => None,
    }
}

/// A protocol's responder, boxed so that [`AllProtocols`] can hold any.
pub type BoxedResponder = Box<dyn Responder + Send>;

/// Answers SQP, OneQuery, SA:MP and GameSpy v1 on one socket, from one [`SharedState`].
///
/// Each protocol keeps its own responder (SQP's challenge table, OneQuery's token key); this
/// type only routes with [`route`]. A protocol without a responder drops its requests as
/// [`DropReason::Unsupported`].
#[derive(Debug)]
pub struct AllProtocols {
    sqp: SqpResponder,
    onequery: OneQueryResponder,
    samp: Option<DebugResponder>,
    gamespy1: Option<DebugResponder>,
}

/// A boxed responder that prints as its protocol's name.
struct DebugResponder(BoxedResponder, Protocol);

impl std::fmt::Debug for DebugResponder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} responder", self.1)
    }
}

impl AllProtocols {
    /// Every protocol answered from `state`, with each responder's defaults.
    pub fn new(state: SharedState) -> Self {
        AllProtocols {
            sqp: SqpResponder::new(state.clone()),
            onequery: OneQueryResponder::new(state),
            samp: None,
            gamespy1: None,
        }
    }

    /// Replaces the SQP responder (to change its configuration).
    #[must_use]
    pub fn with_sqp(mut self, sqp: SqpResponder) -> Self {
        self.sqp = sqp;
        self
    }

    /// Replaces the OneQuery responder (to set its access rules or token key).
    #[must_use]
    pub fn with_onequery(mut self, onequery: OneQueryResponder) -> Self {
        self.onequery = onequery;
        self
    }

    /// Sets the SA:MP responder.
    #[must_use]
    pub fn with_samp(mut self, samp: impl Responder + Send + 'static) -> Self {
        self.samp = Some(DebugResponder(Box::new(samp), Protocol::Samp));
        self
    }

    /// Sets the GameSpy v1 responder.
    #[must_use]
    pub fn with_gamespy1(mut self, gamespy1: impl Responder + Send + 'static) -> Self {
        self.gamespy1 = Some(DebugResponder(Box::new(gamespy1), Protocol::GameSpy1));
        self
    }

    /// Whether requests in `protocol` are answered.
    pub fn serves(&self, protocol: Protocol) -> bool {
        match protocol {
            Protocol::Sqp | Protocol::OneQuery => true,
            Protocol::Samp => self.samp.is_some(),
            Protocol::GameSpy1 => self.gamespy1.is_some(),
        }
    }
}

impl Responder for AllProtocols {
    fn handle(
        &mut self,
        from: SocketAddr,
        datagram: &[u8],
        now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        let responder: &mut dyn Responder = match route(datagram) {
            None => return Verdict::Dropped(DropReason::Malformed),
            Some(Protocol::Sqp) => &mut self.sqp,
            Some(Protocol::OneQuery) => &mut self.onequery,
            Some(Protocol::Samp) => match &mut self.samp {
                Some(samp) => samp.0.as_mut(),
                None => return Verdict::Dropped(DropReason::Unsupported),
            },
            Some(Protocol::GameSpy1) => match &mut self.gamespy1 {
                Some(gamespy1) => gamespy1.0.as_mut(),
                None => return Verdict::Dropped(DropReason::Unsupported),
            },
        };
        responder.handle(from, datagram, now, replies)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_by_first_bytes_and_length() {
        assert_eq!(route(b"HYQUERY2\x01"), Some(Protocol::OneQuery));
        assert_eq!(route(b"ONEQUER"), None);
        assert_eq!(
            route(b"SAMP\x7f\x00\x00\x01\x61\x1ei"),
            Some(Protocol::Samp)
        );
        assert_eq!(route(b"\\"), Some(Protocol::GameSpy1));
        assert_eq!(route(&[1; 8]), Some(Protocol::Sqp));
        assert_eq!(route(&[1; 9]), None);
        assert_eq!(route(&[0; 6]), None);
        assert_eq!(route(&[2; 5]), None);
        assert_eq!(route(b""), None);
    }
}
