//! Properties of derived codecs over random values of types that use every part of the
//! vocabulary:
//! - encode → decode gives the value back, and `encoded_len` is the number of bytes written;
//! - every truncation of a valid encoding fails with `UnexpectedEnd` at an offset that, with
//!   the bytes it says were left, lands exactly on the cut, and a path that starts with the
//!   type's name;
//! - random and corrupted bytes never panic a decoder, and whatever decodes re-encodes to bytes
//!   that decode to the same encoding again.

mod derive_types;

use std::borrow::Cow;
use std::fmt::Debug;

use derive_types::*;
use proptest::collection::vec;
use proptest::prelude::*;
use query_wire::{Decode, Encode, ErrorKind, Padding, Reserved, Text, Uuid};

/// Leaks a generated string so that borrowed fields can hold it for the whole test.
fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn leak_bytes(b: Vec<u8>) -> &'static [u8] {
    Box::leak(b.into_boxed_slice())
}

fn text(pattern: &str) -> impl Strategy<Value = String> {
    proptest::string::string_regex(pattern).expect("valid pattern")
}

// The decoded types borrow from their input, so the inputs below are leaked to `'static`: a
// few kilobytes over a whole run.

/// Encodes, checks the length, decodes back; returns the bytes.
fn roundtrip<T>(value: &T, ctx: <T as Encode>::Ctx) -> &'static [u8]
where
    T: Encode + Decode<'static, Ctx = <T as Encode>::Ctx> + PartialEq + Debug,
{
    let bytes = leak_bytes(value.to_vec_with(ctx).expect("a valid value encodes"));
    assert_eq!(
        value.encoded_len(ctx),
        bytes.len(),
        "encoded_len of {value:?}"
    );
    let mut exact = vec![0u8; bytes.len()];
    assert_eq!(
        value.encode_into_with(&mut exact, ctx).unwrap(),
        bytes.len()
    );
    assert_eq!(exact, bytes);
    let decoded = T::from_bytes_with(bytes, ctx).expect("an encoded value decodes");
    assert_eq!(&decoded, value);
    bytes
}

