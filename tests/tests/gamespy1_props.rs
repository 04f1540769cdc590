//! GameSpy v1 properties: random replies survive encode → decode and the trip through
//! datagrams in any order; truncated and random input gives errors, never panics.

use std::borrow::Cow;

use proptest::prelude::*;
use query_specs::gamespy1::{
    reply_datagrams, Player, Pushed, QueryId, Reassembly, Reply, Request, Team, Trailer, ENCODING,
    MAX_PARTS,
};
use query_wire::kv::{self, FromKeyValues, ToKeyValues};
use query_wire::TextEncoding;

/// Windows-1252 text without the delimiter: every byte but `\`, decoded.
fn text() -> impl Strategy<Value = Cow<'static, str>> {
    prop::collection::vec(
        any::<u8>().prop_filter("no delimiter", |b| *b != b'\\'),
        0..24,
    )
    .prop_map(|bytes| Cow::Owned(TextEncoding::Windows1252.decode_lossy(&bytes).into_owned()))
}

/// Keys no declaration claims: they start with `x`, and hold no `_`.
fn unknown_key() -> impl Strategy<Value = Cow<'static, str>> {
    "x[a-z0-9]{0,8}".prop_map(Cow::Owned)
}

fn extras(
    key: impl Strategy<Value = Cow<'static, str>>,
) -> impl Strategy<Value = Vec<(Cow<'static, str>, Cow<'static, str>)>> {
    prop::collection::vec((key, text()), 0..4)
}

fn player(index: usize) -> impl Strategy<Value = Player<'static>> {
    (
        text(),
        any::<Option<i32>>(),
        any::<Option<u32>>(),
        prop::option::of(text()),
        any::<Option<i32>>(),
        any::<Option<i32>>(),
        extras(unknown_key()),
    )
        .prop_map(
            move |(name, score, ping, team, kills, deaths, extra)| Player {
                index,
                // A name makes the entry exist; an entry of unknown keys only would not.
                name: Some(name),
                score,
                ping,
                team,
                kills,
                deaths,
                extra,
            },
        )
}

fn team(index: usize) -> impl Strategy<Value = Team<'static>> {
    (text(), extras("teamx[a-z]{0,4}".prop_map(Cow::Owned))).prop_map(move |(name, extra)| Team {
        index,
        name: Some(name),
        extra,
    })
}

/// Elements at distinct, sorted indices (sparse, as BF1942 leaves them).
fn indexed<T: std::fmt::Debug>(
    element: fn(usize) -> BoxedStrategy<T>,
    max: usize,
) -> impl Strategy<Value = Vec<T>> {
    prop::collection::btree_set(0usize..200, 0..max)
        .prop_flat_map(move |indices| indices.into_iter().map(element).collect::<Vec<_>>())
}

fn reply() -> impl Strategy<Value = Reply<'static>> {
    let server = (
        prop::option::of(text()),
        prop::option::of(text()),
        prop::option::of(text()),
        any::<Option<u16>>(),
        prop::option::of(text()),
        prop::option::of(text()),
        prop::option::of(text()),
        any::<Option<u32>>(),
        any::<Option<u32>>(),
        any::<Option<bool>>(),
        prop::option::of(text()),
    );
    let lists = (
        extras(unknown_key()),
        indexed(|i| player(i).boxed(), 24),
        indexed(|i| team(i).boxed(), 4),
    );
    (server, lists).prop_map(
        |(
            (
                game_name,
                game_version,
                hostname,
                host_port,
                map_name,
                game_type,
                game_mode,
                num_players,
                max_players,
                password,
                echo,
            ),
            (rules, players, teams),
        )| Reply {
            game_name,
            game_version,
            hostname,
            host_port,
            map_name,
            game_type,
            game_mode,
            num_players,
            max_players,
            password,
            echo,
            rules,
            players,
            teams,
        },
    )
}

fn request() -> impl Strategy<Value = Request<'static>> {
    prop_oneof![
        Just(Request::StatusXServerQuery),
        Just(Request::Status),
        Just(Request::Basic),
        Just(Request::Info),
        Just(Request::Rules),
        Just(Request::Players),
        Just(Request::Teams),
        text().prop_map(Request::Echo),
        (unknown_key(), text()).prop_map(|(k, v)| Request::Other(k, v)),
    ]
}

