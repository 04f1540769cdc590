//! Game-server queries over UDP, for both sides: clients that query servers (one, or a hundred
//! thousand at once) and responders that game servers embed.
//!
//! The protocol logic is sans-I/O ([`engine`]): state machines fed with datagrams and time,
//! tested without sockets. Thin tokio drivers ([`driver`], [`bulk`]) run them on real sockets.
//!
//! - Client: [`driver::query`] returns a [`ServerStatus`] for any protocol, and
//!   [`driver::query_sqp`], [`driver::query_onequery`], [`driver::query_samp`],
//!   [`driver::query_gamespy1`] and [`driver::query_a2s`] for one each; [`bulk::bulk`] streams results for many targets
//!   through a few sockets.
//! - Responder: a [`engine::Responder`] reads the game's [`state::SharedState`]; a
//!   [`service::Service`] adds rate limiting and counters; [`driver::serve`] runs it.
//!
//! The packets themselves are declared in `query-specs`; this crate maps them to and from the
//! common [`ServerStatus`] and [`state::ServerState`].

pub mod address;
pub mod batch;
pub mod bulk;
pub mod challenge;
pub mod clock;
pub mod driver;
pub mod engine;
pub mod engines;
mod error;
pub mod http;
pub mod learned;
pub mod limit;
mod options;
mod outcome;
pub mod part_wait;
pub mod protocol;
pub mod refusal;
pub mod replay;
pub mod service;
pub mod snapshot;
pub mod state;
mod status;
pub mod stream;
pub mod tcp;

#[cfg(feature = "test-util")]
pub mod testing;

pub use error::QueryError;
pub use options::{Options, RconCommand};
pub use protocol::Protocol;
pub use status::{Player, ServerStatus, Team};
