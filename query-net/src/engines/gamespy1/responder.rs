//! The GameSpy v1 responder: requests parsed, sections encoded once per state snapshot, replies
//! split into datagrams (see the [parent module](super) for what it answers).

use std::borrow::Cow;
use std::net::SocketAddr;
use std::ops::Range;

use query_specs::gamespy1::{
    Echo, Player as WirePlayer, Reply, ReplyDatagrams, Request, Team as WireTeam,
    ENCODING as REQUEST_ENCODING, FINAL_KEY, MAX_DATAGRAM, MAX_PARTS, QUERYID_KEY,
};
use query_wire::kv::{self, FromKeyValues, ToKeyValues};
use query_wire::TextEncoding;

use super::DEFAULT_ENCODING;
use crate::clock::Now;
use crate::engine::{DropReason, ReplySink, Responder, Verdict};
use crate::engines::fit;
use crate::snapshot::SnapshotCache;
use crate::state::{RuleValue, ServerState, SharedState};

/// How a [`GameSpy1Responder`] presents the server, beyond the [`ServerState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameSpy1Config {
    /// `gamename` in the basic section (`ut`, `bfield1942`, ...); not sent when empty.
    pub game_name: String,
    /// The encoding of every text on the wire; characters it cannot represent, and the
    /// backslash the format cannot carry, are sent as `?`.
    pub encoding: TextEncoding,
    /// The largest reply datagram (the service's own cap applies too).
    pub max_datagram: usize,
}

impl Default for GameSpy1Config {
    /// No game name, Windows-1252, 1400-byte datagrams.
    fn default() -> Self {
        GameSpy1Config {
            game_name: String::new(),
            encoding: DEFAULT_ENCODING,
            max_datagram: MAX_DATAGRAM,
        }
    }
}

/// Requests longer than this are dropped as malformed; real ones are a few dozen bytes.
pub const MAX_REQUEST: usize = 1024;
/// Keys and values are cut to this many bytes: every pair then fits one datagram.
const MAX_TEXT: usize = 255;
/// Rules stop being added once the section is this large, and players once theirs is: with
/// 1400-byte datagrams a reply stays well under the 64 parts a client accepts.
const MAX_RULES_BYTES: usize = 12 * 1024;
const MAX_PLAYERS_BYTES: usize = 32 * 1024;
const MAX_TEAMS_BYTES: usize = 2 * 1024;

/// Answers GameSpy v1 queries from a [`SharedState`]; see the [module](super) docs.
///
/// ```
/// use query_net::engines::gamespy1::{GameSpy1Config, GameSpy1Responder};
/// use query_net::service::Service;
/// use query_net::state::{ServerState, SharedState};
///
/// let state = SharedState::new(ServerState { name: "Facing Worlds".into(), ..ServerState::default() });
/// let config = GameSpy1Config { game_name: "ut".into(), ..GameSpy1Config::default() };
/// let mut service = Service::new(GameSpy1Responder::new(state, config)).rate_limit(None);
/// let from = "192.0.2.1:5000".parse().unwrap();
/// let replies: Vec<Vec<u8>> = service.handle(from, b"\\info\\").map(<[u8]>::to_vec).collect();
/// assert_eq!(
///     replies,
///     [b"\\hostname\\Facing Worlds\\numplayers\\0\\maxplayers\\0\\queryid\\1.1\\final\\".to_vec()]
/// );
/// ```
#[derive(Debug)]
pub struct GameSpy1Responder {
    state: SharedState,
    config: GameSpy1Config,
    sections: SnapshotCache<Sections>,
    /// The reply being sent, reused from request to request.
    payload: Vec<u8>,
    /// Where each datagram's pairs start and end, reused likewise.
    plan: Vec<Range<usize>>,
    next_query_id: u32,
}

