//! The All-Seeing Eye (Multi Theft Auto: San Andreas, Far Cry, Chaser): one request, one reply
//! datagram, over UDP on the game port + 123 (MTA: 22003 → 22126).
//!
//! - [`Request`]: the single byte `s`.
//! - [`Reply`]: `EYE1`, then nine strings: game (`mta`), game port, server name, game type, map,
//!   version, password (`0` / `1`), players, max players; the rules as key/value pairs ended by
//!   an empty key; then the players to the end of the datagram ([`Player`]), each a flags byte
//!   naming which of name, team, skin, score, ping and time follow.
//!
//! Every string is a length byte that counts itself, then the text: `04 "mta"` is `mta`, `01`
//! the empty string (declared with `len(prefix = u8, includes = 1)`). Numbers are decimal text.
//!
//! # Where real servers differ
//!
//! - Strict: a length byte of `0` (below the one byte it counts) is refused
//!   ([`ErrorKind::LengthBelowIncluded`](query_wire::ErrorKind::LengthBelowIncluded)), as is a
//!   string running past the datagram: a reply cut inside its nine fields is no status.
//! - Lenient: a reply that ends after its nine fields, or after the rules without their empty
//!   key, decodes with what it holds (a server with nothing more to say); numbers are kept as
//!   the text sent and read by the client, which tolerates spaces and junk.
//! - MTA sends every player with flags `3F` and empty team, skin, score and time; text is
//!   UTF-8 on MTA and Latin-1 on Far Cry, so it is kept as the bytes sent ([`Text`]).
//! - A string holds at most 254 bytes: a responder cuts longer text.

use query_wire::{Text, Wire};
use serde::Serialize;

/// What a game's query port adds to its game port.
pub const QUERY_PORT_OFFSET: u16 = 123;
/// The longest text one length byte can carry: 255 minus the byte itself.
pub const MAX_TEXT: usize = 254;
/// The largest reply datagram a responder should send.
pub const MAX_DATAGRAM: usize = 1400;

/// The player has a name.
pub const PLAYER_NAME: u8 = 0x01;
/// The player has a team.
pub const PLAYER_TEAM: u8 = 0x02;
/// The player has a skin.
pub const PLAYER_SKIN: u8 = 0x04;
/// The player has a score.
pub const PLAYER_SCORE: u8 = 0x08;
/// The player has a ping.
pub const PLAYER_PING: u8 = 0x10;
/// The player has a time (playing for).
pub const PLAYER_TIME: u8 = 0x20;

/// The request: `s`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Wire, Serialize)]
#[wire(magic = b"s")]
pub struct Request;

/// The reply: `EYE1`, the server's nine strings, the rules, the players.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(magic = b"EYE1")]
pub struct Reply<'a> {
    /// The game's short name: `mta`, `farcry`...
    #[wire(len(prefix = u8, includes = 1), str(rest))]
    pub game: Text<'a>,
    /// The game port, as decimal text.
    #[wire(len(prefix = u8, includes = 1), str(rest))]
    pub port: Text<'a>,
    /// The server's name.
    #[wire(len(prefix = u8, includes = 1), str(rest))]
    pub name: Text<'a>,
    /// The game type (MTA: the running gamemode).
    #[wire(len(prefix = u8, includes = 1), str(rest))]
    pub game_type: Text<'a>,
    /// The map.
    #[wire(len(prefix = u8, includes = 1), str(rest))]
    pub map: Text<'a>,
    /// The server's version.
    #[wire(len(prefix = u8, includes = 1), str(rest))]
    pub version: Text<'a>,
    /// `1` when a password is needed, `0` otherwise.
    #[wire(len(prefix = u8, includes = 1), str(rest))]
    pub password: Text<'a>,
    /// Players online, as decimal text.
    #[wire(len(prefix = u8, includes = 1), str(rest))]
    pub num_players: Text<'a>,
    /// Player slots, as decimal text.
    #[wire(len(prefix = u8, includes = 1), str(rest))]
    pub max_players: Text<'a>,
    /// The rules, ended by an empty key (the byte `01`), or by the end of the datagram.
    #[wire(until(b"\x01", or_end))]
    pub rules: Vec<Rule<'a>>,
    /// The players, to the end of the datagram.
    #[wire(until_end)]
    pub players: Vec<Player<'a>>,
}

/// One rule: a key (never empty: an empty key ends the list) and a value.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
pub struct Rule<'a> {
    /// The rule's name.
    #[wire(len(prefix = u8, includes = 1), str(rest))]
    pub key: Text<'a>,
    /// Its value.
    #[wire(len(prefix = u8, includes = 1), str(rest))]
    pub value: Text<'a>,
}

