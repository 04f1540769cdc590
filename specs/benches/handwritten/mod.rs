//! The baseline: an SQP codec written by hand for the case the benchmark measures, a response
//! to a query that asked for ServerInfo only.
//!
//! The decoder is what an engineer writes for speed without a framework: slices split as it
//! reads, `u8`-length strings checked with `str::from_utf8` and borrowed, `Option` on failure
//! (no offset or reason kept, which the derived decoder's errors carry). It makes the same
//! checks as the derived codec and no others: the type byte, the packet length bounding the
//! chunks, the chunk length bounding ServerInfo, bytes left in the chunk skipped as future
//! fields, and nothing after the packet. It builds the same `query_specs::sqp` values, so the
//! two decoders can be compared with `==` and their cost differs only in how the bytes are
//! read.

use query_specs::sqp::{ChallengeResponse, Chunks, QueryResponse, Response, ServerInfo};

/// Type byte, challenge, version, current packet, last packet, packet length.
const QUERY_HEADER_LEN: usize = 1 + 4 + 2 + 1 + 1 + 2;
/// The chunk length in front of each chunk.
const CHUNK_LENGTH_LEN: usize = 4;

/// Decodes a server packet, expecting a query response to have ServerInfo only; `None` when
/// it is malformed.
///
/// Every field is read into a local first and the value is built once, in the return
/// expression, so that it is written where the caller keeps it rather than moved there.
pub fn decode_response(packet: &[u8]) -> Option<Response<'_>> {
    let mut rest = packet;
    match u8(&mut rest)? {
        0 => {
            let challenge = u32(&mut rest)?;
            rest.is_empty()
                .then_some(Response::Challenge(ChallengeResponse { challenge }))
        }
        1 => {
            let challenge = u32(&mut rest)?;
            let version = u16(&mut rest)?;
            let current_packet = u8(&mut rest)?;
            let last_packet = u8(&mut rest)?;
            let packet_length = usize::from(u16(&mut rest)?);
            let mut body = take(&mut rest, packet_length)?;
            let chunk_length = usize::try_from(u32(&mut body)?).ok()?;
            let mut chunk = take(&mut body, chunk_length)?;
            // Bytes left in `chunk` are future fields and are skipped; the packet must end
            // with the last chunk, and the datagram with the packet.
            if !body.is_empty() || !rest.is_empty() {
                return None;
            }
            let current_players = u16(&mut chunk)?;
            let max_players = u16(&mut chunk)?;
            let server_name = str_u8(&mut chunk)?;
            let game_type = str_u8(&mut chunk)?;
            let build_id = str_u8(&mut chunk)?;
            let map = str_u8(&mut chunk)?;
            let port = u16(&mut chunk)?;
            Some(Response::Query(QueryResponse {
                challenge,
                version,
                current_packet,
                last_packet,
                chunks: Chunks {
                    server_info: Some(ServerInfo {
                        current_players,
                        max_players,
                        server_name,
                        game_type,
                        build_id,
                        map,
                        port,
                    }),
                    ..Chunks::default()
                },
            }))
        }
        _ => None,
    }
}

/// The next `n` bytes.
#[inline]
fn take<'a>(rest: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if n > rest.len() {
        return None;
    }
    let (head, tail) = rest.split_at(n);
    *rest = tail;
    Some(head)
}

#[inline]
fn u8(rest: &mut &[u8]) -> Option<u8> {
    let (&byte, tail) = rest.split_first()?;
    *rest = tail;
    Some(byte)
}

#[inline]
fn u16(rest: &mut &[u8]) -> Option<u16> {
    let (head, tail) = rest.split_first_chunk()?;
    *rest = tail;
    Some(u16::from_be_bytes(*head))
}

#[inline]
fn u32(rest: &mut &[u8]) -> Option<u32> {
    let (head, tail) = rest.split_first_chunk()?;
    *rest = tail;
    Some(u32::from_be_bytes(*head))
}

#[inline]
fn str_u8<'a>(rest: &mut &'a [u8]) -> Option<&'a str> {
    let len = usize::from(u8(rest)?);
    std::str::from_utf8(take(rest, len)?).ok()
}

/// Why a packet could not be encoded and at which byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed {
    pub offset: usize,
    pub reason: &'static str,
}

/// Encodes a server packet into the start of `out` and returns its length. A query response
/// must carry ServerInfo and nothing else; the packet and chunk lengths are computed.
pub fn encode_response(response: &Response<'_>, out: &mut [u8]) -> Result<usize, Malformed> {
    match response {
        Response::Challenge(challenge) => {
            let mut output = Output::exact(out, 5)?;
            output.put(&[0]);
            output.put(&challenge.challenge.to_be_bytes());
            Ok(5)
        }
        Response::Query(query) => encode_query(query, out),
    }
}

fn encode_query(query: &QueryResponse<'_>, out: &mut [u8]) -> Result<usize, Malformed> {
    let Chunks {
        server_info: Some(info),
        server_rules: None,
        player_info: None,
        team_info: None,
        metrics: None,
    } = &query.chunks
    else {
        return Err(Malformed {
            offset: QUERY_HEADER_LEN,
            reason: "only a lone ServerInfo chunk is supported",
        });
    };
    let strings = [info.server_name, info.game_type, info.build_id, info.map];
    let mut chunk_length = 2 + 2 + 2;
    for text in strings {
        if text.len() > usize::from(u8::MAX) {
            return Err(Malformed {
                offset: QUERY_HEADER_LEN + CHUNK_LENGTH_LEN,
                reason: "string longer than 255 bytes",
            });
        }
        chunk_length += 1 + text.len();
    }
    let packet_length = CHUNK_LENGTH_LEN + chunk_length;
    let Ok(packet_length_u16) = u16::try_from(packet_length) else {
        return Err(Malformed {
            offset: QUERY_HEADER_LEN - 2,
            reason: "packet longer than 65535 bytes",
        });
    };
    let total = QUERY_HEADER_LEN + packet_length;

    let mut output = Output::exact(out, total)?;
    output.put(&[1]);
    output.put(&query.challenge.to_be_bytes());
    output.put(&query.version.to_be_bytes());
    output.put(&[query.current_packet, query.last_packet]);
    output.put(&packet_length_u16.to_be_bytes());
    // chunk_length < packet_length <= u16::MAX, so it fits a u32.
    output.put(&(chunk_length as u32).to_be_bytes());
    output.put(&info.current_players.to_be_bytes());
    output.put(&info.max_players.to_be_bytes());
    for text in strings {
        // Checked against u8::MAX above.
        output.put(&[text.len() as u8]);
        output.put(text.as_bytes());
    }
    output.put(&info.port.to_be_bytes());
    Ok(total)
}

/// The front of the caller's buffer, sized exactly to the packet once its length is known.
struct Output<'b> {
    buf: &'b mut [u8],
}

impl<'b> Output<'b> {
    fn exact(out: &'b mut [u8], len: usize) -> Result<Self, Malformed> {
        let have = out.len();
        match out.get_mut(..len) {
            Some(buf) => Ok(Output { buf }),
            None => Err(Malformed {
                offset: have,
                reason: "output buffer too small",
            }),
        }
    }

    /// Writes `bytes` and moves past them; the buffer was sized to the packet, so they fit.
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        let (head, tail) = std::mem::take(&mut self.buf).split_at_mut(bytes.len());
        head.copy_from_slice(bytes);
        self.buf = tail;
    }
}