/// What a request asks for.
#[derive(Debug, Default)]
struct Wanted<'d> {
    basic: bool,
    info: bool,
    rules: bool,
    players: bool,
    teams: bool,
    echo: Option<&'d [u8]>,
}

impl<'d> Wanted<'d> {
    /// Reads every query of a request datagram; `None` when it is not a request.
    fn parse(datagram: &'d [u8]) -> Option<Self> {
        if datagram.is_empty() || datagram.len() > MAX_REQUEST {
            return None;
        }
        let mut wanted = Wanted::default();
        for pair in kv::pairs(datagram) {
            let pair = pair.ok()?;
            let query =
                Request::from_pairs(std::slice::from_ref(&pair), None, REQUEST_ENCODING).ok()?;
            match query {
                Request::Status | Request::StatusXServerQuery => {
                    wanted.basic = true;
                    wanted.info = true;
                    wanted.rules = true;
                    wanted.players = true;
                }
                Request::Basic => wanted.basic = true,
                Request::Info => wanted.info = true,
                Request::Rules => wanted.rules = true,
                Request::Players => wanted.players = true,
                Request::Teams => wanted.teams = true,
                // Echoed as the bytes came, whatever their encoding.
                Request::Echo(_) => wanted.echo = Some(pair.value),
                Request::Other(..) => {}
            }
        }
        Some(wanted)
    }

    fn anything(&self) -> bool {
        self.basic || self.info || self.rules || self.players || self.teams || self.echo.is_some()
    }
}