/// Every strict prefix of `bytes` fails, and the error names the cut.
fn truncations<T>(bytes: &'static [u8], ctx: <T as Encode>::Ctx)
where
    T: Encode + Decode<'static, Ctx = <T as Encode>::Ctx> + Debug,
{
    for cut in 0..bytes.len() {
        let err = T::from_bytes_with(&bytes[..cut], ctx)
            .expect_err("a truncated encoding does not decode");
        let ErrorKind::UnexpectedEnd { need, have } = *err.kind() else {
            panic!("truncation at {cut} gave {err}");
        };
        assert_eq!(err.offset() + have, cut, "{err} (cut at {cut})");
        assert!(need > have, "{err}");
        if cut > 0 {
            assert!(err.offset() > 0 || have > 0, "{err} (cut at {cut})");
        }
        assert!(
            err.path_string().starts_with(<T as Decode<'static>>::NAME),
            "{err}"
        );
    }
}

/// Decoding `bytes` does not panic; a value that decodes re-encodes, and that encoding is a
/// fixed point.
fn survives<T>(bytes: Vec<u8>, ctx: <T as Encode>::Ctx)
where
    T: Encode + Decode<'static, Ctx = <T as Encode>::Ctx> + Debug,
{
    if let Ok(value) = T::from_bytes_with(leak_bytes(bytes), ctx) {
        let again = leak_bytes(value.to_vec_with(ctx).expect("a decoded value encodes"));
        assert_eq!(value.encoded_len(ctx), again.len());
        let value2 = T::from_bytes_with(again, ctx).expect("its encoding decodes");
        assert_eq!(value2.to_vec_with(ctx).unwrap(), again);
    }
}

/// Bytes of `bytes` with a few positions overwritten, to reach deeper than random input.
fn corrupt(bytes: &[u8], edits: &[(usize, u8)]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    if !out.is_empty() {
        for &(at, value) in edits {
            let len = out.len();
            out[at % len] = value;
        }
    }
    out
}

fn flags() -> impl Strategy<Value = Flags> {
    any::<u16>().prop_map(Flags::from_bits_retain)
}

fn finite_f32() -> impl Strategy<Value = f32> {
    any::<f32>().prop_filter("comparable", |x| !x.is_nan())
}

fn finite_f64() -> impl Strategy<Value = f64> {
    any::<f64>().prop_filter("comparable", |x| !x.is_nan())
}

fn scalars() -> impl Strategy<Value = Scalars> {
    (
        (
            any::<u8>(),
            any::<u16>(),
            any::<u32>(),
            any::<u64>(),
            any::<i8>(),
            any::<i16>(),
            any::<i32>(),
            any::<i64>(),
        ),
        (
            finite_f32(),
            finite_f64(),
            any::<bool>(),
            any::<u32>(),
            any::<[u8; 3]>(),
            any::<u128>(),
            any::<u128>(),
            flags(),
            flags(),
        ),
    )
        .prop_map(
            |((a, b, c, d, e, f, g, h), (x, y, on, little, raw, id, id_little, fl, fl2))| Scalars {
                a,
                b,
                c,
                d,
                e,
                f,
                g,
                h,
                x,
                y,
                on,
                little,
                raw,
                id: Uuid::from_u128(id),
                id_little: Uuid::from_u128(id_little),
                flags: fl,
                flags_little: fl2,
                reserved: Reserved,
                padding: Padding,
            },
        )
}

fn strings() -> impl Strategy<Value = Strings<'static>> {
    (
        (
            text("\\PC{0,40}"),
            text("\\PC{0,3}"),
            text("[\\x00-\\xff]{0,30}"),
            text("[ -~А-яЁё]{0,30}"),
            text("[ -~À-ÿ€Œœ]{0,30}"),
            text("\\PC{0,20}"),
        ),
        (
            vec(any::<u8>(), 0..50),
            text("\\PC{0,10}"),
            vec(any::<u8>(), 0..100),
            vec(any::<u8>(), 0..=6),
            vec(any::<u8>(), 0..100),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                (borrowed, bounded, latin1, cyrillic, western, owned),
                (raw, big, b, ob, cb, own),
            )| {
                Strings {
                    borrowed: leak(borrowed),
                    bounded: leak(bounded),
                    latin1,
                    cyrillic: Cow::Owned(cyrillic),
                    western,
                    owned,
                    raw: Text::from_bytes(leak_bytes(raw)),
                    big_prefix: Cow::Borrowed(leak(big)),
                    bytes: leak_bytes(b),
                    owned_bytes: ob,
                    cow_bytes: if own {
                        Cow::Owned(cb)
                    } else {
                        Cow::Borrowed(leak_bytes(cb))
                    },
                }
            },
        )
}

fn tails() -> impl Strategy<Value = Tails<'static>> {
    (
        text("\\PC{0,10}"),
        text("[\\x00-\\xff]{0,20}"),
        any::<u8>(),
        vec(any::<u8>(), 0..100),
    )
        .prop_map(|(head, tail, kind, bytes)| Tails {
            text: RestText {
                head: leak(head),
                tail,
            },
            bytes: RestBytes {
                kind,
                tail: leak_bytes(bytes),
            },
        })
}

fn pair() -> impl Strategy<Value = Pair> {
    vec(any::<u8>(), 0..20).prop_map(|v| Pair(v.len() as u16, v))
}

fn scaled(scale: u8) -> impl Strategy<Value = Scaled> {
    any::<u16>().prop_map(move |raw| Scaled {
        raw,
        checks: vec![
            Check {
                byte: (raw != 0).then_some(raw as u8),
            };
            usize::from(scale)
        ],
    })
}

/// A context and a value that agrees with it.
fn chunks() -> impl Strategy<Value = (Chunks<'static>, (Flags, u8))> {
    (flags(), 0u8..4).prop_flat_map(|(requested, scale)| {
        let name = (text("\\PC{0,20}"), any::<u16>()).prop_map(|(map, port)| Named {
            map: leak(map),
            port,
        });
        let scores = vec(scaled(scale).prop_map(|points| Score { points }), 0..5);
        (name.prop_map(Some), scores.prop_map(Some), any::<u8>()).prop_map(
            move |(name, scores, extra)| {
                let name = name.filter(|_| requested.contains(Flags::NAME));
                let scores = scores.filter(|_| requested.contains(Flags::SCORES));
                let extra = (requested.contains(Flags::EXTRA) && scores.is_some()).then_some(extra);
                (
                    Chunks {
                        name,
                        scores,
                        extra,
                    },
                    (requested, scale),
                )
            },
        )
    })
}

