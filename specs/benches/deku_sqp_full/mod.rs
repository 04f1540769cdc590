//! The SQP query response with every chunk declared with deku, as a deku user writes it, for
//! comparison with the derived decoder.
//!
//! Plainly written: strings are a `u8` length and a `Vec<u8>` (deku cannot borrow from the
//! input), not checked to be UTF-8; each chunk's `u32` length is read, and only the rules, which
//! run to the end of their chunk, are bounded by it (`bytes_read`); a table's values are read
//! column by column with the column's type code through a small reader function, since a deku
//! `Vec` gives every element the same context. So it checks less than the derived decoder
//! (UTF-8, the other chunks' lengths), which can only make it faster. The benchmark converts
//! its value to the derived types and checks that every field agrees before measuring.

use deku::ctx::Endian;
use deku::prelude::*;
use query_specs::sqp::{
    ChallengeResponse, Chunks, FieldHeader, Metrics, QueryResponse, Response, Rule, ServerInfo,
    Table, Value,
};

/// A server packet, told apart by its first byte.
// As in the specs' `Response`: boxing the query would add an allocation the others do not make.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, DekuRead)]
#[deku(id_type = "u8", endian = "big")]
#[repr(u8)]
pub enum DekuResponse {
    #[deku(id = 0)]
    Challenge { challenge: u32 },
    #[deku(id = 1)]
    Query(DekuQueryResponse),
}

/// A query response carrying every chunk.
#[derive(Debug, Clone, PartialEq, DekuRead)]
#[deku(ctx = "endian: Endian", endian = "endian")]
pub struct DekuQueryResponse {
    pub challenge: u32,
    pub version: u16,
    pub current_packet: u8,
    pub last_packet: u8,
    pub packet_length: u16,
    pub server_info_length: u32,
    pub server_info: DekuServerInfo,
    pub rules_length: u32,
    #[deku(bytes_read = "*rules_length as usize")]
    pub rules: Vec<DekuRule>,
    pub players_length: u32,
    pub players: DekuTable,
    pub teams_length: u32,
    pub teams: DekuTable,
    pub metrics_length: u32,
    pub metric_count: u8,
    #[deku(count = "metric_count")]
    pub metrics: Vec<f32>,
}

/// A `u8`-length string, as bytes.
#[derive(Debug, Clone, PartialEq, DekuRead)]
#[deku(ctx = "endian: Endian", endian = "endian")]
pub struct DekuString {
    pub len: u8,
    #[deku(count = "len")]
    pub bytes: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, DekuRead)]
#[deku(ctx = "endian: Endian", endian = "endian")]
pub struct DekuServerInfo {
    pub current_players: u16,
    pub max_players: u16,
    pub server_name: DekuString,
    pub game_type: DekuString,
    pub build_id: DekuString,
    pub map: DekuString,
    pub port: u16,
}

#[derive(Debug, Clone, PartialEq, DekuRead)]
#[deku(ctx = "endian: Endian", endian = "endian")]
pub struct DekuRule {
    pub key: DekuString,
    pub kind: u8,
    #[deku(ctx = "*kind")]
    pub value: DekuValue,
}

/// A value typed by a code that comes from outside it (the rule or the column header).
#[derive(Debug, Clone, PartialEq, DekuRead)]
#[deku(ctx = "endian: Endian, kind: u8", id = "kind", endian = "endian")]
pub enum DekuValue {
    #[deku(id = 0)]
    Byte(u8),
    #[deku(id = 1)]
    U16(u16),
    #[deku(id = 2)]
    U32(u32),
    #[deku(id = 3)]
    U64(u64),
    #[deku(id = 4)]
    Str(DekuString),
    #[deku(id = 5)]
    F32(f32),
}

#[derive(Debug, Clone, PartialEq, DekuRead)]
#[deku(ctx = "endian: Endian", endian = "endian")]
pub struct DekuFieldHeader {
    pub name: DekuString,
    pub kind: u8,
}

