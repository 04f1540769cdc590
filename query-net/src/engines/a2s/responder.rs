//! The A2S server side: challenges derived from the source address, replies encoded once per
//! state snapshot and split in the Source form (see the [parent module](super)).

use std::borrow::Cow;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::ops::Range;
use std::time::{Duration, SystemTime};

use query_specs::a2s::{
    Challenge, ExtraData, Info, Player as WirePlayer, PlayerList, Players, Reply, Request,
    Rule as WireRule, Rules, ShipPlayers, ShipStats, SourcePart, TheShip, COMPRESSED_ID,
    INFO_PAYLOAD, MAX_PARTS, THE_SHIP,
};
use query_wire::{Decode, Encode, Text};

use crate::challenge::KeyedChallenge;
use crate::clock::Now;
use crate::engine::{DropReason, ReplySink, Responder, Verdict};
use crate::engines::fit;
use crate::snapshot::SnapshotCache;
use crate::state::{RuleValue, ServerState, SharedState};

/// The largest datagram a Source server sends; longer replies are split.
pub const SPLIT_SIZE: usize = 1400;

/// Texts are cut to this many bytes: Source's own limits are smaller, and it bounds a reply.
const MAX_TEXT: usize = 255;
/// PLAYER and RULES rows stop being added once a reply is this large: with 1400-byte parts
/// that is 24 parts, well under the [`MAX_PARTS`] a client accepts.
const MAX_REPLY: usize = 32 * 1024;
/// PLAYER's count is a u8.
const MAX_PLAYER_ROWS: usize = u8::MAX as usize;

/// How an [`A2sResponder`] presents the server, beyond the [`ServerState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct A2sConfig {
    /// Answer INFO only with a valid challenge, as Source servers do since December 2020.
    /// Off, INFO is answered at once: older clients work, but the port then sends a few
    /// hundred bytes for 25 from a forged address.
    pub info_challenge: bool,
    /// How long a challenge stays valid: between this and twice this.
    pub challenge_window: Duration,
    /// Replies longer than this are split, and no part is longer (the service's own datagram
    /// cap applies too).
    pub split_size: usize,
    /// INFO's network protocol version.
    pub protocol: u8,
    /// INFO's game folder (`cstrike`, `tf`).
    pub folder: String,
    /// INFO's game name; the state's game type when empty.
    pub game: String,
    /// The Steam app id. [`THE_SHIP`] switches INFO and PLAYER to The Ship's layout.
    pub app_id: u16,
    /// `d` dedicated, `l` listen, `p` SourceTV proxy.
    pub server_type: u8,
    /// `l` Linux, `w` Windows, `m` macOS.
    pub environment: u8,
    /// Whether the server says it is VAC-secured.
    pub vac: bool,
    /// Comma-separated tags (`sv_tags`); not sent when empty. Past 255 players or slots,
    /// `cp<N>,mp<N>` go first, as Rust writes the counts the u8 fields cannot hold.
    pub keywords: String,
    /// The server's SteamID, sent when set.
    pub steam_id: Option<u64>,
    /// The 64-bit game id, sent when set.
    pub game_id: Option<u64>,
}

impl Default for A2sConfig {
    /// INFO challenged, 30-second windows, 1400-byte parts, protocol 17, a dedicated server on
    /// this machine's OS, no folder, app id 0, no VAC, no keywords.
    fn default() -> Self {
        A2sConfig {
            info_challenge: true,
            challenge_window: Duration::from_secs(30),
            split_size: SPLIT_SIZE,
            protocol: 17,
            folder: String::new(),
            game: String::new(),
            app_id: 0,
            server_type: b'd',
            environment: if cfg!(windows) {
                b'w'
            } else if cfg!(target_os = "macos") {
                b'm'
            } else {
                b'l'
            },
            vac: false,
            keywords: String::new(),
            steam_id: None,
            game_id: None,
        }
    }
}

