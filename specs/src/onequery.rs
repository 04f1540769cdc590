//! Hytale OneQuery V2, little-endian (UUID halves excepted).
//!
//! Requests start `ONEQUERY`, replies `ONEREPLY`. A client asks for a 32-byte challenge token
//! (`ONEQUERY 00`), then sends BASIC (`01`) or PLAYERS (`02`) queries carrying the token, a
//! request id the server echoes, flags, a player offset for paging and, with
//! [`RequestFlags::HAS_AUTH_TOKEN`], an auth token. Replies carry a header with flags, the request
//! id and a u16 payload length, then TLV entries: SERVER_INFO (`1`) and PLAYER_LIST (`2`).
//! Strings are a u16 length and UTF-8.
//!
//! Where this follows the notes rather than the document:
//! - Byte 8 of a reply tells the 48-byte challenge reply (`00`) from a query reply (`01`, the
//!   protocol version): [`ReplyBody`] dispatches on it.
//! - UUIDs in PLAYER_LIST are two 8-byte halves written **big-endian** by the reference server,
//!   although the document says little-endian throughout.
//! - With FLAG_AUTH_REQUIRED the reply still carries a full SERVER_INFO, even for PLAYERS.
//! - FLAG_HAS_ADDRESS appends host and port to SERVER_INFO, so [`Payload`] is decoded with the
//!   reply's flags as context.
//! - A second server family uses `HYQUERY2` / `HYREPLY2` with the same layout ([`Family`]);
//!   servers answer in the family they were asked in.
//! - Clients always send the full 51-byte query layout: some servers drop shorter queries.
//! - Player counts in PLAYER_LIST are declared unsigned: a negative count has no meaning, and
//!   the wire bytes are the same.

use query_wire::{bitflags, Reserved, Uuid, Wire};
use serde::Serialize;

/// `ONEQUERY` as a big-endian u64, the tag of [`Family::OneQuery`] requests.
pub const MAGIC_ONEQUERY: u64 = 0x4f4e_4551_5545_5259;
/// `ONEREPLY` as a big-endian u64.
pub const MAGIC_ONEREPLY: u64 = 0x4f4e_4552_4550_4c59;
/// `HYQUERY2` as a big-endian u64.
pub const MAGIC_HYQUERY2: u64 = 0x4859_5155_4552_5932;
/// `HYREPLY2` as a big-endian u64.
pub const MAGIC_HYREPLY2: u64 = 0x4859_5245_504c_5932;

/// Query type byte of a challenge request.
pub const KIND_CHALLENGE: u8 = 0x00;
/// Query type byte of a BASIC query.
pub const KIND_BASIC: u8 = 0x01;
/// Query type byte of a PLAYERS query.
pub const KIND_PLAYERS: u8 = 0x02;

/// The protocol version byte of a query reply.
pub const PROTOCOL_VERSION: u8 = 0x01;
/// The most a datagram may carry.
pub const MAX_DATAGRAM: usize = 1400;
/// Size of a challenge token.
pub const TOKEN_LEN: usize = 32;

/// Request magic: which of the two server families the query is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Wire, Serialize)]
#[wire(endian = "big", tag = u64)]
pub enum Family {
    /// `ONEQUERY` / `ONEREPLY`.
    #[wire(tag = MAGIC_ONEQUERY)]
    OneQuery,
    /// `HYQUERY2` / `HYREPLY2`.
    #[wire(tag = MAGIC_HYQUERY2)]
    HyQuery2,
}

/// Reply magic, the counterpart of [`Family`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Wire, Serialize)]
#[wire(endian = "big", tag = u64)]
pub enum ReplyFamily {
    /// `ONEREPLY`.
    #[wire(tag = MAGIC_ONEREPLY)]
    OneReply,
    /// `HYREPLY2`.
    #[wire(tag = MAGIC_HYREPLY2)]
    HyReply2,
}

