//! The SA:MP / open.mp server side: replies encoded once per state snapshot, RCON for
//! authenticated commands.

use std::borrow::Cow;
use std::fmt;
use std::net::SocketAddr;
use std::ops::Range;

use query_specs::samp::{
    Client, Extra, Header, Info, Player as ListedPlayer, Reply, ReplyBody, Request, RequestBody,
    Rule, HEADER_LEN, OP_CLIENTS, OP_EXTRA, OP_INFO, OP_PLAYERS, OP_RULES,
};
use query_wire::{Decode, Encode, ErrorKind, Text, TextEncoding};
use subtle::ConstantTimeEq;

use crate::clock::Now;
use crate::engine::{DropReason, ReplySink, Responder, Verdict};
use crate::engines::fit;
use crate::snapshot::SnapshotCache;
use crate::state::{ServerState, SharedState};

use super::{BAD_RCON_PASSWORD, DEFAULT_ENCODING, MAX_LISTED_PLAYERS};

/// open.mp's extra information, the `o` reply: where a server browser finds the community.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenMpInfo {
    /// Discord invite link.
    pub discord: String,
    /// Banner image URL for light themes.
    pub light_banner: String,
    /// Banner image URL for dark themes.
    pub dark_banner: String,
    /// Logo image URL.
    pub logo: String,
}

/// How a [`SampResponder`] presents the server, beyond the [`ServerState`].
#[derive(Clone, PartialEq, Eq)]
pub struct SampConfig {
    /// The encoding of every text on the wire; characters it cannot represent are sent as `?`.
    pub encoding: TextEncoding,
    /// Answer `d`, the detailed player list, as SA:MP does; open.mp does not.
    pub detailed_players: bool,
    /// Answer `o` with this, which is how clients recognise open.mp.
    pub open_mp: Option<OpenMpInfo>,
    /// The RCON password. Without one (or with an empty one) `x` is not answered at all.
    pub rcon_password: Option<String>,
}

impl Default for SampConfig {
    /// Like a SA:MP 0.3.7 server: Windows-1252, `d` answered, no `o`, no RCON.
    fn default() -> Self {
        SampConfig {
            encoding: DEFAULT_ENCODING,
            detailed_players: true,
            open_mp: None,
            rcon_password: None,
        }
    }
}

impl SampConfig {
    /// Like an open.mp server: `o` answered with `info`, no `d`.
    pub fn open_mp(info: OpenMpInfo) -> Self {
        SampConfig {
            detailed_players: false,
            open_mp: Some(info),
            ..SampConfig::default()
        }
    }
}

impl fmt::Debug for SampConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SampConfig")
            .field("encoding", &self.encoding)
            .field("detailed_players", &self.detailed_players)
            .field("open_mp", &self.open_mp)
            .field(
                "rcon_password",
                &self.rcon_password.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// Runs an authenticated RCON command: gets the command and the state, returns the console
/// lines to send back.
pub type RconHandler = Box<dyn FnMut(&str, &ServerState) -> Vec<String> + Send>;

/// What the default [`RconHandler`] prints: the server knows no commands.
pub fn unknown_command(command: &str, _state: &ServerState) -> Vec<String> {
    vec![format!("Unknown command or variable: {command}")]
}

/// open.mp's limits for the `i` strings, which it cuts to protect clients with fixed buffers.
/// The original SA:MP server does not cut; this responder does, so that no client it answers
/// can be overrun. Counted in bytes on the wire.
pub const MAX_HOSTNAME: usize = 63;
/// See [`MAX_HOSTNAME`].
pub const MAX_GAMEMODE: usize = 39;
/// See [`MAX_HOSTNAME`].
pub const MAX_LANGUAGE: usize = 39;
/// Rule names and values and player names have a one-byte length.
const MAX_SHORT_TEXT: usize = 255;
/// A bound for the `o` URLs, which have a four-byte length.
const MAX_URL: usize = 1024;
/// Rules stop being added to the `r` reply once it is this large.
const MAX_RULES_BYTES: usize = 8192;
/// RCON output: lines per command, bytes per line.
const MAX_RESPONDER_RCON_LINES: usize = 1000;
const MAX_RCON_LINE: usize = 512;

/// Answers SA:MP / open.mp queries from a [`SharedState`]; see the [module](super) docs.
///
/// ```
/// use query_net::engines::samp::{SampConfig, SampResponder};
/// use query_net::state::{ServerState, SharedState};
///
/// let state = SharedState::new(ServerState { name: "Los Santos".into(), ..ServerState::default() });
/// let responder = SampResponder::new(state, SampConfig {
///     rcon_password: Some("changeme".into()),
///     ..SampConfig::default()
/// })
/// .with_rcon_handler(|command, state| match command {
///     "players" => state.players.iter().map(|p| p.name.clone()).collect(),
///     other => vec![format!("Unknown command or variable: {other}")],
/// });
/// # let _ = responder;
/// ```
pub struct SampResponder {
    state: SharedState,
    config: SampConfig,
    rcon: RconHandler,
    /// Keyed by the datagram cap the bodies were fitted to.
    replies: SnapshotCache<EncodedReplies, usize>,
}

impl fmt::Debug for SampResponder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SampResponder")
            .field("config", &self.config)
            .field("cached", &self.replies.is_built())
            .finish_non_exhaustive()
    }
}

