//! What a responder derives from one state snapshot, kept until the state changes: one cache
//! every responder uses, so that a reply costs a copy of bytes encoded once, not an encode.

use std::convert::Infallible;
use std::sync::Arc;

use crate::state::{ServerState, SharedState};

/// A value built from a [`SharedState`]'s current snapshot (a responder's encoded replies),
/// kept while the snapshot stays the same and so does `key` (what else it was built for, such
/// as a datagram cap; `()` when nothing). The snapshot is compared by pointer: publishing a new
/// state, even an equal one, builds again.
///
/// ```
/// use query_net::snapshot::SnapshotCache;
/// use query_net::state::{ServerState, SharedState};
///
/// let state = SharedState::new(ServerState { name: "Fort".into(), ..ServerState::default() });
/// let mut cache: SnapshotCache<Vec<u8>> = SnapshotCache::new();
/// let mut builds = 0;
/// for _ in 0..3 {
///     let (_, name) = cache.get(&state, (), |snapshot, stale| {
///         builds += 1;
///         let mut bytes = stale.unwrap_or_default();
///         bytes.clear();
///         bytes.extend_from_slice(snapshot.name.as_bytes());
///         Ok::<_, ()>(bytes)
///     })?;
///     assert_eq!(name, b"Fort");
/// }
/// assert_eq!(builds, 1);
/// # Ok::<(), ()>(())
/// ```
#[derive(Debug)]
pub struct SnapshotCache<T, K = ()> {
    built: Option<Built<T, K>>,
}

#[derive(Debug)]
struct Built<T, K> {
    /// Held so that the pointer compared against stays this snapshot's.
    snapshot: Arc<ServerState>,
    key: K,
    value: T,
}

impl<T, K> Default for SnapshotCache<T, K> {
    fn default() -> Self {
        SnapshotCache { built: None }
    }
}

impl<T, K: PartialEq> SnapshotCache<T, K> {
    /// An empty cache: the first [`get`](SnapshotCache::get) builds.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value for `state`'s current snapshot and `key`, and that snapshot. Built with
    /// `build(snapshot, stale)` when the snapshot or the key changed, where `stale` is the
    /// value built before (its buffers can be reused). When `build` fails, nothing is kept and
    /// the next call builds again.
    pub fn get<E>(
        &mut self,
        state: &SharedState,
        key: K,
        build: impl FnOnce(&ServerState, Option<T>) -> Result<T, E>,
    ) -> Result<(&Arc<ServerState>, &mut T), E> {
        let current = state.load();
        let built = match self.built.take() {
            Some(built) if Arc::ptr_eq(&built.snapshot, &current) && built.key == key => {
                self.built.insert(built)
            }
            stale => {
                let value = build(&current, stale.map(|built| built.value))?;
                self.built.insert(Built {
                    snapshot: Arc::clone(&current),
                    key,
                    value,
                })
            }
        };
        Ok((&built.snapshot, &mut built.value))
    }

    /// [`get`](SnapshotCache::get) with a `build` that cannot fail.
    pub fn get_infallible(
        &mut self,
        state: &SharedState,
        key: K,
        build: impl FnOnce(&ServerState, Option<T>) -> T,
    ) -> (&Arc<ServerState>, &mut T) {
        let Ok(built) = self.get(state, key, |snapshot, stale| {
            Ok::<_, Infallible>(build(snapshot, stale))
        });
        built
    }

    /// Whether a value is held.
    pub fn is_built(&self) -> bool {
        self.built.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name_of(
        cache: &mut SnapshotCache<String, usize>,
        state: &SharedState,
        key: usize,
    ) -> String {
        let built = cache.get(state, key, |snapshot, _| {
            Ok::<_, ()>(format!("{}@{key}", snapshot.name))
        });
        built.unwrap().1.clone()
    }

    #[test]
    fn builds_again_when_the_state_or_the_key_changes() {
        let state = SharedState::new(ServerState {
            name: "A".into(),
            ..ServerState::default()
        });
        let mut cache = SnapshotCache::new();
        assert!(!cache.is_built());
        assert_eq!(name_of(&mut cache, &state, 1), "A@1");
        state.update(|s| s.name = "B".into());
        assert_eq!(name_of(&mut cache, &state, 1), "B@1");
        assert_eq!(name_of(&mut cache, &state, 2), "B@2");
    }

    #[test]
    fn reuses_the_stale_value_and_keeps_nothing_after_a_failed_build() {
        let state = SharedState::new(ServerState::default());
        let mut cache: SnapshotCache<Vec<u8>> = SnapshotCache::new();
        let (_, bytes) = cache
            .get(&state, (), |_, _| Ok::<_, ()>(Vec::with_capacity(64)))
            .unwrap();
        bytes.push(1);
        state.update(|s| s.max_players += 1);
        let (_, bytes) = cache
            .get(&state, (), |_, stale| {
                let stale = stale.unwrap();
                assert!(stale.capacity() >= 64 && stale == [1]);
                Ok::<_, ()>(stale)
            })
            .unwrap();
        assert_eq!(bytes, &[1]);
        state.update(|s| s.max_players += 1);
        assert!(cache.get(&state, (), |_, _| Err("cannot")).is_err());
        assert!(!cache.is_built());
    }

    #[test]
    fn an_infallible_build_runs_once_per_snapshot() {
        let state = SharedState::new(ServerState::default());
        let mut cache: SnapshotCache<u32> = SnapshotCache::new();
        let mut builds = 0;
        for _ in 0..2 {
            let (_, players) = cache.get_infallible(&state, (), |snapshot, _| {
                builds += 1;
                snapshot.max_players
            });
            assert_eq!(*players, 0);
        }
        state.update(|s| s.max_players = 9);
        let (snapshot, players) = cache.get_infallible(&state, (), |snapshot, stale| {
            builds += 1;
            assert_eq!(stale, Some(0));
            snapshot.max_players
        });
        assert_eq!((*players, snapshot.max_players, builds), (9, 9, 2));
    }
}