/// One player: a flags byte ([`PLAYER_NAME`]...) and the strings it names, in that order.
#[derive(Debug, Clone, PartialEq, Eq, Default, Wire, Serialize)]
pub struct Player<'a> {
    /// Which of the fields follow, as sent (written from the fields present).
    #[wire(flags)]
    pub flags: u8,
    /// The name.
    #[wire(flag(flags, PLAYER_NAME), len(prefix = u8, includes = 1), str(rest))]
    pub name: Option<Text<'a>>,
    /// The team.
    #[wire(flag(flags, PLAYER_TEAM), len(prefix = u8, includes = 1), str(rest))]
    pub team: Option<Text<'a>>,
    /// The skin.
    #[wire(flag(flags, PLAYER_SKIN), len(prefix = u8, includes = 1), str(rest))]
    pub skin: Option<Text<'a>>,
    /// The score, as decimal text.
    #[wire(flag(flags, PLAYER_SCORE), len(prefix = u8, includes = 1), str(rest))]
    pub score: Option<Text<'a>>,
    /// The ping in milliseconds, as decimal text.
    #[wire(flag(flags, PLAYER_PING), len(prefix = u8, includes = 1), str(rest))]
    pub ping: Option<Text<'a>>,
    /// How long the player has played, as text.
    #[wire(flag(flags, PLAYER_TIME), len(prefix = u8, includes = 1), str(rest))]
    pub time: Option<Text<'a>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use query_wire::{Decode, Encode, ErrorKind};

    fn text(s: &str) -> Text<'_> {
        Text::from(s)
    }

    #[test]
    fn the_length_byte_counts_itself_both_ways() {
        let reply = Reply {
            game: text("mta"),
            port: text("22003"),
            name: text("Café"),
            game_type: text(""),
            map: text("SX"),
            version: text("1.4"),
            password: text("0"),
            num_players: text("1"),
            max_players: text("32"),
            rules: vec![Rule {
                key: text("weather"),
                value: text(""),
            }],
            players: vec![Player {
                flags: 0,
                name: Some(text("Zoë")),
                ping: Some(text("54")),
                ..Player::default()
            }],
        };
        let bytes = reply.to_vec().unwrap();
        let mut expected =
            b"EYE1\x04mta\x0622003\x06Caf\xc3\xa9\x01\x03SX\x041.4\x020\x021\x0332".to_vec();
        expected.extend_from_slice(b"\x08weather\x01\x01");
        expected.extend_from_slice(b"\x11\x05Zo\xc3\xab\x0354");
        assert_eq!(bytes, expected);
        let back = Reply::from_bytes(&bytes).unwrap();
        assert_eq!(back.players[0].flags, PLAYER_NAME | PLAYER_PING);
        assert_eq!(
            back,
            Reply {
                players: vec![Player {
                    flags: 0x11,
                    ..reply.players[0].clone()
                }],
                ..reply
            }
        );
    }

    #[test]
    fn a_length_byte_of_zero_and_a_cut_string_are_refused_at_their_offset() {
        let error = Reply::from_bytes(b"EYE1\x00").unwrap_err();
        assert!(
            matches!(
                error.kind(),
                ErrorKind::LengthBelowIncluded {
                    len: 0,
                    includes: 1
                }
            ),
            "{error}"
        );
        assert_eq!(error.offset(), 4);
        let error = Reply::from_bytes(b"EYE1\x04mt").unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::UnexpectedEnd { .. }),
            "{error}"
        );
        assert!(Reply::from_bytes(b"EYE2\x04mta").is_err());
    }

    #[test]
    fn a_reply_may_end_after_its_fields_or_its_rules() {
        let fields = b"EYE1\x04mta\x0622003\x02n\x01\x02m\x01\x020\x020\x0310";
        let bare = Reply::from_bytes(fields).unwrap();
        assert!(bare.rules.is_empty() && bare.players.is_empty());
        let mut rules = fields.to_vec();
        rules.extend_from_slice(b"\x02k\x02v");
        let reply = Reply::from_bytes(&rules).unwrap();
        assert_eq!(reply.rules.len(), 1);
        assert!(reply.players.is_empty());
    }

    #[test]
    fn text_longer_than_a_length_byte_holds_is_not_written() {
        let long = "x".repeat(MAX_TEXT + 1);
        let rule = Rule {
            key: text(&long),
            value: text(""),
        };
        assert!(rule.to_vec().is_err());
        let fits = Rule {
            key: text(&long[1..]),
            value: text(""),
        };
        assert_eq!(fits.to_vec().unwrap().len(), 1 + MAX_TEXT + 1);
    }

    #[test]
    fn the_request_is_one_byte() {
        assert_eq!(Request.to_vec().unwrap(), b"s");
        assert!(Request::from_bytes(b"x").is_err());
    }
}