/// Text shaped like a reply: known and indexed keys, markers and awkward values.
fn reply_like_bytes() -> impl Strategy<Value = Vec<u8>> {
    let key = prop::sample::select(vec![
        "hostname",
        "numplayers",
        "hostport",
        "password",
        "player_0",
        "playername_1",
        "ping_0",
        "frags_2",
        "team_1",
        "teamname_0",
        "teamx_3",
        "mesh_0",
        "queryid",
        "final",
        "",
        "x_01",
    ]);
    let value = prop::sample::select(vec![
        "",
        " 152",
        "-1",
        "99999999999",
        "True",
        "maybe",
        "1.2",
        "20.1",
        "\u{a0}",
    ]);
    prop::collection::vec((key, value, any::<bool>()), 0..24).prop_map(|pairs| {
        let mut out = Vec::new();
        for (key, value, cut) in pairs {
            out.push(b'\\');
            out.extend_from_slice(key.as_bytes());
            if !cut {
                out.push(b'\\');
                out.extend_from_slice(value.as_bytes());
            }
        }
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn reply_round_trips(reply in reply()) {
        let bytes = reply.to_vec().unwrap();
        prop_assert_eq!(reply.encoded_len().unwrap(), bytes.len());
        let decoded = Reply::from_bytes(&bytes).unwrap();
        prop_assert_eq!(&decoded, &reply);
        // Into a caller's buffer, the same bytes.
        let mut buf = vec![0u8; bytes.len()];
        prop_assert_eq!(reply.encode_into(&mut buf).unwrap(), bytes.len());
        prop_assert_eq!(&buf, &bytes);
        // A buffer one byte short is an error, not a panic.
        if !bytes.is_empty() {
            let mut short = vec![0u8; bytes.len() - 1];
            prop_assert!(reply.encode_into(&mut short).is_err());
        }
    }

    #[test]
    fn request_round_trips(requests in prop::collection::vec(request(), 1..5)) {
        let bytes = Request::encode_all(&requests).unwrap();
        prop_assert_eq!(Request::decode_all(&bytes).unwrap(), requests.clone());
        let one = requests[0].to_vec().unwrap();
        prop_assert_eq!(Request::from_bytes(&one).unwrap(), requests[0].clone());
    }

    #[test]
    fn datagrams_in_any_order_with_duplicates_reassemble(
        reply in reply(),
        max in 120usize..700,
        id in any::<u32>(),
        seed in any::<u64>(),
    ) {
        let datagrams = match reply_datagrams(&reply, id, max) {
            Ok(d) => d,
            // A single pair longer than a small datagram cannot be sent; that is the only refusal.
            Err(e) => {
                prop_assert!(matches!(e.kind(), query_wire::ErrorKind::TooLong { .. }), "{e}");
                return Ok(());
            }
        };
        prop_assert!(datagrams.iter().all(|d| d.len() <= max));
        // A deterministic shuffle with duplicates, from the seed.
        let mut order: Vec<usize> = (0..datagrams.len()).chain(0..datagrams.len() / 2).collect();
        let mut state = seed | 1;
        for i in (1..order.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            order.swap(i, (state % (i as u64 + 1)) as usize);
        }
        let mut parts = Reassembly::new();
        let mut new = 0;
        for &i in &order {
            if parts.push(&datagrams[i]).unwrap() == Pushed::New {
                new += 1;
            }
        }
        prop_assert_eq!(new, datagrams.len());
        prop_assert!(parts.is_complete());
        prop_assert_eq!(parts.query_id(), Some(id));
        prop_assert_eq!(parts.reply().unwrap().reply, reply);
    }


    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        if let Err(e) = Reply::from_bytes(&bytes) {
            prop_assert!(e.offset() <= bytes.len());
        }
        let _ = Request::decode_all(&bytes);
        let _ = Request::from_bytes(&bytes);
        let mut parts = Reassembly::new();
        if parts.push(&bytes).is_ok() {
            let _ = parts.reply();
            let _ = parts.reply_with(TextEncoding::Utf8);
        }
    }

    #[test]
    fn reply_shaped_text_never_panics(bytes in reply_like_bytes(), more in reply_like_bytes()) {
        for input in [&bytes, &more] {
            if let Err(e) = Reply::from_bytes(input) {
                prop_assert!(e.offset() <= input.len(), "{e}");
            }
        }
        let mut parts = Reassembly::new();
        let _ = parts.push(&bytes);
        let _ = parts.push(&more);
        if let Ok(assembled) = parts.reply() {
            // Whatever decodes re-encodes and decodes to the same value.
            let again = assembled.reply.to_vec().unwrap();
            prop_assert_eq!(Reply::from_bytes(&again).unwrap(), assembled.reply);
        }
    }

    #[test]
    fn tokenizer_round_trips_any_pairs(
        pairs in prop::collection::vec((
            prop::collection::vec(any::<u8>().prop_filter("no delimiter", |b| *b != b'\\'), 0..12),
            prop::collection::vec(any::<u8>().prop_filter("no delimiter", |b| *b != b'\\'), 0..12),
        ), 0..16)
    ) {
        let mut bytes = Vec::new();
        for (k, v) in &pairs {
            kv::KvSink::put_pair(&mut bytes, k, None, v).unwrap();
        }
        let back: Vec<(Vec<u8>, Vec<u8>)> = kv::split_pairs(&bytes)
            .unwrap()
            .iter()
            .map(|p| (p.key.to_vec(), p.value.to_vec()))
            .collect();
        prop_assert_eq!(back, pairs);
    }
}

proptest! {
    // Each case decodes every prefix of a reply of up to a few kilobytes: fewer cases.
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Key/value text has no length fields, so a cut reply may still decode: then it decodes
    /// to another reply (unless only a trailing delimiter was cut, which BF1942 omits anyway),
    /// and what it decodes to is a reply like any other, whose encoding decodes to itself.
    /// A cut that does not decode is an error inside the cut, with a path.
    #[test]
    fn every_truncation_decodes_to_less_or_errors(reply in reply()) {
        let bytes = reply.to_vec().unwrap();
        for end in 0..bytes.len() {
            let cut = &bytes[..end];
            match Reply::from_bytes(cut) {
                Ok(decoded) => {
                    let only_a_delimiter = end + 1 == bytes.len() && bytes[end] == b'\\';
                    prop_assert!(
                        decoded != reply || only_a_delimiter,
                        "cutting {} of {} bytes lost nothing", bytes.len() - end, bytes.len()
                    );
                    let again = decoded.to_vec().unwrap();
                    prop_assert_eq!(
                        Reply::from_bytes(&again).unwrap(), decoded,
                        "the cut's decoding re-encodes to itself (cut at {})", end
                    );
                }
                Err(e) => {
                    prop_assert!(e.offset() <= end, "{} for {} bytes", e, end);
                    prop_assert!(e.path_string().starts_with("Reply"), "{}", e);
                }
            }
            let mut parts = Reassembly::new();
            if parts.push(cut).is_ok() {
                let _ = parts.reply();
            }
        }
    }
}

fn trailer() -> impl Strategy<Value = Trailer> {
    (
        prop::option::of((any::<u32>(), 1u32..=MAX_PARTS)),
        any::<bool>(),
    )
        .prop_map(|(query_id, is_final)| Trailer {
            query_id: query_id.map(|(id, part)| QueryId { id, part }),
            is_final,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// A trailer round-trips alone, after a reply's pairs, and with `\final\` first, as
    /// BF1942 sends it (without the last delimiter).
    #[test]
    fn trailer_round_trips(trailer in trailer(), reply in reply()) {
        let bytes = trailer.to_vec().unwrap();
        prop_assert_eq!(Trailer::from_bytes(&bytes).unwrap(), trailer);

        let datagram = [reply.to_vec().unwrap(), bytes].concat();
        prop_assert_eq!(Trailer::from_bytes(&datagram).unwrap(), trailer);

        if let (Some(id), true) = (trailer.query_id, trailer.is_final) {
            let bf1942 = format!("\\final\\\\queryid\\{id}");
            prop_assert_eq!(Trailer::from_bytes(bf1942.as_bytes()).unwrap(), trailer);
        }
    }
}

#[test]
fn windows_1252_repertoire_survives_a_round_trip() {
    // Every byte but the delimiter, as one player's name and as a rule value.
    let bytes: Vec<u8> = (0..=255u8).filter(|&b| b != b'\\').collect();
    let name = TextEncoding::Windows1252.decode(&bytes).unwrap();
    let reply = Reply {
        players: vec![Player {
            name: Some(name.clone()),
            ..Player::default()
        }],
        rules: vec![("xall".into(), name)],
        ..Reply::default()
    };
    let encoded = reply.to_vec_with(ENCODING).unwrap();
    assert!(encoded.windows(bytes.len()).any(|w| w == bytes));
    assert_eq!(Reply::from_bytes(&encoded).unwrap(), reply);
}