impl GameSpy1Responder {
    /// Answers from `state` as `config` says.
    pub fn new(state: SharedState, config: GameSpy1Config) -> Self {
        GameSpy1Responder {
            state,
            config,
            sections: SnapshotCache::new(),
            payload: Vec::new(),
            plan: Vec::new(),
            next_query_id: 1,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &GameSpy1Config {
        &self.config
    }

    /// The query id the next reply carries.
    pub fn next_query_id(&self) -> u32 {
        self.next_query_id
    }
}

impl Responder for GameSpy1Responder {
    fn handle(
        &mut self,
        _from: SocketAddr,
        datagram: &[u8],
        _now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        let Some(wanted) = Wanted::parse(datagram) else {
            return Verdict::Dropped(DropReason::Malformed);
        };
        if !wanted.anything() {
            return Verdict::Dropped(DropReason::Unsupported);
        }
        let config = &self.config;
        let built = self.sections.get(&self.state, (), |state, stale| {
            Sections::build(state, config, stale.map(|s| s.bytes).unwrap_or_default())
        });
        let Ok((_, sections)) = built else {
            return Verdict::Dropped(DropReason::Unsupported);
        };
        if sections.compose(&wanted, &mut self.payload).is_err() {
            return Verdict::Dropped(DropReason::Malformed);
        }
        let max = self.config.max_datagram.min(replies.max_datagram());
        let query_id = self.next_query_id;
        loop {
            let plan = std::mem::take(&mut self.plan);
            let Ok(datagrams) = ReplyDatagrams::new_in(&self.payload, query_id, max, plan) else {
                return Verdict::Dropped(DropReason::Unsupported);
            };
            let parts = datagrams.len();
            if parts > MAX_PARTS as usize {
                // Clients refuse part numbers above MAX_PARTS (only small datagram caps get
                // here): send what fits, cut between pairs.
                self.plan = datagrams.into_bodies();
                let keep = self.payload.len() * (MAX_PARTS as usize) / parts * 9 / 10;
                cut_between_pairs(&mut self.payload, keep);
                continue;
            }
            self.next_query_id = query_id.wrapping_add(1);
            let mut verdict = Verdict::Answered;
            for i in 0..parts {
                if replies.push_with(|buf| datagrams.write(i, buf)).is_err() {
                    verdict = Verdict::Dropped(DropReason::Unsupported);
                    break;
                }
            }
            self.plan = datagrams.into_bodies();
            return verdict;
        }
    }
}

/// Shortens `payload` to its pairs that end within `max_len` bytes.
fn cut_between_pairs(payload: &mut Vec<u8>, max_len: usize) {
    let end = kv::pairs(payload)
        .map_while(Result::ok)
        .map(|pair| pair.end_offset())
        .take_while(|&end| end <= max_len)
        .last()
        .unwrap_or(0);
    payload.truncate(end);
}

/// The encoded pairs of each reply section for one state snapshot, back to back.
#[derive(Debug)]
struct Sections {
    bytes: Vec<u8>,
    basic: Range<usize>,
    info: Range<usize>,
    rules: Range<usize>,
    players: Range<usize>,
    teams: Range<usize>,
}

impl Sections {
    fn build(
        state: &ServerState,
        config: &GameSpy1Config,
        mut bytes: Vec<u8>,
    ) -> Result<Self, query_wire::Error> {
        bytes.clear();
        let encoding = config.encoding;
        let text = |s| kv_text(s, encoding);

        let start = bytes.len();
        Reply {
            game_name: non_empty(&config.game_name, encoding),
            game_version: non_empty(&state.version, encoding),
            ..Reply::default()
        }
        .write_pairs(&mut bytes, None, encoding)?;
        let basic = start..bytes.len();

        let start = bytes.len();
        Reply {
            hostname: Some(text(&state.name)),
            host_port: (state.port != 0).then_some(state.port),
            map_name: non_empty(&state.map, encoding),
            game_type: non_empty(&state.game_type, encoding),
            num_players: Some(state.num_players()),
            max_players: Some(state.max_players),
            ..Reply::default()
        }
        .write_pairs(&mut bytes, None, encoding)?;
        let info = start..bytes.len();

        let start = bytes.len();
        let mut rules = Vec::with_capacity(state.rules.len());
        let mut rules_len = 0;
        for (key, value) in &state.rules {
            let key = text(key);
            if !is_free_rule_key(&key) {
                continue;
            }
            let value = match value {
                RuleValue::Text(t) => text(t),
                other => Cow::Owned(kv_text(&other.to_string(), encoding).into_owned()),
            };
            rules_len += kv::pair_len(key.as_bytes(), None, value.as_bytes());
            if rules_len > MAX_RULES_BYTES {
                break;
            }
            rules.push((key, value));
        }
        Reply {
            password: Some(state.password),
            rules,
            ..Reply::default()
        }
        .write_pairs(&mut bytes, None, encoding)?;
        let rules = start..bytes.len();

        let start = bytes.len();
        for (index, p) in state.players.iter().enumerate() {
            let team = p.team.as_deref().map(|name| {
                // A team the state lists goes by its number, which `teamname_N` resolves.
                match state.teams.iter().position(|t| t.name == name) {
                    Some(number) => Cow::Owned(number.to_string()),
                    None => text(name),
                }
            });
            let before = bytes.len();
            WirePlayer {
                index,
                name: Some(text(&p.name)),
                score: Some(fit::saturate_i32(p.score)),
                ping: Some(p.ping),
                team,
                ..WirePlayer::default()
            }
            .write_pairs(&mut bytes, Some(index), encoding)?;
            if bytes.len() - start > MAX_PLAYERS_BYTES {
                bytes.truncate(before);
                break;
            }
        }
        let players = start..bytes.len();

        let start = bytes.len();
        for (index, t) in state.teams.iter().enumerate() {
            let before = bytes.len();
            WireTeam {
                index,
                name: Some(text(&t.name)),
                extra: vec![("teamscore".into(), t.score.to_string().into())],
            }
            .write_pairs(&mut bytes, Some(index), encoding)?;
            if bytes.len() - start > MAX_TEAMS_BYTES {
                bytes.truncate(before);
                break;
            }
        }
        let teams = start..bytes.len();

        Ok(Sections {
            bytes,
            basic,
            info,
            rules,
            players,
            teams,
        })
    }

    /// Writes the sections `wanted` asks for, in the order servers send them, into `payload`.
    fn compose(&self, wanted: &Wanted<'_>, payload: &mut Vec<u8>) -> Result<(), query_wire::Error> {
        payload.clear();
        let sections = [
            (wanted.basic, &self.basic),
            (wanted.info, &self.info),
            (wanted.rules, &self.rules),
            (wanted.players, &self.players),
            (wanted.players || wanted.teams, &self.teams),
        ];
        for (wanted, range) in sections {
            if wanted {
                payload.extend_from_slice(&self.bytes[range.clone()]);
            }
        }
        Echo { echo: wanted.echo }.write_pairs(payload, None, REQUEST_ENCODING)
    }
}

/// Whether a state rule can go out under `key` and come back as a rule: not empty, not a
/// key the reply declares (`hostname`, ...) or the part markers, and not indexed like
/// `player_3`, which a client would file under a player.
fn is_free_rule_key(key: &str) -> bool {
    let key = key.as_bytes();
    !key.is_empty()
        && key != QUERYID_KEY
        && key != FINAL_KEY
        && !<Reply<'_> as FromKeyValues<'_>>::declares_key(key)
        && kv::split_index(key).is_none()
}

/// `text` as it can go on the wire in `encoding`: the backslash (the format's delimiter) and
/// characters the encoding cannot represent become `?`, and it is cut to [`MAX_TEXT`] bytes.
fn kv_text(text: &str, encoding: TextEncoding) -> Cow<'_, str> {
    fit::replace_unsendable(fit::cut(text, encoding, MAX_TEXT), encoding, &['\\'])
}

/// [`kv_text`], or `None` for an empty text, which is not sent.
fn non_empty(text: &str, encoding: TextEncoding) -> Option<Cow<'_, str>> {
    (!text.is_empty()).then(|| kv_text(text, encoding))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_loses_backslashes_and_unmappable_characters_and_is_cut() {
        assert_eq!(kv_text("a\\b", DEFAULT_ENCODING), "a?b");
        assert_eq!(kv_text("Jürgen Ж", DEFAULT_ENCODING), "Jürgen ?");
        assert!(matches!(kv_text("Åsa", DEFAULT_ENCODING), Cow::Borrowed(_)));
        assert_eq!(
            kv_text(&"é".repeat(300), DEFAULT_ENCODING).chars().count(),
            255
        );
        assert_eq!(kv_text(&"é".repeat(300), TextEncoding::Utf8).len(), 254);
    }

