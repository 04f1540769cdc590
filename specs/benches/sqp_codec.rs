//! The cost of the derived SQP codec against a hand-written one and deku, on the Unity
//! document's 102-byte QueryResponse (ServerInfo requested).
//!
//! One criterion group, `sqp_query_response`, holds six benchmarks: `decode/{derived,
//! handwritten,deku}` and `encode/{derived,handwritten,deku}`. Decoding starts from the
//! datagram's bytes and ends with a validated value; encoding starts from a value and writes
//! into a buffer on the stack, lengths computed. Before measuring, the three decoders are run
//! on the packet and on damaged copies of it and must agree, and the three encoders must
//! write the packet back byte for byte, so the numbers compare the same work.
//!
//! `scripts/bench-table.sh` turns criterion's estimates into a table with the ratios.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use query_specs::sqp::{ChunkSet, Response};
use query_wire::{Decode, Encode};

mod deku_sqp;
mod handwritten;

/// The query asked for ServerInfo only.
const REQUESTED: ChunkSet = ChunkSet::SERVER_INFO;

/// Big enough for any packet here; the encoders write into its front.
const OUT_LEN: usize = 512;

fn fixture() -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/sqp/sqp_query_response.hex"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let bytes: Vec<u8> = text
        .split_whitespace()
        .map(|pair| u8::from_str_radix(pair, 16).unwrap_or_else(|_| panic!("bad hex {pair:?}")))
        .collect();
    assert_eq!(
        bytes.len(),
        102,
        "the document's QueryResponse is 102 bytes"
    );
    bytes
}

fn decode_derived(packet: &[u8]) -> query_wire::Result<Response<'_>> {
    Response::from_bytes_with(packet, REQUESTED)
}

/// Offsets in the document's packet.
const PACKET_LENGTH_AT: usize = 9;
const CHUNK_LENGTH_AT: usize = 11;
const SERVER_NAME_AT: usize = 20;

fn add_to_u16(packet: &mut [u8], at: usize, delta: i32) {
    let value = i32::from(u16::from_be_bytes([packet[at], packet[at + 1]])) + delta;
    packet[at..at + 2].copy_from_slice(&u16::try_from(value).unwrap().to_be_bytes());
}

fn add_to_u32(packet: &mut [u8], at: usize, delta: i64) {
    let bytes = packet[at..at + 4].try_into().unwrap();
    let value = i64::from(u32::from_be_bytes(bytes)) + delta;
    packet[at..at + 4].copy_from_slice(&u32::try_from(value).unwrap().to_be_bytes());
}

/// The document's packet and damaged copies, each with whether it must decode.
fn cases(packet: &[u8]) -> Vec<(&'static str, Vec<u8>, bool)> {
    let edit = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut copy = packet.to_vec();
        f(&mut copy);
        copy
    };
    vec![
        ("the document's packet", packet.to_vec(), true),
        (
            "a challenge response",
            vec![0x00, 0x80, 0x90, 0x23, 0x48],
            true,
        ),
        (
            "two bytes of future fields in the chunk",
            edit(&|p| {
                p.extend_from_slice(&[0xaa, 0xbb]);
                add_to_u16(p, PACKET_LENGTH_AT, 2);
                add_to_u32(p, CHUNK_LENGTH_AT, 2);
            }),
            true,
        ),
        ("one byte short", packet[..packet.len() - 1].to_vec(), false),
        ("a trailing byte", edit(&|p| p.push(0)), false),
        ("unknown type byte", edit(&|p| p[0] = 2), false),
        (
            "invalid UTF-8 in the server name",
            edit(&|p| p[SERVER_NAME_AT] = 0xff),
            false,
        ),
        (
            "chunk longer than the packet",
            edit(&|p| add_to_u32(p, CHUNK_LENGTH_AT, 1)),
            false,
        ),
        (
            "chunk shorter than the packet",
            edit(&|p| add_to_u32(p, CHUNK_LENGTH_AT, -1)),
            false,
        ),
        (
            "port outside the chunk, inside the datagram",
            edit(&|p| {
                add_to_u16(p, PACKET_LENGTH_AT, -1);
                add_to_u32(p, CHUNK_LENGTH_AT, -1);
            }),
            false,
        ),
        (
            "bytes after the last chunk, inside the packet length",
            edit(&|p| {
                p.push(0);
                add_to_u16(p, PACKET_LENGTH_AT, 1);
            }),
            false,
        ),
        (
            "packet length past the datagram",
            edit(&|p| add_to_u16(p, PACKET_LENGTH_AT, 1)),
            false,
        ),
    ]
}

