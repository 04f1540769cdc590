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