impl Family {
    /// The magic a server answers this family with.
    pub fn reply(self) -> ReplyFamily {
        match self {
            Family::OneQuery => ReplyFamily::OneReply,
            Family::HyQuery2 => ReplyFamily::HyReply2,
        }
    }
}

bitflags! {
    /// Flags of a query request.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
    #[serde(transparent)]
    pub struct RequestFlags: u16 {
        /// An auth token follows the offset.
        const HAS_AUTH_TOKEN = 0x0001;
    }
}

bitflags! {
    /// Flags of a query reply.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
    #[serde(transparent)]
    pub struct ReplyFlags: u16 {
        /// More players follow: ask again from `offset + players received`.
        const HAS_MORE_PLAYERS = 0x0001;
        /// The endpoint needs an auth token this request did not carry or that lacks permission.
        const AUTH_REQUIRED = 0x0002;
        /// Counts are aggregated over a network of servers.
        const IS_NETWORK = 0x0010;
        /// SERVER_INFO ends with host and port.
        const HAS_ADDRESS = 0x0020;
    }
}

/// Every packet a client sends.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct Request<'a> {
    /// `ONEQUERY` or `HYQUERY2`.
    pub family: Family,
    /// [`KIND_CHALLENGE`], [`KIND_BASIC`] or [`KIND_PLAYERS`]; servers answer other kinds as BASIC.
    pub kind: u8,
    /// Everything after the type byte, absent in a challenge request.
    #[wire(when = *kind != KIND_CHALLENGE)]
    pub query: Option<Query<'a>>,
}

/// The body of a BASIC or PLAYERS query.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct Query<'a> {
    /// The token from the challenge reply.
    pub token: [u8; TOKEN_LEN],
    /// Echoed in the reply, so the client can match it.
    pub request_id: u32,
    /// See [`RequestFlags`].
    #[wire(bits)]
    pub flags: RequestFlags,
    /// First player to list, for paging.
    pub offset: u32,
    /// A shared secret granting access to non-public endpoints.
    #[wire(when = flags.contains(RequestFlags::HAS_AUTH_TOKEN), str(prefix = u16))]
    pub auth_token: Option<&'a str>,
}

/// Every packet a server sends.
#[derive(Debug, Clone, PartialEq, Wire, Serialize)]
#[wire(endian = "little", view = ReplyView)]
pub struct Reply<'a> {
    /// `ONEREPLY` or `HYREPLY2`, the family the request used.
    pub family: ReplyFamily,
    /// A challenge or a query reply.
    #[wire(view)]
    pub body: ReplyBody<'a>,
}

/// Where a query reply's request id sits in a [`Reply`] datagram: after the magic, the type
/// byte and the flags.
pub const QUERY_REPLY_ID_RANGE: std::ops::Range<usize> = {
    let Some(family) = <ReplyFamily as query_wire::Encode>::FIXED_LEN else {
        panic!("the reply magic has a fixed width");
    };
    let start = family + ReplyBody::TAG_RANGE.end + QueryReply::REQUEST_ID_RANGE.start;
    start..start + (QueryReply::REQUEST_ID_RANGE.end - QueryReply::REQUEST_ID_RANGE.start)
};

/// What follows the magic, told apart by byte 8.
#[derive(Debug, Clone, PartialEq, Wire, Serialize)]
#[wire(endian = "little", tag = u8, view = ReplyBodyView)]
pub enum ReplyBody<'a> {
    /// `00`: the 48-byte challenge reply.
    #[wire(tag = 0)]
    Challenge(ChallengeReply),
    /// `01` ([`PROTOCOL_VERSION`]): a query reply.
    #[wire(tag = 1)]
    Query(#[wire(view)] QueryReply<'a>),
}

/// The token to send with queries, valid for the client's IP address only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct ChallengeReply {
    /// Opaque to the client.
    pub token: [u8; TOKEN_LEN],
    /// Seven zero bytes.
    pub reserved: Reserved<7>,
}

