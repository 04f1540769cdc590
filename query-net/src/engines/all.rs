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
//! Anything else is dropped as malformed without reaching any protocol's responder.

use std::net::SocketAddr;

use query_specs::{onequery, samp, sqp};
use query_wire::{kv, Decode};

use super::gamespy1::{GameSpy1Config, GameSpy1Responder};
use super::onequery::OneQueryResponder;
use super::samp::{SampConfig, SampResponder};
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
    // Compared as constants rather than decoded: a failed decode builds an error, and most
    // datagrams are not OneQuery.
    let magic = datagram
        .first_chunk::<8>()
        .map(|first| u64::from_be_bytes(*first));
    if matches!(
        magic,
        Some(onequery::MAGIC_ONEQUERY | onequery::MAGIC_HYQUERY2)
    ) {
        Some(Protocol::OneQuery)
    } else if datagram.starts_with(samp::MAGIC) {
        Some(Protocol::Samp)
    } else if datagram.first() == Some(&kv::DELIMITER) {
        Some(Protocol::GameSpy1)
    } else if sqp::Request::from_bytes(datagram).is_ok() {
        // Exactly a challenge request or a query request: the declaration checks the length.
        Some(Protocol::Sqp)
    } else {
        None
    }
}

/// Answers SQP, OneQuery, SA:MP and GameSpy v1 on one socket, from one [`SharedState`].
///
/// Each protocol keeps its own responder (SQP's challenge table, OneQuery's token key, the
/// SA:MP and GameSpy reply caches); this type only routes with [`route`], so a datagram costs
/// one look at its first bytes before the protocol's own checks.
///
/// ```
/// use query_net::engines::all::AllProtocols;
/// use query_net::service::Service;
/// use query_net::state::{ServerState, SharedState};
///
/// let state = SharedState::new(ServerState { name: "Everything".into(), ..ServerState::default() });
/// let mut service = Service::new(AllProtocols::new(state)).rate_limit(None);
/// let from = "192.0.2.1:5000".parse().unwrap();
/// // An SQP challenge request gets a 5-byte challenge back.
/// let replies: Vec<Vec<u8>> = service.handle(from, &[0; 5]).map(<[u8]>::to_vec).collect();
/// assert_eq!(replies[0].len(), 5);
/// // Bytes no protocol starts with are dropped.
/// assert_eq!(service.handle(from, b"hello").count(), 0);
/// ```
#[derive(Debug)]
pub struct AllProtocols {
    sqp: SqpResponder,
    onequery: OneQueryResponder,
    samp: SampResponder,
    gamespy1: GameSpy1Responder,
}

impl AllProtocols {
    /// Every protocol answered from `state`, with each responder's defaults.
    pub fn new(state: SharedState) -> Self {
        AllProtocols {
            sqp: SqpResponder::new(state.clone()),
            onequery: OneQueryResponder::new(state.clone()),
            samp: SampResponder::new(state.clone(), SampConfig::default()),
            gamespy1: GameSpy1Responder::new(state, GameSpy1Config::default()),
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

    /// Replaces the SA:MP responder (to set its configuration or RCON handler).
    #[must_use]
    pub fn with_samp(mut self, samp: SampResponder) -> Self {
        self.samp = samp;
        self
    }

    /// Replaces the GameSpy v1 responder (to set its configuration).
    #[must_use]
    pub fn with_gamespy1(mut self, gamespy1: GameSpy1Responder) -> Self {
        self.gamespy1 = gamespy1;
        self
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
        match route(datagram) {
            None | Some(Protocol::A2s) => Verdict::Dropped(DropReason::Malformed),
            Some(Protocol::Sqp) => self.sqp.handle(from, datagram, now, replies),
            Some(Protocol::OneQuery) => self.onequery.handle(from, datagram, now, replies),
            Some(Protocol::Samp) => self.samp.handle(from, datagram, now, replies),
            Some(Protocol::GameSpy1) => self.gamespy1.handle(from, datagram, now, replies),
        }
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