fn repeats() -> impl Strategy<Value = Repeats<'static>> {
    (
        vec(any::<u16>(), 0..10),
        vec(text("\\PC{0,5}").prop_map(leak), 0..=3),
        0usize..10,
        vec(pair(), 0..=4),
        vec(flags(), 0..10),
        vec(any::<u128>().prop_map(Uuid::from_u128), 0..3),
        any::<u8>(),
    )
        .prop_map(|(numbers, names, n, pairs, flag_sets, ids, fill)| Repeats {
            numbers,
            names,
            n: n as u8,
            indexed: (0..n)
                .map(|i| Indexed {
                    values: vec![fill; i],
                })
                .collect(),
            pairs,
            flag_sets,
            ids,
        })
}

fn message() -> impl Strategy<Value = Message<'static>> {
    prop_oneof![
        Just(Message::Ping),
        any::<u32>().prop_map(Message::Number),
        (any::<u8>(), text("\\PC{0,10}")).prop_map(|(a, s)| Message::Pair(a, leak(s))),
        (text("\\PC{0,10}"), vec(any::<i16>(), 0..10)).prop_map(|(name, values)| {
            Message::Named {
                name: leak(name),
                values,
            }
        }),
    ]
}

fn entry() -> impl Strategy<Value = (Entry<'static>, Flags)> {
    flags().prop_flat_map(|ctx| {
        let flagged = if ctx.contains(Flags::EXTRA) {
            any::<u8>().prop_map(|b| Entry::Flagged(Some(b))).boxed()
        } else {
            Just(Entry::Flagged(None)).boxed()
        };
        prop_oneof![
            text("\\PC{0,20}").prop_map(|s| Entry::Name(leak(s))),
            vec(any::<u32>(), 0..10).prop_map(|sizes| Entry::Sizes { sizes }),
            flagged,
            (4u16.., vec(any::<u8>(), 0..20))
                .prop_map(|(tag, body)| Entry::Unknown(tag, leak_bytes(body))),
        ]
        .prop_map(move |entry| (entry, ctx))
    })
}

fn strict() -> impl Strategy<Value = Strict> {
    prop_oneof![
        any::<u16>().prop_map(Strict::Minus),
        any::<u32>().prop_map(|value| Strict::Plus { value }),
    ]
}

/// Typed values whose body ends before the input does (an `other` body runs to the end, so a
/// cut inside it is a shorter valid body).
fn typed_framed() -> impl Strategy<Value = Typed<'static>> {
    prop_oneof![
        any::<u8>().prop_map(|b| Typed {
            kind: 0,
            value: Value::Byte(b)
        }),
        text("\\PC{0,10}").prop_map(|s| Typed {
            kind: 1,
            value: Value::Text(leak(s))
        }),
        Just(Typed {
            kind: 2,
            value: Value::Empty
        }),
    ]
}

fn typed_other() -> impl Strategy<Value = Typed<'static>> {
    (3u8.., vec(any::<u8>(), 0..20)).prop_map(|(kind, raw)| Typed {
        kind,
        value: Value::Other { kind, raw },
    })
}