/// Panics unless the three codecs agree on every case and re-encode the packet exactly.
fn check_same_work(packet: &[u8]) {
    for (what, bytes, valid) in cases(packet) {
        let derived = decode_derived(&bytes);
        let handwritten = handwritten::decode_response(&bytes);
        let deku = deku_sqp::decode(&bytes);
        assert_eq!(derived.is_ok(), valid, "derived on {what}: {derived:?}");
        assert_eq!(
            handwritten.is_some(),
            valid,
            "handwritten on {what}: {handwritten:?}"
        );
        assert_eq!(deku.is_ok(), valid, "deku on {what}: {deku:?}");
        if let (Ok(derived), Some(handwritten), Ok(deku)) = (derived, handwritten, deku) {
            assert_eq!(handwritten, derived, "handwritten decodes {what} alike");
            assert_eq!(deku.to_response(), derived, "deku decodes {what} alike");
        }
    }

    let value = decode_derived(packet).expect("the document's packet decodes");
    let mut out = [0u8; OUT_LEN];
    let n = value.encode_into_with(&mut out, REQUESTED).unwrap();
    assert_eq!(&out[..n], packet, "derived re-encodes the packet");
    assert_eq!(value.encoded_len(REQUESTED), packet.len());

    let mut out = [0u8; OUT_LEN];
    let n = handwritten::encode_response(&value, &mut out).unwrap();
    assert_eq!(&out[..n], packet, "handwritten re-encodes the packet");

    let mut out = [0u8; OUT_LEN];
    let mut deku_value = deku_sqp::DekuResponse::from_response(&value);
    let n = deku_sqp::encode(&mut deku_value, &mut out).unwrap();
    assert_eq!(&out[..n], packet, "deku re-encodes the packet");
}

fn sqp_query_response(c: &mut Criterion) {
    let packet = fixture();
    check_same_work(&packet);
    let value = decode_derived(&packet).unwrap();
    let mut deku_value = deku_sqp::DekuResponse::from_response(&value);

    let mut group = c.benchmark_group("sqp_query_response");
    group.throughput(Throughput::Bytes(packet.len() as u64));

    group.bench_function(BenchmarkId::new("decode", "derived"), |b| {
        b.iter(|| black_box(decode_derived(black_box(&packet))))
    });
    group.bench_function(BenchmarkId::new("decode", "handwritten"), |b| {
        b.iter(|| black_box(handwritten::decode_response(black_box(&packet))))
    });
    group.bench_function(BenchmarkId::new("decode", "deku"), |b| {
        b.iter(|| black_box(deku_sqp::decode(black_box(&packet))))
    });

    // Each encoder's result is handed to `black_box` by reference, where it was returned. By
    // value, the derived encoder's `Result<usize>` (two registers) was stored in two halves
    // and read back as one 16-byte load, which cannot be forwarded from the stores: a stall
    // of the measuring loop, not of the encoder, worth about 2 ns here.
    let mut out = [0u8; OUT_LEN];
    group.bench_function(BenchmarkId::new("encode", "derived"), |b| {
        b.iter(|| {
            let n = black_box(&value).encode_into_with(black_box(&mut out), REQUESTED);
            black_box(&n);
        })
    });
    group.bench_function(BenchmarkId::new("encode", "handwritten"), |b| {
        b.iter(|| {
            let n = handwritten::encode_response(black_box(&value), black_box(&mut out));
            black_box(&n);
        })
    });
    group.bench_function(BenchmarkId::new("encode", "deku"), |b| {
        b.iter(|| {
            let n = deku_sqp::encode(black_box(&mut deku_value), black_box(&mut out));
            black_box(&n);
        })
    });
    group.finish();
}

criterion_group!(benches, sqp_query_response);
criterion_main!(benches);
