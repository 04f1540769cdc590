//! Quake 2 and QuakeWorld decoders and the client on arbitrary bytes. The first byte picks
//! the header the rest is given (none, Quake 2's `print\n` or QuakeWorld's `n`), so that both
//! player layouts are reached. A player line that decodes must re-encode to one that decodes
//! to the same values; lenient decoding must agree with strict decoding wherever the latter
//! succeeds; the client session given the datagram must end with a status or an error, never
//! panic, and list only players it read.
#![no_main]

use std::net::SocketAddr;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use query_net::{replay, Options, Protocol};
use query_specs::quake2::{
    plain_name, AnyPlayer, QwPlayer, Request, StatusResponse, ENCODING, PRINT_HEADER, QW_HEADER,
};
use query_specs::quake3::Player;
use query_wire::{Decode, Encode};

fuzz_target!(|data: &[u8]| {
    let Some((&choice, rest)) = data.split_first() else {
        return;
    };
    let _ = Request::decode(rest);
    let header: &[u8] = match choice % 3 {
        0 => b"",
        1 => PRINT_HEADER,
        _ => QW_HEADER,
    };
    let datagram = [header, rest].concat();
    let strict = StatusResponse::decode(&datagram, ENCODING);
    if let Ok(reply) = &strict {
        for player in &reply.players {
            let _ = plain_name(player.name().as_bytes());
            match player {
                AnyPlayer::Quake2(p) => {
                    let bytes = p.to_vec().expect("a decoded player line re-encodes");
                    assert_eq!(&Player::from_bytes(&bytes).expect("and decodes"), p);
                }
                AnyPlayer::QuakeWorld(p) => {
                    let bytes = p.to_vec().expect("a decoded player line re-encodes");
                    assert_eq!(&QwPlayer::from_bytes(&bytes).expect("and decodes"), p);
                }
            }
        }
    }
    match (StatusResponse::decode_lenient(&datagram, ENCODING), &strict) {
        (Ok((lenient, unreadable)), Ok(strict)) => {
            assert!(unreadable.is_empty());
            assert_eq!(&lenient, strict);
        }
        (Ok((_, unreadable)), Err(_)) => assert!(!unreadable.is_empty()),
        (Err(lenient), Err(strict)) => assert_eq!(&lenient, strict),
        (Err(e), Ok(_)) => panic!("lenient decoding failed where strict decoding did not: {e}"),
    }
    let options = Options {
        timeout: Duration::from_millis(100),
        retries: 1,
        deadline: Duration::from_millis(500),
        ..Options::default()
    };
    let target = SocketAddr::from(([127, 0, 0, 1], Protocol::Quake2.default_port()));
    let replies = [datagram.clone()];
    if let Ok(status) = replay::status_from_replies(Protocol::Quake2, target, &replies, &options) {
        assert_eq!(status.num_players as usize, status.players.len());
        assert!(status.players.len() <= datagram.split(|&b| b == b'\n').count());
    }
});
