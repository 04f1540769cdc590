//! BattlEye RCon (UDP; Arma 2 and 3, DayZ): a client and a server a game can embed.
//!
//! - [`Session`] is the client's protocol, sans-I/O: the login, commands with sequence
//!   numbers, split answers joined, server messages acknowledged, keep-alives, resends.
//! - [`Client`] drives a session over a tokio `UdpSocket` in a task of its own, so that
//!   server messages are acknowledged and keep-alives sent while the caller does something
//!   else; [`Client::messages`] hands the messages out as they arrive.
//! - [`server`] is the other side: [`server::Server`] (sans-I/O, every client of one
//!   socket) and [`server::serve`], which runs the same
//!   [`CommandHandler`](crate::rcon::server::CommandHandler) and
//!   [`AuthGate`](crate::rcon::server::AuthGate) as the Source RCON server.
//!
//! The packets are declared in [`query_specs::battleye`], the checksum by the derive.

mod client;
mod session;

pub mod server;

use std::time::{Duration, Instant};

pub use client::{Client, MESSAGE_BACKLOG};
pub use query_specs::battleye::DEFAULT_PORT;
pub use session::{Event, Session};

/// How long a client stays silent before it sends an empty command: well before the
/// server's 45-second cut-off, with room for a lost keep-alive and its resend.
pub const KEEP_ALIVE: Duration = Duration::from_secs(30);

/// The largest UDP payload over IPv4: no BattlEye packet is longer.
pub const MAX_DATAGRAM: usize = 65_507;

/// Sleeps until `at`, or forever without one (a `select!` branch that never fires).
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}
