//! The baseline: a decoder of SA:MP's detailed player list (`d`) written by hand for speed.
//!
//! Slices split as it reads, `Option` on failure (no offset or reason kept, which the derived
//! decoder's errors carry), little-endian numbers from fixed-size arrays, names borrowed. It
//! makes the checks the derived codec makes and no others: the `SAMP` magic, the `d` opcode,
//! the u16 row count, each row's u8-length name inside the datagram, and nothing after the last
//! row. Names are not validated, as the derived `Text` is not. It builds the same
//! `query_specs::samp::Reply` value, so the two decoders differ only in how the bytes are read.
//! Its one allocation is the rows' `Vec`, sized from the count, bounded by the rows the bytes
//! left can hold (a lying count must not reserve memory), as the derived one's is.

use query_specs::samp::{Header, Player, Reply, ReplyBody, MAGIC, OP_PLAYERS};
use query_wire::Text;

/// The shortest row: id, an empty name's length byte, score, ping.
const MIN_ROW: usize = 1 + 1 + 4 + 4;

/// Decodes a whole `d` reply datagram; `None` when it is malformed.
pub fn decode_players(datagram: &[u8]) -> Option<Reply<'_>> {
    let (head, mut rest) = datagram.split_first_chunk::<11>()?;
    let [m0, m1, m2, m3, a0, a1, a2, a3, p0, p1, opcode] = *head;
    if [m0, m1, m2, m3] != *MAGIC || opcode != OP_PLAYERS {
        return None;
    }
    let (count, tail) = rest.split_first_chunk::<2>()?;
    rest = tail;
    let count = usize::from(u16::from_le_bytes(*count));
    let mut players = Vec::with_capacity(count.min(rest.len() / MIN_ROW));
    for _ in 0..count {
        let (&id, tail) = rest.split_first()?;
        let (&len, tail) = tail.split_first()?;
        let len = usize::from(len);
        if tail.len() < len {
            return None;
        }
        let (name, tail) = tail.split_at(len);
        let (numbers, tail) = tail.split_first_chunk::<8>()?;
        rest = tail;
        let [s0, s1, s2, s3, q0, q1, q2, q3] = *numbers;
        players.push(Player {
            id,
            name: Text::from_bytes(name),
            score: i32::from_le_bytes([s0, s1, s2, s3]),
            ping: u32::from_le_bytes([q0, q1, q2, q3]),
        });
    }
    if !rest.is_empty() {
        return None;
    }
    Some(Reply {
        header: Header {
            address: [a0, a1, a2, a3],
            port: u16::from_le_bytes([p0, p1]),
            opcode,
        },
        body: ReplyBody::Players(players),
    })
}