/// Answers A2S INFO, PLAYER and RULES from a [`SharedState`]; see the [module](super) docs.
///
/// ```
/// use query_net::engines::a2s::{A2sConfig, A2sResponder};
/// use query_net::service::Service;
/// use query_net::state::{ServerState, SharedState};
/// use query_specs::a2s::{InfoRequest, Reply, Request, INFO_PAYLOAD};
/// use query_wire::{Decode, Encode};
///
/// let state = SharedState::new(ServerState { name: "de_dust2 24/7".into(), ..ServerState::default() });
/// let mut service = Service::new(A2sResponder::new(state, A2sConfig::default())).rate_limit(None);
/// let from = "192.0.2.1:5000".parse().unwrap();
/// // Without a challenge, the answer is one: 9 bytes, fewer than the request's 25.
/// let mut request = InfoRequest { payload: INFO_PAYLOAD, challenge: None };
/// let first = Request::Info(request.clone()).to_vec().unwrap();
/// let reply = service.handle(from, &first).next().unwrap().to_vec();
/// assert_eq!(reply.len(), 9);
/// let Ok(Reply::Challenge(challenge)) = Reply::from_bytes_with(&reply, 0) else { panic!() };
/// // Sent again with it, INFO is answered.
/// request.challenge = Some(challenge.challenge);
/// let again = Request::Info(request).to_vec().unwrap();
/// let info = service.handle(from, &again).next().unwrap();
/// assert!(matches!(Reply::from_bytes_with(info, 0), Ok(Reply::Info(_))));
/// ```
#[derive(Debug)]
pub struct A2sResponder {
    state: SharedState,
    config: A2sConfig,
    challenges: KeyedChallenge,
    encoded: SnapshotCache<Encoded>,
    /// The id of the next split reply; never has [`COMPRESSED_ID`] set.
    next_id: u32,
}

/// The replies a request can get, once its challenge is settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wanted {
    Info,
    Players,
    Rules,
}

impl A2sResponder {
    /// Answers from `state` as `config` says, with a random challenge key.
    pub fn new(state: SharedState, config: A2sConfig) -> Self {
        A2sResponder {
            challenges: KeyedChallenge::new(config.challenge_window),
            state,
            config,
            encoded: SnapshotCache::new(),
            next_id: 1,
        }
    }

