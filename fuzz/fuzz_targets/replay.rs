//! The client sessions of every protocol fed with arbitrary reply datagrams, through
//! `replay::status_from_replies`: challenges, split SQP replies, GameSpy parts, OneQuery pages
//! and SA:MP opcodes in any order and shape, with timeouts firing on the virtual clock. A
//! session must end with a status or an error, never panic or loop.
#![no_main]

use std::net::SocketAddr;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use query_net::{replay, Options, Protocol};
use query_specs::sqp::ChunkSet;

fuzz_target!(|data: &[u8]| {
    // The first byte picks the protocol and the SQP chunks; `0xff` bytes split datagrams.
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let protocol = Protocol::ALL[usize::from(pick) % Protocol::ALL.len()];
    let replies: Vec<Vec<u8>> = rest.split(|&b| b == 0xff).map(<[u8]>::to_vec).collect();
    let options = Options {
        timeout: Duration::from_millis(100),
        retries: 1,
        sqp_chunks: ChunkSet::from_bits_truncate(pick >> 2),
        ..Options::default()
    };
    let target = SocketAddr::from(([127, 0, 0, 1], protocol.default_port()));
    let _ = replay::status_from_replies(protocol, target, &replies, &options);
});