fn edits() -> impl Strategy<Value = Vec<(usize, u8)>> {
    vec((any::<usize>(), any::<u8>()), 1..4)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn scalars_roundtrip(value in scalars(), edits in edits()) {
        let bytes = roundtrip(&value, ());
        truncations::<Scalars>(bytes, ());
        survives::<Scalars>(corrupt(bytes, &edits), ());
    }

    #[test]
    fn strings_roundtrip(value in strings(), edits in edits()) {
        let bytes = roundtrip(&value, ());
        truncations::<Strings<'static>>(bytes, ());
        survives::<Strings<'static>>(corrupt(bytes, &edits), ());
    }

    #[test]
    fn tails_roundtrip(value in tails(), edits in edits()) {
        let bytes = roundtrip(&value, ());
        truncations::<Tails<'static>>(bytes, ());
        survives::<Tails<'static>>(corrupt(bytes, &edits), ());
    }

    #[test]
    fn tuple_struct_roundtrip(value in pair(), edits in edits()) {
        let bytes = roundtrip(&value, ());
        truncations::<Pair>(bytes, ());
        survives::<Pair>(corrupt(bytes, &edits), ());
    }

    #[test]
    fn context_and_conditions_roundtrip((value, ctx) in chunks(), edits in edits()) {
        let bytes = roundtrip(&value, ctx);
        truncations::<Chunks<'static>>(bytes, ctx);
        survives::<Chunks<'static>>(corrupt(bytes, &edits), ctx);
    }

    #[test]
    fn repeats_roundtrip(value in repeats(), edits in edits()) {
        let bytes = roundtrip(&value, ());
        truncations::<Repeats<'static>>(bytes, ());
        survives::<Repeats<'static>>(corrupt(bytes, &edits), ());
    }

    #[test]
    fn tagged_enum_roundtrip(value in message(), edits in edits()) {
        let bytes = roundtrip(&value, ());
        truncations::<Message<'static>>(bytes, ());
        survives::<Message<'static>>(corrupt(bytes, &edits), ());
    }

    #[test]
    fn tlv_enum_roundtrip((value, ctx) in entry(), edits in edits()) {
        let bytes = roundtrip(&value, ctx);
        truncations::<Entry<'static>>(bytes, ctx);
        survives::<Entry<'static>>(corrupt(bytes, &edits), ctx);
    }

    #[test]
    fn strict_tlv_enum_roundtrip(value in strict(), edits in edits()) {
        let bytes = roundtrip(&value, ());
        truncations::<Strict>(bytes, ());
        survives::<Strict>(corrupt(bytes, &edits), ());
    }

    #[test]
    fn external_tag_roundtrip(framed in typed_framed(), other in typed_other(), edits in edits()) {
        let bytes = roundtrip(&framed, ());
        truncations::<Typed<'static>>(bytes, ());
        survives::<Typed<'static>>(corrupt(bytes, &edits), ());
        let bytes = roundtrip(&other, ());
        survives::<Typed<'static>>(corrupt(bytes, &edits), ());
    }

    #[test]
    fn small_types_roundtrip(kind in prop_oneof![Just(Kind::Alpha), Just(Kind::Beta)], map in text("\\PC{0,8}"), port in any::<u16>(), kept in any::<u8>()) {
        let bytes = roundtrip(&kind, ());
        truncations::<Kind>(bytes, ());
        let framed = Framed { named: Named { map: leak(map), port } };
        let bytes = roundtrip(&framed, ());
        truncations::<Framed<'static>>(bytes, ());
        let bytes = roundtrip(&WithDefault { kept, local: Vec::new() }, ());
        truncations::<WithDefault>(bytes, ());
        let bytes = roundtrip(&Ping, ());
        truncations::<Ping>(bytes, ());
    }

    #[test]
    fn random_bytes_never_panic(bytes in vec(any::<u8>(), 0..96), ctx in flags(), scale in 0u8..4) {
        survives::<Scalars>(bytes.clone(), ());
        survives::<Strings<'static>>(bytes.clone(), ());
        survives::<Tails<'static>>(bytes.clone(), ());
        survives::<Pair>(bytes.clone(), ());
        survives::<Chunks<'static>>(bytes.clone(), (ctx, scale));
        survives::<Repeats<'static>>(bytes.clone(), ());
        survives::<Message<'static>>(bytes.clone(), ());
        survives::<Entry<'static>>(bytes.clone(), ctx);
        survives::<Strict>(bytes.clone(), ());
        survives::<Typed<'static>>(bytes.clone(), ());
        survives::<Kind>(bytes.clone(), ());
        survives::<Framed<'static>>(bytes.clone(), ());
        survives::<Spinner>(bytes.clone(), ());
        survives::<Ping>(bytes.clone(), ());
    }
}