    #[test]
    fn rule_keys_that_would_come_back_as_something_else_are_refused() {
        for key in [
            "",
            "hostname",
            "numplayers",
            "queryid",
            "final",
            "player_3",
            "teamname_0",
        ] {
            assert!(!is_free_rule_key(key), "{key}");
        }
        for key in ["timelimit", "sv_punkbuster", "tickets1", "AdminName"] {
            assert!(is_free_rule_key(key), "{key}");
        }
    }

    #[test]
    fn requests_combine_and_unknown_ones_are_ignored() {
        let w = Wanted::parse(b"\\rules\\\\info\\\\ison\\x\\echo\\hi").unwrap();
        assert!(w.info && w.rules && !w.basic && !w.players && !w.teams);
        assert_eq!(w.echo, Some(&b"hi"[..]));
        let w = Wanted::parse(b"\\status\\xserverquery").unwrap();
        assert!(w.basic && w.info && w.rules && w.players);
        assert!(!Wanted::parse(b"\\ison\\x").unwrap().anything());
        assert!(Wanted::parse(b"").is_none());
        assert!(Wanted::parse(b"status").is_none());
        assert!(Wanted::parse(b"\\status\\\\info").is_none());
        assert!(Wanted::parse(&[b'\\'; MAX_REQUEST + 1]).is_none());
    }
}
