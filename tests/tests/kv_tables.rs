//! The column-table runtime under the GameSpy 3 specs, on real parts: after each part's header
//! and key/values, `ColumnSections` reads every part of every GameQ GameSpy 3 capture,
//! re-encodes it byte for byte (except Unreal Tournament 3, whose padding NULs are not kept),
//! and columns joined across parts by their count byte give GameQ's player names.

use std::collections::BTreeMap;

use query_tests::{read_capture, vectors_dir};
use query_wire::kv::{self, ColumnSections};
use query_wire::{Decode, Encode, Reader};

const CAPTURES: [&str; 14] = [
    "crysis2_1",
    "crysis2_2",
    "crysiswars_1",
    "justcause2_1",
    "justcause2_2",
    "justcause2_3",
    "minecraft_1",
    "minecraft_2",
    "minecraft_3",
    "minecraft_4",
    "projectrealitybf2_1",
    "projectrealitybf2_2",
    "projectrealitybf2_3",
    "ut3_1",
];

/// The header of a part: `00`, session id, `splitnum\0`, part byte, section byte.
const HEADER: usize = 1 + 4 + 9 + 1;

fn gameq_players(name: &str) -> Vec<String> {
    let path = vectors_dir()
        .unwrap()
        .join("captures/gameq/gamespy3")
        .join(format!("{name}_result.json"));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let server = json.as_object().unwrap().values().next().unwrap().clone();
    server["players"]
        .as_array()
        .map(|players| {
            players
                .iter()
                .map(|p| p["player"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn gamespy3_parts_read_re_encode_and_join() {
    let mut read = 0;
    for name in CAPTURES {
        let Some(datagrams) = read_capture(&format!("gameq/gamespy3/{name}_response.txt")) else {
            return;
        };
        // Parts sorted by their number, as a reassembly would.
        let mut parts: Vec<&Vec<u8>> = datagrams.iter().collect();
        parts.sort_by_key(|p| p[HEADER - 1] & 0x7f);
        let mut columns: BTreeMap<(u8, String), Vec<Vec<u8>>> = BTreeMap::new();
        for part in parts {
            let section = part[HEADER];
            let mut r = Reader::new(&part[HEADER + 1..]);
            let open = if section == 0 {
                kv::read_nul_pairs(&mut r).unwrap();
                None
            } else {
                Some(section)
            };
            if name.starts_with("justcause2") {
                // Just Cause 2 Multiplayer answers with its own player records, not columns.
                continue;
            }
            let start = r.offset();
            let sections =
                ColumnSections::decode(&mut r, open).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(r.is_empty());
            if !name.starts_with("ut3") {
                let body = &part[HEADER + 1 + start..];
                assert_eq!(sections.encoded_len(open), body.len(), "{name}");
                assert_eq!(sections.to_vec_with(open).unwrap(), body, "{name}");
            }
            for s in &sections.sections {
                for c in &s.columns {
                    let joined = columns.entry((s.id, c.name.to_string())).or_default();
                    // Values past the count the continuation gives were cut: dropped.
                    joined.truncate(usize::from(c.offset));
                    joined.extend(c.values.iter().map(|v| v.to_vec()));
                }
            }
        }
        read += 1;
        if name.starts_with("justcause2") {
            continue;
        }
        let ours: Vec<String> = columns
            .get(&(1, "player_".to_owned()))
            .map(|values| {
                values
                    .iter()
                    .map(|v| String::from_utf8_lossy(v).into_owned())
                    .collect()
            })
            .unwrap_or_default();
        let theirs = gameq_players(name);
        assert_eq!(ours.len(), theirs.len(), "{name}: {ours:?} / {theirs:?}");
    }
    println!(
        "column sections: {read} of {} captures read",
        CAPTURES.len()
    );
}

mod props {
    use std::borrow::Cow;

    use proptest::collection::vec;
    use proptest::prelude::*;
    use query_wire::kv::{Column, ColumnSections, Section};
    use query_wire::{Decode, Encode};

    fn value() -> impl Strategy<Value = Cow<'static, [u8]>> {
        vec(1u8..=255, 1..10).prop_map(Cow::Owned)
    }

    fn column() -> impl Strategy<Value = Column<'static>> {
        ("[a-z]{1,6}_t?", any::<u8>(), vec(value(), 0..6)).prop_map(|(name, offset, values)| {
            Column {
                name: name.into(),
                offset,
                values,
                closed: true,
            }
        })
    }

    fn sections() -> impl Strategy<Value = ColumnSections<'static>> {
        vec((1u8..3, vec(column(), 0..4)), 0..3).prop_map(|sections| ColumnSections {
            sections: sections
                .into_iter()
                .map(|(id, columns)| Section {
                    id,
                    columns,
                    closed: true,
                })
                .collect(),
        })
    }

    /// How many values `s` holds.
    fn values(s: &ColumnSections<'_>) -> usize {
        s.sections
            .iter()
            .flat_map(|s| &s.columns)
            .map(|c| c.values.len())
            .sum()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Round trips with an exact length; every cut (a part ends where the server's size
        /// says) reads as a part holding no more than the whole, which re-encodes stably.
        #[test]
        fn sections_round_trip_and_cuts_read_as_shorter_parts(s in sections()) {
            let bytes = s.to_vec_with(None).unwrap();
            prop_assert_eq!(s.encoded_len(None), bytes.len());
            prop_assert_eq!(&ColumnSections::from_bytes_with(&bytes, None).unwrap(), &s);
            for cut in 0..bytes.len() {
                if let Ok(part) = ColumnSections::from_bytes_with(&bytes[..cut], None) {
                    prop_assert!(values(&part) <= values(&s));
                    let again = part.to_vec_with(None).unwrap();
                    let back = ColumnSections::from_bytes_with(&again, None).unwrap();
                    prop_assert_eq!(back.to_vec_with(None).unwrap(), again);
                }
            }
        }

        #[test]
        fn random_bytes_never_panic(bytes in vec(any::<u8>(), 0..64), open in proptest::option::of(1u8..3)) {
            if let Ok(s) = ColumnSections::from_bytes_with(&bytes, open) {
                let _ = s.to_vec_with(open);
            }
        }
    }
}