impl SampResponder {
    /// Answers from `state` as `config` says; RCON commands get [`unknown_command`].
    pub fn new(state: SharedState, config: SampConfig) -> Self {
        SampResponder {
            state,
            config,
            rcon: Box::new(unknown_command),
            replies: SnapshotCache::new(),
        }
    }

    /// Runs authenticated RCON commands with `handler`.
    #[must_use]
    pub fn with_rcon_handler(
        mut self,
        handler: impl FnMut(&str, &ServerState) -> Vec<String> + Send + 'static,
    ) -> Self {
        self.rcon = Box::new(handler);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &SampConfig {
        &self.config
    }

    /// The reply bodies for the current state and a datagram cap of `datagram` bytes, encoded
    /// again only when either changed.
    fn encoded(&mut self, datagram: usize) -> Result<&EncodedReplies, query_wire::Error> {
        let config = &self.config;
        let (_, replies) = self.replies.get(&self.state, datagram, |state, stale| {
            EncodedReplies::build(
                state,
                config,
                datagram,
                stale.map(|r| r.bytes).unwrap_or_default(),
            )
        })?;
        Ok(replies)
    }

    fn answer_rcon(
        &mut self,
        header: Header,
        password: &Text<'_>,
        command: &Text<'_>,
        replies: &mut ReplySink,
    ) -> Verdict {
        let encoding = self.config.encoding;
        let expected = match self.config.rcon_password.as_deref() {
            Some(p) if !p.is_empty() => encoding.encode_lossy(p),
            _ => return Verdict::Dropped(DropReason::Unsupported),
        };
        let line_reply = |line: &str, replies: &mut ReplySink| {
            let body = ReplyBody::Rcon(wire_text(line, encoding, MAX_RCON_LINE));
            replies.push_encoded(&Reply { header, body }, ())
        };
        if !bool::from(password.as_bytes().ct_eq(&expected)) {
            return Verdict::pushed(line_reply(BAD_RCON_PASSWORD, replies));
        }
        let command = command.decode(encoding);
        let state = self.state.load();
        let lines = (self.rcon)(&command, &state);
        for line in lines.iter().take(MAX_RESPONDER_RCON_LINES) {
            if line_reply(line, replies).is_err() {
                break;
            }
        }
        Verdict::Answered
    }
}

impl Responder for SampResponder {
    fn handle(
        &mut self,
        _from: SocketAddr,
        datagram: &[u8],
        _now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        // Decoding the whole datagram enforces open.mp's exact sizes: 11 bytes, 15 for `p`.
        let Ok(request) = Request::from_bytes(datagram) else {
            return Verdict::Dropped(DropReason::Malformed);
        };
        let header = request.header;
        let pushed = match &request.body {
            RequestBody::Ping(echo) => replies.push_encoded(
                &Reply {
                    header,
                    body: ReplyBody::Ping(*echo),
                },
                (),
            ),
            RequestBody::Rcon { password, command } => {
                return self.answer_rcon(header, password, command, replies);
            }
            _ => {
                let Ok(encoded) = self.encoded(replies.max_datagram()) else {
                    return Verdict::Dropped(DropReason::Unsupported);
                };
                // `o` on a SA:MP server, `d` on an open.mp one, the lists with more players
                // than SA:MP lists: known requests left unanswered on purpose, as the real
                // servers do.
                let Some(body) = encoded.body(header.opcode) else {
                    return Verdict::Dropped(DropReason::Declined);
                };
                replies.push_with(|buf| {
                    let start = header.encode_into(buf)?;
                    let end = start + body.len();
                    let Some(slot) = buf.get_mut(start..end) else {
                        return Err(query_wire::Error::new(
                            ErrorKind::BufferTooSmall {
                                need: end,
                                have: buf.len(),
                            },
                            start,
                        ));
                    };
                    slot.copy_from_slice(body);
                    Ok(end)
                })
            }
        };
        Verdict::pushed(pushed)
    }
}

/// The bodies (after the header) of the `i`, `r`, `c`, `d` and `o` replies for one state
/// snapshot, back to back in one buffer.
///
/// SA:MP has no split replies, so each reply is made to fit one datagram: rules and players
/// past the room left are not listed (the count in the list says how many are). A client sees
/// fewer players listed than the `i` reply counts, as it does from a real server with more
/// than 100 players.
#[derive(Debug)]
struct EncodedReplies {
    bytes: Vec<u8>,
    info: Range<usize>,
    rules: Range<usize>,
    clients: Option<Range<usize>>,
    players: Option<Range<usize>>,
    extra: Option<Range<usize>>,
}

impl EncodedReplies {
    fn build(
        state: &ServerState,
        config: &SampConfig,
        datagram: usize,
        mut bytes: Vec<u8>,
    ) -> Result<Self, query_wire::Error> {
        bytes.clear();
        // Room for a body after the 11-byte header.
        let room = datagram.saturating_sub(HEADER_LEN);
        let encoding = config.encoding;
        let text = |s, max| wire_text(s, encoding, max);

        let info = append(
            &mut bytes,
            &ReplyBody::Info(Info {
                password: state.password,
                players: fit::saturate_u16(state.num_players()),
                max_players: fit::saturate_u16(state.max_players),
                hostname: text(&state.name, MAX_HOSTNAME),
                gamemode: text(&state.game_type, MAX_GAMEMODE),
                language: text(&state.language, MAX_LANGUAGE),
            }),
        )?;

        let rule_texts = rule_texts(state);
        let mut rules = Vec::with_capacity(rule_texts.len());
        let mut rules_len = ReplyBody::Rules(Vec::new()).encoded_len(OP_RULES);
        for (name, value) in &rule_texts {
            let rule = Rule {
                name: text(name, MAX_SHORT_TEXT),
                value: text(value, MAX_SHORT_TEXT),
            };
            rules_len += rule.encoded_len(());
            if rules_len > MAX_RULES_BYTES.min(room) {
                break;
            }
            rules.push(rule);
        }
        let rules = append(&mut bytes, &ReplyBody::Rules(rules))?;

        let (mut clients, mut players) = (None, None);
        if state.num_players() <= MAX_LISTED_PLAYERS {
            let listed = state.players.iter().take(MAX_LISTED_PLAYERS as usize);
            let mut len = ReplyBody::Clients(Vec::new()).encoded_len(OP_CLIENTS);
            let list = listed
                .clone()
                .map(|p| Client {
                    name: text(&p.name, MAX_SHORT_TEXT),
                    score: fit::saturate_i32(p.score),
                })
                .take_while(|client| {
                    len += client.encoded_len(());
                    len <= room
                })
                .collect();
            clients = Some(append(&mut bytes, &ReplyBody::Clients(list))?);
            if config.detailed_players {
                let mut len = ReplyBody::Players(Vec::new()).encoded_len(OP_PLAYERS);
                let list = listed
                    .enumerate()
                    .map(|(i, p)| ListedPlayer {
                        // Ids are one byte on the wire; the SA:MP server sends the low byte.
                        id: p
                            .id
                            .unwrap_or(u32::try_from(i).unwrap_or(u32::MAX))
                            .to_le_bytes()[0],
                        name: text(&p.name, MAX_SHORT_TEXT),
                        score: fit::saturate_i32(p.score),
                        ping: p.ping,
                    })
                    .take_while(|player| {
                        len += player.encoded_len(());
                        len <= room
                    })
                    .collect();
                players = Some(append(&mut bytes, &ReplyBody::Players(list))?);
            }
        }

        // Four URLs with four-byte lengths (and any bytes before them) fit the datagram.
        let url_max = MAX_URL.min(room.saturating_sub(32) / 4);
        let extra = match &config.open_mp {
            Some(o) => Some(append(
                &mut bytes,
                &ReplyBody::Extra(Extra {
                    discord: text(&o.discord, url_max),
                    light_banner: text(&o.light_banner, url_max),
                    dark_banner: text(&o.dark_banner, url_max),
                    logo: text(&o.logo, url_max),
                }),
            )?),
            None => None,
        };

        Ok(EncodedReplies {
            bytes,
            info,
            rules,
            clients,
            players,
            extra,
        })
    }

