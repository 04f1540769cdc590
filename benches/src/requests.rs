//! The requests the load generators send, encoded with the packet declarations into fixed
//! buffers, so that building one allocates nothing and costs next to nothing.

use std::net::SocketAddrV4;

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
    }
}
