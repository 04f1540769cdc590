//! Mumble (Murmur, the Mumble server): the binary ping over UDP, port 64738 by default, on
//! the same port as the voice traffic. Big endian.
//!
//! - [`Ping`]: a zero word, then the client's ident (u64), 12 bytes in all.
//! - [`Pong`]: the server's version (`major.minor.patch`), the ident echoed, the users
//!   connected, the user slots and the bandwidth a client may use (bits per second), 24
//!   bytes in all.
//!
//! The ping carries no server name: Mumble's server list shows the name it was given. Murmur
//! answers only a datagram of exactly 12 bytes (a longer one is voice traffic); so does
//! [`Ping`]'s `from_bytes`, which refuses trailing bytes.

use query_wire::Wire;
use serde::Serialize;

/// The port Murmur answers on unless configured otherwise.
pub const DEFAULT_PORT: u16 = 64738;

/// A ping's length; Murmur ignores datagrams of another length.
pub const PING_LEN: usize = 12;

/// The client's ping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big", magic = b"\x00\x00\x00\x00")]
pub struct Ping {
    /// Any value the client chooses (a timestamp in Mumble's client), echoed in the pong.
    pub ident: u64,
}

/// The server's version, as the pong's first four bytes carry it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Wire, Serialize)]
#[wire(endian = "big")]
pub struct Version {
    /// `1` in 1.3.4.
    pub major: u16,
    /// `3` in 1.3.4.
    pub minor: u8,
    /// `4` in 1.3.4.
    pub patch: u8,
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The server's pong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big")]
pub struct Pong {
    /// The server's version.
    pub version: Version,
    /// The ping's `ident`, echoed.
    #[wire(range)]
    pub ident: u64,
    /// Users connected.
    pub users: u32,
    /// User slots (`users=` in murmur.ini).
    pub max_users: u32,
    /// The bandwidth a client may use, in bits per second (`bandwidth=`).
    pub bandwidth: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use query_wire::{Decode, Encode};

    #[test]
    fn a_murmur_pong_reads_field_by_field() {
        // Murmur 1.3.4 (Debian's mumble-server) with users=42, bandwidth=72000.
        let bytes = b"\x00\x01\x03\x04\x11\x22\x33\x44\x55\x66\x77\x88\
                      \x00\x00\x00\x00\x00\x00\x00\x2a\x00\x01\x19\x40";
        let pong = Pong::from_bytes(bytes).unwrap();
        assert_eq!(pong.version.to_string(), "1.3.4");
        assert_eq!(pong.ident, 0x1122_3344_5566_7788);
        assert_eq!(
            (pong.users, pong.max_users, pong.bandwidth),
            (0, 42, 72_000)
        );
        assert_eq!(pong.to_vec().unwrap(), bytes);
    }

    #[test]
    fn a_ping_is_exactly_twelve_bytes_starting_with_zero() {
        let ping = Ping { ident: 7 }.to_vec().unwrap();
        assert_eq!(ping.len(), PING_LEN);
        assert_eq!(Ping::from_bytes(&ping).unwrap().ident, 7);
        let mut long = ping.clone();
        long.push(0);
        assert!(Ping::from_bytes(&long).is_err());
        let mut not_zero = ping;
        not_zero[0] = 1;
        assert!(Ping::from_bytes(&not_zero).is_err());
        assert!(Ping::from_bytes(&[0; 11]).is_err());
    }
}