/// PlayerInfo and TeamInfo: `count` rows of one value per column.
#[derive(Debug, Clone, PartialEq, DekuRead)]
#[deku(ctx = "endian: Endian", endian = "endian")]
pub struct DekuTable {
    pub count: u16,
    #[deku(cond = "*count > 0", default = "0")]
    pub field_count: u8,
    #[deku(count = "field_count")]
    pub fields: Vec<DekuFieldHeader>,
    #[deku(reader = "read_values(deku::reader, endian, fields, *count)")]
    pub values: Vec<DekuValue>,
}

/// `rows` rows of values, each typed by its column's header.
fn read_values<R: std::io::Read + std::io::Seek>(
    reader: &mut deku::reader::Reader<R>,
    endian: Endian,
    fields: &[DekuFieldHeader],
    rows: u16,
) -> Result<Vec<DekuValue>, DekuError> {
    let mut values = Vec::with_capacity(usize::from(rows) * fields.len());
    for _ in 0..rows {
        for field in fields {
            values.push(DekuValue::from_reader_with_ctx(
                reader,
                (endian, field.kind),
            )?);
        }
    }
    Ok(values)
}

/// Decodes a whole packet; bytes after it are an error.
pub fn decode(packet: &[u8]) -> Result<DekuResponse, DekuError> {
    let ((rest, _bit_offset), response) = DekuResponse::from_bytes((packet, 0))?;
    if !rest.is_empty() {
        return Err(DekuError::Parse("trailing bytes".into()));
    }
    Ok(response)
}

impl DekuResponse {
    /// The value as the derived types hold it, to compare the decoders' results; `None` when a
    /// string is not UTF-8, which the derived types cannot hold (and the derived decoder
    /// refuses).
    pub fn to_response(&self) -> Option<Response<'_>> {
        let q = match self {
            DekuResponse::Challenge { challenge } => {
                return Some(Response::Challenge(ChallengeResponse {
                    challenge: *challenge,
                }))
            }
            DekuResponse::Query(q) => q,
        };
        let info = &q.server_info;
        let rules = q
            .rules
            .iter()
            .map(|rule| {
                Some(Rule {
                    key: rule.key.text()?,
                    kind: rule.kind,
                    value: rule.value.to_value()?,
                })
            })
            .collect::<Option<_>>()?;
        Some(Response::Query(QueryResponse {
            challenge: q.challenge,
            version: q.version,
            current_packet: q.current_packet,
            last_packet: q.last_packet,
            chunks: Chunks {
                server_info: Some(ServerInfo {
                    current_players: info.current_players,
                    max_players: info.max_players,
                    server_name: info.server_name.text()?,
                    game_type: info.game_type.text()?,
                    build_id: info.build_id.text()?,
                    map: info.map.text()?,
                    port: info.port,
                }),
                server_rules: Some(rules),
                player_info: Some(q.players.to_table()?),
                team_info: Some(q.teams.to_table()?),
                metrics: Some(Metrics {
                    values: q.metrics.clone(),
                }),
            },
        }))
    }
}

impl DekuString {
    fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }
}

impl DekuValue {
    fn to_value(&self) -> Option<Value<'_>> {
        Some(match self {
            DekuValue::Byte(v) => Value::Byte(*v),
            DekuValue::U16(v) => Value::U16(*v),
            DekuValue::U32(v) => Value::U32(*v),
            DekuValue::U64(v) => Value::U64(*v),
            DekuValue::Str(s) => Value::Str(s.text()?),
            DekuValue::F32(v) => Value::F32(*v),
        })
    }
}

impl DekuTable {
    fn to_table(&self) -> Option<Table<'_>> {
        let fields = self
            .fields
            .iter()
            .map(|f| {
                Some(FieldHeader {
                    name: f.name.text()?,
                    kind: f.kind,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Table {
            count: self.count,
            fields: (self.count > 0).then_some(fields),
            values: self
                .values
                .iter()
                .map(DekuValue::to_value)
                .collect::<Option<_>>()?,
        })
    }
}
