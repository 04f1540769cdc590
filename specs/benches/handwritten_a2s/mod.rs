//! The baseline: an A2S reply decoder written by hand for the two replies the benchmark
//! measures, `S2A_INFO` and `S2A_PLAYER` (any game but The Ship), each in one datagram.
//!
//! It is what a careful engineer writes without a framework: a cursor over the datagram,
//! strings borrowed as `&[u8]` up to their NUL, little-endian numbers from fixed-size arrays,
//! errors as a static reason and an offset. The NUL is found with `memchr`, as query-wire's
//! reader finds it, so that the comparison is about the decoders and not the search (std's
//! `iter().position` is a byte at a time and made this decoder's INFO about 1.6 times slower).
//!
//! It makes the checks the derived codec makes and no others: the `FF FF FF FF` header and
//! the kind byte, every string ended by a NUL, The Ship's block for its app id, the Extra Data
//! Flag block only when bytes are left after the version and its fields in wire order by their
//! bits, player rows read until the datagram ends (the count byte is kept as sent, not
//! trusted: see `query_specs::a2s`), a row cut short refused, and nothing after the last
//! field. Text is not validated, as the derived `Text` is not.
//!
//! The one heap allocation is the players' `Vec`, as in the derived `Players`: it is sized once
//! from the count byte, bounded by the rows the bytes left can hold (a lying count must not
//! reserve memory), and grows past that only if the server sent more rows than it said.
//! Nothing is reused between calls.
//!
//! [`decode_players`] builds the same `query_specs::a2s::Players` value the derived decoder
//! builds (names as `Text`, a `Cow` that may own its bytes), so the two differ only in how the
//! bytes are read, as the SQP baseline does. [`decode_players_borrowed`] is the same decoder
//! building rows of its own with `&[u8]` names: not the baseline, a measure of what the
//! `Text` type costs (a larger row, and a drop that looks at every name).

/// Why a datagram was refused and at which byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed {
    pub offset: usize,
    pub reason: &'static str,
}

/// `S2A_INFO`, borrowing its strings from the datagram.
#[derive(Debug, Clone, PartialEq)]
pub struct Info<'a> {
    pub protocol: u8,
    pub name: &'a [u8],
    pub map: &'a [u8],
    pub folder: &'a [u8],
    pub game: &'a [u8],
    pub app_id: u16,
    pub players: u8,
    pub max_players: u8,
    pub bots: u8,
    pub server_type: u8,
    pub environment: u8,
    pub visibility: u8,
    pub vac: u8,
    /// The Ship's mode, witnesses and duration.
    pub the_ship: Option<[u8; 3]>,
    pub version: &'a [u8],
    pub extra: Option<Extra<'a>>,
}

/// The Extra Data Flag and the fields its bits announce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extra<'a> {
    pub flags: u8,
    pub port: Option<u16>,
    pub steam_id: Option<u64>,
    /// The SourceTV port and name.
    pub spectator: Option<(u16, &'a [u8])>,
    pub keywords: Option<&'a [u8]>,
    pub game_id: Option<u64>,
}

/// `S2A_PLAYER`: the count as sent and every row sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Players<'a> {
    pub count: u8,
    pub players: Vec<Player<'a>>,
}

/// One row of a player list.
#[derive(Debug, Clone, PartialEq)]
pub struct Player<'a> {
    pub index: u8,
    pub name: &'a [u8],
    pub score: i32,
    pub duration: f32,
}

const HEADER: [u8; 4] = [0xff; 4];
const KIND_INFO: u8 = 0x49;
const KIND_PLAYERS: u8 = 0x44;
const THE_SHIP: u16 = 2400;
const EDF_PORT: u8 = 0x80;
const EDF_STEAM_ID: u8 = 0x10;
const EDF_SPECTATOR: u8 = 0x40;
const EDF_KEYWORDS: u8 = 0x20;
const EDF_GAME_ID: u8 = 0x01;
/// The shortest player row: index, an empty name's NUL, score, duration.
const MIN_ROW: usize = 1 + 1 + 4 + 4;

/// Decodes a whole `S2A_INFO` datagram.
pub fn decode_info(datagram: &[u8]) -> Result<Info<'_>, Malformed> {
    let mut input = Input::new(datagram);
    input.kind(KIND_INFO)?;
    let protocol = input.u8()?;
    let name = input.nul_str()?;
    let map = input.nul_str()?;
    let folder = input.nul_str()?;
    let game = input.nul_str()?;
    let app_id = u16::from_le_bytes(input.array()?);
    let [players, max_players, bots, server_type, environment, visibility, vac] = input.array()?;
    let the_ship = if app_id == THE_SHIP {
        Some(input.array()?)
    } else {
        None
    };
    let version = input.nul_str()?;
    let extra = if input.rest.is_empty() {
        None
    } else {
        Some(decode_extra(&mut input)?)
    };
    input.finish()?;
    Ok(Info {
        protocol,
        name,
        map,
        folder,
        game,
        app_id,
        players,
        max_players,
        bots,
        server_type,
        environment,
        visibility,
        vac,
        the_ship,
        version,
        extra,
    })
}

