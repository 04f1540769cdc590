//! The client engine of each protocol, chosen by [`Protocol`].

use std::net::SocketAddr;

use crate::engine::ClientSession;
use crate::error::QueryError;
use crate::options::Options;
use crate::protocol::Protocol;
use crate::status::ServerStatus;

/// A status-query session of any protocol, as the drivers hold it.
pub type StatusSession = Box<dyn ClientSession<Output = ServerStatus> + Send>;

/// A new status query of `target` in `protocol`.
///
/// Fails with [`QueryError::Unsupported`] for a protocol whose engine this build lacks.
pub fn new_session(
    protocol: Protocol,
    target: SocketAddr,
    options: &Options,
) -> Result<StatusSession, QueryError> {
    let _ = (target, options);
    match protocol {
        Protocol::Sqp | Protocol::OneQuery | Protocol::Samp | Protocol::GameSpy1 => {
            Err(QueryError::Unsupported(protocol))
        }
    }
}
