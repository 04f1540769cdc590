//! Which chunks an SQP reply carries, found from its bytes.
//!
//! Chunks carry no type tag, so a reply decodes only against the set of chunks it holds. Real
//! servers answer with fewer chunks than asked: the reference client's sample server implements
//! ServerInfo and Metrics only, Unity's server SDK ServerInfo only, and both leave the other
//! chunks out silently. No known server sends a chunk it was not asked for, and chunks always
//! come in ascending bit order, so the chunks present are a subset of the request, and the
//! bytes say which: every chunk is a u32 length and a body, and the bodies must decode.
//!
//! Bytes left inside a chunk are skipped as future fields, which lets a short body decode as
//! the wrong chunk too (a ServerInfo starting with 0 players reads as an empty player table
//! whose other bytes are "future fields"). A set whose chunks use every byte of their bodies is
//! therefore a better explanation than one that needs skipping, and only one explanation may
//! remain: two equally good ones are an error, not a guess.

use std::fmt;

use query_specs::sqp::{ChunkSet, Chunks};
use query_wire::{Decode, Encode};

/// The chunk names `gsq query sqp --chunks` takes, in bit order.
pub const CHUNK_NAMES: [(ChunkSet, &str); 5] = [
    (ChunkSet::SERVER_INFO, "info"),
    (ChunkSet::SERVER_RULES, "rules"),
    (ChunkSet::PLAYER_INFO, "players"),
    (ChunkSet::TEAM_INFO, "teams"),
    (ChunkSet::METRICS, "metrics"),
];

/// The names of the chunks in `set`, in bit order (`info`, `rules`, `players`, `teams`,
/// `metrics`).
pub fn chunk_names(set: ChunkSet) -> Vec<&'static str> {
    CHUNK_NAMES
        .iter()
        .filter(|(flag, _)| set.contains(*flag))
        .map(|(_, name)| *name)
        .collect()
}

/// A reply's chunks, decoded, and the set they were decoded as.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundChunks<'a> {
    /// The chunks the reply holds.
    pub chunks: Chunks<'a>,
    /// Which of the requested chunks those are; the others were left out by the server.
    pub present: ChunkSet,
}

/// Why no set of chunks explains a reply's bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum ChunkSearchError {
    /// No subset of the request decodes: the attempt that got furthest, and its error with
    /// the byte offset and field path.
    NoFit {
        /// The chunk set of that attempt.
        attempt: ChunkSet,
        /// Where and why it failed.
        error: query_wire::Error,
    },
    /// Two subsets explain the bytes equally well, so neither can be trusted.
    Ambiguous {
        /// One explanation.
        first: ChunkSet,
        /// Another, as good.
        second: ChunkSet,
    },
}

impl fmt::Display for ChunkSearchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChunkSearchError::NoFit { error, .. } => error.fmt(f),
            ChunkSearchError::Ambiguous { first, second } => write!(
                f,
                "the reply's bytes fit two sets of the chunks asked for equally well ({} and {})",
                set_text(*first),
                set_text(*second)
            ),
        }
    }
}

impl std::error::Error for ChunkSearchError {}

fn set_text(set: ChunkSet) -> String {
    let names = chunk_names(set);
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(",")
    }
}

/// How well a decoded set explains the bytes: a set whose chunks use every byte beats one whose
/// chunks leave bytes to skip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Fit {
    Skipping,
    Exact,
}