/// A BASIC or PLAYERS reply.
#[derive(Debug, Clone, PartialEq, Wire, Serialize)]
#[wire(endian = "little", view = QueryReplyView)]
pub struct QueryReply<'a> {
    /// See [`ReplyFlags`].
    #[wire(bits)]
    pub flags: ReplyFlags,
    /// The request's id.
    #[wire(range)]
    pub request_id: u32,
    /// TLV entries behind a u16 payload length.
    #[wire(len(prefix = u16), until_end, ctx = *flags, view)]
    pub payload: Vec<Payload<'a>>,
}

/// One TLV entry of a reply payload.
#[derive(Debug, Clone, PartialEq, Wire, Serialize)]
#[wire(
    endian = "little",
    tag = u16,
    len = u16,
    surplus = "skip",
    ctx(flags: ReplyFlags),
    view = PayloadView
)]
pub enum Payload<'a> {
    /// `0x0001`, answers BASIC.
    #[wire(tag = 1)]
    ServerInfo(#[wire(ctx = flags)] ServerInfo<'a>),
    /// `0x0002`, answers PLAYERS.
    #[wire(tag = 2)]
    PlayerList(#[wire(view)] PlayerList<'a>),
    /// A type this version does not know, kept as raw bytes.
    #[wire(other)]
    Unknown(u16, &'a [u8]),
}

/// The server's description.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little", ctx(flags: ReplyFlags))]
pub struct ServerInfo<'a> {
    /// The server's name.
    #[wire(str(prefix = u16))]
    pub server_name: &'a str,
    /// Message of the day.
    #[wire(str(prefix = u16))]
    pub motd: &'a str,
    /// Players online (network-wide with [`ReplyFlags::IS_NETWORK`]).
    pub player_count: i32,
    /// Player slots.
    pub max_players: i32,
    /// Server version.
    #[wire(str(prefix = u16))]
    pub version: &'a str,
    /// Game protocol version.
    pub protocol_version: i32,
    /// Game protocol hash.
    #[wire(str(prefix = u16))]
    pub protocol_hash: &'a str,
    /// The address players connect to, with [`ReplyFlags::HAS_ADDRESS`].
    #[wire(when = flags.contains(ReplyFlags::HAS_ADDRESS), str(prefix = u16))]
    pub host: Option<&'a str>,
    /// The port players connect to, with [`ReplyFlags::HAS_ADDRESS`].
    #[wire(when = flags.contains(ReplyFlags::HAS_ADDRESS))]
    pub port: Option<u16>,
}

/// One page of the player list.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little", view = PlayerListView)]
pub struct PlayerList<'a> {
    /// Players across all pages.
    pub total: u32,
    /// Players on this page: written from `players`, and checked against them.
    #[wire(computed = players.count())]
    pub count: u32,
    /// Index of this page's first player.
    pub offset: u32,
    /// This page's players.
    #[wire(count = *count as usize, max_count = 1400)]
    pub players: Vec<Player<'a>>,
}

/// A player on a [`PlayerList`] page.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct Player<'a> {
    /// The player's name.
    #[wire(str(prefix = u16))]
    pub username: &'a str,
    /// The player's account id, halves big-endian as the reference server writes them.
    #[wire(endian = "big")]
    pub uuid: Uuid,
}

#[cfg(test)]
mod tests {
    use super::*;
    use query_wire::Encode;

    #[test]
    fn magics_are_their_ascii_and_the_reply_id_sits_after_type_and_flags() {
        assert_eq!(Family::OneQuery.to_vec().unwrap(), b"ONEQUERY");
        assert_eq!(Family::HyQuery2.to_vec().unwrap(), b"HYQUERY2");
        assert_eq!(ReplyFamily::OneReply.to_vec().unwrap(), b"ONEREPLY");
        assert_eq!(ReplyFamily::HyReply2.to_vec().unwrap(), b"HYREPLY2");
        // The magic (8), the type byte (1) and the flags (2).
        assert_eq!(QUERY_REPLY_ID_RANGE, 11..15);
    }
}
