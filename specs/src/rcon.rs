//! Source RCON (TCP; Source and Source 2 servers on the game port, and the many games that
//! copied it: Rust, ARK, Palworld, Squad, Factorio...), and Minecraft RCON (TCP 25575), which
//! uses the same framing. Little-endian.
//!
//! A packet is its size (an `i32` that counts the bytes after it), an `i32` id the answers
//! echo, an `i32` type, the body, a NUL that ends it, and an empty string (one more NUL).
//! Types: [`SERVERDATA_AUTH`] (the password), [`SERVERDATA_AUTH_RESPONSE`] (the answer, its
//! id `-1` when the password is refused), [`SERVERDATA_EXECCOMMAND`] (a console command, the
//! same number as the auth response) and [`SERVERDATA_RESPONSE_VALUE`] (a command's output).
//!
//! Strict where a mistake would mislead: the size must cover the id, the type and a
//! NUL-terminated body, or the packet is refused. Lenient where servers differ harmlessly:
//! what follows the body's NUL is kept as [`Packet::trailer`] (one NUL by the protocol; the
//! packet srcds sends after an answer's end marker holds `00 01 00 00` there, and some
//! servers leave the second NUL out). A negative size reads as one over 2 GiB, which every
//! frame cap refuses.

use query_wire::Wire;

/// The client's password: answered by an empty [`SERVERDATA_RESPONSE_VALUE`] (srcds only),
/// then a [`SERVERDATA_AUTH_RESPONSE`].
pub const SERVERDATA_AUTH: i32 = 3;
/// The server's answer to [`SERVERDATA_AUTH`]: the request's id if the password was right,
/// [`AUTH_REFUSED_ID`] if not.
pub const SERVERDATA_AUTH_RESPONSE: i32 = 2;
/// A console command from the client (the same number as [`SERVERDATA_AUTH_RESPONSE`]: the
/// direction tells them apart).
pub const SERVERDATA_EXECCOMMAND: i32 = 2;
/// Output of a command, from the server; from the client, the empty request whose echo
/// marks the end of a split answer.
pub const SERVERDATA_RESPONSE_VALUE: i32 = 0;
/// The id of an auth response that refuses the password.
pub const AUTH_REFUSED_ID: i32 = -1;
/// Bytes the size counts besides the body: the id, the type and the two NULs.
pub const OVERHEAD: usize = 10;
/// Bytes of the size word in front of every packet.
pub const SIZE_LEN: usize = 4;
/// The largest size srcds sends or accepts (id, type, body and NULs): longer answers are
/// split over several packets.
pub const SOURCE_MAX_SIZE: usize = 4096;
/// The longest body of one Minecraft answer packet: longer answers come in fragments.
pub const MINECRAFT_MAX_FRAGMENT: usize = 4096;
/// The longest command body a Minecraft server reads (its packets are at most 1,460 bytes).
pub const MINECRAFT_MAX_COMMAND: usize = 1446;
/// What a normal packet holds after its body's NUL: the empty string's NUL.
pub const TRAILER: &[u8] = b"\0";

/// One packet with its size word: what travels on the stream.
#[derive(Debug, Clone, PartialEq, Eq, Wire)]
#[wire(endian = "little")]
pub struct Frame<'a> {
    /// The packet, behind its size (computed on encode, bounding the decode).
    #[wire(len(prefix = u32))]
    pub packet: Packet<'a>,
}

/// The packet a size word counts: id, type, body, and what follows the body's NUL.
#[derive(Debug, Clone, PartialEq, Eq, Wire)]
#[wire(endian = "little")]
pub struct Packet<'a> {
    /// Chosen by the client, echoed by the server's answers.
    pub id: i32,
    /// One of the `SERVERDATA_*` types.
    pub kind: i32,
    /// The password, the command or the output: bytes up to a NUL (servers send UTF-8, but
    /// not always).
    #[wire(bytes(nul))]
    pub body: &'a [u8],
    /// The bytes after the body's NUL: [`TRAILER`] by the protocol.
    #[wire(bytes(rest))]
    pub trailer: &'a [u8],
}

/// Just the size word and the bytes it counts: where one frame ends on the stream, before
/// the packet in it is decoded.
#[derive(Debug, Clone, PartialEq, Eq, Wire)]
#[wire(endian = "little")]
pub struct Envelope<'a> {
    /// The bytes the size counts.
    #[wire(bytes(prefix = u32))]
    pub payload: &'a [u8],
}

impl<'a> Packet<'a> {
    /// A packet of `kind` with `body`, ended as the protocol says.
    pub fn new(id: i32, kind: i32, body: &'a [u8]) -> Self {
        Packet {
            id,
            kind,
            body,
            trailer: TRAILER,
        }
    }

    /// The packet in its frame, ready to encode.
    pub fn framed(self) -> Frame<'a> {
        Frame { packet: self }
    }
}
