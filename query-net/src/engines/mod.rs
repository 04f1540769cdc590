//! The engines of each protocol: a client session and a responder per protocol, and
//! [`all::AllProtocols`], which serves them all on one port.

use std::net::SocketAddr;

use crate::engine::{Bounded, ClientSession};
use crate::error::QueryError;
use crate::learned::Learned;
use crate::options::Options;
use crate::protocol::Protocol;
use crate::status::ServerStatus;

pub mod a2s;
pub mod all;
pub mod ase;
pub mod bedrock;
pub mod doom3;
mod fit;
pub mod fivem;
pub mod frostbite;
pub mod gamespy1;
pub mod gamespy2;
pub mod gamespy3;
pub mod minecraft;
pub mod mumble;
pub mod onequery;
pub mod quake2;
pub mod quake3;
mod quake_family;
pub mod samp;
pub mod single;
pub mod sqp;
pub mod teamspeak3;
pub mod teeworlds;
pub mod unreal2;

/// A status-query session of any protocol, as the drivers hold it.
pub type StatusSession = Box<dyn ClientSession<Output = ServerStatus> + Send>;

/// A new status query of `target` in `protocol` that knows nothing of the target: what ran
/// before in the process does not change what it does.
pub fn new_session(
    protocol: Protocol,
    target: SocketAddr,
    options: &Options,
) -> Result<StatusSession, QueryError> {
    new_session_learning(protocol, target, options, &Learned::new())
}

/// A new status query of `target` in `protocol` that starts from what `learned` holds about
/// the target (a GameSpy 3 server that wants a challenge is asked for it first) and adds what
/// it learns. Callers that query the same targets again keep one [`Learned`] per target, as a
/// [`ServerMemory`](crate::learned::ServerMemory) does.
pub fn new_session_learning(
    protocol: Protocol,
    target: SocketAddr,
    options: &Options,
    learned: &Learned,
) -> Result<StatusSession, QueryError> {
    let session = match protocol {
        Protocol::Sqp => sqp::client(target, options),
        Protocol::OneQuery => onequery::client(target, options),
        Protocol::Samp => samp::client(target, options),
        Protocol::GameSpy1 => gamespy1::client(target, options),
        Protocol::A2s => a2s::client(target, options),
        Protocol::Quake3 => quake3::client(target, options),
        Protocol::GameSpy2 => gamespy2::client(target, options),
        Protocol::GameSpy3 => gamespy3::client_learning(target, options, learned),
        Protocol::MinecraftQuery => gamespy3::minecraft_client(target, options),
        Protocol::Minecraft | Protocol::Frostbite | Protocol::TeamSpeak3 => {
            return Err(QueryError::StreamOnly(protocol))
        }
        Protocol::Bedrock => bedrock::client(target, options),
        Protocol::Quake2 => quake2::client(target, options),
        Protocol::Fivem => fivem::client(target, options),
        Protocol::Doom3 => doom3::client(target, options),
        Protocol::Teeworlds => teeworlds::client(target, options),
        Protocol::Mumble => mumble::client(target, options),
        Protocol::Ase => ase::client(target, options),
        Protocol::Unreal2 => unreal2::client(target, options),
    }?;
    // Every protocol's query ends by the deadline and holds at most the byte cap.
    Ok(Box::new(Bounded::from_options(session, options)))
}
