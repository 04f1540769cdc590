//! What a client learns about a server and a later query of the same server can use, held by
//! the caller rather than the process.
//!
//! A client session is a sans-I/O state machine: what it does must follow from what it is given.
//! So the one thing a query carries over to the next (today: a GameSpy 3 server that answered
//! the query alone with a challenge, or not at all, wants the challenge first) lives in a
//! [`Learned`] the caller hands to the session, and two callers with two `Learned` never see
//! each other's. One-off queries ([`engines::new_session`](crate::engines::new_session),
//! `gsq query`, `gsq decode --status`) start from nothing; callers that query the same servers
//! again (`gsq bulk`, the exporter) keep a [`ServerMemory`], one `Learned` per target, and pass
//! it to [`engines::new_session_learning`](crate::engines::new_session_learning).
//!
//! ```
//! use std::net::SocketAddr;
//! use query_net::learned::ServerMemory;
//!
//! let memory = ServerMemory::default();
//! let target: SocketAddr = "192.0.2.7:29900".parse().unwrap();
//! memory.of(target).note_wants_challenge();
//! assert!(memory.of(target).wants_challenge());
//! // Another target, or another memory, knows nothing of it.
//! assert!(!memory.of("192.0.2.8:29900".parse().unwrap()).wants_challenge());
//! assert!(!ServerMemory::default().of(target).wants_challenge());
//! ```

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// What queries of one server have learned about it. Clones share it: a session holds one and
/// writes what it learns, the caller keeps another for the next session of the same target.
#[derive(Debug, Clone, Default)]
pub struct Learned {
    facts: Arc<Facts>,
}

#[derive(Debug, Default)]
struct Facts {
    /// The server answered a GameSpy 3 query without a challenge with a challenge reply, or
    /// not at all.
    wants_challenge: AtomicBool,
}

impl Learned {
    /// Nothing learned yet (what a one-off query starts from).
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the server wanted a challenge before its GameSpy 3 query.
    pub fn wants_challenge(&self) -> bool {
        self.facts.wants_challenge.load(Ordering::Relaxed)
    }

    /// Records that the server wants a challenge before its GameSpy 3 query.
    pub fn note_wants_challenge(&self) {
        self.facts.wants_challenge.store(true, Ordering::Relaxed);
    }
}

/// One [`Learned`] per target, for a caller that queries the same servers again. Holds at most
/// [`ServerMemory::CAPACITY`] targets; past it the memory starts over (a target forgotten costs
/// its next query one timeout, never a wrong answer). Clones share the memory.
#[derive(Debug, Clone, Default)]
pub struct ServerMemory {
    targets: Arc<Mutex<HashMap<SocketAddr, Learned>>>,
}

impl ServerMemory {
    /// The most targets remembered at once.
    pub const CAPACITY: usize = 4096;

    /// An empty memory.
    pub fn new() -> Self {
        Self::default()
    }

    /// What was learned about `target`, to hand to its next session (which adds to it).
    pub fn of(&self, target: SocketAddr) -> Learned {
        let Ok(mut targets) = self.targets.lock() else {
            // A panic elsewhere while the map was held: query as if nothing was learned.
            return Learned::new();
        };
        if !targets.contains_key(&target) && targets.len() >= Self::CAPACITY {
            targets.clear();
        }
        targets.entry(target).or_default().clone()
    }

    /// How many targets are remembered.
    pub fn len(&self) -> usize {
        self.targets.lock().map_or(0, |targets| targets.len())
    }

    /// Whether no target is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(port: u16) -> SocketAddr {
        SocketAddr::from(([192, 0, 2, 1], port))
    }

    #[test]
    fn clones_share_what_was_learned_and_fresh_ones_do_not() {
        let learned = Learned::new();
        let held_by_session = learned.clone();
        held_by_session.note_wants_challenge();
        assert!(learned.wants_challenge());
        assert!(!Learned::new().wants_challenge());
    }

    #[test]
    fn memory_is_per_target_and_bounded() {
        let memory = ServerMemory::new();
        memory.of(target(1)).note_wants_challenge();
        assert!(memory.of(target(1)).wants_challenge());
        assert!(!memory.of(target(2)).wants_challenge());
        for port in 3..=u16::try_from(ServerMemory::CAPACITY).unwrap() {
            memory.of(target(port));
        }
        assert_eq!(memory.len(), ServerMemory::CAPACITY);
        // Still held at the cap; one more target starts the memory over.
        assert!(memory.of(target(1)).wants_challenge());
        memory.of(target(60_000));
        assert_eq!(memory.len(), 1);
        assert!(!memory.of(target(1)).wants_challenge());
    }
}
