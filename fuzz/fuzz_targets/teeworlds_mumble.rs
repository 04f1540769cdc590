//! Teeworlds / DDNet (0.6 and 0.7) and Mumble decoders, their responders and the Teeworlds
//! client's join of a reply, on arbitrary bytes. The first byte is a separator. The rest is
//! read whole as a Teeworlds request and reply of either generation and as a Mumble ping and
//! pong: whatever decodes re-encodes to the same bytes (0.7's token request up to its
//! padding, which is not read), and the responders answer it or drop it without panicking,
//! every reply datagram within the cap and decoding as a reply; a 0.7 info request with a
//! token the responder did not give gets nothing. Then the rest is cut at each separator
//! into datagrams, each given the header of a reply (ten `FF` bytes; with an odd separator,
//! 0.7's header and `inf3` tag), which the client session joins on a virtual clock: it must
//! end with a status or an error, list no more clients than the datagrams hold, and call a
//! status complete only when it lists every client the server counts.
#![no_main]

use std::net::SocketAddr;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use query_net::clock::Now;
use query_net::engine::{ReplySink, Responder};
use query_net::engines::mumble::{MumbleConfig, MumbleResponder};
use query_net::engines::teeworlds::{TeeworldsConfig, TeeworldsResponder};
use query_net::state::{PlayerState, ServerState, SharedState};
use query_net::{replay, Options, Protocol};
use query_net::engine::Verdict;
use query_specs::teeworlds::seven;
use query_specs::{mumble, teeworlds};
use query_wire::{Decode, Encode};

const REPLY_HEADER: &[u8] = b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff";
/// 0.7's connectionless header (any tokens: the replay writes the request's in) and `inf3`.
const SEVEN_HEADER: &[u8] = b"\x21\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xffinf3";

fuzz_target!(|data: &[u8]| {
    let Some((&separator, rest)) = data.split_first() else {
        return;
    };
    if let Ok(request) = teeworlds::Request::from_bytes(rest) {
        assert_eq!(request.to_vec().expect("a request re-encodes"), rest);
        let _ = request.token();
    }
    if let Ok(reply) = teeworlds::Reply::from_bytes(rest) {
        let bytes = reply.to_vec().expect("a decoded reply re-encodes");
        let again = teeworlds::Reply::from_bytes(&bytes).expect("a re-encoded reply decodes");
        assert_eq!(again, reply);
    }
    if let Ok(request) = seven::Request::from_bytes(rest) {
        let bytes = request.to_vec().expect("a 0.7 request re-encodes");
        assert_eq!(bytes.len(), rest.len());
        assert_eq!(seven::Request::from_bytes(&bytes).unwrap(), request);
        if matches!(request, seven::Request::Info(_)) {
            assert_eq!(bytes, rest);
        }
    }
    if let Ok(reply) = seven::Reply::from_bytes(rest) {
        assert_eq!(reply.to_vec().expect("a 0.7 reply re-encodes"), rest);
    }
    if let Ok(ping) = mumble::Ping::from_bytes(rest) {
        assert_eq!(ping.to_vec().unwrap(), rest);
    }
    if let Ok(pong) = mumble::Pong::from_bytes(rest) {
        assert_eq!(pong.to_vec().unwrap(), rest);
    }

    // The responders, from a state whose players the separator byte shapes.
    let players = (0..usize::from(separator))
        .map(|i| PlayerState {
            name: format!("tee\0{i}é"),
            score: i as i64 - 100,
            ..PlayerState::default()
        })
        .collect();
    let state = SharedState::new(ServerState {
        name: "fuzz".into(),
        max_players: u32::from(separator),
        players,
        ..ServerState::default()
    });
    let from = SocketAddr::from(([192, 0, 2, 1], 5000));
    let mut replies = ReplySink::new(1400);
    let mut tee = TeeworldsResponder::new(state.clone(), TeeworldsConfig::default());
    let verdict = tee.handle(from, rest, Now::system(), &mut replies);
    for datagram in replies.datagrams() {
        assert!(datagram.len() <= 1400);
        let decodes = teeworlds::Reply::from_bytes(datagram).is_ok()
            || seven::Reply::from_bytes(datagram).is_ok();
        assert!(decodes, "the responder's replies decode");
    }
    if let Ok(seven::Request::Info(_)) = seven::Request::from_bytes(rest) {
        // The key is random: a token from the input is a guess, which must not be answered.
        assert!(!matches!(verdict, Verdict::Answered) && replies.is_empty());
    }
    replies.clear();
    let mut mumble = MumbleResponder::new(state, MumbleConfig::default());
    let _ = mumble.handle(from, rest, Now::system(), &mut replies);
    for datagram in replies.datagrams() {
        mumble::Pong::from_bytes(datagram).expect("the responder's pong decodes");
    }

    // The datagrams of one reply, cut at the separator.
    let header = if separator % 2 == 1 {
        SEVEN_HEADER
    } else {
        REPLY_HEADER
    };
    let datagrams: Vec<Vec<u8>> = rest
        .split(|&b| b == separator)
        .take(24)
        .map(|part| [header, part].concat())
        .collect();
    let options = Options {
        timeout: Duration::from_millis(100),
        retries: 1,
        deadline: Duration::from_millis(500),
        ..Options::default()
    };
    let target = SocketAddr::from(([127, 0, 0, 1], Protocol::Teeworlds.default_port()));
    if let Ok(status) =
        replay::status_from_replies(Protocol::Teeworlds, target, &datagrams, &options)
    {
        let nuls = datagrams
            .iter()
            .map(|d| d.iter().filter(|&&b| b == 0).count())
            .sum::<usize>();
        // A 0.6 client ends five strings, a 0.7 one two (name and clan).
        let per_client = if header == SEVEN_HEADER { 2 } else { 5 };
        assert!(status.players.len() * per_client <= nuls);
        if status.complete {
            let counted: usize = status.rules["num_clients"].parse().unwrap();
            assert!(status.players.len() >= counted);
        }
    }
});
