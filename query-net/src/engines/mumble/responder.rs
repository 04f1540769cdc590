//! The Mumble responder: pings answered from the server state.
//!
//! A ping (exactly 12 bytes, the first four zero) gets one 24-byte pong: the version, the
//! ident echoed, the players online as users, `max_players` as user slots and
//! [`MumbleConfig::bandwidth`]. The version is the state's `version` when it reads as
//! `major.minor.patch` (`1.3.4`), else [`MumbleConfig::version`].
//!
//! The ping has no challenge: a pong goes to an address nobody verified, so every pong is
//! charged to the byte budget of unproven sources by the [`Service`](crate::service::Service)
//! that runs the responder. A pong is twice the ping's size, the smallest amplification of
//! any responder here besides SQP's.

use std::net::SocketAddr;

use query_specs::mumble::{Ping, Pong, Version};
use query_wire::Decode;

use crate::clock::Now;
use crate::engine::{DropReason, ReplySink, Responder, Verdict};
use crate::state::{ServerState, SharedState};

/// How a [`MumbleResponder`] presents the server, beyond the [`ServerState`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MumbleConfig {
    /// The version sent when the state's `version` is not `major.minor.patch`.
    pub version: Version,
    /// The bandwidth a client may use, in bits per second.
    pub bandwidth: u32,
}

impl Default for MumbleConfig {
    /// Version 1.4.0 and Murmur's default bandwidth, 558,000 bits per second.
    fn default() -> Self {
        MumbleConfig {
            version: Version {
                major: 1,
                minor: 4,
                patch: 0,
            },
            bandwidth: 558_000,
        }
    }
}

/// Answers Mumble pings from a [`SharedState`]; see the [module](self) docs.
///
/// ```
/// use query_net::engines::mumble::{MumbleConfig, MumbleResponder};
/// use query_net::service::Service;
/// use query_net::state::{ServerState, SharedState};
/// use query_specs::mumble::{Ping, Pong};
/// use query_wire::{Decode, Encode};
///
/// let state = SharedState::new(ServerState { version: "1.3.4".into(), max_players: 42, ..ServerState::default() });
/// let mut service = Service::new(MumbleResponder::new(state, MumbleConfig::default())).rate_limit(None);
/// let from = "192.0.2.1:5000".parse().unwrap();
/// let ping = Ping { ident: 7 }.to_vec()?;
/// let reply = service.handle(from, &ping).next().unwrap().to_vec();
/// let pong = Pong::from_bytes(&reply)?;
/// assert_eq!((pong.ident, pong.max_users, pong.version.to_string()), (7, 42, "1.3.4".to_owned()));
/// assert_eq!(reply.len(), 2 * ping.len());
/// # Ok::<(), query_wire::Error>(())
/// ```
#[derive(Debug)]
pub struct MumbleResponder {
    state: SharedState,
    config: MumbleConfig,
}

impl MumbleResponder {
    /// Answers from `state` as `config` says.
    pub fn new(state: SharedState, config: MumbleConfig) -> Self {
        MumbleResponder { state, config }
    }
}

/// `major.minor.patch` as the pong carries it, when `text` is one.
fn parse_version(text: &str) -> Option<Version> {
    let mut parts = text.trim().split('.');
    let version = Version {
        major: parts.next()?.parse().ok()?,
        minor: parts.next()?.parse().ok()?,
        patch: parts.next()?.parse().ok()?,
    };
    parts.next().is_none().then_some(version)
}

fn pong(state: &ServerState, config: &MumbleConfig, ident: u64) -> Pong {
    Pong {
        version: parse_version(&state.version).unwrap_or(config.version),
        ident,
        users: state.num_players(),
        max_users: state.max_players,
        bandwidth: config.bandwidth,
    }
}

impl Responder for MumbleResponder {
    fn handle(
        &mut self,
        _from: SocketAddr,
        datagram: &[u8],
        _now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        let Ok(ping) = Ping::from_bytes(datagram) else {
            return Verdict::Dropped(DropReason::Malformed);
        };
        let pong = pong(&self.state.load(), &self.config, ping.ident);
        Verdict::pushed(replies.push_encoded(&pong, ()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_only_when_they_have_three_numbers() {
        // The patch number is one byte: Mumble 1.5's build numbers do not fit.
        assert_eq!(parse_version("1.5.735"), None);
        assert_eq!(
            parse_version(" 1.3.4 "),
            Some(Version {
                major: 1,
                minor: 3,
                patch: 4
            })
        );
        assert_eq!(parse_version("1.3"), None);
        assert_eq!(parse_version("1.3.4.5"), None);
        assert_eq!(parse_version("1.3.x"), None);
    }
}