fn decode_extra<'a>(input: &mut Input<'a>) -> Result<Extra<'a>, Malformed> {
    let flags = input.u8()?;
    let port = if flags & EDF_PORT != 0 {
        Some(u16::from_le_bytes(input.array()?))
    } else {
        None
    };
    let steam_id = if flags & EDF_STEAM_ID != 0 {
        Some(u64::from_le_bytes(input.array()?))
    } else {
        None
    };
    let spectator = if flags & EDF_SPECTATOR != 0 {
        let port = u16::from_le_bytes(input.array()?);
        Some((port, input.nul_str()?))
    } else {
        None
    };
    let keywords = if flags & EDF_KEYWORDS != 0 {
        Some(input.nul_str()?)
    } else {
        None
    };
    let game_id = if flags & EDF_GAME_ID != 0 {
        Some(u64::from_le_bytes(input.array()?))
    } else {
        None
    };
    Ok(Extra {
        flags,
        port,
        steam_id,
        spectator,
        keywords,
        game_id,
    })
}

/// Decodes a whole `S2A_PLAYER` datagram of any game but The Ship into the specs' type.
pub fn decode_players(datagram: &[u8]) -> Result<query_specs::a2s::Players<'_>, Malformed> {
    let (count, players) = players(datagram, |index, name, score, duration| {
        query_specs::a2s::Player {
            index,
            name: query_wire::Text::from_bytes(name),
            score,
            duration,
        }
    })?;
    Ok(query_specs::a2s::Players { count, players })
}

/// [`decode_players`] into rows with `&[u8]` names; see the module docs.
pub fn decode_players_borrowed(datagram: &[u8]) -> Result<Players<'_>, Malformed> {
    let (count, players) = players(datagram, |index, name, score, duration| Player {
        index,
        name,
        score,
        duration,
    })?;
    Ok(Players { count, players })
}

/// The count byte and every row, each made by `row` from its index, name, score and duration.
#[inline(always)]
fn players<'a, R>(
    datagram: &'a [u8],
    row: impl Fn(u8, &'a [u8], i32, f32) -> R,
) -> Result<(u8, Vec<R>), Malformed> {
    let mut input = Input::new(datagram);
    input.kind(KIND_PLAYERS)?;
    let count = input.u8()?;
    let mut players = Vec::with_capacity(usize::from(count).min(input.rest.len() / MIN_ROW));
    while !input.rest.is_empty() {
        let index = input.u8()?;
        let name = input.nul_str()?;
        let [s0, s1, s2, s3, d0, d1, d2, d3] = input.array()?;
        players.push(row(
            index,
            name,
            i32::from_le_bytes([s0, s1, s2, s3]),
            f32::from_le_bytes([d0, d1, d2, d3]),
        ));
    }
    Ok((count, players))
}

/// A cursor over the unread bytes that remembers their absolute offset for errors.
struct Input<'a> {
    rest: &'a [u8],
    offset: usize,
}

impl<'a> Input<'a> {
    #[inline]
    fn new(datagram: &'a [u8]) -> Self {
        Input {
            rest: datagram,
            offset: 0,
        }
    }

    /// The `FF FF FF FF` header and the expected kind byte.
    #[inline]
    fn kind(&mut self, expected: u8) -> Result<(), Malformed> {
        let [a, b, c, d, kind] = self.array()?;
        if [a, b, c, d] != HEADER {
            return Err(Malformed {
                offset: 0,
                reason: "not a single-packet reply",
            });
        }
        if kind != expected {
            return Err(Malformed {
                offset: 4,
                reason: "another kind of reply",
            });
        }
        Ok(())
    }

    #[inline]
    fn array<const N: usize>(&mut self) -> Result<[u8; N], Malformed> {
        match self.rest.split_first_chunk::<N>() {
            Some((head, tail)) => {
                self.rest = tail;
                self.offset += N;
                Ok(*head)
            }
            None => Err(self.short()),
        }
    }

    #[inline]
    fn u8(&mut self) -> Result<u8, Malformed> {
        self.array::<1>().map(|[b]| b)
    }

    /// The bytes before the next NUL; the NUL is consumed too.
    #[inline]
    fn nul_str(&mut self) -> Result<&'a [u8], Malformed> {
        let Some(len) = memchr::memchr(0, self.rest) else {
            self.offset += self.rest.len();
            self.rest = &[];
            return Err(self.short());
        };
        let text = &self.rest[..len];
        self.rest = &self.rest[len + 1..];
        self.offset += len + 1;
        Ok(text)
    }

    #[inline]
    fn finish(&self) -> Result<(), Malformed> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(Malformed {
                offset: self.offset,
                reason: "trailing bytes",
            })
        }
    }

    #[cold]
    fn short(&self) -> Malformed {
        Malformed {
            offset: self.offset,
            reason: "unexpected end",
        }
    }
}
