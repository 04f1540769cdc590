//! The engines of each protocol: a client session and a responder per protocol, and
//! [`all::AllProtocols`], which serves them all on one port.

use std::net::SocketAddr;

use crate::engine::{Bounded, ClientSession};
use crate::error::QueryError;
use crate::options::Options;
use crate::protocol::Protocol;
use crate::status::ServerStatus;

pub mod a2s;
pub mod all;
pub mod bedrock;
mod fit;
pub mod gamespy1;
pub mod gamespy2;
pub mod gamespy3;
pub mod minecraft;
pub mod onequery;
pub mod quake3;
pub mod samp;
pub mod sqp;

/// A status-query session of any protocol, as the drivers hold it.
pub type StatusSession = Box<dyn ClientSession<Output = ServerStatus> + Send>;

/// A new status query of `target` in `protocol`.
pub fn new_session(
    protocol: Protocol,
    target: SocketAddr,
    options: &Options,
) -> Result<StatusSession, QueryError> {
    let session = match protocol {
        Protocol::Sqp => sqp::client(target, options),
        Protocol::OneQuery => onequery::client(target, options),
        Protocol::Samp => samp::client(target, options),
        Protocol::GameSpy1 => gamespy1::client(target, options),
        Protocol::A2s => a2s::client(target, options),
        Protocol::Quake3 => quake3::client(target, options),
        Protocol::GameSpy2 => gamespy2::client(target, options),
        Protocol::GameSpy3 => gamespy3::client(target, options),
        Protocol::MinecraftQuery => gamespy3::minecraft_client(target, options),
        Protocol::Minecraft => return Err(QueryError::StreamOnly(protocol)),
        Protocol::Bedrock => bedrock::client(target, options),
    }?;
    // Every protocol's query ends by the deadline and holds at most the byte cap.
    Ok(Box::new(Bounded::from_options(session, options)))
}
