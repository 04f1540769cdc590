//! The ASE responder: `s` answered from the server state with one `EYE1` datagram.
//!
//! The reply holds [`AseConfig::game`], the state's port, name, game type, map, version,
//! password (`1`/`0`), player count and slots; the state's rules in order (an empty key,
//! which would end the list, is left out); then each player with a name, team (when it has
//! one), score and ping, flagged as such. Text goes out in [`AseConfig::encoding`] (UTF-8, as
//! MTA sends it) with what it cannot represent as `?`, cut to the 254 bytes a length byte can
//! count. A reply over [`AseConfig::max_datagram`] leaves out rules from the end, then players
//! (the list server lists show), so the player count says how many the list lacks, as a
//! client can tell.
//!
//! ASE has no challenge: every reply goes to an address nobody verified and is charged to the
//! byte budget of unproven sources by the [`Service`](crate::service::Service) that runs the
//! responder. A 1-byte request draws up to a whole datagram, the largest amplification of any
//! protocol here, which the budget bounds as it does GameSpy v1's. The reply is encoded once
//! per state snapshot; answering copies it.

use std::borrow::Cow;
use std::net::SocketAddr;

use query_specs::ase::{Player, Reply, Request, Rule, MAX_DATAGRAM, MAX_TEXT};
use query_wire::{Decode, Encode, Text, TextEncoding};

use super::DEFAULT_ENCODING;
use crate::clock::Now;
use crate::engine::{DropReason, ReplySink, Responder, Verdict};
use crate::engines::fit;
use crate::snapshot::SnapshotCache;
use crate::state::{ServerState, SharedState};

/// How an [`AseResponder`] presents the server, beyond the [`ServerState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AseConfig {
    /// The game's short name sent first: `mta`, `farcry`...
    pub game: String,
    /// The encoding of every text on the wire.
    pub encoding: TextEncoding,
    /// The largest reply datagram (the service's own cap applies too).
    pub max_datagram: usize,
}

impl Default for AseConfig {
    /// `mta`, UTF-8, 1400-byte replies.
    fn default() -> Self {
        AseConfig {
            game: "mta".to_owned(),
            encoding: DEFAULT_ENCODING,
            max_datagram: MAX_DATAGRAM,
        }
    }
}

/// Answers ASE queries from a [`SharedState`]; see the [module](self) docs.
///
/// ```
/// use query_net::engines::ase::{AseConfig, AseResponder};
/// use query_net::service::Service;
/// use query_net::state::{PlayerState, ServerState, SharedState};
/// use query_specs::ase::Reply;
/// use query_wire::Decode;
///
/// let state = SharedState::new(ServerState {
///     name: "Grove Street".into(),
///     max_players: 32,
///     players: vec![PlayerState { name: "CJ".into(), ping: 40, ..PlayerState::default() }],
///     ..ServerState::default()
/// });
/// let mut service = Service::new(AseResponder::new(state, AseConfig::default())).rate_limit(None);
/// let from = "192.0.2.1:5000".parse().unwrap();
/// let datagram = service.handle(from, b"s").next().unwrap().to_vec();
/// let reply = Reply::from_bytes(&datagram)?;
/// assert_eq!(reply.name.as_bytes(), b"Grove Street");
/// assert_eq!(reply.players[0].name.as_ref().unwrap().as_bytes(), b"CJ");
/// # Ok::<(), query_wire::Error>(())
/// ```
#[derive(Debug)]
pub struct AseResponder {
    state: SharedState,
    config: AseConfig,
    encoded: SnapshotCache<Vec<u8>, usize>,
}

impl AseResponder {
    /// Answers from `state` as `config` says.
    pub fn new(state: SharedState, config: AseConfig) -> Self {
        AseResponder {
            state,
            config,
            encoded: SnapshotCache::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &AseConfig {
        &self.config
    }
}

impl Responder for AseResponder {
    fn handle(
        &mut self,
        _from: SocketAddr,
        datagram: &[u8],
        _now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        if Request::from_bytes(datagram).is_err() {
            return Verdict::Dropped(DropReason::Malformed);
        }
        let max = replies.max_datagram().min(self.config.max_datagram);
        let config = &self.config;
        let Ok((_, bytes)) = self.encoded.get(&self.state, max, |state, stale| {
            let mut bytes = stale.unwrap_or_default();
            bytes.clear();
            encode_reply(state, config, max, &mut bytes).map(|()| bytes)
        }) else {
            return Verdict::Dropped(DropReason::Unsupported);
        };
        let bytes = &*bytes;
        let pushed = replies.push_with(|buf| {
            buf[..bytes.len()].copy_from_slice(bytes);
            Ok::<usize, query_wire::Error>(bytes.len())
        });
        Verdict::pushed(pushed)
    }
}

/// `text` as the wire carries it: unrepresentable characters as `?`, at most [`MAX_TEXT`]
/// bytes.
fn wire_text<'t>(text: &'t str, encoding: TextEncoding) -> Text<'t> {
    let sendable = fit::replace_unsendable(text, encoding, &[]);
    let cut = match sendable {
        Cow::Borrowed(t) => Cow::Borrowed(fit::cut(t, encoding, MAX_TEXT)),
        Cow::Owned(t) => Cow::Owned(fit::cut(&t, encoding, MAX_TEXT).to_owned()),
    };
    match cut {
        Cow::Borrowed(t) => Text::encode(t, encoding),
        Cow::Owned(t) => Text::encode(&t, encoding).into_owned(),
    }
}

