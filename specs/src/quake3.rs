//! The Quake 3 family (Quake 3 Arena, Call of Duty 1-4 and their mods, Enemy Territory, Jedi
//! Knight II and Jedi Academy, Urban Terror...): text behind four `FF` bytes over UDP.
//!
//! - Requests ([`Request`]): `FF FF FF FF getstatus\n` (rules and players) and
//!   `FF FF FF FF getinfo\n` (a smaller summary). Both may carry a challenge after a space,
//!   which the server echoes as `\challenge\` (CoD: MW2 sends an empty one).
//! - [`StatusResponse`]: `FF FF FF FF statusResponse\n`, one line of `\key\value` pairs
//!   ([`Info`], a `#[derive(KeyValues)]` type read as a [`KvLine`]), then one line per
//!   player, each framed by [`Line`] and read as a [`Player`]: `score ping "name"`, the
//!   numbers some engines add before the name (kept in [`Player::more`]), and whatever some
//!   games add after it (kept in [`Player::extra`]).
//! - [`InfoResponse`]: `FF FF FF FF infoResponse\n` and one line of pairs.
//!
//! Where this follows the captures rather than the notes:
//! - Lenient: empty lines among or after the player lines (CoD: MW2 ends with `\n\n`) are
//!   skipped, the last line may lack its newline, and any count of numbers may come before
//!   a name.
//! - Strict or lenient by the caller's choice: a player line that is not two numbers or more
//!   and a quoted name is an error at its offset in [`StatusResponse::decode`];
//!   [`StatusResponse::decode_lenient`] leaves it out and returns its error beside the lines
//!   it read, so that a client can keep them and say the reply is incomplete.
//! - Text is Latin-1 / Windows-1252 ([`ENCODING`]) on most servers: names are kept as the raw
//!   bytes ([`Text`]) and decoded by the caller in the encoding it chooses.
//! - Names carry colour codes, `^` and one character (`^1`, and `^^00` in Call of Duty, whose
//!   codes are `^^` and two digits); [`strip_colours`] removes them.
//!
//! Big replies: a server may split one status over several datagrams, each with the
//! `statusResponse` header, the first with the pair line, the others with whole player lines
//! only ([`StatusResponse::info`] is `None` on them). [`MAX_DATAGRAM`] is the size a responder
//! splits at.

use std::borrow::Cow;

use query_wire::kv::KvLine;
#[cfg(any(doc, test))]
use query_wire::ErrorKind;
use query_wire::{Decode, Error, KeyValues, Reader, Result, Text, TextEncoding, Wire};
use serde::Serialize;

/// The text encoding of most servers.
pub const ENCODING: TextEncoding = TextEncoding::Windows1252;

/// The four bytes every packet starts with.
pub const PREFIX: &[u8; 4] = b"\xff\xff\xff\xff";
/// `getstatus` as sent, without a challenge ([`Request::Status`] encoded with a newline).
pub const GETSTATUS: &[u8] = b"\xff\xff\xff\xffgetstatus\n";
/// `getinfo` as sent, without a challenge ([`Request::Info`] encoded with a newline).
pub const GETINFO: &[u8] = b"\xff\xff\xff\xffgetinfo\n";
/// The header of a status reply.
pub const STATUS_HEADER: &[u8] = b"\xff\xff\xff\xffstatusResponse\n";
/// The header of an info reply.
pub const INFO_HEADER: &[u8] = b"\xff\xff\xff\xffinfoResponse\n";

/// The largest datagram a responder writes; replies above it are split between player lines.
pub const MAX_DATAGRAM: usize = 1400;

/// The header of the datagrams a server prints a remote console command's output in.
pub const PRINT_HEADER: &[u8] = b"\xff\xff\xff\xffprint\n";
/// What ioquake3 and its forks print for a wrong `rcon` password.
pub const BAD_RCON_PASSWORD: &str = "Bad rconpassword.";
/// What they print when `rconpassword` is not set (remote console off).
pub const NO_RCON_PASSWORD: &str = "No rconpassword set on the server.";

