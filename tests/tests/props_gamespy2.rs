//! Properties of the GameSpy 2 packets and the NUL key/value and row-table runtime under them:
//! random replies round-trip with an exact `encoded_len`; every truncation of an encoded reply
//! is an error (every field of the format is closed by a NUL, so no prefix is a whole reply);
//! random bytes never panic a decoder.

use std::borrow::Cow;

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use query_specs::gamespy2::{
    Details, PlayerRow, PlayerTable, Reply, Request, Requested, TeamRow, TeamTable,
};
use query_wire::kv::{KvBlock, RowTable};
use query_wire::{Decode, Encode, ErrorKind};

/// Windows-1252 text without NUL (the characters of bytes 0x20..=0x7e and a few above).
fn text(min: usize) -> impl Strategy<Value = Cow<'static, str>> {
    proptest::string::string_regex(&format!("[ -~äé™€]{{{min},12}}"))
        .unwrap()
        .prop_map(Cow::Owned)
}

fn details() -> impl Strategy<Value = Details<'static>> {
    (
        (
            option::of(text(0)),
            option::of(text(0)),
            option::of(any::<u16>()),
        ),
        (
            option::of(text(0)),
            option::of(any::<u32>()),
            option::of(any::<bool>()),
        ),
        vec((text(1), text(0)), 0..6),
    )
        .prop_map(
            |((hostname, map_name, host_port), (game_mode, max_players, password), rest)| {
                Details {
                    hostname,
                    map_name,
                    host_port,
                    game_mode,
                    max_players,
                    password,
                    // Keys no field declares.
                    rules: rest
                        .into_iter()
                        .map(|(k, v)| (format!("x_{k}").into(), v))
                        .collect(),
                    ..Details::default()
                }
            },
        )
}

fn players() -> impl Strategy<Value = PlayerTable<'static>> {
    vec((text(0), text(0), text(0), text(0), text(0)), 0..8).prop_map(|rows| PlayerTable {
        table: RowTable {
            columns: ["player_", "score_", "ping_", "team_", "deaths_"]
                .map(Cow::Borrowed)
                .to_vec(),
            rows: rows
                .into_iter()
                .map(|(name, score, ping, team, deaths)| PlayerRow {
                    name: Some(name),
                    score: Some(score),
                    ping: Some(ping),
                    team: Some(team),
                    extra: vec![("deaths_".into(), deaths)],
                })
                .collect(),
        },
    })
}

fn teams() -> impl Strategy<Value = TeamTable<'static>> {
    vec((text(0), text(0)), 0..3).prop_map(|rows| TeamTable {
        table: RowTable {
            columns: ["team_t", "score_t"].map(Cow::Borrowed).to_vec(),
            rows: rows
                .into_iter()
                .map(|(name, score)| TeamRow {
                    name: Some(name),
                    score: Some(score),
                    extra: Vec::new(),
                })
                .collect(),
        },
    })
}

fn reply() -> impl Strategy<Value = Reply<'static>> {
    (
        any::<u32>(),
        option::of(details().prop_map(KvBlock)),
        option::of(players()),
        option::of(teams()),
    )
        .prop_map(|(request_id, details, players, teams)| Reply {
            request_id,
            details,
            players,
            teams,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn replies_round_trip_and_every_cut_is_an_error(reply in reply()) {
        let requested = reply.requested();
        let bytes = reply.to_vec_with(requested).unwrap();
        prop_assert_eq!(reply.encoded_len(requested), bytes.len());
        let mut buf = vec![0u8; bytes.len()];
        prop_assert_eq!(reply.encode_into_with(&mut buf, requested).unwrap(), bytes.len());
        prop_assert_eq!(&buf, &bytes);
        prop_assert_eq!(Reply::from_bytes_with(&bytes, requested).unwrap(), reply);
        for cut in 0..bytes.len() {
            let err = Reply::from_bytes_with(&bytes[..cut], requested).unwrap_err();
            prop_assert!(
                matches!(err.kind(), ErrorKind::UnexpectedEnd { .. } | ErrorKind::BadMagic { .. }),
                "cut at {}: {}", cut, err
            );
        }
    }

    #[test]
    fn requests_round_trip(id in any::<u32>(), d in any::<bool>(), p in any::<bool>(), t in any::<bool>()) {
        let requested = Requested { details: d, players: p, teams: t };
        let request = Request::new(id, requested);
        let bytes = request.to_vec().unwrap();
        prop_assert_eq!(bytes.len(), 10);
        let back = Request::from_bytes(&bytes).unwrap();
        prop_assert_eq!(back.requested(), requested);
        for cut in 0..bytes.len() {
            prop_assert!(Request::from_bytes(&bytes[..cut]).is_err());
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in vec(any::<u8>(), 0..96), flags in 0u8..8) {
        let requested = Requested {
            details: flags & 1 != 0,
            players: flags & 2 != 0,
            teams: flags & 4 != 0,
        };
        if let Ok(reply) = Reply::from_bytes_with(&bytes, requested) {
            if let Ok(once) = reply.to_vec_with(requested) {
                let again = Reply::from_bytes_with(&once, requested).unwrap();
                prop_assert_eq!(again.to_vec_with(requested).unwrap(), once);
            }
        }
        let _ = Request::from_bytes(&bytes);
    }
}