    /// Derives challenges from `secret` instead of a random one, so that several responders
    /// (one per core behind one address) accept each other's.
    #[must_use]
    pub fn with_secret(mut self, secret: &[u8; 32]) -> Self {
        self.challenges = self.challenges.rekeyed(secret);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &A2sConfig {
        &self.config
    }

    /// The state it answers from.
    pub fn state(&self) -> &SharedState {
        &self.state
    }

    /// The challenge `client` is given at `wall`.
    fn challenge(&self, client: SocketAddr, wall: SystemTime) -> i32 {
        self.challenges.issue(client, wall)
    }

    /// Brings the encoded replies up to date with the state.
    fn refresh(&mut self) -> Result<&Encoded, query_wire::Error> {
        let config = &self.config;
        let (_, encoded) = self.encoded.get(&self.state, (), |state, stale| {
            Encoded::build(state, config, stale.map(|e| e.bytes).unwrap_or_default())
        })?;
        Ok(encoded)
    }

    /// Sends the reply `wanted` asks for: whole, or in Source parts when longer than a part.
    fn answer(&mut self, wanted: Wanted, replies: &mut ReplySink) -> Verdict {
        let limit = self
            .config
            .split_size
            .min(replies.max_datagram())
            .min(usize::from(u16::MAX));
        let id = self.next_id;
        let Ok(encoded) = self.refresh() else {
            return Verdict::Dropped(DropReason::Unsupported);
        };
        let whole = encoded.reply(wanted);
        if whole.len() <= limit {
            return Verdict::pushed(replies.push(whole));
        }
        let verdict = push_parts(whole, id, limit, replies);
        self.next_id = id.wrapping_add(1) & !COMPRESSED_ID;
        verdict
    }
}

impl Responder for A2sResponder {
    fn handle(
        &mut self,
        from: SocketAddr,
        datagram: &[u8],
        now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        // Exact sizes only: 25 or 29 bytes for INFO, 9 for PLAYER and RULES.
        let Ok(request) = Request::from_bytes(datagram) else {
            return Verdict::Dropped(DropReason::Malformed);
        };
        let (wanted, proof) = match request {
            Request::Info(info) if info.payload != INFO_PAYLOAD => {
                return Verdict::Dropped(DropReason::Malformed);
            }
            Request::Info(_) if !self.config.info_challenge => {
                return self.answer(Wanted::Info, replies);
            }
            Request::Info(info) => (Wanted::Info, info.challenge),
            Request::Players(c) => (Wanted::Players, Some(c.challenge)),
            Request::Rules(c) => (Wanted::Rules, Some(c.challenge)),
        };
        if proof.is_some_and(|c| self.challenges.accepts(from, c, now.wall)) {
            // Only `from` was given this challenge: the source is not spoofed.
            replies.mark_proven();
            return self.answer(wanted, replies);
        }
        // The 9-byte challenge is no longer than any request that gets it.
        let challenge = Reply::Challenge(Challenge {
            challenge: self.challenge(from, now.wall),
        });
        Verdict::pushed(replies.push_encoded(&challenge, 0))
    }
}

/// Pushes `whole` as Source parts of at most `limit` bytes, all with reply id `id`.
fn push_parts(whole: &[u8], id: u32, limit: usize, replies: &mut ReplySink) -> Verdict {
    let header = SourcePart {
        id,
        total: 0,
        number: 0,
        max_size: 0,
        payload: &[],
    }
    .encoded_len(());
    let Some(share) = limit.checked_sub(header).filter(|&share| share > 0) else {
        return Verdict::Dropped(DropReason::Unsupported);
    };
    let total = whole.len().div_ceil(share);
    // Only a datagram cap far below Source's gets past MAX_PARTS.
    let (Ok(total), Ok(max_size), true) = (
        u8::try_from(total),
        u16::try_from(limit),
        total <= MAX_PARTS,
    ) else {
        return Verdict::Dropped(DropReason::Unsupported);
    };
    for (number, payload) in (0..=u8::MAX).zip(whole.chunks(share)) {
        let part = SourcePart {
            id,
            total,
            number,
            max_size,
            payload,
        };
        if replies.push_encoded(&part, ()).is_err() {
            return Verdict::Dropped(DropReason::Unsupported);
        }
    }
    Verdict::Answered
}

/// The whole INFO, PLAYER and RULES replies for one state snapshot, back to back.
#[derive(Debug)]
struct Encoded {
    bytes: Vec<u8>,
    info: Range<usize>,
    players: Range<usize>,
    rules: Range<usize>,
}

impl Encoded {
    fn build(
        state: &ServerState,
        config: &A2sConfig,
        mut bytes: Vec<u8>,
    ) -> Result<Self, query_wire::Error> {
        bytes.clear();
        let app_id = config.app_id;
        let keywords = keywords(state, config);
        let info = append(
            &mut bytes,
            &Reply::Info(info(state, config, &keywords)),
            app_id,
        )?;
        let players = append(&mut bytes, &players(state, app_id), app_id)?;
        let rule_texts: Vec<(&str, Cow<'_, str>)> = state
            .rules
            .iter()
            .map(|(name, value)| (name.as_str(), rule_text(value)))
            .collect();
        let rules = append(&mut bytes, &rules(&rule_texts), app_id)?;
        Ok(Encoded {
            bytes,
            info,
            players,
            rules,
        })
    }

    fn reply(&self, wanted: Wanted) -> &[u8] {
        let range = match wanted {
            Wanted::Info => &self.info,
            Wanted::Players => &self.players,
            Wanted::Rules => &self.rules,
        };
        self.bytes.get(range.clone()).unwrap_or_default()
    }
}

fn info<'s>(state: &'s ServerState, config: &'s A2sConfig, keywords: &'s str) -> Info<'s> {
    let game = if config.game.is_empty() {
        &state.game_type
    } else {
        &config.game
    };
    let keywords = wire_text(keywords);
    Info {
        protocol: config.protocol,
        name: wire_text(&state.name),
        map: wire_text(&state.map),
        folder: wire_text(&config.folder),
        game: wire_text(game),
        app_id: config.app_id,
        players: saturate_u8(state.num_players()),
        max_players: saturate_u8(state.max_players),
        bots: 0,
        server_type: config.server_type,
        environment: config.environment,
        visibility: u8::from(state.password),
        vac: u8::from(config.vac),
        the_ship: (config.app_id == THE_SHIP).then_some(TheShip {
            mode: 0,
            witnesses: 0,
            duration: 0,
        }),
        version: wire_text(&state.version),
        // The flag byte is written from the fields present.
        extra: Some(ExtraData {
            flags: 0,
            port: (state.port != 0).then_some(state.port),
            steam_id: config.steam_id,
            spectator: None,
            keywords: (!keywords.as_bytes().is_empty()).then_some(keywords),
            game_id: config.game_id,
        }),
    }
}