/// `FF FF FF FF rcon PASSWORD COMMAND`: a remote console command. The server takes the
/// password up to the first space and the rest of the line as the command, so a password
/// cannot hold a space.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(magic = b"\xff\xff\xff\xffrcon ")]
pub struct Rcon<'a> {
    /// The password (`rconpassword`), ended by a space.
    #[wire(bytes(until = b' '))]
    pub password: &'a [u8],
    /// The console command, as typed at the server's console.
    #[wire(bytes(rest))]
    pub command: &'a [u8],
}

/// One datagram of a console command's output: `FF FF FF FF print\n` and text. A long
/// output comes in several, each with the header (ioquake3 flushes about 1 kB at a time);
/// nothing numbers them or marks the last.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(magic = PRINT_HEADER)]
pub struct Print<'a> {
    /// The console's text, in the server's encoding ([`ENCODING`] as a rule).
    #[wire(bytes(rest))]
    pub text: &'a [u8],
}

/// The longest challenge a request may carry.
pub const MAX_CHALLENGE: usize = 64;

/// The command of a `getstatus` request, after [`PREFIX`].
pub const GETSTATUS_COMMAND: &[u8] = b"getstatus";
/// The command of a `getinfo` request, after [`PREFIX`].
pub const GETINFO_COMMAND: &[u8] = b"getinfo";

/// What follows a request's command: nothing, or a space and a challenge the server echoes
/// back as `\challenge\`, then the line's end.
///
/// Lenient about the line's end: a newline, a NUL, a newline and a NUL, or the datagram's end,
/// as gamedig and opengsq send `getstatus\0` and the servers read the command as a C string.
/// Strict about the rest: `getstatusX` is no request of this protocol
/// ([`ErrorKind::UnknownMagic`] after the command), nor is a second line
/// ([`ErrorKind::TrailingBytes`] after the first).
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
pub struct CommandTail<'a> {
    /// Absent when the datagram ends with the command.
    #[wire(trailing)]
    pub tail: Option<Tail<'a>>,
}

/// The bytes after a request's command, told apart by the first.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
pub enum Tail<'a> {
    /// A space and the challenge (empty when the client sends none after the space), ended by
    /// a newline, a NUL, both, or the datagram's end; written with a newline.
    #[wire(magic = b" ")]
    Challenge(#[wire(str(until = [b"\n", b"\n\0", b"\0"], or_end, max = MAX_CHALLENGE))] Text<'a>),
    /// `\n\0`.
    #[wire(magic = b"\n\0")]
    NewlineNul,
    /// `\n`, as the engines send it.
    #[wire(magic = b"\n")]
    Newline,
    /// `\0`, as gamedig and opengsq send it.
    #[wire(magic = b"\0")]
    Nul,
}

impl CommandTail<'_> {
    /// A request's tail as clients send it: a newline.
    pub const NEWLINE: CommandTail<'static> = CommandTail {
        tail: Some(Tail::Newline),
    };
}

