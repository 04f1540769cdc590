//! The baseline: an SQP codec written by hand for the case the benchmark measures, a response
//! to a query that asked for ServerInfo only.
//!
//! It makes the same checks as the derived codec and no others: the type byte, the packet
//! length bounding the chunks, the chunk length bounding ServerInfo, u8-length strings
//! validated as UTF-8 and borrowed, bytes left in the chunk skipped as future fields, and
//! nothing after the packet. It builds the same `query_specs::sqp` values, so the two decoders
//! can be compared with `==` and their cost differs only in how the bytes are read.

use query_specs::sqp::{ChallengeResponse, Chunks, QueryResponse, Response, ServerInfo};

/// Why a packet was refused and at which byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed {
    pub offset: usize,
    pub reason: &'static str,
}

/// Type byte, challenge, version, current packet, last packet, packet length.
const QUERY_HEADER_LEN: usize = 1 + 4 + 2 + 1 + 1 + 2;
/// The chunk length in front of each chunk.
const CHUNK_LENGTH_LEN: usize = 4;

/// Decodes a server packet, expecting a query response to have ServerInfo only.
pub fn decode_response(packet: &[u8]) -> Result<Response<'_>, Malformed> {
    let mut input = Input {
        rest: packet,
        offset: 0,
    };
    let response = match input.u8()? {
        0 => Response::Challenge(ChallengeResponse {
            challenge: input.u32()?,
        }),
        1 => Response::Query(decode_query(&mut input)?),
        _ => {
            return Err(Malformed {
                offset: 0,
                reason: "unknown packet type",
            })
        }
    };
    input.finish()?;
    Ok(response)
}

fn decode_query<'a>(input: &mut Input<'a>) -> Result<QueryResponse<'a>, Malformed> {
    let challenge = input.u32()?;
    let version = input.u16()?;
    let current_packet = input.u8()?;
    let last_packet = input.u8()?;
    let packet_length = usize::from(input.u16()?);
    let mut body = input.take(packet_length)?;
    let chunk_length = usize::try_from(body.u32()?).unwrap_or(usize::MAX);
    let mut chunk = body.take(chunk_length)?;
    let server_info = ServerInfo {
        current_players: chunk.u16()?,
        max_players: chunk.u16()?,
        server_name: chunk.str_u8()?,
        game_type: chunk.str_u8()?,
        build_id: chunk.str_u8()?,
        map: chunk.str_u8()?,
        port: chunk.u16()?,
    };
    // Bytes left in `chunk` are future fields and are skipped; the packet itself must end
    // with the last chunk.
    body.finish()?;
    Ok(QueryResponse {
        challenge,
        version,
        current_packet,
        last_packet,
        chunks: Chunks {
            server_info: Some(server_info),
            ..Chunks::default()
        },
    })
}

/// A cursor over the unread bytes that remembers their absolute offset for errors.
struct Input<'a> {
    rest: &'a [u8],
    offset: usize,
}

impl<'a> Input<'a> {
    #[inline]
    fn array<const N: usize>(&mut self) -> Result<[u8; N], Malformed> {
        match self.rest.split_first_chunk::<N>() {
            Some((head, tail)) => {
                self.rest = tail;
                self.offset += N;
                Ok(*head)
            }
            None => Err(self.short()),
        }
    }

    #[inline]
    fn u8(&mut self) -> Result<u8, Malformed> {
        self.array::<1>().map(|[b]| b)
    }

    #[inline]
    fn u16(&mut self) -> Result<u16, Malformed> {
        self.array().map(u16::from_be_bytes)
    }

    #[inline]
    fn u32(&mut self) -> Result<u32, Malformed> {
        self.array().map(u32::from_be_bytes)
    }

    /// The next `n` bytes as a cursor of their own, so a nested read cannot overrun them.
    #[inline]
    fn take(&mut self, n: usize) -> Result<Input<'a>, Malformed> {
        if n > self.rest.len() {
            return Err(self.short());
        }
        let (head, tail) = self.rest.split_at(n);
        let taken = Input {
            rest: head,
            offset: self.offset,
        };
        self.rest = tail;
        self.offset += n;
        Ok(taken)
    }

    #[inline]
    fn str_u8(&mut self) -> Result<&'a str, Malformed> {
        let len = usize::from(self.u8()?);
        let start = self.offset;
        let bytes = self.take(len)?.rest;
        std::str::from_utf8(bytes).map_err(|e| Malformed {
            offset: start + e.valid_up_to(),
            reason: "invalid UTF-8",
        })
    }

    #[inline]
    fn finish(&self) -> Result<(), Malformed> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(Malformed {
                offset: self.offset,
                reason: "trailing bytes",
            })
        }
    }

    #[cold]
    fn short(&self) -> Malformed {
        Malformed {
            offset: self.offset,
            reason: "unexpected end",
        }
    }
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
