//! The requests the load generators send, encoded with the packet declarations into fixed
//! buffers, so that building one allocates nothing and costs next to nothing.

use std::net::SocketAddrV4;

use query_specs::a2s::{self, InfoRequest, INFO_PAYLOAD};
use query_specs::samp::Header;
use query_specs::sqp::{ChallengeRequest, ChunkSet, QueryRequest, Request, Response, VERSION};
use query_wire::{Decode, Encode};

/// SQP packet type of challenge requests and replies.
pub const SQP_CHALLENGE: u8 = 0;
/// SQP packet type of query requests and replies.
pub const SQP_QUERY: u8 = 1;

/// The 5-byte SQP challenge request.
pub fn sqp_challenge() -> [u8; 5] {
    let mut buf = [0u8; 5];
    encode_sqp(&Request::Challenge(ChallengeRequest::default()), &mut buf);
    buf
}

/// The 8-byte SQP query request for every chunk, proving `challenge`.
pub fn sqp_query(challenge: u32) -> [u8; 8] {
    let mut buf = [0u8; 8];
    encode_sqp(
        &Request::Query(QueryRequest {
            challenge,
            version: VERSION,
            requested: ChunkSet::all(),
        }),
        &mut buf,
    );
    buf
}

fn encode_sqp(request: &Request, buf: &mut [u8]) {
    let written = request
        .encode_into_with(buf, ())
        .unwrap_or_else(|e| unreachable!("an SQP request always fits its fixed size: {e}"));
    debug_assert_eq!(written, buf.len());
}

/// The challenge of an SQP challenge reply, or `None` if `reply` is not one.
pub fn sqp_challenge_of(reply: &[u8]) -> Option<u32> {
    match Response::from_bytes_with(reply, ChunkSet::empty()) {
        Ok(Response::Challenge(challenge)) => Some(challenge.challenge),
        _ => None,
    }
}

/// An 11-byte SA:MP request with `opcode` (`i`, `r`, `c` or `d`) to `server`.
pub fn samp(server: SocketAddrV4, opcode: u8) -> [u8; 11] {
    let mut buf = [0u8; 11];
    let header = Header {
        address: server.ip().octets(),
        port: server.port(),
        opcode,
    };
    header
        .encode_into_with(&mut buf, ())
        .unwrap_or_else(|e| unreachable!("a SA:MP header always fits 11 bytes: {e}"));
    buf
}

/// The byte that tells A2S replies apart, after the `FF FF FF FF` of a whole packet.
pub const A2S_KIND_AT: usize = 4;

/// The A2S INFO request, without a challenge (25 bytes) or with one (29); the bytes used.
pub fn a2s_info(challenge: Option<i32>) -> ([u8; 29], usize) {
    let mut buf = [0u8; 29];
    let written = a2s::Request::Info(InfoRequest {
        payload: INFO_PAYLOAD,
        challenge,
    })
    .encode_into_with(&mut buf, ())
    .unwrap_or_else(|e| unreachable!("an A2S INFO request always fits 29 bytes: {e}"));
    (buf, written)
}

/// The 9-byte A2S PLAYER request proving `challenge`.
pub fn a2s_players(challenge: i32) -> [u8; 9] {
    a2s_with_challenge(a2s::Request::Players(a2s::Challenge { challenge }))
}

/// The 9-byte A2S RULES request proving `challenge`.
pub fn a2s_rules(challenge: i32) -> [u8; 9] {
    a2s_with_challenge(a2s::Request::Rules(a2s::Challenge { challenge }))
}

fn a2s_with_challenge(request: a2s::Request<'_>) -> [u8; 9] {
    let mut buf = [0u8; 9];
    request
        .encode_into_with(&mut buf, ())
        .unwrap_or_else(|e| unreachable!("an A2S PLAYER or RULES request is 9 bytes: {e}"));
    buf
}

/// The challenge of an A2S challenge reply, or `None` if `reply` is not one.
pub fn a2s_challenge_of(reply: &[u8]) -> Option<i32> {
    match a2s::Reply::from_bytes_with(reply, 0) {
        Ok(a2s::Reply::Challenge(challenge)) => Some(challenge.challenge),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_have_their_documented_bytes() {
        assert_eq!(sqp_challenge(), [0, 0, 0, 0, 0]);
        assert_eq!(sqp_query(0x0102_0304), [1, 1, 2, 3, 4, 0, 1, 0x1f]);
        assert_eq!(sqp_challenge_of(&[0, 0, 0, 0, 9]), Some(9));
        assert_eq!(sqp_challenge_of(&[1, 0, 0, 0, 9]), None);
        let samp = samp("127.0.0.1:7777".parse().unwrap(), b'i');
        assert_eq!(&samp, b"SAMP\x7f\x00\x00\x01\x61\x1ei");
        let (info, len) = a2s_info(None);
        assert_eq!(&info[..len], b"\xff\xff\xff\xffTSource Engine Query\0");
        let (info, len) = a2s_info(Some(-2));
        assert_eq!(&info[25..len], b"\xfe\xff\xff\xff");
        assert_eq!(
            a2s_challenge_of(b"\xff\xff\xff\xffA\x07\x00\x00\x00"),
            Some(7)
        );
        assert_eq!(&a2s_players(-1), b"\xff\xff\xff\xffU\xff\xff\xff\xff");
        assert_eq!(&a2s_rules(1), b"\xff\xff\xff\xffV\x01\x00\x00\x00");
        assert_eq!(a2s_challenge_of(b"\xff\xff\xff\xffI\x07\x00\x00\x00"), None);
    }
}
