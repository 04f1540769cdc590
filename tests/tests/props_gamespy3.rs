//! Properties of GameSpy 3/4: requests and reply parts round-trip with an exact
//! `encoded_len`; a reply split by `split_reply` joins back to its content in any order; every
//! truncation of a part either fails or decodes to a part whose encoding starts with the bytes
//! kept (lists may end with the datagram); random bytes never panic a decoder or the
//! reassembly.

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use query_specs::gamespy3::{
    split_reply, ChallengeReply, ChallengeRequest, Column, JoinedColumn, KeyValue, Part,
    QueryRequest, Reassembly, ReplyContent, Request, Section, SplitNum, Table, SECTION_DETAILS,
    SECTION_PLAYERS, SECTION_TEAMS,
};
use query_wire::{Decode, Encode, Text};

/// Text that is never empty and holds no NUL: what a key or column value can be.
fn word() -> impl Strategy<Value = Text<'static>> {
    vec(1u8..=255, 1..16).prop_map(|bytes| Text(bytes.into()))
}

/// Any text without NUL, possibly empty: a key/value's value.
fn text() -> impl Strategy<Value = Text<'static>> {
    vec(1u8..=255, 0..16).prop_map(|bytes| Text(bytes.into()))
}

fn pair() -> impl Strategy<Value = KeyValue<'static>> {
    (word(), text()).prop_map(|(key, value)| KeyValue { key, value })
}

fn column() -> impl Strategy<Value = Column<'static>> {
    (word(), any::<u8>(), vec(word(), 0..6)).prop_map(|(name, offset, values)| Column {
        name,
        offset,
        values,
    })
}

fn part() -> impl Strategy<Value = Part<'static>> {
    (
        any::<u32>(),
        (any::<bool>(), 0u8..0x80),
        prop_oneof![Just(SECTION_DETAILS), 1u8..=255],
        vec(pair(), 0..5),
        vec(column(), 0..4),
        vec((1u8..=255, vec(column(), 0..3)), 0..3),
    )
        .prop_map(
            |(session_id, (last, number), section, pairs, continued, sections)| Part {
                session_id,
                splitnum: SplitNum,
                last,
                number,
                section,
                details: (section == SECTION_DETAILS).then_some(pairs),
                continued: (section != SECTION_DETAILS).then_some(continued),
                sections: sections
                    .into_iter()
                    .map(|(kind, columns)| Section { kind, columns })
                    .collect(),
            },
        )
}

fn content() -> impl Strategy<Value = ReplyContent<'static>> {
    let table = |kind: u8| {
        (1usize..4, 0usize..40).prop_flat_map(move |(columns, rows)| {
            vec((word(), vec(word(), rows..=rows)), columns..=columns).prop_map(move |cols| Table {
                kind,
                columns: cols
                    .into_iter()
                    .map(|(name, values)| JoinedColumn { name, values })
                    .collect(),
            })
        })
    };
    (
        vec(pair(), 0..20),
        table(SECTION_PLAYERS),
        option::of(table(SECTION_TEAMS)),
    )
        .prop_map(|(details, players, teams)| {
            // Column names must differ within a table to be joined back apart.
            let dedup = |mut t: Table<'static>| {
                let mut seen = std::collections::HashSet::new();
                t.columns
                    .retain(|c| seen.insert(c.name.as_bytes().to_vec()));
                t
            };
            ReplyContent {
                details,
                tables: std::iter::once(dedup(players))
                    .chain(teams.map(dedup))
                    .collect(),
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn requests_round_trip(session in any::<u32>(), challenge in option::of(any::<i32>()), payload in any::<[u8; 4]>()) {
        for request in [
            Request::Challenge(ChallengeRequest {
                session_id: session,
                padding: None,
            }),
            Request::Query(QueryRequest::new(session, challenge, payload)),
        ] {
            let bytes = request.to_vec().unwrap();
            prop_assert_eq!(bytes.len(), request.encoded_len(()));
            prop_assert_eq!(Request::from_bytes(&bytes).unwrap(), request);
        }
        let query = QueryRequest::new(session, challenge, payload);
        prop_assert_eq!(query.challenge(), challenge);
        prop_assert_eq!(query.payload(), payload);
    }

    #[test]
    fn challenge_replies_round_trip(session in any::<u32>(), challenge in any::<i32>()) {
        let digits = challenge.to_string();
        let reply = ChallengeReply { session_id: session, digits: &digits };
        let bytes = reply.to_vec().unwrap();
        let decoded = ChallengeReply::from_bytes(&bytes).unwrap();
        prop_assert_eq!(decoded.challenge().unwrap(), (challenge != 0).then_some(challenge));
    }

    #[test]
    fn parts_round_trip_and_truncations_never_panic(part in part()) {
        let bytes = part.to_vec().unwrap();
        prop_assert_eq!(bytes.len(), part.encoded_len(()));
        prop_assert_eq!(&Part::from_bytes(&bytes).unwrap(), &part);
        for cut in 0..bytes.len() {
            if let Ok(shorter) = Part::from_bytes(&bytes[..cut]) {
                // Lists may end with the datagram: what decodes re-encodes to the bytes kept,
                // with the closing NULs added.
                let again = shorter.to_vec().unwrap();
                prop_assert_eq!(&again[..cut], &bytes[..cut]);
                prop_assert!(again[cut..].iter().all(|&b| b == 0));
            }
        }
    }

    #[test]
    fn split_replies_join_back_in_any_order(content in content(), max in 120usize..600, seed in any::<u64>()) {
        let parts = match split_reply(&content, 77, max) {
            Ok(parts) => parts,
            // A pair or value too large for `max`, or too many parts: refused, not cut.
            Err(_) => return Ok(()),
        };
        let mut datagrams: Vec<Vec<u8>> = parts.iter().map(|p| p.to_vec().unwrap()).collect();
        for d in &datagrams {
            prop_assert!(d.len() <= max);
        }
        // A fixed shuffle from the seed.
        let n = datagrams.len();
        for i in (1..n).rev() {
            let j = (seed.wrapping_mul(i as u64 + 1) >> 7) as usize % (i + 1);
            datagrams.swap(i, j);
        }
        let mut reassembly = Reassembly::for_session(77);
        for d in &datagrams {
            reassembly.push(d).unwrap();
        }
        let joined = reassembly.reply().unwrap();
        prop_assert!(joined.complete);
        prop_assert_eq!(joined.content(), content);
    }

    #[test]
    fn random_bytes_never_panic(data in vec(any::<u8>(), 0..256)) {
        let _ = Request::from_bytes(&data);
        let _ = ChallengeReply::from_bytes(&data);
        let _ = Part::from_bytes(&data);
        let mut reassembly = Reassembly::new();
        for chunk in data.split(|&b| b == 0xfe) {
            let _ = reassembly.push(chunk);
        }
        let _ = reassembly.reply();
        let _ = reassembly.missing_parts();
    }
}
