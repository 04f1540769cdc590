//! BattlEye RCon (UDP; Arma 2 and 3, DayZ): remote console packets, little-endian.
//!
//! Every packet is `B` `E`, a CRC32 (IEEE, little-endian) of every byte after it, `0xFF`,
//! then a type byte and its payload:
//!
//! - `0x00` login: the client sends the password; the server answers with one byte, `1`
//!   accepted or `0` refused, which this declaration keeps as the payload's bytes;
//! - `0x01` command: a sequence number (0 to 255, wrapping) and the command; the server
//!   answers with the same sequence and the output, which a long answer splits into parts that
//!   start with `0x00`, the part count and the part's index;
//! - `0x02` server message: a sequence number and a console message, which the client must
//!   acknowledge with the same sequence and nothing after it.
//!
//! Strict: a packet whose checksum does not match is refused (a forged or damaged datagram
//! must not pass for the server's answer). Text is kept as the bytes the server sent
//! ([`Text`]): servers send the console's bytes, not always UTF-8.

use query_wire::{Text, Wire};

/// The byte after the checksum of every packet.
pub const MARKER: u8 = 0xff;
/// The login type.
pub const TYPE_LOGIN: u8 = 0x00;
/// The command type.
pub const TYPE_COMMAND: u8 = 0x01;
/// The server message type.
pub const TYPE_SERVER_MESSAGE: u8 = 0x02;

/// One RCon packet, in either direction.
#[derive(Debug, Clone, PartialEq, Eq, Wire)]
#[wire(endian = "little", magic = b"BE", view = PacketView)]
pub struct Packet<'a> {
    /// The CRC32 of every byte after it: verified on decode, computed on encode (what the
    /// field holds is not written).
    #[wire(crc32(after))]
    pub checksum: u32,
    #[wire(view)]
    pub payload: Payload<'a>,
}

/// What follows the checksum: the `0xFF` marker, the type, its payload.
#[derive(Debug, Clone, PartialEq, Eq, Wire)]
#[wire(endian = "little", magic = b"\xff", tag = u8)]
pub enum Payload<'a> {
    /// From the client, the password; from the server, `1` (accepted) or `0` (refused).
    #[wire(tag = 0x00)]
    Login {
        #[wire(str(rest))]
        password: Text<'a>,
    },
    /// A console command, or the server's answer to it (a part header first when the answer
    /// is split).
    #[wire(tag = 0x01)]
    Command {
        sequence: u8,
        #[wire(str(rest))]
        command: Text<'a>,
    },
    /// A console message from the server, or the client's acknowledgement (empty).
    #[wire(tag = 0x02)]
    ServerMessage {
        sequence: u8,
        #[wire(str(rest))]
        message: Text<'a>,
    },
}

/// The port Arma 2 and 3 and DayZ servers listen for RCon on unless `RConPort` says
/// otherwise: the game port, 2302 by default.
pub const DEFAULT_PORT: u16 = 2302;

/// How long a server keeps a logged-in client that sends nothing: clients send an empty
/// command before it passes.
pub const SERVER_IDLE_CUTOFF_SECS: u64 = 45;

/// The first byte of a command answer that the server split into parts.
pub const PART_MARKER: u8 = 0x00;

/// One part of a split command answer (the text of a [`Payload::Command`] from the server):
/// `0x00`, how many parts the answer has, this part's index from 0, then its share of the
/// output. An answer whose text does not start with `0x00` came whole.
///
/// The client refuses a count of 0 or an index past the count (no answer can be completed
/// from such a part).
#[derive(Debug, Clone, PartialEq, Eq, Wire)]
#[wire(magic = b"\x00")]
pub struct Part<'a> {
    /// How many parts the answer has, 1 to 255.
    pub count: u8,
    /// This part's index, below `count`.
    pub index: u8,
    /// This part's share of the output.
    #[wire(bytes(rest))]
    pub body: &'a [u8],
}

/// The bytes a [`Part`] header takes.
pub const PART_HEADER_LEN: usize = 3;