/// A request, as a responder reads it: [`PREFIX`], then the command that selects the
/// variant, then its tail.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(magic = PREFIX)]
pub enum Request<'a> {
    /// `getstatus [challenge]`: rules and players.
    #[wire(magic = GETSTATUS_COMMAND)]
    Status(CommandTail<'a>),
    /// `getinfo [challenge]`: the summary.
    #[wire(magic = GETINFO_COMMAND)]
    Info(CommandTail<'a>),
}

impl<'a> Request<'a> {
    /// The request in `datagram`, the whole of it: see [`CommandTail`]. Another command is
    /// [`ErrorKind::UnknownMagic`] at its first byte that differs.
    pub fn decode(datagram: &'a [u8]) -> Result<Request<'a>> {
        Request::decode_exact(&mut Reader::new(datagram), ())
    }

    /// The challenge, when the request carries one (`getstatus 12345`).
    pub fn challenge(&self) -> Option<&[u8]> {
        let (Request::Status(tail) | Request::Info(tail)) = self;
        match &tail.tail {
            Some(Tail::Challenge(challenge)) if !challenge.as_bytes().is_empty() => {
                Some(challenge.as_bytes())
            }
            _ => None,
        }
    }
}

/// The server's settings: the `\key\value` line. The fields are the keys clients read; every
/// other key is a rule, in order.
///
/// Lenient: numbers ignore surrounding spaces, and a key that is not a number where one is
/// expected lands in [`rules`](Info::rules) only through being unknown (a bad `sv_maxclients`
/// is an error at its offset).
#[derive(Debug, Clone, PartialEq, Eq, Default, KeyValues, Serialize)]
#[kv(encoding = "windows-1252")]
pub struct Info<'a> {
    /// `sv_hostname` (`hostname` in `infoResponse`), with colour codes.
    #[kv(key = "sv_hostname", alias = "hostname")]
    pub hostname: Option<Cow<'a, str>>,
    /// `mapname`.
    #[kv(key = "mapname")]
    pub map: Option<Cow<'a, str>>,
    /// `g_gametype` (`gametype` in `infoResponse`): a number on id Tech 3 games, a name
    /// (`tdm`, `war`) in Call of Duty.
    #[kv(key = "g_gametype", alias = "gametype")]
    pub game_type: Option<Cow<'a, str>>,
    /// `gamename`, e.g. `baseq3`, `Call of Duty 2`, `IW4`.
    #[kv(key = "gamename")]
    pub game_name: Option<Cow<'a, str>>,
    /// `version` (Call of Duty: `shortversion`, kept as a rule).
    pub version: Option<Cow<'a, str>>,
    /// `sv_maxclients`, the slots.
    #[kv(key = "sv_maxclients")]
    pub max_clients: Option<u32>,
    /// `sv_privateClients`, slots reserved for password holders.
    #[kv(key = "sv_privateClients")]
    pub private_clients: Option<u32>,
    /// `g_needpass` (id Tech 3), `1` when a password is needed.
    #[kv(key = "g_needpass")]
    pub need_pass: Option<bool>,
    /// `pswrd` (Call of Duty), `1` when a password is needed.
    #[kv(key = "pswrd")]
    pub pswrd: Option<bool>,
    /// `clients` (in `infoResponse`), the players connected.
    pub clients: Option<u32>,
    /// `challenge`, the request's challenge echoed.
    pub challenge: Option<Cow<'a, str>>,
    /// Every other key, in arrival order.
    #[kv(rest)]
    pub rules: Vec<(Cow<'a, str>, Cow<'a, str>)>,
}

impl Info<'_> {
    /// Whether a password is needed: `g_needpass`, else `pswrd`.
    pub fn password(&self) -> Option<bool> {
        self.need_pass.or(self.pswrd)
    }

    /// The first value of a rule.
    pub fn rule(&self, key: &str) -> Option<&str> {
        self.rules
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_ref())
    }
}

/// The most numbers a player line may carry before the name (score, ping and what a game
/// adds: a team, deaths).
pub const MAX_NUMBERS: usize = 8;

/// One player line: numbers, the quoted name, and whatever a game adds after it, then the
/// newline (which the last line of a datagram may lack).
///
/// Lenient where engines differ: ioquake3 and OpenArena send `score ping "name"`, some
/// engines a third number (a team, deaths) before the name; any count up to [`MAX_NUMBERS`]
/// decodes, the ones after the ping kept in [`more`](Player::more). Strict about the rest: a
/// line without two numbers and a quoted name, or with a number that does not fit an `i64`,
/// is an error at its offset (which [`StatusResponse::decode_lenient`] keeps apart from the
/// lines it could read).
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
pub struct Player<'a> {
    /// The score (frags); Call of Duty servers send large ones.
    #[wire(dec(until = b' ', max = 20))]
    pub score: i64,
    /// The ping in milliseconds; 999 for a player still connecting.
    #[wire(dec(until = b' ', max = 20))]
    pub ping: i64,
    /// The numbers between the ping and the name, as sent; usually none.
    #[wire(before = b'"', max_count = MAX_NUMBERS, dec(until = b' ', max = 20))]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub more: Vec<i64>,
    /// The name as sent, with colour codes, in the server's encoding.
    #[wire(str(quoted))]
    pub name: Text<'a>,
    /// The rest of the line after the closing quote (a team on some games), usually empty.
    #[wire(str(until = b'\n', or_end))]
    pub extra: Text<'a>,
}

