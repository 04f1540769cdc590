//! Frostbite RCON (TCP; Battlefield 3, 4 and Hardline on 47200, Bad Company 2 on 48888),
//! little-endian.
//!
//! A packet is a 12-byte header, then words. The header is a sequence word (bit 31: the
//! packet comes from the server; bit 30: it is a response; the low 30 bits: the sequence
//! number), the packet's total size, which counts the header, and the number of words. A word
//! is its length, its bytes, and a NUL that the length does not count. Requests are words
//! such as `serverInfo`, `version`, `listPlayers all`; an answer's first word is `OK` or an
//! error.
//!
//! Strict where a mistake would mislead: the size must cover exactly the header and the
//! words, and each word's length must be the length of the text before its NUL, so a stream
//! that lost its framing is refused rather than read from the wrong place. Text is kept as
//! the bytes sent ([`Text`]).

use query_wire::{Text, Wire};

/// The header's length: sequence, size and word count.
pub const HEADER_LEN: usize = 12;
/// The bytes of the header before the word count (sequence and size), which the size counts
/// besides the words.
pub const SIZE_COUNTS_BEFORE_COUNT: usize = 8;
/// Bit of [`Packet::sequence`]: the packet comes from the server.
pub const FROM_SERVER: u32 = 1 << 31;
/// Bit of [`Packet::sequence`]: the packet is a response.
pub const IS_RESPONSE: u32 = 1 << 30;
/// The sequence number's bits of [`Packet::sequence`].
pub const SEQUENCE_MASK: u32 = (1 << 30) - 1;

/// One packet, in either direction.
#[derive(Debug, Clone, PartialEq, Eq, Wire)]
#[wire(endian = "little")]
pub struct Packet<'a> {
    /// [`FROM_SERVER`], [`IS_RESPONSE`] and the sequence number.
    pub sequence: u32,
    /// The words, behind the packet's total size (which counts the whole header) and their
    /// count.
    #[wire(
        len(prefix = u32, includes = SIZE_COUNTS_BEFORE_COUNT),
        count(prefix = u32)
    )]
    pub words: Vec<Word<'a>>,
}

/// One word: its length, its text, a NUL.
#[derive(Debug, Clone, PartialEq, Eq, Wire)]
#[wire(endian = "little")]
pub struct Word<'a> {
    /// The text's length, without the NUL: checked on decode, written on encode.
    #[wire(computed = text.as_bytes().len())]
    pub size: u32,
    #[wire(str(nul))]
    pub text: Text<'a>,
}

impl<'a> Word<'a> {
    /// A word of these bytes (the size is computed when it is encoded).
    pub fn new(text: &'a [u8]) -> Self {
        Word {
            size: u32::try_from(text.len()).unwrap_or(u32::MAX),
            text: Text::from_bytes(text),
        }
    }
}

/// The first two words of a header: the sequence word and the packet's total size. Enough to
/// know where a packet ends before its words arrive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire)]
#[wire(endian = "little")]
pub struct Header {
    /// [`FROM_SERVER`], [`IS_RESPONSE`] and the sequence number.
    pub sequence: u32,
    /// The whole packet's size, header included.
    pub size: u32,
}

/// The first word of a successful answer.
pub const OK: &[u8] = b"OK";

/// The requests a status query sends, each one word or two.
pub const SERVER_INFO: &[&[u8]] = &[b"serverInfo"];
/// `version`: the game (`BFBC2`, `BF3`, `BF4`, `BFHL`) and its build.
pub const VERSION: &[&[u8]] = &[b"version"];
/// `listPlayers all`: a column table of every player.
pub const LIST_PLAYERS: &[&[u8]] = &[b"listPlayers", b"all"];

/// The words of a `serverInfo` answer after `OK`, up to the team scores, the same in every
/// game: name, players, slots, mode, map, rounds played and in all. The scores follow (a
/// count, that many scores, the target score), then [`Game::tail`].
pub const SERVER_INFO_HEAD: &[&str] = &[
    "serverName",
    "playerCount",
    "maxPlayerCount",
    "gameMode",
    "map",
    "roundsPlayed",
    "roundsTotal",
];

/// The game a server says it runs in its `version` answer, which decides the words of its
/// `serverInfo` after the scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Game {
    /// Battlefield: Bad Company 2 (`BFBC2`).
    BadCompany2,
    /// Battlefield 3 (`BF3`), and Venice Unleashed, which reports itself as it.
    Bf3,
    /// Battlefield 4 (`BF4`).
    Bf4,
    /// Battlefield Hardline (`BFHL`).
    Hardline,
}

impl Game {
    /// The game of a `version` answer's first word; `None` for a game not known here.
    pub fn from_version(word: &[u8]) -> Option<Self> {
        match word {
            b"BFBC2" => Some(Game::BadCompany2),
            b"BF3" | b"VU" => Some(Game::Bf3),
            b"BF4" => Some(Game::Bf4),
            b"BFHL" => Some(Game::Hardline),
            _ => None,
        }
    }

    /// The `version` word of the game.
    pub fn version_word(self) -> &'static str {
        match self {
            Game::BadCompany2 => "BFBC2",
            Game::Bf3 => "BF3",
            Game::Bf4 => "BF4",
            Game::Hardline => "BFHL",
        }
    }

    /// The names of the `serverInfo` words after the target score, in order (the names of the
    /// games' server documentation). Servers of older builds send fewer.
    pub fn tail(self) -> &'static [&'static str] {
        match self {
            Game::BadCompany2 => BC2_TAIL,
            Game::Bf3 => BF3_TAIL,
            Game::Bf4 | Game::Hardline => BF4_TAIL,
        }
    }
}

/// Bad Company 2's words after the scores.
pub const BC2_TAIL: &[&str] = &[
    "onlineState",
    "ranked",
    "punkBuster",
    "hasGamePassword",
    "serverUpTime",
    "roundTime",
    "gameMod",
    "mapPack",
    "gameIpAndPort",
    "punkBusterVersion",
    "joinQueueEnabled",
    "region",
];

/// Battlefield 3's words after the scores.
pub const BF3_TAIL: &[&str] = &[
    "onlineState",
    "ranked",
    "punkBuster",
    "hasGamePassword",
    "serverUpTime",
    "roundTime",
    "gameIpAndPort",
    "punkBusterVersion",
    "joinQueueEnabled",
    "region",
    "closestPingSite",
    "country",
    "matchMakingEnabled",
];

/// Battlefield 4's and Hardline's words after the scores.
pub const BF4_TAIL: &[&str] = &[
    "onlineState",
    "ranked",
    "punkBuster",
    "hasGamePassword",
    "serverUpTime",
    "roundTime",
    "gameIpAndPort",
    "punkBusterVersion",
    "joinQueueEnabled",
    "region",
    "closestPingSite",
    "country",
    "blazePlayerCount",
    "blazeGameState",
];
