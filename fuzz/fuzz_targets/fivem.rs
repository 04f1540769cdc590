//! FiveM decoders and the client on arbitrary bytes: the rest after the first byte is read as
//! a request, as an `infoResponse` (given the header when the first byte is odd, so that the
//! pairs are reached) and as a `/players.json` body. What decodes re-encodes to what decodes
//! to the same value; the client session, replayed with the datagram (its challenge written
//! in), ends with a status or an error, never a panic; the player list merge never panics and
//! never calls a list it could not read complete.
#![no_main]

use std::net::SocketAddr;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use query_net::engines::fivem::with_players;
use query_net::{replay, Options, Protocol};
use query_specs::fivem::{InfoResponse, Request, ENCODING, INFO_HEADER};
use query_wire::Encode;

fuzz_target!(|data: &[u8]| {
    let Some((&choice, rest)) = data.split_first() else {
        return;
    };
    if let Ok(request) = Request::decode(rest) {
        let _ = request.challenge();
    }
    let datagram = if choice % 2 == 1 {
        [INFO_HEADER, rest].concat()
    } else {
        rest.to_vec()
    };
    if let Ok(reply) = InfoResponse::decode(&datagram, ENCODING) {
        let bytes = reply.to_vec_with(ENCODING).expect("a decoded reply re-encodes");
        assert_eq!(InfoResponse::decode(&bytes, ENCODING).expect("and decodes"), reply);
    }
    let options = Options {
        timeout: Duration::from_millis(100),
        retries: 1,
        deadline: Duration::from_millis(500),
        ..Options::default()
    };
    let target = SocketAddr::from(([127, 0, 0, 1], Protocol::Fivem.default_port()));
    if let Ok(status) =
        replay::status_from_replies(Protocol::Fivem, target, &[datagram], &options)
    {
        assert!(status.players.is_empty());
        let merged = with_players(status.clone(), Ok(rest.to_vec()));
        if merged.raw.get("players_error").is_some() {
            // Not a list: nothing merged, and counted players stay missing.
            assert!(merged.players.is_empty());
            assert_eq!(merged.complete, status.complete);
        } else {
            assert!(merged.complete);
            assert_eq!(merged.num_players as usize, merged.players.len());
        }
    }
});
