//! The baseline: an SQP query response decoder with every chunk (ServerInfo, ServerRules,
//! PlayerInfo, TeamInfo, Metrics), written by hand for speed.
//!
//! Slices split as it reads, `Option` on failure (no offset or reason kept, which the derived
//! decoder's errors carry), strings checked with `str::from_utf8` and borrowed. It makes the
//! checks the derived codec makes and no others: the type byte, the packet length bounding the
//! chunks, each chunk's length bounding it (bytes left skipped as future fields, except in
//! ServerRules, which is read to its end), rule and table value kinds 0 to 5, a table with rows
//! having at least one field, at most 25 metrics, and nothing after the packet. It builds the
//! same `query_specs::sqp` value, so the two decoders differ only in how the bytes are read.
//! Each list's `Vec` is sized once: from its count, bounded by what the bytes left can hold,
//! or, for the rules, which have no count, from the size of the first.

use query_specs::sqp::{
    Chunks, FieldHeader, Metrics, QueryResponse, Response, Rule, ServerInfo, Table, Value,
    MAX_METRICS,
};

/// Decodes a server packet whose query asked for every chunk; `None` when it is malformed.
pub fn decode_response(packet: &[u8]) -> Option<Response<'_>> {
    let mut rest = packet;
    if u8(&mut rest)? != 1 {
        return None;
    }
    let challenge = u32(&mut rest)?;
    let version = u16(&mut rest)?;
    let current_packet = u8(&mut rest)?;
    let last_packet = u8(&mut rest)?;
    let packet_length = usize::from(u16(&mut rest)?);
    let mut body = take(&mut rest, packet_length)?;
    if !rest.is_empty() {
        return None;
    }
    let server_info = server_info(chunk(&mut body)?)?;
    let server_rules = rules(chunk(&mut body)?)?;
    let player_info = table(chunk(&mut body)?)?;
    let team_info = table(chunk(&mut body)?)?;
    let metrics = metrics(chunk(&mut body)?)?;
    if !body.is_empty() {
        return None;
    }
    Some(Response::Query(QueryResponse {
        challenge,
        version,
        current_packet,
        last_packet,
        chunks: Chunks {
            server_info: Some(server_info),
            server_rules: Some(server_rules),
            player_info: Some(player_info),
            team_info: Some(team_info),
            metrics: Some(metrics),
        },
    }))
}

/// A chunk: its u32 length, then that many bytes.
#[inline]
fn chunk<'a>(rest: &mut &'a [u8]) -> Option<&'a [u8]> {
    let len = usize::try_from(u32(rest)?).ok()?;
    take(rest, len)
}

#[inline]
fn server_info(mut chunk: &[u8]) -> Option<ServerInfo<'_>> {
    let current_players = u16(&mut chunk)?;
    let max_players = u16(&mut chunk)?;
    let server_name = str_u8(&mut chunk)?;
    let game_type = str_u8(&mut chunk)?;
    let build_id = str_u8(&mut chunk)?;
    let map = str_u8(&mut chunk)?;
    let port = u16(&mut chunk)?;
    Some(ServerInfo {
        current_players,
        max_players,
        server_name,
        game_type,
        build_id,
        map,
        port,
    })
}

/// Rules until the chunk ends.
#[inline]
fn rules(mut chunk: &[u8]) -> Option<Vec<Rule<'_>>> {
    let mut rules = Vec::new();
    while !chunk.is_empty() {
        let before = chunk.len();
        let key = str_u8(&mut chunk)?;
        let kind = u8(&mut chunk)?;
        let value = value(&mut chunk, kind)?;
        if rules.capacity() == 0 {
            let first = before - chunk.len();
            rules.reserve_exact(1 + chunk.len() / first);
        }
        rules.push(Rule { key, kind, value });
    }
    Some(rules)
}

#[inline]
fn table(mut chunk: &[u8]) -> Option<Table<'_>> {
    let count = u16(&mut chunk)?;
    if count == 0 {
        return Some(Table {
            count,
            fields: None,
            values: Vec::new(),
        });
    }
    let field_count = usize::from(u8(&mut chunk)?);
    if field_count == 0 {
        return None;
    }
    // A field header is at least a length byte and a kind byte.
    let mut fields = Vec::with_capacity(field_count.min(chunk.len() / 2));
    for _ in 0..field_count {
        let name = str_u8(&mut chunk)?;
        let kind = u8(&mut chunk)?;
        fields.push(FieldHeader { name, kind });
    }
    let value_count = field_count * usize::from(count);
    let mut values = Vec::with_capacity(value_count.min(chunk.len()));
    for _ in 0..count {
        for field in &fields {
            values.push(value(&mut chunk, field.kind)?);
        }
    }
    Some(Table {
        count,
        fields: Some(fields),
        values,
    })
}

#[inline]
fn metrics(mut chunk: &[u8]) -> Option<Metrics> {
    let count = usize::from(u8(&mut chunk)?);
    if count > MAX_METRICS {
        return None;
    }
    let mut values = Vec::with_capacity(count.min(chunk.len() / 4));
    for _ in 0..count {
        values.push(f32::from_bits(u32(&mut chunk)?));
    }
    Some(Metrics { values })
}

#[inline]
fn value<'a>(rest: &mut &'a [u8], kind: u8) -> Option<Value<'a>> {
    Some(match kind {
        0 => Value::Byte(u8(rest)?),
        1 => Value::U16(u16(rest)?),
        2 => Value::U32(u32(rest)?),
        3 => Value::U64(u64::from_be_bytes(array(rest)?)),
        4 => Value::Str(str_u8(rest)?),
        5 => Value::F32(f32::from_bits(u32(rest)?)),
        _ => return None,
    })
}

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
fn array<const N: usize>(rest: &mut &[u8]) -> Option<[u8; N]> {
    let (head, tail) = rest.split_first_chunk::<N>()?;
    *rest = tail;
    Some(*head)
}

#[inline]
fn u8(rest: &mut &[u8]) -> Option<u8> {
    let (&byte, tail) = rest.split_first()?;
    *rest = tail;
    Some(byte)
}

#[inline]
fn u16(rest: &mut &[u8]) -> Option<u16> {
    array(rest).map(u16::from_be_bytes)
}

#[inline]
fn u32(rest: &mut &[u8]) -> Option<u32> {
    array(rest).map(u32::from_be_bytes)
}

#[inline]
fn str_u8<'a>(rest: &mut &'a [u8]) -> Option<&'a str> {
    let len = usize::from(u8(rest)?);
    std::str::from_utf8(take(rest, len)?).ok()
}
