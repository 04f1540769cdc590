//! Why a query failed, in terms a user can act on.

use std::borrow::Cow;
use std::io;
use std::time::Duration;

use crate::protocol::Protocol;

/// A failed query. Each variant points at something to do: wait or raise the timeout, supply a
/// token, report a broken server, fix the address.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// Every attempt went unanswered: the server is down, the port is wrong, a firewall drops
    /// the traffic, or the server rate-limited us.
    #[error("no reply to the {waiting_for} after {attempts} attempt(s) over {after:.1?}")]
    Timeout {
        /// The request that went unanswered (`challenge request`, `players request`, ...).
        waiting_for: &'static str,
        /// How many times it was sent.
        attempts: u32,
        /// How long we waited in total for it.
        after: Duration,
    },
    /// The query's overall deadline ([`Options::deadline`](crate::Options::deadline)) passed
    /// before the reply was whole: the server answered too slowly, dripped parts or pages, or
    /// answered each step just before its timeout.
    #[error("no whole reply to the {waiting_for} before the query's deadline ({after:.1?} after the first send, {attempts} request(s) sent)")]
    Deadline {
        /// The request that was waiting for (the rest of) its reply when the deadline passed
        /// (`players request`, ...), or `request` when none was.
        waiting_for: &'static str,
        /// How many requests the query had sent (datagrams, or one per TCP connection).
        attempts: u32,
        /// How long after its first send the query ended.
        after: Duration,
    },
    /// Nothing listens at the address: every request the query sent was answered by an ICMP
    /// "port unreachable" (the host is up, the port is closed). Reported only when every
    /// attempt was refused, so one forged ICMP message cannot end a query that the server then
    /// answers; see [`driver::query_session`](crate::driver::query_session).
    #[error("nothing listens at {target}: each of the {attempts} request(s) was refused (ICMP port unreachable)")]
    NothingListens {
        /// The address queried.
        target: std::net::SocketAddr,
        /// How many requests were sent, each refused.
        attempts: u32,
    },
    /// The query timed out while another address of the server's port sent datagrams, which
    /// were dropped as possibly spoofed: typically a server with several addresses that
    /// answers from its primary one instead of the one asked.
    #[error("{timeout}; meanwhile {datagrams} datagram(s) came from {from}, not {target}, and were dropped as possibly spoofed: a server with several addresses answering from another one (query {from}, or have the server answer from the address asked)")]
    AnsweredElsewhere {
        /// The timeout the query ended with.
        timeout: Box<QueryError>,
        /// The address queried.
        target: std::net::SocketAddr,
        /// The address the datagrams came from (the latest, if several).
        from: std::net::SocketAddr,
        /// How many came from it.
        datagrams: u32,
    },
    /// The host refused the TCP connection: nothing listens on that port. A refusal comes from
    /// the host's own stack during the handshake, so unlike an ICMP message it cannot be
    /// forged by a third party that does not see the traffic.
    #[error("nothing listens at {target}: the TCP connection was refused")]
    ConnectionRefused {
        /// The address queried.
        target: std::net::SocketAddr,
    },
    /// The server answers only with a valid auth token (OneQuery), or refused the RCON password.
    #[error("the server requires authentication: {0}")]
    AuthRequired(Cow<'static, str>),
    /// A reply that does not decode: the message names the byte offset and the field path.
    #[error("malformed reply: {0}")]
    Malformed(#[from] query_wire::Error),
    /// The address is not one: a malformed host, or a port that is not a number in 1-65535.
    #[error("{0}")]
    Address(#[from] crate::address::BadAddress),
    /// The host name did not resolve.
    #[error("cannot resolve {host}: {source}")]
    Resolve {
        /// The name as given.
        host: String,
        /// What the resolver said.
        #[source]
        source: io::Error,
    },
    /// A socket operation failed.
    #[error("network error: {0}")]
    Io(#[from] io::Error),
    /// The reply decoded but breaks the protocol's rules (wrong challenge echo, impossible
    /// counts, a multi-part reply that contradicts itself).
    #[error("protocol violation: {0}")]
    Protocol(Cow<'static, str>),
    /// A reply the server certainly sent, since it echoes this query's challenge (which a
    /// spoofer off the path cannot know), that does not decode or breaks the protocol's rules.
    /// Unlike an unproven datagram, it is no stray packet of another service: the server
    /// speaks the protocol, and this reply of it is broken or of an unknown version. The
    /// query ends at once with it instead of waiting for a better reply that will not come.
    #[error("{0}")]
    ServerReply(Box<QueryError>),
    /// This build has no client engine for the protocol.
    #[error("no client engine for protocol {0}")]
    Unsupported(Protocol),
    /// The protocol runs over TCP, and this way of querying sends datagrams only (`gsq bulk`
    /// and the exporter, for now); query it on its own ([`driver::query`](crate::driver::query)).
    #[error("{0} is queried over TCP, which this path does not do yet: query it on its own")]
    StreamOnly(Protocol),
}

impl QueryError {
    /// A [`QueryError::Protocol`] with a fixed or formatted message.
    pub fn protocol(message: impl Into<Cow<'static, str>>) -> Self {
        QueryError::Protocol(message.into())
    }

    /// `error` about a reply the server proved its own ([`QueryError::ServerReply`]).
    pub fn server_reply(error: impl Into<QueryError>) -> Self {
        QueryError::ServerReply(Box::new(error.into()))
    }

    /// Whether trying again later could succeed (timeouts and network errors), as opposed to an
    /// answer that will stay wrong.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            QueryError::Timeout { .. }
                | QueryError::Deadline { .. }
                | QueryError::NothingListens { .. }
                | QueryError::ConnectionRefused { .. }
                | QueryError::AnsweredElsewhere { .. }
                | QueryError::Io(_)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use query_wire::{Error, ErrorKind};

    #[test]
    fn malformed_message_names_offset_and_field_path() {
        let wire = Error::new(ErrorKind::UnexpectedEnd { need: 9, have: 3 }, 91)
            .in_field("map")
            .in_field("server_info")
            .in_field("QueryResponse");
        let err = QueryError::from(wire);
        assert_eq!(
            err.to_string(),
            "malformed reply: QueryResponse.server_info.map at byte 91: need 9 bytes, have 3"
        );
        assert!(!err.is_transient());
    }

    #[test]
    fn timeout_message_says_what_went_unanswered() {
        let err = QueryError::Timeout {
            waiting_for: "challenge request",
            attempts: 3,
            after: Duration::from_millis(4500),
        };
        assert_eq!(
            err.to_string(),
            "no reply to the challenge request after 3 attempt(s) over 4.5s"
        );
        assert!(err.is_transient());
    }

    #[test]
    fn resolve_error_keeps_its_source() {
        let err = QueryError::Resolve {
            host: "nowhere.invalid:1".to_owned(),
            source: io::Error::new(io::ErrorKind::NotFound, "no such host"),
        };
        assert_eq!(
            err.to_string(),
            "cannot resolve nowhere.invalid:1: no such host"
        );
        assert!(std::error::Error::source(&err).is_some());
    }
}