/// One line of a reply's body without its newline; the last one may lack it. A status
/// reply's player lines are framed by it before their fields are read, so that a line a
/// server garbled cannot take the next one with it.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
pub struct Line<'a> {
    /// The bytes before the newline.
    #[wire(bytes(until = b'\n', or_end))]
    pub text: &'a [u8],
}

/// The bytes a status reply (and each of its continuation datagrams) starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Wire, Serialize)]
#[wire(magic = STATUS_HEADER)]
pub struct StatusHeader {}

/// Which reply a datagram holds, told by its header: the bytes [`StatusHeader`] and
/// [`InfoHeader`] check, read without the rest of the reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
pub enum ReplyKind {
    /// `statusResponse`: a [`StatusResponse`].
    #[wire(magic = STATUS_HEADER)]
    Status,
    /// `infoResponse`: an [`InfoResponse`].
    #[wire(magic = INFO_HEADER)]
    Info,
}

/// The settings line: `\key\value` pairs and a newline, read and written in the encoding
/// given as context.
pub type InfoLine<'a> = KvLine<Info<'a>>;

/// The bytes an info reply starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Wire, Serialize)]
#[wire(magic = INFO_HEADER)]
pub struct InfoHeader {}

/// A pair a responder writes before its cached settings: the request's challenge, echoed
/// as the raw bytes it arrived as.
#[derive(Debug, Clone, PartialEq, Eq, Default, KeyValues, Serialize)]
#[kv(encoding = "windows-1252")]
pub struct Challenge<'a> {
    /// `challenge`.
    pub challenge: Option<&'a [u8]>,
}

/// A whole `infoResponse`: the header, the settings line, and nothing but blank lines after it.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(ctx(encoding: TextEncoding))]
pub struct InfoResponse<'a> {
    /// `FF FF FF FF infoResponse\n`.
    #[serde(skip)]
    pub header: InfoHeader,
    /// The pair line.
    #[wire(ctx = encoding)]
    pub info: InfoLine<'a>,
    /// Blank lines some servers end with; a responder writes none.
    #[wire(until_end)]
    #[serde(skip)]
    pub blank: Vec<BlankLine>,
}

/// An empty line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Wire, Serialize)]
#[wire(magic = b"\n")]
pub struct BlankLine {}

/// One `statusResponse` datagram decoded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatusResponse<'a> {
    /// The pair line; `None` on a continuation datagram, which holds player lines only.
    pub info: Option<Info<'a>>,
    /// The player lines, in order.
    pub players: Vec<Player<'a>>,
}

impl<'a> StatusResponse<'a> {
    /// Decodes one datagram, strictly: a line that is not a [`Player`] is an error. Offsets
    /// in errors count from the datagram's first byte; the pair line's text is read in
    /// `encoding` (names stay raw bytes). Blank lines are skipped.
    pub fn decode(datagram: &'a [u8], encoding: TextEncoding) -> Result<Self> {
        Self::decode_with(datagram, encoding, Err)
    }

    /// Decodes one datagram, leniently: a player line that does not decode (a line cut at
    /// the datagram's end, a number out of range) is left out and its error returned beside
    /// the lines that did, so that one bad line does not cost the whole reply. The header
    /// and the pair line are still strict.
    pub fn decode_lenient(
        datagram: &'a [u8],
        encoding: TextEncoding,
    ) -> Result<(Self, Vec<Error>)> {
        lenient(|bad_line| Self::decode_with(datagram, encoding, bad_line))
    }