    fn body(&self, opcode: u8) -> Option<&[u8]> {
        let range = match opcode {
            OP_INFO => self.info.clone(),
            OP_RULES => self.rules.clone(),
            OP_CLIENTS => self.clients.clone()?,
            OP_PLAYERS => self.players.clone()?,
            OP_EXTRA => self.extra.clone()?,
            _ => return None,
        };
        self.bytes.get(range)
    }
}

/// The rules a server sends: `mapname` and `version` from the state's fields when set, then
/// the state's rules (a rule of the same name as a field that was sent is left out).
fn rule_texts(state: &ServerState) -> Vec<(&str, Cow<'_, str>)> {
    let mut out: Vec<(&str, Cow<'_, str>)> = Vec::with_capacity(state.rules.len() + 2);
    if !state.map.is_empty() {
        out.push(("mapname", Cow::Borrowed(&state.map)));
    }
    if !state.version.is_empty() {
        out.push(("version", Cow::Borrowed(&state.version)));
    }
    let fields = out.len();
    for (name, value) in &state.rules {
        if out[..fields].iter().any(|(field, _)| field == name) {
            continue;
        }
        out.push((name, value.as_text()));
    }
    out
}

/// Encodes `body` after what `bytes` holds; returns where it went.
fn append(bytes: &mut Vec<u8>, body: &ReplyBody<'_>) -> Result<Range<usize>, query_wire::Error> {
    let opcode = body.tag();
    let start = bytes.len();
    bytes.resize(start + body.encoded_len(opcode), 0);
    let written = body.encode_into_with(&mut bytes[start..], opcode)?;
    bytes.truncate(start + written);
    Ok(start..bytes.len())
}

/// `text` in `encoding` ('?' for what it cannot represent), cut to at most `max` bytes at a
/// character boundary.
fn wire_text(text: &str, encoding: TextEncoding, max: usize) -> Text<'_> {
    Text::encode(fit::cut(text, encoding, max), encoding)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cut_at_character_boundaries_and_unmappable_characters_become_question_marks() {
        let cut = wire_text("Jürgen Ж", TextEncoding::Windows1252, 8);
        assert_eq!(cut.as_bytes(), b"J\xfcrgen ?");
        let cut = wire_text("Jürgen", TextEncoding::Windows1252, 3);
        assert_eq!(cut.as_bytes(), b"J\xfcr");
        let cut = wire_text("aéb", TextEncoding::Utf8, 2);
        assert_eq!(cut.as_bytes(), b"a");
        let cut = wire_text("Жук", TextEncoding::Windows1251, 10);
        assert_eq!(cut.as_bytes(), b"\xc6\xf3\xea");
    }
}
