//! Quake 3 decoders and the client's multi-datagram join on arbitrary bytes. The first byte is
//! a separator: the rest is read whole as a request (an enum chosen by its variants' magics,
//! its challenge ended by any of several line ends, which must re-encode to a request that
//! decodes the same), a `statusResponse` and an
//! `infoResponse`, then cut at each separator into datagrams, each given the `statusResponse`
//! header, which the client session joins. Lenient decoding must agree with strict decoding
//! wherever the latter succeeds, and keep only lines that re-encode; (pair line first or not, duplicates, garbage) with a
//! short timeout on the virtual clock. A player line that decodes must re-encode to one that
//! decodes to the same values; the session must end with a status or an error, never panic.
//! The same pieces, as `print` datagrams (some left without the header), go to an `rcon`
//! session, which must end with the joined text within its cap, or an error.
#![no_main]

use std::net::SocketAddr;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use query_net::engine::ClientSession;
use query_net::engines::quake3::RconSession;
use query_net::{replay, Options, Protocol, RconCommand};
use query_specs::quake3::{
    strip_colours, InfoResponse, Player, Print, Rcon, Request, StatusResponse, ENCODING, PREFIX,
    PRINT_HEADER, STATUS_HEADER,
};
use query_wire::{Decode, Encode};

fuzz_target!(|data: &[u8]| {
    let Some((&separator, rest)) = data.split_first() else {
        return;
    };
    // The request is an enum chosen by its variants' magics, its challenge ended by any of
    // three line ends or the datagram's end: what decodes re-encodes (a challenge's end as a
    // newline) to bytes that decode to the same request, the same bytes when it carries no
    // challenge; it starts with the magic it was chosen by, and the router's check agrees.
    match Request::decode(rest) {
        Ok(request) => {
            let bytes = request.to_vec().expect("a decoded request re-encodes");
            assert_eq!(Request::decode(&bytes).expect("a re-encoded request decodes"), request);
            if request.challenge().is_none() && !rest.contains(&b' ') {
                assert_eq!(bytes, rest);
            }
            assert!(Request::matches_magic(rest));
            assert!(rest[PREFIX.len()..].starts_with(request.magic()));
        }
        Err(error) => assert!(error.offset() <= rest.len()),
    }
    let strict = StatusResponse::decode(rest, ENCODING);
    if let Ok(reply) = &strict {
        for player in &reply.players {
            let bytes = player.to_vec().expect("a decoded player line re-encodes");
            let again = Player::from_bytes(&bytes).expect("a re-encoded player line decodes");
            assert_eq!(&again, player);
            let _ = strip_colours(&player.name.decode(ENCODING));
        }
    }
    // Lenient decoding keeps every line strict decoding reads, and fails only where strict
    // decoding fails on the header or the pair line.
    match (StatusResponse::decode_lenient(rest, ENCODING), &strict) {
        (Ok((lenient, unreadable)), Ok(strict)) => {
            assert!(unreadable.is_empty());
            assert_eq!(&lenient, strict);
        }
        (Ok((lenient, unreadable)), Err(_)) => {
            assert!(!unreadable.is_empty());
            for player in &lenient.players {
                assert!(player.to_vec().is_ok());
            }
        }
        (Err(lenient), Err(strict)) => assert_eq!(&lenient, strict),
        (Err(e), Ok(_)) => panic!("lenient decoding failed where strict decoding did not: {e}"),
    }
    if let Ok(reply) = InfoResponse::decode(rest, ENCODING) {
        let _ = strip_colours(reply.info.0.hostname.as_deref().unwrap_or_default());
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

    // The remote console: its request and `print` replies re-encode to their bytes, and the
    // session joins `print` datagrams into at most the cap, ending with text or an error.
    if let Ok(rcon) = Rcon::from_bytes(rest) {
        assert_eq!(rcon.to_vec().expect("a decoded rcon request re-encodes"), rest);
    }
    if let Ok(print) = Print::from_bytes(rest) {
        assert_eq!(print.to_vec().expect("a decoded print re-encodes"), rest);
    }
    let command = RconCommand {
        password: "fuzz".to_owned(),
        command: "status".to_owned(),
    };
    let options = Options {
        max_reply_bytes: 4096,
        ..options
    };
    let mut session = RconSession::new(target, &command, &options).expect("a valid command");
    let mut now = std::time::Instant::now();
    let _ = session.poll_transmit(now);
    for (i, part) in rest.split(|&b| b == separator).take(24).enumerate() {
        let datagram = if i % 3 == 2 { part.to_vec() } else { [PRINT_HEADER, part].concat() };
        session.handle_datagram(target, &datagram, now);
        now += Duration::from_millis(u64::from(separator % 64));
        if session.poll_timeout().is_some_and(|at| at <= now) {
            session.handle_timeout(now);
        }
    }
    while let Some(at) = session.poll_timeout() {
        now = now.max(at);
        session.handle_timeout(now);
        let _ = session.poll_transmit(now);
    }
    if let Some(Ok(text)) = session.poll_result() {
        assert!(text.len() <= 4 * 4096, "decoded text grows at most 3 bytes a byte");
    }
});