/// The configured keywords, after `cp<N>,mp<N>` when a count does not fit INFO's u8.
fn keywords<'s>(state: &ServerState, config: &'s A2sConfig) -> Cow<'s, str> {
    let (players, slots) = (state.num_players(), state.max_players);
    if players <= u32::from(u8::MAX) && slots <= u32::from(u8::MAX) {
        return Cow::Borrowed(&config.keywords);
    }
    let mut text = format!("cp{players},mp{slots}");
    if !config.keywords.is_empty() {
        // Writing into a String cannot fail.
        let _ = write!(text, ",{}", config.keywords);
    }
    Cow::Owned(text)
}

/// The player list: the first rows that fit [`MAX_REPLY`], at most 255 so the count is right.
/// The state has no connection times: every duration is 0.
fn players(state: &ServerState, app_id: u16) -> Reply<'_> {
    let ship = app_id == THE_SHIP;
    let mut size = Reply::Players(player_list(Vec::new(), ship)).encoded_len(app_id);
    let per_ship_row = if ship { 8 } else { 0 };
    let mut rows = Vec::with_capacity(state.players.len().min(MAX_PLAYER_ROWS));
    for player in state.players.iter().take(MAX_PLAYER_ROWS) {
        let row = WirePlayer {
            index: 0,
            name: wire_text(&player.name),
            score: fit::saturate_i32(player.score),
            duration: 0.0,
        };
        size += row.encoded_len(()) + per_ship_row;
        if size > MAX_REPLY {
            break;
        }
        rows.push(row);
    }
    Reply::Players(player_list(rows, ship))
}

/// `rows` as a player list, The Ship's (deaths and money 0) when `ship`.
fn player_list(rows: Vec<WirePlayer<'_>>, ship: bool) -> PlayerList<'_> {
    let count = saturate_u8(rows.len());
    if ship {
        PlayerList::TheShip(ShipPlayers {
            count,
            stats: vec![
                ShipStats {
                    deaths: 0,
                    money: 0,
                };
                rows.len()
            ],
            players: rows,
        })
    } else {
        PlayerList::Standard(Players {
            count,
            players: rows,
        })
    }
}

/// The rules in the state's order: the first pairs that fit [`MAX_REPLY`].
fn rules<'s>(texts: &'s [(&'s str, Cow<'s, str>)]) -> Reply<'s> {
    let mut size = Reply::Rules(Rules {
        count: 0,
        rules: Vec::new(),
    })
    .encoded_len(0);
    let mut rules = Vec::with_capacity(texts.len());
    for (name, value) in texts {
        let rule = WireRule {
            name: wire_text(name),
            value: wire_text(value),
        };
        size += rule.encoded_len(());
        if size > MAX_REPLY {
            break;
        }
        rules.push(rule);
    }
    Reply::Rules(Rules {
        count: fit::saturate_u16(rules.len()),
        rules,
    })
}

/// A rule's value as a Source cvar shows it: a flag as `1` or `0`.
fn rule_text(value: &RuleValue) -> Cow<'_, str> {
    match value {
        RuleValue::Text(text) => Cow::Borrowed(text),
        RuleValue::Bool(flag) => Cow::Borrowed(if *flag { "1" } else { "0" }),
        other => Cow::Owned(other.to_string()),
    }
}

/// `text` as an A2S string: up to its first NUL (which would end it early on the wire), cut to
/// [`MAX_TEXT`] bytes between characters. Sent as UTF-8, as Source servers send it.
fn wire_text(text: &str) -> Text<'_> {
    let text = text.split('\0').next().unwrap_or_default();
    Text::from(fit::cut_utf8(text, MAX_TEXT))
}

fn saturate_u8(n: impl TryInto<u8>) -> u8 {
    n.try_into().unwrap_or(u8::MAX)
}

