//! Client session and responder for this protocol.

use std::net::SocketAddr;

use super::StatusSession;
use crate::error::QueryError;
use crate::options::Options;
use crate::protocol::Protocol;

/// A status query of `target`.
pub fn client(target: SocketAddr, options: &Options) -> Result<StatusSession, QueryError> {
    let _ = (target, options);
    Err(QueryError::Unsupported(Protocol::Samp))
}
