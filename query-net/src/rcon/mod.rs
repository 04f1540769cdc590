//! Remote console (RCON) over Source's framing: a client for Source and Minecraft servers,
//! and a server a game written in Rust can embed.
//!
//! - [`Session`] is the client's protocol, sans-I/O: authentication (the empty response some
//!   servers send before the auth response, the id `-1` of a refused password), commands
//!   whose answers are split over several packets and joined by the end marker (an empty
//!   response-value request sent after the command, which the server answers after the last
//!   part), ids matched and stale answers dropped.
//! - [`Client`] drives a session over a tokio `TcpStream`: the connect timeout and deadline
//!   of [`Options`](crate::Options), one command at a time, and [`Client::reconnect`] to
//!   connect and authenticate again after the server dropped the connection.
//! - [`server`] is the other side: [`server::Connection`] (sans-I/O), the per-address
//!   lockout of [`server::AuthGate`], and [`server::serve`], which runs a
//!   [`server::CommandHandler`] the game supplies under [`ListenerLimits`](crate::tcp::ListenerLimits).
//!
//! - [`battleye`] is BattlEye RCon (UDP; Arma, DayZ), client and server.
//!
//! The packets are declared in [`query_specs::rcon`]. [`Flavour`] picks the rules that
//! differ between Source and Minecraft servers.

mod client;
mod session;

pub mod battleye;
pub mod server;

use std::fmt;
use std::str::FromStr;

use query_specs::rcon::{
    Envelope, Packet, MINECRAFT_MAX_COMMAND, MINECRAFT_MAX_FRAGMENT, OVERHEAD, SIZE_LEN,
    SOURCE_MAX_SIZE,
};
use query_wire::Encode;

use crate::stream::{declared_frame_len, FrameLen};

pub use client::Client;
pub use session::{Reply, Session};

/// Which servers' rules a client follows: the framing is the same, the limits differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Flavour {
    /// Source and Source 2 servers (srcds), and the games that copied their RCON (Rust,
    /// ARK, Palworld, Squad, Factorio, ...): game port, usually 27015.
    Source,
    /// Minecraft Java servers (`enable-rcon`, port 25575): answers in fragments of at most
    /// 4,096 bytes, commands of at most 1,446 bytes, and an unknown request type answered
    /// with "Unknown request", which ends an answer as Source's end marker does.
    Minecraft,
}

impl Flavour {
    /// Every flavour, in the order `gsq rcon --help` lists them.
    pub const ALL: [Flavour; 2] = [Flavour::Source, Flavour::Minecraft];

    /// The name `gsq rcon` takes.
    pub fn name(self) -> &'static str {
        match self {
            Flavour::Source => "source",
            Flavour::Minecraft => "minecraft",
        }
    }

    /// The port servers listen on unless configured otherwise.
    pub fn default_port(self) -> u16 {
        match self {
            Flavour::Source => 27015,
            Flavour::Minecraft => 25575,
        }
    }

    /// The longest command body the server reads: longer commands are refused before they
    /// are sent (a Minecraft server would drop the connection; srcds ignores the packet).
    pub fn max_command(self) -> usize {
        match self {
            Flavour::Source => SOURCE_MAX_SIZE - OVERHEAD,
            Flavour::Minecraft => MINECRAFT_MAX_COMMAND,
        }
    }

    /// The largest frame (size word included) accepted from the server. Minecraft servers
    /// never send a fragment over 4,096 bytes, so a longer frame is not theirs; servers of
    /// the Source family differ (srcds splits at 4,096, others send a whole answer in one
    /// packet), so `answer_cap` (the most bytes one answer may take) bounds theirs.
    pub fn max_frame(self, answer_cap: usize) -> usize {
        let fragment = match self {
            Flavour::Source => answer_cap.max(SOURCE_MAX_SIZE - OVERHEAD),
            Flavour::Minecraft => MINECRAFT_MAX_FRAGMENT,
        };
        fragment.saturating_add(SIZE_LEN + OVERHEAD)
    }
}

impl fmt::Display for Flavour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no [`Flavour`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown RCON flavour {0:?}: expected source or minecraft")]
pub struct UnknownFlavour(pub String);

impl FromStr for Flavour {
    type Err = UnknownFlavour;

    /// `source` (or `valve`, `srcds`) and `minecraft` (or `mc`), in any case.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name.to_ascii_lowercase().as_str() {
            "source" | "valve" | "srcds" => Ok(Flavour::Source),
            "minecraft" | "mc" => Ok(Flavour::Minecraft),
            _ => Err(UnknownFlavour(name.to_owned())),
        }
    }
}

/// A console's output as text: UTF-8, invalid sequences replaced (without a copy when it is
/// valid).
pub(crate) fn lossy_text(output: Vec<u8>) -> String {
    match String::from_utf8(output) {
        Ok(text) => text,
        Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
    }
}

/// The framing of a stream of RCON packets, for a [`FrameBuffer`](crate::stream::FrameBuffer):
/// the size word says where each packet ends.
pub fn frame_len(buf: &[u8]) -> Result<FrameLen, query_wire::Error> {
    declared_frame_len::<Envelope<'_>>(buf)
}

/// The framing function's type, as the buffers of this module hold it.
pub(crate) type Framing = fn(&[u8]) -> Result<FrameLen, query_wire::Error>;

/// Appends the frame of a packet (size word, id, type, body, two NULs) to `out`.
///
/// Fails only for a body holding a NUL, which would read back cut short.
pub fn write_packet(
    out: &mut Vec<u8>,
    id: i32,
    kind: i32,
    body: &[u8],
) -> Result<(), query_wire::Error> {
    let frame = Packet::new(id, kind, body).framed();
    let start = out.len();
    out.resize(start + frame.encoded_len(()), 0);
    match frame.encode_into(&mut out[start..]) {
        Ok(_) => Ok(()),
        Err(error) => {
            out.truncate(start);
            Err(error)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flavours_parse_by_name_and_alias() {
        for flavour in Flavour::ALL {
            assert_eq!(flavour.name().parse::<Flavour>(), Ok(flavour));
        }
        assert_eq!("MC".parse::<Flavour>(), Ok(Flavour::Minecraft));
        assert_eq!("srcds".parse::<Flavour>(), Ok(Flavour::Source));
        assert!("battleye".parse::<Flavour>().is_err());
    }

    #[test]
    fn a_written_packet_is_the_wiki_layout() {
        let mut out = Vec::new();
        write_packet(&mut out, 7, 2, b"status").unwrap();
        assert_eq!(
            out,
            b"\x10\x00\x00\x00\x07\x00\x00\x00\x02\x00\x00\x00status\x00\x00"
        );
        assert!(write_packet(&mut out, 1, 2, b"a\0b").is_err());
        assert_eq!(out.len(), 20, "a refused packet leaves nothing behind");
    }

    #[test]
    fn minecraft_frames_are_capped_at_a_fragment() {
        assert_eq!(Flavour::Minecraft.max_frame(1 << 20), 4096 + 14);
        assert_eq!(Flavour::Source.max_frame(1 << 20), (1 << 20) + 14);
        assert_eq!(Flavour::Source.max_frame(0), 4096 + 4);
    }
}
