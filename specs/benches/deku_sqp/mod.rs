//! The same packets declared with deku, the most used derive-based binary codec, for
//! comparison.
//!
//! deku cannot borrow strings from the input nor bound a nested struct by a length field, so
//! the declaration does what a deku user does instead: strings are a counted `Vec<u8>`
//! validated as UTF-8 after reading, and the chunk's bounds are asserts on the lengths. It
//! accepts and refuses the same packets as the derived codec (the benchmark checks that at
//! start-up); the lengths are recomputed with `update()` before every encode.

use deku::prelude::*;
use query_specs::sqp::{ChallengeResponse, Chunks, QueryResponse, Response, ServerInfo};

/// A server packet, told apart by its first byte.
#[derive(Debug, Clone, PartialEq, DekuRead, DekuWrite)]
#[deku(id_type = "u8", endian = "big")]
#[repr(u8)]
pub enum DekuResponse {
    #[deku(id = 0)]
    Challenge { challenge: u32 },
    #[deku(id = 1)]
    Query(DekuQueryResponse),
}

/// A query response carrying ServerInfo only.
#[derive(Debug, Clone, PartialEq, DekuRead, DekuWrite)]
#[deku(ctx = "endian: deku::ctx::Endian", endian = "endian")]
pub struct DekuQueryResponse {
    pub challenge: u32,
    pub version: u16,
    pub current_packet: u8,
    pub last_packet: u8,
    #[deku(update = "4 + self.server_info.wire_len() + self.surplus.len()")]
    pub packet_length: u16,
    #[deku(
        update = "self.server_info.wire_len() + self.surplus.len()",
        assert = "usize::from(*packet_length) == 4 + *chunk_length as usize"
    )]
    pub chunk_length: u32,
    #[deku(assert = "server_info.wire_len() <= *chunk_length as usize")]
    pub server_info: DekuServerInfo,
    /// Future fields at the end of the chunk.
    #[deku(count = "*chunk_length as usize - server_info.wire_len()")]
    pub surplus: Vec<u8>,
}

/// The ServerInfo chunk, strings as raw bytes behind their u8 lengths.
#[derive(Debug, Clone, PartialEq, DekuRead, DekuWrite)]
#[deku(ctx = "endian: deku::ctx::Endian", endian = "endian")]
pub struct DekuServerInfo {
    pub current_players: u16,
    pub max_players: u16,
    #[deku(update = "self.server_name.len()")]
    pub server_name_len: u8,
    #[deku(count = "server_name_len")]
    pub server_name: Vec<u8>,
    #[deku(update = "self.game_type.len()")]
    pub game_type_len: u8,
    #[deku(count = "game_type_len")]
    pub game_type: Vec<u8>,
    #[deku(update = "self.build_id.len()")]
    pub build_id_len: u8,
    #[deku(count = "build_id_len")]
    pub build_id: Vec<u8>,
    #[deku(update = "self.map.len()")]
    pub map_len: u8,
    #[deku(count = "map_len")]
    pub map: Vec<u8>,
    pub port: u16,
}

impl DekuServerInfo {
    /// The encoded size of the fields deku reads.
    fn wire_len(&self) -> usize {
        2 + 2 + 2 + 4 + self.strings().iter().map(|s| s.len()).sum::<usize>()
    }

    fn strings(&self) -> [&[u8]; 4] {
        [
            &self.server_name,
            &self.game_type,
            &self.build_id,
            &self.map,
        ]
    }
}

/// Decodes a whole packet: deku reads it, then the strings are checked to be UTF-8 and the
/// packet to have no bytes after it.
pub fn decode(packet: &[u8]) -> Result<DekuResponse, DekuError> {
    let ((rest, _bit_offset), response) = DekuResponse::from_bytes((packet, 0))?;
    if !rest.is_empty() {
        return Err(DekuError::Parse("trailing bytes".into()));
    }
    if let DekuResponse::Query(query) = &response {
        for text in query.server_info.strings() {
            if std::str::from_utf8(text).is_err() {
                return Err(DekuError::Parse("invalid UTF-8".into()));
            }
        }
    }
    Ok(response)
}

/// Encodes into the start of `out`, recomputing the length fields first (`update` does not
/// recurse, so each struct is updated, the innermost first).
pub fn encode(response: &mut DekuResponse, out: &mut [u8]) -> Result<usize, DekuError> {
    if let DekuResponse::Query(query) = response {
        query.server_info.update()?;
        query.update()?;
    }
    response.to_slice(out)
}

impl DekuResponse {
    /// The deku twin of a derived value (lengths are left for `update` to fill in).
    pub fn from_response(response: &Response<'_>) -> Self {
        match response {
            Response::Challenge(c) => DekuResponse::Challenge {
                challenge: c.challenge,
            },
            Response::Query(q) => {
                let info = q
                    .chunks
                    .server_info
                    .as_ref()
                    .expect("the benchmark's packet carries ServerInfo");
                DekuResponse::Query(DekuQueryResponse {
                    challenge: q.challenge,
                    version: q.version,
                    current_packet: q.current_packet,
                    last_packet: q.last_packet,
                    packet_length: 0,
                    chunk_length: 0,
                    server_info: DekuServerInfo {
                        current_players: info.current_players,
                        max_players: info.max_players,
                        server_name_len: 0,
                        server_name: info.server_name.as_bytes().to_vec(),
                        game_type_len: 0,
                        game_type: info.game_type.as_bytes().to_vec(),
                        build_id_len: 0,
                        build_id: info.build_id.as_bytes().to_vec(),
                        map_len: 0,
                        map: info.map.as_bytes().to_vec(),
                        port: info.port,
                    },
                    surplus: Vec::new(),
                })
            }
        }
    }

    /// The derived type's view of a decoded value, to compare the decoders' results.
    pub fn to_response(&self) -> Response<'_> {
        match self {
            DekuResponse::Challenge { challenge } => Response::Challenge(ChallengeResponse {
                challenge: *challenge,
            }),
            DekuResponse::Query(q) => {
                let info = &q.server_info;
                Response::Query(QueryResponse {
                    challenge: q.challenge,
                    version: q.version,
                    current_packet: q.current_packet,
                    last_packet: q.last_packet,
                    chunks: Chunks {
                        server_info: Some(ServerInfo {
                            current_players: info.current_players,
                            max_players: info.max_players,
                            server_name: text(&info.server_name),
                            game_type: text(&info.game_type),
                            build_id: text(&info.build_id),
                            map: text(&info.map),
                            port: info.port,
                        }),
                        ..Chunks::default()
                    },
                })
            }
        }
    }
}

/// The text of a string field that [`decode`] validated.
fn text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).expect("decode validated the strings")
}
