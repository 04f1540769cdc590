//! Minecraft Java Edition server list ping (1.7 and later), over TCP on the game port (25565).
//!
//! Every packet is framed by a VarInt length of what follows, then a VarInt packet id, then
//! the body. Strings are a VarInt byte length and UTF-8; integers are big-endian. The ids are
//! reused across connection states and directions, so each state and direction has a type of
//! its own:
//!
//! - [`HandshakeFrame`]: the client's first packet, [`Handshaking::Handshake`] (id 0) with
//!   [`NEXT_STATE_STATUS`];
//! - [`StatusRequestFrame`]: then [`StatusServerbound::Request`] (id 0, empty) and
//!   [`StatusServerbound::Ping`] (id 1, a number the server echoes);
//! - [`StatusResponseFrame`]: the server's [`StatusClientbound::Response`] (id 0, a JSON
//!   document) and [`StatusClientbound::Pong`] (id 1, the echo).
//!
//! Strict where the public description is: VarInts longer than 5 bytes, overlong ones and
//! negative lengths are refused (a server never sends them, so such bytes are not Minecraft's).
//! Lenient where servers differ harmlessly: the JSON is kept as text for the caller to parse
//! (servers add fields), and the handshake's protocol version is any `i32` (`-1` by convention
//! when a client pings to find the version).

use query_wire::Wire;
use serde::Serialize;

/// The default game port.
pub const DEFAULT_PORT: u16 = 25565;
/// [`Handshake::next_state`]: the status state, where the ping happens.
pub const NEXT_STATE_STATUS: i32 = 1;
/// [`Handshake::next_state`]: the login state.
pub const NEXT_STATE_LOGIN: i32 = 2;
/// The longest server address a server reads, in bytes: 255 characters of at most 3 bytes.
pub const MAX_ADDRESS_BYTES: usize = 255 * 3;
/// The longest status JSON, in bytes: 32767 characters of at most 3 bytes.
pub const MAX_JSON_BYTES: usize = 32767 * 3;

/// The handshake's fields: which version the client speaks, how it addressed the server, and
/// the state it asks for.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big")]
pub struct Handshake<'a> {
    /// The protocol version number the client would connect with (`-1` when it does not
    /// know).
    #[wire(varint)]
    pub protocol_version: i32,
    /// The host name or address the client connected to.
    #[wire(str(prefix = varint, max = MAX_ADDRESS_BYTES))]
    pub server_address: &'a str,
    /// The port the client connected to.
    pub server_port: u16,
    /// [`NEXT_STATE_STATUS`] for a ping, [`NEXT_STATE_LOGIN`] to log in.
    #[wire(varint)]
    pub next_state: i32,
}

/// The packets of the handshaking state, client to server.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big", tag = varint)]
pub enum Handshaking<'a> {
    #[wire(tag = 0)]
    Handshake(Handshake<'a>),
}

/// The packets of the status state, client to server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big", tag = varint)]
pub enum StatusServerbound {
    /// Asks for the status JSON.
    #[wire(tag = 0)]
    Request,
    /// A number the server echoes in a [`StatusClientbound::Pong`] (clients send the time).
    #[wire(tag = 1)]
    Ping { payload: i64 },
}

/// The packets of the status state, server to client.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big", tag = varint)]
pub enum StatusClientbound<'a> {
    /// The status: version, players, description, favicon, as JSON text.
    #[wire(tag = 0)]
    Response {
        #[wire(str(prefix = varint, max = MAX_JSON_BYTES))]
        json: &'a str,
    },
    /// The echo of a [`StatusServerbound::Ping`].
    #[wire(tag = 1)]
    Pong { payload: i64 },
}

/// A handshaking packet with its length.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
pub struct HandshakeFrame<'a> {
    #[wire(len(prefix = varint))]
    pub packet: Handshaking<'a>,
}

/// A status packet from the client with its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
pub struct StatusRequestFrame {
    #[wire(len(prefix = varint))]
    pub packet: StatusServerbound,
}

/// A status packet from the server with its length.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
pub struct StatusResponseFrame<'a> {
    #[wire(len(prefix = varint))]
    pub packet: StatusClientbound<'a>,
}

/// The longest frame a reader accepts: the VarInt length (3 bytes for this size), the id and
/// the longest status JSON with its own VarInt length.
pub const MAX_FRAME: usize = 3 + 1 + 3 + MAX_JSON_BYTES;

/// Any frame, its packet left as bytes: what a stream reader decodes to learn a frame's size
/// from its VarInt length before the packet has arrived, whatever the state and direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
pub struct RawFrame<'a> {
    /// The packet id and body.
    #[wire(bytes(prefix = varint))]
    pub packet: &'a [u8],
}
