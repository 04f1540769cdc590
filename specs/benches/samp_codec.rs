//! The cost of the derived SA:MP decoder against a hand-written one, on the detailed player
//! list (`d`) of a live SA:MP 0.3.7 server: 568 bytes, 34 players with sparse ids.
//!
//! One criterion group, `samp_players`, holds `derived` (`query_specs::samp::Reply::from_bytes`,
//! as the client calls it) and `handwritten` (`handwritten_samp`, written for speed, building
//! the same value). Every decode starts from the datagram's bytes and ends with the value
//! dropped, inside the timing. Before measuring, both decoders run on the reply and on damaged
//! copies of it and must accept and refuse the same ones, with equal values.
//!
//! The reply is read at run time from the test vectors (`captures/samp_1_response.txt`), which
//! may not be copied into the repository: from `$QUERY_VECTORS`, or `../shared/vectors` beside
//! the workspace. Without them the benchmark says so and measures nothing.
//!
//! ```text
//! cargo bench -p query-specs --bench samp_codec -- --measurement-time 5
//! ```

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use query_specs::samp::{Reply, ReplyBody, OP_PLAYERS};
use query_wire::Decode;

mod capture;
mod handwritten_samp;

/// The capture the reply comes from, relative to the vectors folder.
const CAPTURE: &str = "captures/samp_1_response.txt";
/// Where the row count starts: after the 11-byte header.
const COUNT_AT: usize = 11;

/// The `d` datagram, or `None` when the vectors are absent.
fn load() -> Option<Vec<u8>> {
    let (path, datagrams) = capture::datagrams(CAPTURE, "the SA:MP codec benchmark")?;
    let found = datagrams
        .into_iter()
        .find(|d| d.get(10) == Some(&OP_PLAYERS))
        .unwrap_or_else(|| panic!("{} has no `d` reply", path.display()));
    Some(found)
}

fn decode_derived(datagram: &[u8]) -> query_wire::Result<Reply<'_>> {
    Reply::from_bytes(datagram)
}

/// The reply and damaged copies, each with whether it must decode.
fn cases(reply: &[u8]) -> Vec<(&'static str, Vec<u8>, bool)> {
    let with_count = |count: u16| {
        let mut copy = reply.to_vec();
        copy[COUNT_AT..COUNT_AT + 2].copy_from_slice(&count.to_le_bytes());
        copy
    };
    let mut bad_magic = reply.to_vec();
    bad_magic[0] = b'X';
    let mut long_name = reply.to_vec();
    // The first row's name length, after its id byte.
    long_name[COUNT_AT + 3] = u8::MAX;
    vec![
        ("the captured reply", reply.to_vec(), true),
        ("one byte short", reply[..reply.len() - 1].to_vec(), false),
        ("a trailing byte", [reply, &[7]].concat(), false),
        ("a count one lower", with_count(33), false),
        ("a count one higher", with_count(35), false),
        ("a count of 65535", with_count(u16::MAX), false),
        ("no rows", [&reply[..COUNT_AT], &[0, 0]].concat(), true),
        ("another magic", bad_magic, false),
        ("a name longer than the datagram", long_name, false),
    ]
}

/// Panics unless both decoders accept and refuse the same cases with equal values.
fn check_same_work(reply: &[u8]) {
    for (what, bytes, valid) in cases(reply) {
        let derived = decode_derived(&bytes);
        let hand = handwritten_samp::decode_players(&bytes);
        assert_eq!(derived.is_ok(), valid, "derived on {what}: {derived:?}");
        assert_eq!(hand.is_some(), valid, "hand-written on {what}: {hand:?}");
        if let (Ok(derived), Some(hand)) = (derived, hand) {
            assert_eq!(derived, hand, "decoded alike on {what}");
        }
    }
    let Ok(Reply {
        body: ReplyBody::Players(players),
        ..
    }) = decode_derived(reply)
    else {
        panic!("the capture's `d` reply decodes as a player list");
    };
    assert_eq!(players.len(), 34, "the capture has 34 players");
}

/// Decodes `input` and drops the result inside the timing, handing it to `black_box` by
/// reference where it was built.
#[inline(always)]
fn decode_and_drop<'a, T>(input: &'a [u8], decode: impl Fn(&'a [u8]) -> T) {
    let value = decode(black_box(input));
    black_box(&value);
}

fn samp_codec(c: &mut Criterion) {
    let Some(reply) = load() else {
        return;
    };
    check_same_work(&reply);
    let mut group = c.benchmark_group("samp_players");
    group.throughput(Throughput::Bytes(reply.len() as u64));
    group.bench_function("derived", |b| {
        b.iter(|| decode_and_drop(&reply, decode_derived))
    });
    group.bench_function("handwritten", |b| {
        b.iter(|| decode_and_drop(&reply, handwritten_samp::decode_players))
    });
    group.finish();
}

criterion_group!(benches, samp_codec);
criterion_main!(benches);
