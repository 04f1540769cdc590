//! Quake 3 decoders and the client's multi-datagram join on arbitrary bytes. The first byte is
//! a separator: the rest is read whole as a request, a `statusResponse` and an
//! `infoResponse`, then cut at each separator into datagrams, each given the `statusResponse`
//! header, which the client session joins (pair line first or not, duplicates, garbage) with a
//! short timeout on the virtual clock. A player line that decodes must re-encode to one that
//! decodes to the same values; the session must end with a status or an error, never panic.
#![no_main]

use std::net::SocketAddr;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use query_net::{replay, Options, Protocol};
use query_specs::quake3::{
    strip_colours, InfoResponse, Player, Request, StatusResponse, ENCODING, STATUS_HEADER,
};
use query_wire::{Decode, Encode};

fuzz_target!(|data: &[u8]| {
    let Some((&separator, rest)) = data.split_first() else {
        return;
    };
    if let Ok(request) = Request::decode(rest) {
        let _ = request.challenge();
    }
    if let Ok(reply) = StatusResponse::decode(rest, ENCODING) {
        for player in &reply.players {
            let bytes = player.to_vec().expect("a decoded player line re-encodes");
            let again = Player::from_bytes(&bytes).expect("a re-encoded player line decodes");
            assert_eq!((again.score, again.ping), (player.score, player.ping));
            assert_eq!(again.name, player.name);
            let _ = strip_colours(&player.name.decode(ENCODING));
        }
    }
    if let Ok(reply) = InfoResponse::decode(rest, ENCODING) {
        let _ = strip_colours(reply.info.hostname.as_deref().unwrap_or_default());
    }
    // The parts of one reply, each with the header, the first usually holding the pair line.
    let replies: Vec<Vec<u8>> = rest
        .split(|&b| b == separator)
        .take(24)
        .map(|part| [STATUS_HEADER, part].concat())
        .collect();
    let options = Options {
        timeout: Duration::from_millis(100),
        retries: 1,
        deadline: Duration::from_millis(500),
        ..Options::default()
    };
    let target = SocketAddr::from(([127, 0, 0, 1], Protocol::Quake3.default_port()));
    if let Ok(status) = replay::status_from_replies(Protocol::Quake3, target, &replies, &options) {
        assert_eq!(status.num_players as usize, status.players.len());
        // Every player came from a line of some part.
        let lines: usize = replies
            .iter()
            .map(|r| r.split(|&b| b == b'\n').count())
            .sum();
        assert!(status.players.len() <= lines);
    }
});