/// Decodes a reply's chunk bytes (`payload`, after the packet length) that answer a query for
/// `requested`.
///
/// The whole request is tried first: it is what compliant servers send, and it costs one
/// decode. Only when it fails are the request's other subsets tried; the one that decodes every
/// byte wins, an exact fit over one that skips bytes. Strict where a guess could mislead: two
/// equally good fits are [`ChunkSearchError::Ambiguous`], and no fit is
/// [`ChunkSearchError::NoFit`] with the furthest attempt's error.
///
/// ```
/// use query_net::engines::sqp::find_chunks;
/// use query_specs::sqp::{ChunkSet, Chunks, Metrics};
/// use query_wire::Encode;
///
/// // A server that implements Metrics only, asked for ServerInfo and Metrics.
/// let sent = Chunks { metrics: Some(Metrics { values: vec![1.5] }), ..Chunks::default() };
/// let bytes = sent.to_vec_with(ChunkSet::METRICS).unwrap();
/// let found = find_chunks(&bytes, ChunkSet::SERVER_INFO | ChunkSet::METRICS).unwrap();
/// assert_eq!(found.present, ChunkSet::METRICS);
/// assert_eq!(found.chunks, sent);
/// ```
pub fn find_chunks(
    payload: &[u8],
    requested: ChunkSet,
) -> Result<FoundChunks<'_>, ChunkSearchError> {
    let requested = requested & ChunkSet::all();
    let mut furthest = match Chunks::from_bytes_with(payload, requested) {
        Ok(chunks) => {
            return Ok(FoundChunks {
                chunks,
                present: requested,
            })
        }
        Err(e) => (requested, e),
    };
    let mut best: Option<(Fit, FoundChunks<'_>)> = None;
    let mut tied: Option<ChunkSet> = None;
    // Every proper subset of the request, larger bit patterns first.
    let mask = requested.bits();
    let mut bits = mask;
    while bits != 0 {
        bits = (bits - 1) & mask;
        let set = ChunkSet::from_bits_truncate(bits);
        match Chunks::from_bytes_with(payload, set) {
            Ok(chunks) => {
                let fit = if chunks.encoded_len(set) == payload.len() {
                    Fit::Exact
                } else {
                    Fit::Skipping
                };
                match &best {
                    Some((best_fit, _)) if *best_fit > fit => {}
                    Some((best_fit, _)) if *best_fit == fit => tied = tied.or(Some(set)),
                    _ => {
                        best = Some((
                            fit,
                            FoundChunks {
                                chunks,
                                present: set,
                            },
                        ));
                        tied = None;
                    }
                }
            }
            Err(e) => {
                if e.offset() > furthest.1.offset() {
                    furthest = (set, e);
                }
            }
        }
    }
    match (best, tied) {
        (Some((_, found)), None) => Ok(found),
        (Some((_, found)), Some(other)) => Err(ChunkSearchError::Ambiguous {
            first: found.present,
            second: other,
        }),
        (None, _) => Err(ChunkSearchError::NoFit {
            attempt: furthest.0,
            error: furthest.1,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use query_specs::sqp::{FieldHeader, Metrics, Rule, ServerInfo, Table, Value};

    fn info(players: u16) -> ServerInfo<'static> {
        ServerInfo {
            current_players: players,
            max_players: 16,
            server_name: "UE4 Dedicated Server",
            game_type: "/Script/ShooterGame.ShooterGame_TeamDeathMatch",
            build_id: "001",
            map: "Highrise",
            port: 7777,
        }
    }

    fn every_chunk() -> Chunks<'static> {
        Chunks {
            server_info: Some(info(1)),
            server_rules: Some(vec![Rule {
                key: "hc",
                kind: 0,
                value: Value::Byte(1),
            }]),
            player_info: Some(Table {
                count: 1,
                fields: Some(vec![FieldHeader {
                    name: "name",
                    kind: 4,
                }]),
                values: vec![Value::Str("Ana")],
            }),
            team_info: Some(Table::default()),
            metrics: Some(Metrics {
                values: vec![1.0, 2.5],
            }),
        }
    }

    /// `every_chunk` with only the chunks of `set`.
    fn only(set: ChunkSet) -> Chunks<'static> {
        let all = every_chunk();
        Chunks {
            server_info: all
                .server_info
                .filter(|_| set.contains(ChunkSet::SERVER_INFO)),
            server_rules: all
                .server_rules
                .filter(|_| set.contains(ChunkSet::SERVER_RULES)),
            player_info: all
                .player_info
                .filter(|_| set.contains(ChunkSet::PLAYER_INFO)),
            team_info: all.team_info.filter(|_| set.contains(ChunkSet::TEAM_INFO)),
            metrics: all.metrics.filter(|_| set.contains(ChunkSet::METRICS)),
        }
    }

    #[test]
    fn every_subset_a_server_may_send_is_found_when_all_are_asked_for() {
        // Every subset of the five chunks that includes ServerInfo, as servers send them.
        let tables = ChunkSet::PLAYER_INFO | ChunkSet::TEAM_INFO;
        for bits in 0..=ChunkSet::all().bits() {
            let set = ChunkSet::from_bits_truncate(bits) | ChunkSet::SERVER_INFO;
            let sent = only(set);
            let bytes = sent.to_vec_with(set).unwrap();
            let result = find_chunks(&bytes, ChunkSet::all());
            if (set & tables).bits().count_ones() == 1 {
                // Player and team tables share one layout: either alone reads as the other.
                assert!(
                    matches!(result, Err(ChunkSearchError::Ambiguous { .. })),
                    "{}: {result:?}",
                    set_text(set)
                );
                continue;
            }
            let found = result.unwrap_or_else(|e| panic!("{}: {e}", set_text(set)));
            assert_eq!(found.present, set, "{}", set_text(set));
            assert_eq!(found.chunks, sent);
        }
    }

    #[test]
    fn a_table_alone_is_found_when_only_one_table_was_asked_for() {
        let set = ChunkSet::SERVER_INFO | ChunkSet::TEAM_INFO;
        let sent = only(ChunkSet::SERVER_INFO);
        let bytes = sent.to_vec_with(ChunkSet::SERVER_INFO).unwrap();
        assert_eq!(
            find_chunks(&bytes, set).unwrap().present,
            ChunkSet::SERVER_INFO
        );
        let sent = only(ChunkSet::PLAYER_INFO | ChunkSet::METRICS);
        let bytes = sent
            .to_vec_with(ChunkSet::PLAYER_INFO | ChunkSet::METRICS)
            .unwrap();
        let found = find_chunks(&bytes, ChunkSet::all() - ChunkSet::TEAM_INFO).unwrap();
        assert_eq!(found.present, ChunkSet::PLAYER_INFO | ChunkSet::METRICS);
    }

    #[test]
    fn an_info_only_reply_with_no_players_is_not_read_as_an_empty_table() {
        // 0 players: the body starts 00 00, which is also an empty table or metrics list.
        let sent = Chunks {
            server_info: Some(info(0)),
            ..Chunks::default()
        };
        let bytes = sent.to_vec_with(ChunkSet::SERVER_INFO).unwrap();
        let found = find_chunks(&bytes, ChunkSet::all()).unwrap();
        assert_eq!(found.present, ChunkSet::SERVER_INFO);
    }

    #[test]
    fn bytes_no_subset_explains_name_the_furthest_attempt() {
        let mut bytes = only(ChunkSet::SERVER_INFO)
            .to_vec_with(ChunkSet::SERVER_INFO)
            .unwrap();
        bytes.push(0xff);
        match find_chunks(&bytes, ChunkSet::SERVER_INFO | ChunkSet::METRICS) {
            Err(ChunkSearchError::NoFit { attempt, error }) => {
                assert!(error.offset() >= bytes.len() - 1, "{error}");
                assert!(error.path_string().starts_with("Chunks"), "{error}");
                assert!(ChunkSet::from_bits_truncate(0x11).contains(attempt));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn two_equally_good_explanations_are_an_error() {
        // An empty table and an empty metrics list have the same bytes: 00 00 00 02 00 00 reads
        // as a team table of 0 rows, and as a player table of 0 rows, both exactly.
        let sent = Chunks {
            player_info: Some(Table::default()),
            ..Chunks::default()
        };
        let bytes = sent.to_vec_with(ChunkSet::PLAYER_INFO).unwrap();
        let err = find_chunks(
            &bytes,
            ChunkSet::SERVER_INFO | ChunkSet::PLAYER_INFO | ChunkSet::TEAM_INFO,
        )
        .unwrap_err();
        assert!(matches!(err, ChunkSearchError::Ambiguous { .. }), "{err}");
        assert!(err.to_string().contains("players"), "{err}");
        assert!(err.to_string().contains("teams"), "{err}");
    }

    #[test]
    fn names_follow_the_chunks_option() {
        assert_eq!(
            chunk_names(ChunkSet::all()),
            ["info", "rules", "players", "teams", "metrics"]
        );
        assert_eq!(set_text(ChunkSet::empty()), "none");
    }
}