/// Encodes `reply` after what `bytes` holds; returns where it went.
fn append(
    bytes: &mut Vec<u8>,
    reply: &Reply<'_>,
    app_id: u16,
) -> Result<Range<usize>, query_wire::Error> {
    let start = bytes.len();
    bytes.resize(start + reply.encoded_len(app_id), 0);
    let written = reply.encode_into_with(&mut bytes[start..], app_id)?;
    bytes.truncate(start + written);
    Ok(start..bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    use query_specs::a2s::{InfoRequest, Reassembly, NO_CHALLENGE, SINGLE_BYTES, SPLIT_BYTES};
    use query_wire::TextEncoding;

    use crate::state::PlayerState;

    fn from() -> SocketAddr {
        "192.0.2.1:5000".parse().unwrap()
    }

    fn at(secs: u64) -> Now {
        Now {
            instant: std::time::Instant::now(),
            wall: UNIX_EPOCH + Duration::from_secs(1_740_000_000 + secs),
        }
    }

    fn state() -> ServerState {
        ServerState {
            name: "Responder Test".into(),
            map: "de_dust2".into(),
            game_type: "Counter-Strike".into(),
            version: "1.0.0.1".into(),
            max_players: 24,
            port: 27015,
            password: true,
            players: vec![
                PlayerState {
                    name: "Zoë".into(),
                    score: 12,
                    ..PlayerState::default()
                },
                PlayerState {
                    name: "nul\0cut".into(),
                    score: i64::MIN,
                    ..PlayerState::default()
                },
            ],
            rules: [
                ("mp_friendlyfire".to_owned(), RuleValue::Bool(true)),
                ("mp_timelimit".to_owned(), RuleValue::Integer(30)),
                ("sv_gravity".to_owned(), RuleValue::Float(800.5)),
                (
                    "sv_contact".to_owned(),
                    RuleValue::from("admin@example.com"),
                ),
            ]
            .into_iter()
            .collect(),
            ..ServerState::default()
        }
    }

    fn responder(state: ServerState, config: A2sConfig) -> A2sResponder {
        A2sResponder::new(SharedState::new(state), config).with_secret(&[7; 32])
    }

    fn info_request(challenge: Option<i32>) -> Vec<u8> {
        Request::Info(InfoRequest {
            payload: INFO_PAYLOAD,
            challenge,
        })
        .to_vec()
        .unwrap()
    }

    fn players_request(challenge: i32) -> Vec<u8> {
        Request::Players(Challenge { challenge }).to_vec().unwrap()
    }

    fn rules_request(challenge: i32) -> Vec<u8> {
        Request::Rules(Challenge { challenge }).to_vec().unwrap()
    }

    /// The datagrams `request` gets, and the verdict.
    fn ask(responder: &mut A2sResponder, request: &[u8], now: Now) -> (Verdict, Vec<Vec<u8>>) {
        let mut sink = ReplySink::default();
        let verdict = responder.handle(from(), request, now, &mut sink);
        (verdict, sink.datagrams().map(<[u8]>::to_vec).collect())
    }

    fn challenge_of(reply: &[u8]) -> Option<i32> {
        match Reply::from_bytes_with(reply, 0) {
            Ok(Reply::Challenge(c)) => Some(c.challenge),
            _ => None,
        }
    }

    /// The one datagram `request` gets, joined if split.
    fn whole(responder: &mut A2sResponder, request: &[u8], now: Now) -> Vec<u8> {
        let (verdict, datagrams) = ask(responder, request, now);
        assert_eq!(verdict, Verdict::Answered);
        let mut parts = Reassembly::new();
        for datagram in &datagrams {
            if datagram.starts_with(SINGLE_BYTES) {
                assert_eq!(datagrams.len(), 1);
                return datagram.clone();
            }
            if let Some(joined) = parts.push(datagram).unwrap() {
                return joined;
            }
        }
        panic!("no whole reply in {datagrams:?}");
    }

    #[test]
    fn player_and_rules_need_a_challenge_and_info_does_by_default() {
        let mut r = responder(state(), A2sConfig::default());
        let now = at(0);
        for request in [
            info_request(None),
            info_request(Some(NO_CHALLENGE)),
            players_request(NO_CHALLENGE),
            rules_request(NO_CHALLENGE),
        ] {
            let (verdict, replies) = ask(&mut r, &request, now);
            assert_eq!(verdict, Verdict::Answered);
            assert_eq!(replies.len(), 1);
            let challenge = challenge_of(&replies[0]).expect("a challenge");
            assert_eq!(challenge, r.challenge(from(), now.wall));
            assert!(challenge >= 0);
        }
        let challenge = r.challenge(from(), now.wall);
        let info = whole(&mut r, &info_request(Some(challenge)), now);
        let Ok(Reply::Info(info)) = Reply::from_bytes_with(&info, 0) else {
            panic!("not INFO");
        };
        assert_eq!(info.name.as_bytes(), b"Responder Test");
        // One challenge serves every request of its window.
        let players = whole(&mut r, &players_request(challenge), now);
        assert!(matches!(
            Reply::from_bytes_with(&players, 0),
            Ok(Reply::Players(_))
        ));
        let rules = whole(&mut r, &rules_request(challenge), now);
        assert!(matches!(
            Reply::from_bytes_with(&rules, 0),
            Ok(Reply::Rules(_))
        ));
    }

    #[test]
    fn info_without_challenge_when_configured() {
        let config = A2sConfig {
            info_challenge: false,
            ..A2sConfig::default()
        };
        let mut r = responder(state(), config);
        for request in [info_request(None), info_request(Some(12345))] {
            let info = whole(&mut r, &request, at(0));
            assert!(matches!(
                Reply::from_bytes_with(&info, 0),
                Ok(Reply::Info(_))
            ));
        }
        let (_, replies) = ask(&mut r, &players_request(NO_CHALLENGE), at(0));
        assert!(challenge_of(&replies[0]).is_some());
    }

    #[test]
    fn a_wrong_or_old_challenge_gets_the_current_one() {
        let mut r = responder(state(), A2sConfig::default());
        let issued = r.challenge(from(), at(0).wall);
        // Valid in its window and the next one.
        assert!(r.challenges.accepts(from(), issued, at(59).wall));
        let later = at(120);
        let current = r.challenge(from(), later.wall);
        assert_ne!(issued, current);
        for stale in [issued, issued ^ 1, current.wrapping_add(1), 0] {
            let (verdict, replies) = ask(&mut r, &players_request(stale), later);
            assert_eq!(verdict, Verdict::Answered);
            assert_eq!(challenge_of(&replies[0]), Some(current));
        }
        // Bound to the port as well as the IP.
        let other_port: SocketAddr = "192.0.2.1:5001".parse().unwrap();
        assert!(!r.challenges.accepts(other_port, current, later.wall));
        // A mapped IPv4 source is the same client.
        let mapped: SocketAddr = "[::ffff:192.0.2.1]:5000".parse().unwrap();
        assert!(r.challenges.accepts(mapped, current, later.wall));
    }

    #[test]
    fn no_reply_is_larger_than_its_request_without_a_valid_challenge() {
        let big = ServerState {
            players: (0..200)
                .map(|i| PlayerState {
                    name: format!("a rather long player name {i}"),
                    ..PlayerState::default()
                })
                .collect(),
            ..state()
        };
        let mut r = responder(big, A2sConfig::default());
        let now = at(0);
        let wrong = r.challenge(from(), now.wall) ^ 0x55;
        for request in [
            info_request(None),
            info_request(Some(wrong)),
            players_request(NO_CHALLENGE),
            players_request(wrong),
            rules_request(wrong),
        ] {
            let (_, replies) = ask(&mut r, &request, now);
            let sent: usize = replies.iter().map(Vec::len).sum();
            assert!(sent <= request.len(), "{sent} bytes for {request:?}");
        }
    }

    #[test]
    fn a_long_reply_is_split_in_source_parts_and_joins_to_the_state() {
        let mut big = state();
        big.rules = (0..300)
            .map(|i| (format!("rule_{i:03}"), RuleValue::Integer(i)))
            .collect();
        let mut r = responder(big, A2sConfig::default());
        let now = at(0);
        let challenge = r.challenge(from(), now.wall);
        let (verdict, datagrams) = ask(&mut r, &rules_request(challenge), now);
        assert_eq!(verdict, Verdict::Answered);
        assert!(datagrams.len() > 1);
        let mut ids = Vec::new();
        let mut parts = Reassembly::new();
        let mut joined = None;
        for (number, datagram) in datagrams.iter().enumerate() {
            assert!(datagram.len() <= SPLIT_SIZE);
            assert!(datagram.starts_with(SPLIT_BYTES));
            let part = SourcePart::from_bytes(datagram).unwrap();
            assert_eq!(usize::from(part.number), number);
            assert_eq!(usize::from(part.total), datagrams.len());
            assert_eq!(usize::from(part.max_size), SPLIT_SIZE);
            assert_eq!(part.id & COMPRESSED_ID, 0);
            ids.push(part.id);
            joined = parts.push(datagram).unwrap();
        }
        ids.dedup();
        assert_eq!(ids.len(), 1, "one id per reply");
        let joined = joined.expect("every part arrived");
        let Ok(Reply::Rules(rules)) = Reply::from_bytes_with(&joined, 0) else {
            panic!("not RULES");
        };
        assert_eq!(rules.count, 300);
        assert_eq!(rules.rules[299].name.as_bytes(), b"rule_299");
        assert_eq!(rules.rules[299].value.as_bytes(), b"299");
        // The next split reply has another id.
        let (_, again) = ask(&mut r, &rules_request(challenge), now);
        assert_ne!(SourcePart::from_bytes(&again[0]).unwrap().id, ids[0]);
    }

    #[test]
    fn replies_carry_the_state() {
        let config = A2sConfig {
            folder: "cstrike".into(),
            app_id: 10,
            vac: true,
            keywords: "secure,ffa".into(),
            steam_id: Some(90_000_000_000_000_001),
            ..A2sConfig::default()
        };
        let mut r = responder(state(), config);
        let now = at(0);
        let challenge = r.challenge(from(), now.wall);
        let reply = whole(&mut r, &info_request(Some(challenge)), now);
        let Ok(Reply::Info(info)) = Reply::from_bytes_with(&reply, 10) else {
            panic!("not INFO");
        };
        assert_eq!(
            (info.players, info.max_players, info.visibility, info.vac),
            (2, 24, 1, 1)
        );
        assert_eq!(info.game.as_bytes(), b"Counter-Strike");
        assert_eq!(info.folder.as_bytes(), b"cstrike");
        let extra = info.extra.unwrap();
        assert_eq!(extra.port, Some(27015));
        assert_eq!(extra.steam_id, Some(90_000_000_000_000_001));
        assert_eq!(extra.keywords.unwrap().as_bytes(), b"secure,ffa");
        assert_eq!(extra.game_id, None);

        let reply = whole(&mut r, &players_request(challenge), now);
        let Ok(Reply::Players(PlayerList::Standard(list))) = Reply::from_bytes_with(&reply, 10)
        else {
            panic!("not PLAYER");
        };
        assert_eq!(list.count, 2);
        let names: Vec<_> = list
            .players
            .iter()
            .map(|p| (p.name.decode(TextEncoding::Utf8).into_owned(), p.score))
            .collect();
        assert_eq!(names, [("Zoë".into(), 12), ("nul".into(), i32::MIN)]);

        let reply = whole(&mut r, &rules_request(challenge), now);
        let Ok(Reply::Rules(rules)) = Reply::from_bytes_with(&reply, 10) else {
            panic!("not RULES");
        };
        let pairs: Vec<_> = rules
            .rules
            .iter()
            .map(|rule| {
                (
                    rule.name.decode(TextEncoding::Utf8).into_owned(),
                    rule.value.decode(TextEncoding::Utf8).into_owned(),
                )
            })
            .collect();
        assert_eq!(
            pairs,
            [
                ("mp_friendlyfire".to_owned(), "1".to_owned()),
                ("mp_timelimit".into(), "30".into()),
                ("sv_gravity".into(), "800.5".into()),
                ("sv_contact".into(), "admin@example.com".into()),
            ]
        );
    }

    #[test]
    fn counts_past_255_go_in_the_keywords_and_rows_stop_at_255() {
        let crowd = ServerState {
            max_players: 500,
            players: (0..300)
                .map(|i| PlayerState {
                    name: format!("p{i}"),
                    ..PlayerState::default()
                })
                .collect(),
            ..state()
        };
        let mut r = responder(crowd, A2sConfig::default());
        let now = at(0);
        let challenge = r.challenge(from(), now.wall);
        let reply = whole(&mut r, &info_request(Some(challenge)), now);
        let Ok(Reply::Info(info)) = Reply::from_bytes_with(&reply, 0) else {
            panic!("not INFO");
        };
        assert_eq!((info.players, info.max_players), (255, 255));
        assert_eq!((info.player_count(), info.slots()), (300, 500));
        let reply = whole(&mut r, &players_request(challenge), now);
        let Ok(Reply::Players(PlayerList::Standard(list))) = Reply::from_bytes_with(&reply, 0)
        else {
            panic!("not PLAYER");
        };
        assert_eq!((list.count, list.players.len()), (255, 255));
    }

    #[test]
    fn the_ship_gets_its_own_layout() {
        let config = A2sConfig {
            app_id: THE_SHIP,
            ..A2sConfig::default()
        };
        let mut r = responder(state(), config);
        let now = at(0);
        let challenge = r.challenge(from(), now.wall);
        let reply = whole(&mut r, &info_request(Some(challenge)), now);
        let Ok(Reply::Info(info)) = Reply::from_bytes_with(&reply, THE_SHIP) else {
            panic!("not INFO");
        };
        assert!(info.the_ship.is_some());
        let reply = whole(&mut r, &players_request(challenge), now);
        let Ok(Reply::Players(PlayerList::TheShip(list))) =
            Reply::from_bytes_with(&reply, THE_SHIP)
        else {
            panic!("not The Ship's PLAYER");
        };
        assert_eq!((list.players.len(), list.stats.len()), (2, 2));
    }

    #[test]
    fn garbage_is_dropped() {
        let mut r = responder(state(), A2sConfig::default());
        let mut wrong_payload = info_request(None);
        wrong_payload[5] = b's';
        let mut padded = players_request(NO_CHALLENGE);
        padded.push(0);
        for garbage in [
            &b""[..],
            b"\xff\xff\xff\xff",
            b"\xff\xff\xff\xffU\xff\xff",
            b"\xff\xff\xff\xffW\xff\xff\xff\xff",
            b"\xff\xff\xff\xffTSource Engine Query",
            b"\xff\xff\xff\xffTSource Engine Query\0\x01\x02",
            b"\xfe\xff\xff\xffU\xff\xff\xff\xff",
            &wrong_payload,
            &padded,
        ] {
            let (verdict, replies) = ask(&mut r, garbage, at(0));
            assert_eq!(
                verdict,
                Verdict::Dropped(DropReason::Malformed),
                "{garbage:?}"
            );
            assert!(replies.is_empty());
        }
    }

    #[test]
    fn a_new_state_snapshot_is_encoded_again() {
        let shared = SharedState::new(state());
        let mut r = A2sResponder::new(shared.clone(), A2sConfig::default());
        let now = at(0);
        let challenge = r.challenge(from(), now.wall);
        let name = |r: &mut A2sResponder| {
            let reply = whole(r, &info_request(Some(challenge)), now);
            match Reply::from_bytes_with(&reply, 0) {
                Ok(Reply::Info(info)) => info.name.as_bytes().to_vec(),
                other => panic!("not INFO: {other:?}"),
            }
        };
        assert_eq!(name(&mut r), b"Responder Test");
        shared.update(|s| s.name = "Renamed".into());
        assert_eq!(name(&mut r), b"Renamed");
    }

    #[test]
    fn a_small_datagram_cap_splits_smaller_or_gives_up() {
        let mut big = state();
        big.rules = (0..100)
            .map(|i| (format!("rule_{i:03}"), RuleValue::Integer(i)))
            .collect();
        let mut r = responder(big, A2sConfig::default());
        let now = at(0);
        let challenge = r.challenge(from(), now.wall);
        let mut sink = ReplySink::new(600);
        let verdict = r.handle(from(), &rules_request(challenge), now, &mut sink);
        assert_eq!(verdict, Verdict::Answered);
        let mut parts = Reassembly::new();
        let mut joined = None;
        for datagram in sink.datagrams() {
            assert!(datagram.len() <= 600);
            joined = parts.push(datagram).unwrap();
        }
        assert!(joined.is_some());
        // A cap that leaves no room for a payload after the part header.
        let mut sink = ReplySink::new(12);
        let verdict = r.handle(from(), &rules_request(challenge), now, &mut sink);
        assert_eq!(verdict, Verdict::Dropped(DropReason::Unsupported));
    }
}