    /// The header, the pair line when the body starts with a backslash (a continuation starts
    /// with a player line's first digit), then each line framed by [`Line`] and decoded as a
    /// [`Player`] from exactly its bytes; `bad_line` decides what a line that fails costs.
    fn decode_with(
        datagram: &'a [u8],
        encoding: TextEncoding,
        bad_line: impl FnMut(Error) -> Result<()>,
    ) -> Result<Self> {
        let mut r = Reader::new(datagram);
        StatusHeader::decode(&mut r, ())?;
        let info = match r.peek_rest().first() {
            Some(b'\\') => Some(InfoLine::decode(&mut r, encoding)?.0),
            _ => None,
        };
        let players = player_lines(&mut r, |fields| Player::decode_exact(fields, ()), bad_line)?;
        Ok(StatusResponse { info, players })
    }
}

/// The player lines left in `r`: each framed by [`Line`] and decoded by `decode` from exactly
/// its bytes (empty lines skipped); `bad_line` decides what a line that fails costs, its error
/// carrying the line's index. The Quake 2 family's replies read their lines the same way.
pub(crate) fn player_lines<'a, P>(
    r: &mut Reader<'a>,
    mut decode: impl FnMut(&mut Reader<'a>) -> Result<P>,
    mut bad_line: impl FnMut(Error) -> Result<()>,
) -> Result<Vec<P>> {
    let mut players = Vec::new();
    let mut index = 0;
    while !r.is_empty() {
        let mut fields = r.clone();
        let line = Line::decode(r, ()).map_err(|e| e.in_field("players"))?;
        if line.text.is_empty() {
            continue;
        }
        match fields
            .sub(line.text.len())
            .and_then(|mut fields| decode(&mut fields))
        {
            Ok(player) => players.push(player),
            Err(error) => bad_line(error.at_index(index).in_field("players"))?,
        }
        index += 1;
    }
    Ok(players)
}

/// `decode` run with a `bad_line` that keeps each unreadable line's error instead of
/// failing: what `decode_lenient` returns beside the reply.
pub(crate) fn lenient<T>(
    decode: impl FnOnce(&mut dyn FnMut(Error) -> Result<()>) -> Result<T>,
) -> Result<(T, Vec<Error>)> {
    let mut unreadable = Vec::new();
    let reply = decode(&mut |error| {
        unreadable.push(error);
        Ok(())
    })?;
    Ok((reply, unreadable))
}

impl<'a> InfoResponse<'a> {
    /// Decodes one datagram; see [`StatusResponse::decode`].
    pub fn decode(datagram: &'a [u8], encoding: TextEncoding) -> Result<Self> {
        Self::decode_exact(&mut Reader::new(datagram), encoding)
    }
}

