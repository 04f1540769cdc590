//! The Unreal 2 responder: the details, rules and players requests answered from the server
//! state, as UT2004 answers them.
//!
//! - Requests are the 5 bytes of a [`Request`] with version `0x78` (UT2003, qstat) or `0x79`
//!   (UT2004, gamedig, GameQ, opengsq); anything else is dropped as malformed. A request for
//!   everything (`03`, as qstat asks) gets the details', the rules' and the players' datagrams,
//!   in that order.
//! - Details: server id 0, no address, the state's port as the game port, query port 0 (as
//!   servers send them), name, map, game type, player count and slots, ping 0, flags (bit 0
//!   set when a password is needed), an empty skill and the two closing zero bytes.
//! - Rules: `ServerVersion` (when the state has a version), `GamePassword` (`True`/`False`),
//!   then the state's rules in order (an empty key is left out).
//! - Players: each with its id (the state's, else its place from 1), name, ping, score
//!   (saturated to `i32`) and stats id 0.
//! - Text: Latin-1 when every character has a Latin-1 byte, else UTF-16, cut to the 126 bytes
//!   or units a length byte counts; colour codes in the state's text go out as they are.
//! - Rules and players fill as many datagrams of [`Unreal2Config::max_datagram`] as they
//!   need, whole entries each, and stop at [`MAX_LIST_BYTES`]; an empty list is one datagram
//!   holding the header, so a client knows at once there is nothing more.
//!
//! The protocol has no challenge: every reply goes to an address nobody verified and is
//! charged to the byte budget of unproven sources by the
//! [`Service`](crate::service::Service) that runs the responder. A 5-byte request draws the
//! details (about 60 bytes plus the name, map and game type) or up to [`MAX_LIST_BYTES`] of a
//! list, which that budget bounds. Every reply is encoded once per state snapshot; answering
//! copies it.

use std::net::SocketAddr;

use query_specs::unreal2::{
    Header, Info, InfoMore, Kind, Layout, Player, PlayersPart, Query, Request, Rule, RulesPart,
    UText, MAX_DATAGRAM, REPLY_VERSION,
};
use query_wire::{Decode, Encode};

use crate::clock::Now;
use crate::engine::{DropReason, ReplySink, Responder, Verdict};
use crate::engines::fit;
use crate::snapshot::SnapshotCache;
use crate::state::{ServerState, SharedState};

/// Rules and players each stop once their datagrams hold this many bytes (about twelve
/// 1400-byte datagrams): a state holding more is answered with what fits.
pub const MAX_LIST_BYTES: usize = 16 * 1024;

/// The details' flag bit that says a password is needed.
pub const FLAG_PASSWORD: u32 = 0x01;

/// How an [`Unreal2Responder`] answers, beyond the [`ServerState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreal2Config {
    /// The largest reply datagram (the service's own cap applies too).
    pub max_datagram: usize,
}

impl Default for Unreal2Config {
    /// 1400-byte datagrams.
    fn default() -> Self {
        Unreal2Config {
            max_datagram: MAX_DATAGRAM,
        }
    }
}

/// Answers Unreal 2 queries from a [`SharedState`]; see the [module](self) docs.
///
/// ```
/// use query_net::engines::unreal2::{Unreal2Config, Unreal2Responder};
/// use query_net::service::Service;
/// use query_net::state::{PlayerState, ServerState, SharedState};
/// use query_specs::unreal2::{Reply, Kind};
///
/// let state = SharedState::new(ServerState {
///     name: "Deck 16".into(),
///     max_players: 16,
///     players: vec![PlayerState { name: "Malcolm".into(), ping: 40, ..PlayerState::default() }],
///     ..ServerState::default()
/// });
/// let mut service = Service::new(Unreal2Responder::new(state, Unreal2Config::default())).rate_limit(None);
/// let from = "192.0.2.1:5000".parse().unwrap();
/// let datagram = service.handle(from, b"\x79\x00\x00\x00\x02").next().unwrap().to_vec();
/// let Reply::Players(part) = Reply::decode(&datagram)? else { panic!("players expected") };
/// assert_eq!(part.players[0].name.decode(query_wire::TextEncoding::Latin1), "Malcolm");
/// # Ok::<(), query_wire::Error>(())
/// ```
#[derive(Debug)]
pub struct Unreal2Responder {
    state: SharedState,
    config: Unreal2Config,
    encoded: SnapshotCache<Encoded, usize>,
}

/// The datagrams of each reply for one snapshot and datagram cap.
#[derive(Debug, Default)]
struct Encoded {
    info: Vec<u8>,
    rules: Vec<Vec<u8>>,
    players: Vec<Vec<u8>>,
}