/// The reply for `state` into `out`, leaving out rules from the end, then players, until it
/// fits `max` bytes.
fn encode_reply(
    state: &ServerState,
    config: &AseConfig,
    max: usize,
    out: &mut Vec<u8>,
) -> Result<(), query_wire::Error> {
    let encoding = config.encoding;
    let text = |t: &str| wire_text(t, encoding).into_owned();
    let numbers: Vec<String> = vec![
        state.port.to_string(),
        u8::from(state.password).to_string(),
        state.num_players().to_string(),
        state.max_players.to_string(),
    ];
    let rule_texts: Vec<(String, String)> = state
        .rules
        .iter()
        .filter(|(key, _)| !key.is_empty())
        .map(|(key, value)| (key.clone(), value.to_string()))
        .collect();
    let mut reply = Reply {
        game: text(&config.game),
        port: Text::from(numbers[0].as_str()),
        name: text(&state.name),
        game_type: text(&state.game_type),
        map: text(&state.map),
        version: text(&state.version),
        password: Text::from(numbers[1].as_str()),
        num_players: Text::from(numbers[2].as_str()),
        max_players: Text::from(numbers[3].as_str()),
        rules: rule_texts
            .iter()
            .map(|(key, value)| Rule {
                key: text(key),
                value: text(value),
            })
            .collect(),
        players: Vec::new(),
    };
    let scores: Vec<(String, String)> = state
        .players
        .iter()
        .map(|p| (p.score.to_string(), p.ping.to_string()))
        .collect();
    reply.players = state
        .players
        .iter()
        .zip(&scores)
        .map(|(p, (score, ping))| Player {
            flags: 0,
            name: Some(text(&p.name)),
            team: p.team.as_deref().map(text),
            skin: None,
            score: Some(Text::from(score.as_str())),
            ping: Some(Text::from(ping.as_str())),
            time: None,
        })
        .collect();
    // Each rule and player costs what it encodes to: drop from the end until the reply fits.
    let mut len = reply.encoded_len(());
    while len > max {
        if let Some(rule) = reply.rules.pop() {
            len -= rule.encoded_len(());
        } else if let Some(player) = reply.players.pop() {
            len -= player.encoded_len(());
        } else {
            break;
        }
    }
    out.resize(len, 0);
    let written = reply.encode_into(out)?;
    out.truncate(written);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{PlayerState, RuleValue};

    fn state(players: usize, rules: usize) -> ServerState {
        ServerState {
            name: "Zoë's".into(),
            map: "SX".into(),
            max_players: 500,
            port: 22003,
            password: true,
            rules: (0..rules)
                .map(|i| (format!("rule{i}"), RuleValue::from("x".repeat(40))))
                .collect(),
            players: (0..players)
                .map(|i| PlayerState {
                    name: format!("player {i} {}", "é".repeat(10)),
                    score: -(i as i64),
                    ping: 50,
                    team: (i % 2 == 0).then(|| "Red".to_owned()),
                    ..PlayerState::default()
                })
                .collect(),
            ..ServerState::default()
        }
    }

    #[test]
    fn the_reply_decodes_to_the_state() {
        let mut out = Vec::new();
        encode_reply(&state(3, 2), &AseConfig::default(), 1400, &mut out).unwrap();
        let reply = Reply::from_bytes(&out).unwrap();
        assert_eq!(reply.name.decode(TextEncoding::Utf8), "Zoë's");
        assert_eq!(reply.port.as_bytes(), b"22003");
        assert_eq!(reply.password.as_bytes(), b"1");
        assert_eq!(reply.num_players.as_bytes(), b"3");
        assert_eq!(reply.rules.len(), 2);
        assert_eq!(reply.players.len(), 3);
        assert_eq!(reply.players[0].flags, 0x1b);
        assert_eq!(reply.players[1].flags, 0x19);
        assert_eq!(reply.players[2].score.as_ref().unwrap().as_bytes(), b"-2");
    }

    #[test]
    fn a_big_state_is_cut_to_the_datagram_rules_first() {
        for (players, rules) in [(200, 0), (200, 50), (0, 200), (5, 200)] {
            let mut out = Vec::new();
            encode_reply(
                &state(players, rules),
                &AseConfig::default(),
                1400,
                &mut out,
            )
            .unwrap();
            assert!(out.len() <= 1400 && out.len() > 1300, "{}", out.len());
            let reply = Reply::from_bytes(&out).unwrap();
            assert_eq!(reply.num_players.as_bytes(), players.to_string().as_bytes());
            // Players are kept while a rule is left to drop.
            if reply.players.len() < players {
                assert!(reply.rules.is_empty(), "{players} {rules}");
            }
            if players == 5 {
                assert_eq!(reply.players.len(), 5);
                assert!(!reply.rules.is_empty() && reply.rules.len() < rules);
            }
        }
    }

    #[test]
    fn long_text_is_cut_to_what_a_length_byte_counts() {
        let long = ServerState {
            name: "€".repeat(300),
            ..ServerState::default()
        };
        let mut out = Vec::new();
        encode_reply(&long, &AseConfig::default(), 1400, &mut out).unwrap();
        let reply = Reply::from_bytes(&out).unwrap();
        assert_eq!(reply.name.as_bytes().len(), 252, "84 three-byte characters");
        let latin1 = AseConfig {
            encoding: TextEncoding::Latin1,
            ..AseConfig::default()
        };
        encode_reply(&long, &latin1, 1400, &mut out).unwrap();
        let reply = Reply::from_bytes(&out).unwrap();
        assert_eq!(reply.name.as_bytes(), "?".repeat(254).as_bytes());
    }
}