/// `text` without colour codes: `^` and the character after it (`^1`, `^w`), and in Call of
/// Duty `^^` and the two characters after it (`^^00`). A `^` at the very end stays.
///
/// ```
/// use query_specs::quake3::strip_colours;
///
/// assert_eq!(strip_colours("^1Red^7 and ^^77KeX"), "Red and KeX");
/// assert_eq!(strip_colours("50^"), "50^");
/// ```
pub fn strip_colours(text: &str) -> Cow<'_, str> {
    if !text.contains('^') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '^' || chars.peek().is_none() {
            out.push(c);
            continue;
        }
        if chars.next() == Some('^') {
            // `^^` and two characters.
            chars.next();
            chars.next();
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_codes_of_every_game() {
        assert_eq!(strip_colours("^w*ES*^3Bro^7chillin"), "*ES*Brochillin");
        assert_eq!(strip_colours("^^77KeX^^55*"), "KeX*");
        assert_eq!(strip_colours("plain"), "plain");
        assert_eq!(strip_colours("^"), "^");
        assert_eq!(strip_colours("^^"), "");
    }

    #[test]
    fn a_status_with_players_and_blank_lines() {
        let bytes = b"\xff\xff\xff\xffstatusResponse\n\\sv_hostname\\^1Box\\sv_maxclients\\8\\g_needpass\\1\n3 50 \"^2Ann\"\n-1 999 \"B b\" 1\n\n";
        let reply = StatusResponse::decode(bytes, ENCODING).unwrap();
        let info = reply.info.unwrap();
        assert_eq!(info.hostname.as_deref(), Some("^1Box"));
        assert_eq!(info.max_clients, Some(8));
        assert_eq!(info.password(), Some(true));
        assert_eq!(reply.players.len(), 2);
        assert_eq!(reply.players[1].score, -1);
        assert_eq!(reply.players[1].extra.as_bytes(), b" 1");
    }

    #[test]
    fn a_bad_player_line_is_an_error_at_its_offset() {
        let bytes = b"\xff\xff\xff\xffstatusResponse\n\\a\\b\n3 x \"A\"\n";
        let err = StatusResponse::decode(bytes, ENCODING).unwrap_err();
        assert_eq!(err.offset(), bytes.len() - 6);
        assert_eq!(err.path_string(), "players[0].ping");
    }

    #[test]
    fn lenient_decoding_keeps_the_lines_around_a_bad_one() {
        let bytes = b"\xff\xff\xff\xffstatusResponse\n\\a\\b\n1 2 3 \"x\"\n9 y \"bad\"\n4 5 \"z\" t\n6 7 \"cu";
        let err = StatusResponse::decode(bytes, ENCODING).unwrap_err();
        assert_eq!(err.path_string(), "players[1].ping");
        let (reply, unreadable) = StatusResponse::decode_lenient(bytes, ENCODING).unwrap();
        assert_eq!(reply.players.len(), 2);
        assert_eq!(reply.players[0].more, [3]);
        assert_eq!(reply.players[1].extra.as_bytes(), b" t");
        let paths: Vec<String> = unreadable.iter().map(Error::path_string).collect();
        assert_eq!(paths, ["players[1].ping", "players[3].name"]);
        // The header and the pair line stay strict.
        assert!(
            StatusResponse::decode_lenient(b"\xff\xff\xff\xffstatusRespons", ENCODING).is_err()
        );
    }

    #[test]
    fn an_info_reply_is_its_pair_line_and_blank_lines() {
        let bytes = b"\xff\xff\xff\xffinfoResponse\n\\hostname\\x\\clients\\3\n\n\n";
        let reply = InfoResponse::decode(bytes, ENCODING).unwrap();
        assert_eq!(reply.info.0.clients, Some(3));
        assert!(
            InfoResponse::decode(b"\xff\xff\xff\xffinfoResponse\n\\a\\b\nx", ENCODING).is_err()
        );
    }

    #[test]
    fn requests_are_chosen_by_their_declared_command() {
        use query_wire::Encode;

        let newline = || CommandTail::NEWLINE;
        let status = Request::Status(newline());
        assert_eq!(status.to_vec().unwrap(), GETSTATUS);
        assert_eq!(status.magic(), GETSTATUS_COMMAND);
        assert_eq!(Request::Info(newline()).to_vec().unwrap(), GETINFO);
        // Another command fails at its first byte that neither command has.
        let err = Request::decode(b"\xff\xff\xff\xffgetchallenge\n").unwrap_err();
        assert_eq!(err.offset(), 7);
        assert_eq!(
            err.kind(),
            &ErrorKind::UnknownMagic {
                found: b"getc".to_vec()
            }
        );
        assert!(Request::matches_magic(b"\xff\xff\xff\xffgetinfo 1\n"));
        assert!(!Request::matches_magic(b"\xff\xff\xff\xffgetinf"));
        assert!(!Request::matches_magic(b"\xfe\xff\xff\xffgetinfo"));
    }

    #[test]
    fn requests_with_and_without_a_challenge() {
        assert!(matches!(Request::decode(GETSTATUS), Ok(Request::Status(_))));
        let r = Request::decode(b"\xff\xff\xff\xffgetinfo xyz\n").unwrap();
        assert_eq!(r.challenge(), Some(&b"xyz"[..]));
        assert!(Request::decode(b"\xff\xff\xff\xffgetstatus").is_ok());
        // gamedig and opengsq end the line with a NUL.
        assert!(matches!(
            Request::decode(b"\xff\xff\xff\xffgetstatus\0"),
            Ok(Request::Status(_))
        ));
        let r = Request::decode(b"\xff\xff\xff\xffgetinfo opengsq\0").unwrap();
        assert_eq!(r.challenge(), Some(&b"opengsq"[..]));
        assert!(Request::decode(b"\xff\xff\xff\xffgetstatus\n\0").is_ok());
        let r = Request::decode(b"\xff\xff\xff\xffgetinfo 7\n\0").unwrap();
        assert_eq!(r.challenge(), Some(&b"7"[..]));
        let r = Request::decode(b"\xff\xff\xff\xffgetinfo 7").unwrap();
        assert_eq!(r.challenge(), Some(&b"7"[..]));
        // A space and nothing: no challenge.
        let r = Request::decode(b"\xff\xff\xff\xffgetinfo \n").unwrap();
        assert_eq!(r.challenge(), None);
        assert!(Request::decode(b"\xff\xff\xff\xffTSource Engine Query\0").is_err());
    }

    #[test]
    fn a_request_with_more_than_one_line_or_a_longer_command_is_refused_where_it_goes_wrong() {
        let cases: [(&[u8], usize, &str); 5] = [
            (b"\xff\xff\xff\xffgetstatusX\n", 13, "UnknownMagic"),
            (b"\xff\xff\xff\xffgetstatus\nX", 14, "TrailingBytes"),
            (b"\xff\xff\xff\xffgetstatus\0\0", 14, "TrailingBytes"),
            (
                b"\xff\xff\xff\xffgetinfo 12\nsecond line",
                15,
                "TrailingBytes",
            ),
            (b"\xff\xff\xff\xffgetinfo 12\0\n", 15, "TrailingBytes"),
        ];
        for (bytes, offset, kind) in cases {
            let err = Request::decode(bytes).unwrap_err();
            assert_eq!(err.offset(), offset, "{err}");
            assert!(format!("{:?}", err.kind()).starts_with(kind), "{err}");
            if kind == "UnknownMagic" {
                assert_eq!(err.path_string(), "tail");
            }
        }
        let long = [&b"\xff\xff\xff\xffgetinfo "[..], &[b'1'; MAX_CHALLENGE + 1]].concat();
        let err = Request::decode(&long).unwrap_err();
        assert_eq!(err.offset(), 12);
        assert_eq!(err.path_string(), "tail");
    }

    #[test]
    fn a_request_re_encodes_with_a_newline() {
        use query_wire::Encode;

        for (sent, written) in [
            (
                &b"\xff\xff\xff\xffgetinfo 42\0"[..],
                &b"\xff\xff\xff\xffgetinfo 42\n"[..],
            ),
            (
                b"\xff\xff\xff\xffgetinfo 42",
                b"\xff\xff\xff\xffgetinfo 42\n",
            ),
            (
                b"\xff\xff\xff\xffgetstatus\0",
                b"\xff\xff\xff\xffgetstatus\0",
            ),
            (b"\xff\xff\xff\xffgetstatus", b"\xff\xff\xff\xffgetstatus"),
        ] {
            let request = Request::decode(sent).unwrap();
            assert_eq!(request.to_vec().unwrap(), written);
            assert_eq!(Request::decode(written).unwrap(), request);
        }
        // A challenge that would end early is not written.
        let forged = Request::Info(CommandTail {
            tail: Some(Tail::Challenge(Text::from_bytes(b"1\x002"))),
        });
        assert!(forged.to_vec().is_err());
    }
}