impl Unreal2Responder {
    /// Answers from `state` as `config` says.
    pub fn new(state: SharedState, config: Unreal2Config) -> Self {
        Unreal2Responder {
            state,
            config,
            encoded: SnapshotCache::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Unreal2Config {
        &self.config
    }
}

impl Responder for Unreal2Responder {
    fn handle(
        &mut self,
        _from: SocketAddr,
        datagram: &[u8],
        _now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        let request = match Request::from_bytes(datagram) {
            Ok(r) if r.is_known_version() => r,
            _ => return Verdict::Dropped(DropReason::Malformed),
        };
        let max = replies.max_datagram().min(self.config.max_datagram);
        let Ok((_, encoded)) = self
            .encoded
            .get(&self.state, max, |state, _| Encoded::build(state, max))
        else {
            return Verdict::Dropped(DropReason::Unsupported);
        };
        let info = std::slice::from_ref(&encoded.info);
        let datagrams: &[&[Vec<u8>]] = match request.query {
            Query::Info => &[info],
            Query::Rules => &[&encoded.rules],
            Query::Players => &[&encoded.players],
            Query::Everything => &[info, &encoded.rules, &encoded.players],
        };
        for datagram in datagrams.iter().copied().flatten() {
            if replies.push(datagram).is_err() {
                return Verdict::Dropped(DropReason::Unsupported);
            }
        }
        Verdict::Answered
    }
}

impl Encoded {
    fn build(state: &ServerState, max: usize) -> Result<Self, query_wire::Error> {
        let info = Info {
            server_id: 0,
            ip: UText::new(""),
            game_port: u32::from(state.port),
            query_port: 0,
            name: Some(UText::new(&state.name)),
            nul_name: None,
            map: UText::new(&state.map),
            game_type: UText::new(&state.game_type),
            num_players: state.num_players(),
            max_players: state.max_players,
            waves: None,
            ping: 0,
            more: Some(InfoMore {
                flags: if state.password { FLAG_PASSWORD } else { 0 },
                skill: UText::new(""),
                padding: Some([0, 0]),
            }),
        };
        let mut info_bytes = header(Kind::Info).to_vec()?;
        info_bytes.extend_from_slice(&info.to_vec_with(Layout::Standard)?);

        let mut rules = Vec::with_capacity(state.rules.len() + 2);
        if !state.version.is_empty() {
            rules.push(rule("ServerVersion", &state.version));
        }
        rules.push(rule(
            "GamePassword",
            if state.password { "True" } else { "False" },
        ));
        for (key, value) in &state.rules {
            if !key.is_empty() {
                rules.push(rule(key, &value.to_string()));
            }
        }
        let players: Vec<Player> = state
            .players
            .iter()
            .enumerate()
            .map(|(i, p)| Player {
                id: p.id.unwrap_or(i as u32 + 1),
                name: UText::new(&p.name),
                ping: p.ping,
                score: fit::saturate_i32(p.score),
                stats_id: 0,
            })
            .collect();
        Ok(Encoded {
            info: info_bytes,
            rules: split(rules, max, |rules| {
                RulesPart {
                    header: header(Kind::Rules),
                    rules,
                }
                .to_vec()
            })?,
            players: split(players, max, |players| {
                PlayersPart {
                    header: header(Kind::Players),
                    players,
                }
                .to_vec()
            })?,
        })
    }
}

fn header(kind: Kind) -> Header {
    Header {
        version: REPLY_VERSION,
        kind,
    }
}

fn rule(key: &str, value: &str) -> Rule {
    Rule {
        key: UText::new(key),
        value: UText::new(value),
    }
}

/// `entries` in datagrams of at most `max` bytes, each the header and whole entries, built by
/// `part`; they stop at [`MAX_LIST_BYTES`]. No entries: one datagram with none.
fn split<T: Encode<Ctx = ()>>(
    entries: Vec<T>,
    max: usize,
    part: impl Fn(Vec<T>) -> Result<Vec<u8>, query_wire::Error>,
) -> Result<Vec<Vec<u8>>, query_wire::Error> {
    let room = max.saturating_sub(Header::FIXED_LEN.unwrap_or(5));
    let mut datagrams = Vec::new();
    let mut current = Vec::new();
    let (mut used, mut total) = (0, 0);
    for entry in entries {
        let len = entry.encoded_len(());
        if len > room || total + len > MAX_LIST_BYTES {
            break;
        }
        if used + len > room {
            datagrams.push(part(std::mem::take(&mut current))?);
            used = 0;
        }
        used += len;
        total += len;
        current.push(entry);
    }
    if !current.is_empty() || datagrams.is_empty() {
        datagrams.push(part(current)?);
    }
    Ok(datagrams)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{PlayerState, RuleValue};
    use query_specs::unreal2::Reply;
    use query_wire::TextEncoding;

    fn state(players: usize, rules: usize) -> ServerState {
        ServerState {
            name: "Zoë's \u{1b}\u{ff}\u{1}\u{1}Arena".into(),
            map: "DM-Deck16][".into(),
            game_type: "xDeathMatch".into(),
            max_players: 500,
            port: 7777,
            password: true,
            version: "3369".into(),
            rules: (0..rules)
                .map(|i| (format!("rule{i}"), RuleValue::from("x".repeat(40))))
                .collect(),
            players: (0..players)
                .map(|i| PlayerState {
                    name: if i == 1 {
                        "Жук".into()
                    } else {
                        format!("player {i}")
                    },
                    score: -(i as i64),
                    ping: 50,
                    ..PlayerState::default()
                })
                .collect(),
            ..ServerState::default()
        }
    }

    fn decode_all(datagrams: &[Vec<u8>]) -> Vec<Reply> {
        datagrams
            .iter()
            .map(|d| Reply::decode(d).unwrap())
            .collect()
    }

    #[test]
    fn the_replies_decode_to_the_state() {
        let encoded = Encoded::build(&state(3, 2), 1400).unwrap();
        let Reply::Info(info) = Reply::decode(&encoded.info).unwrap() else {
            panic!("details expected");
        };
        assert_eq!(info.layout, Layout::Standard);
        assert_eq!(
            info.info.name_text(TextEncoding::Latin1),
            "Zoë's \u{1b}\u{ff}\u{1}\u{1}Arena"
        );
        assert_eq!(info.info.game_port, 7777);
        assert_eq!(info.info.more.as_ref().unwrap().flags, FLAG_PASSWORD);
        let [Reply::Rules(rules)] = &decode_all(&encoded.rules)[..] else {
            panic!("one rules datagram expected");
        };
        let keys: Vec<String> = rules
            .rules
            .iter()
            .map(|r| r.key.decode(TextEncoding::Latin1).into_owned())
            .collect();
        assert_eq!(keys, ["ServerVersion", "GamePassword", "rule0", "rule1"]);
        let [Reply::Players(players)] = &decode_all(&encoded.players)[..] else {
            panic!("one players datagram expected");
        };
        assert_eq!(players.players.len(), 3);
        assert!(players.players[1].name.utf16);
        assert_eq!(players.players[1].name.decode(TextEncoding::Latin1), "Жук");
        assert_eq!(players.players[2].score, -2);
        assert_eq!(players.players[2].id, 3);
    }

    #[test]
    fn everything_is_the_details_then_the_rules_then_the_players() {
        let mut responder =
            Unreal2Responder::new(SharedState::new(state(2, 1)), Unreal2Config::default());
        let from = "192.0.2.1:5000".parse().unwrap();
        let mut sink = ReplySink::new(1400);
        let verdict = responder.handle(from, b"\x78\x00\x00\x00\x03", Now::system(), &mut sink);
        assert_eq!(verdict, Verdict::Answered);
        let kinds: Vec<Kind> = sink
            .datagrams()
            .map(|d| Reply::decode(d).unwrap().kind())
            .collect();
        assert_eq!(kinds, [Kind::Info, Kind::Rules, Kind::Players]);
        for garbage in [
            &b"\x7a\x00\x00\x00\x00"[..],
            b"\x79\x00\x00\x00\x04",
            b"\x79",
        ] {
            let mut sink = ReplySink::new(1400);
            let verdict = responder.handle(from, garbage, Now::system(), &mut sink);
            assert_eq!(verdict, Verdict::Dropped(DropReason::Malformed));
            assert!(sink.is_empty());
        }
    }

    #[test]
    fn big_lists_fill_several_datagrams_up_to_the_cap() {
        let encoded = Encoded::build(&state(2000, 2000), 1400).unwrap();
        for list in [&encoded.rules, &encoded.players] {
            assert!(list.len() > 5, "{}", list.len());
            let total: usize = list.iter().map(Vec::len).sum();
            assert!(total <= MAX_LIST_BYTES + 5 * list.len(), "{total}");
            for (i, datagram) in list.iter().enumerate() {
                assert!(datagram.len() <= 1400);
                assert!(i == list.len() - 1 || datagram.len() > 1300);
                Reply::decode(datagram).unwrap();
            }
        }
        let empty = Encoded::build(&state(0, 0), 1400).unwrap();
        assert_eq!(empty.players, [b"\x80\x00\x00\x00\x02".to_vec()]);
    }
}
