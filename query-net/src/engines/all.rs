//! One responder for every protocol on one port, dispatching on the first bytes.
//!
//! The request formats cannot be mistaken for one another: each is told by its first
//! byte (`O` or `H`, `S`, `\`, `00` or `01`, `FF`, `FE`, `04` or `21`), those that start with
//! `FF FF FF FF` by the byte after it (`T`, `U`, `V` for A2S, `g` for Quake 3, `s` for Quake 2),
//! Doom 3's by its `FF FF` followed by `getInfo` (Quake 3's `getinfo` has four `FF`), the GameSpy 2 and 3
//! requests that start with `FE FD` by their exact lengths (GameSpy 2's is 10 bytes), and
//! the two that start with `01` by theirs and RakNet's 16-byte offline magic (SQP's query is
//! 8 bytes, Bedrock's ping 33 with the magic at byte 9). Unreal 2's requests are exactly 5
//! bytes, a known version number then a query; DDNet's extended `gie3`, which also starts
//! with `x` (UT2003's `78`), is 15.
//!
//! | first bytes | length | protocol |
//! |---|---|---|
//! | `ONEQUERY` or `HYQUERY2` | any | OneQuery |
//! | `SAMP` | any | SA:MP / open.mp |
//! | `\` | any | GameSpy v1 |
//! | `00` | 5 | SQP challenge request |
//! | `01` | 8 | SQP query request |
//! | `01`, time, RakNet's offline magic, GUID | 33 | Minecraft Bedrock unconnected ping |
//! | `FF FF FF FF` then `T`, `U` or `V` | any | A2S INFO, PLAYER or RULES |
//! | `FF FF FF FF` then `getstatus` or `getinfo` | any | Quake 3 |
//! | `FF FF FF FF` then `status` | any | Quake 2 and QuakeWorld |
//! | `FF FF getInfo 00` | any | Doom 3 engine |
//! | `FE FD 00` | 10 | GameSpy 2 (GameSpy 3 queries, also `FE FD 00`, are 11 or 15 bytes) |
//! | `FE FD 09` | 7 or 11 | GameSpy 3/4 challenge request (11 with gamedig's empty challenge) |
//! | `FE FD 00` ... `FF FF FF 01` | 11 or 15 | GameSpy 3/4 query (15 with the challenge) |
//! | `FF` × 10 `gie3`, or `xe` ... `FF FF FF FF gie3` | 15 | Teeworlds / DDNet |
//! | `04 00 00 FF FF FF FF 05`, or `21` ... `FF FF FF FF gie3` | 520, or 18 to 22 | Teeworlds 0.7 |
//! | `78 00 00 00` or `79 00 00 00`, then `00` to `03` | 5 | Unreal 2 (UT2003, UT2004) |
//!
//! Anything else is dropped as malformed without reaching any protocol's responder; each
//! responder then checks the rest (A2S its exact sizes).

use std::net::SocketAddr;

use query_specs::{
    a2s, bedrock, doom3, gamespy2, gamespy3, onequery, quake2, quake3, samp, sqp, teeworlds,
    unreal2,
};
use query_wire::{kv, Decode, Encode};

use super::a2s::{A2sConfig, A2sResponder};
use super::bedrock::{BedrockConfig, BedrockResponder};
use super::doom3::{Doom3Config, Doom3Responder};
use super::gamespy1::{GameSpy1Config, GameSpy1Responder};
use super::gamespy2::{GameSpy2Config, GameSpy2Responder};
use super::gamespy3::{GameSpy3Config, GameSpy3Responder};
use super::onequery::OneQueryResponder;
use super::quake2::{Quake2Config, Quake2Responder};
use super::quake3::{Quake3Config, Quake3Responder};
use super::samp::{SampConfig, SampResponder};
use super::sqp::SqpResponder;
use super::teeworlds::{TeeworldsConfig, TeeworldsResponder};
use super::unreal2::{Unreal2Config, Unreal2Responder};
use crate::clock::Now;
use crate::engine::{DropReason, ReplySink, Responder, Verdict};
use crate::protocol::Protocol;
use crate::state::SharedState;

/// The protocols [`AllProtocols`] answers: every datagram protocol but Mumble and the
/// All-Seeing Eye, whose servers answer on a port of their own (Mumble's ping shares the voice
/// port, and carries no server name; ASE's is the game port + 123), and FiveM, whose `getinfo`
/// is Quake 3's.
pub const ROUTED: [Protocol; 14] = [
    Protocol::Sqp,
    Protocol::OneQuery,
    Protocol::Samp,
    Protocol::GameSpy1,
    Protocol::A2s,
    Protocol::Quake3,
    Protocol::GameSpy2,
    Protocol::GameSpy3,
    Protocol::MinecraftQuery,
    Protocol::Quake2,
    Protocol::Teeworlds,
    Protocol::Doom3,
    Protocol::Bedrock,
    Protocol::Unreal2,
];

/// Which protocol a request is in, from its first bytes and length (see the module table);
/// `None` for a datagram no protocol would answer.
///
/// ```
/// use query_net::engines::all::route;
/// use query_net::Protocol;
///
/// assert_eq!(route(b"ONEQUERY\x00"), Some(Protocol::OneQuery));
/// assert_eq!(route(b"\\status\\"), Some(Protocol::GameSpy1));
/// assert_eq!(route(&[0, 0, 0, 0, 0]), Some(Protocol::Sqp));
/// assert_eq!(route(&[0, 0, 0, 0]), None);
/// assert_eq!(route(b"\xff\xff\xff\xffTSource Engine Query\0"), Some(Protocol::A2s));
/// ```
pub fn route(datagram: &[u8]) -> Option<Protocol> {
    // Compared with the magics rather than decoded: a failed decode builds an error, and
    // most datagrams are not OneQuery.
    let magic = datagram.get(onequery::Family::TAG_RANGE);
    let is_onequery = |tag: u64| magic == Some(&tag.to_be_bytes()[..]);
    if is_onequery(onequery::MAGIC_ONEQUERY) || is_onequery(onequery::MAGIC_HYQUERY2) {
        Some(Protocol::OneQuery)
    } else if datagram.starts_with(samp::MAGIC) {
        Some(Protocol::Samp)
    } else if datagram.first() == Some(&kv::DELIMITER) {
        Some(Protocol::GameSpy1)
    } else if is_a2s_request(datagram) {
        Some(Protocol::A2s)
    } else if is_quake3_request(datagram) {
        Some(Protocol::Quake3)
    } else if datagram.starts_with(quake2::STATUS_MAGIC) {
        Some(Protocol::Quake2)
    } else if datagram.starts_with(doom3::GETINFO_MAGIC) {
        Some(Protocol::Doom3)
    } else if is_gamespy2_request(datagram) {
        Some(Protocol::GameSpy2)
    } else if is_gamespy3_request(datagram) {
        Some(Protocol::GameSpy3)
    } else if is_teeworlds_request(datagram) {
        Some(Protocol::Teeworlds)
    } else if is_unreal2_request(datagram) {
        Some(Protocol::Unreal2)
    } else if is_bedrock_ping(datagram) {
        Some(Protocol::Bedrock)
    } else if sqp::Request::from_bytes(datagram).is_ok() {
        // Exactly a challenge request or a query request: the declaration checks the length.
        Some(Protocol::Sqp)
    } else {
        None
    }
}

/// Whether `datagram` starts like an A2S request: a whole packet's `FF FF FF FF`, then INFO's,
/// PLAYER's or RULES's kind.
fn is_a2s_request(datagram: &[u8]) -> bool {
    matches!(
        datagram.split_first_chunk::<4>(),
        Some((magic, [kind, ..]))
            if magic == a2s::SINGLE_BYTES
                && matches!(
                    *kind,
                    a2s::KIND_INFO_REQUEST | a2s::KIND_PLAYER_REQUEST | a2s::KIND_RULES_REQUEST
                )
    )
}

/// Whether `datagram` starts like a Quake 3 request: `FF FF FF FF`, then `getstatus` or
/// `getinfo`.
fn is_quake3_request(datagram: &[u8]) -> bool {
    quake3::Request::matches_magic(datagram)
}

/// Whether `datagram` is a GameSpy 2 request: `FE FD 00`, the id and three flags, exactly
/// the declared request's length (10 bytes), so that GameSpy 3 queries (11 or 15 bytes, same
/// start) never land here.
fn is_gamespy2_request(datagram: &[u8]) -> bool {
    Some(datagram.len()) == <gamespy2::Request as Encode>::FIXED_LEN
        && datagram.starts_with(gamespy2::REQUEST_MAGIC)
}

/// Whether `datagram` is a Teeworlds / DDNet `gie3` request as declared (either form, 15
/// bytes), or a Teeworlds 0.7 token or info request. Decoded only when the length or the
/// first byte matches, so other datagrams build no error.
fn is_teeworlds_request(datagram: &[u8]) -> bool {
    match datagram.first() {
        Some(&teeworlds::seven::CONTROL | &teeworlds::seven::CONNLESS) => {
            teeworlds::seven::Request::from_bytes(datagram).is_ok()
        }
        _ => {
            datagram.len() == teeworlds::REQUEST_LEN
                && teeworlds::Request::from_bytes(datagram).is_ok()
        }
    }
}

/// Whether `datagram` is an Unreal 2 request as declared: exactly 5 bytes, the version number
/// of UT2003 or UT2004 and a query. Decoded only when the length matches, so other datagrams
/// build no error.
fn is_unreal2_request(datagram: &[u8]) -> bool {
    Some(datagram.len()) == <unreal2::Request as Encode>::FIXED_LEN
        && unreal2::Request::from_bytes(datagram).is_ok_and(|request| request.is_known_version())
}

/// Whether `datagram` is a Bedrock unconnected ping as declared: `01`, the time, RakNet's
/// offline magic and the GUID, 33 bytes. Decoded only when the length matches, so other
/// datagrams (SQP's 8-byte query starts with `01` too) build no error.
fn is_bedrock_ping(datagram: &[u8]) -> bool {
    Some(datagram.len()) == <bedrock::UnconnectedPing as Encode>::FIXED_LEN
        && bedrock::UnconnectedPing::from_bytes(datagram).is_ok()
}

/// Whether `datagram` is a GameSpy 3/4 request as declared: a challenge request (7 bytes, or
/// 11 with gamedig's empty challenge), or a query (11 or 15 bytes with the challenge) for
/// everything ([`gamespy3::FLAGS_SPLIT`]); never GameSpy 2's 10 bytes. Decoded only after the
/// magic matched, so other datagrams build no error.
fn is_gamespy3_request(datagram: &[u8]) -> bool {
    if !datagram.starts_with(gamespy3::REQUEST_MAGIC) {
        return false;
    }
    match gamespy3::Request::from_bytes(datagram) {
        Ok(gamespy3::Request::Challenge(_)) => true,
        Ok(gamespy3::Request::Query(query)) => query.payload() == gamespy3::FLAGS_SPLIT,
        Err(_) => false,
    }
}

/// Answers SQP, OneQuery, SA:MP, GameSpy v1, A2S, Quake 2 and 3, GameSpy 2, GameSpy 3/4
/// (Minecraft's query), Teeworlds / DDNet, Doom 3, Minecraft Bedrock and Unreal 2 on one
/// socket, from one [`SharedState`].
///
/// Each protocol keeps its own responder (SQP's challenge table, OneQuery's token key and
/// A2S's challenge key, the SA:MP, GameSpy and A2S reply caches); this type only routes with [`route`], so a datagram costs
/// one look at its first bytes before the protocol's own checks.
///
/// ```
/// use query_net::engines::all::AllProtocols;
/// use query_net::service::Service;
/// use query_net::state::{ServerState, SharedState};
///
/// let state = SharedState::new(ServerState { name: "Everything".into(), ..ServerState::default() });
/// let mut service = Service::new(AllProtocols::new(state)).rate_limit(None);
/// let from = "192.0.2.1:5000".parse().unwrap();
/// // An SQP challenge request gets a 5-byte challenge back.
/// let replies: Vec<Vec<u8>> = service.handle(from, &[0; 5]).map(<[u8]>::to_vec).collect();
/// assert_eq!(replies[0].len(), 5);
/// // Bytes no protocol starts with are dropped.
/// assert_eq!(service.handle(from, b"hello").count(), 0);
/// ```
#[derive(Debug)]
pub struct AllProtocols {
    sqp: SqpResponder,
    onequery: OneQueryResponder,
    samp: SampResponder,
    gamespy1: GameSpy1Responder,
    a2s: A2sResponder,
    quake3: Quake3Responder,
    gamespy2: GameSpy2Responder,
    gamespy3: GameSpy3Responder,
    quake2: Quake2Responder,
    teeworlds: TeeworldsResponder,
    doom3: Doom3Responder,
    bedrock: BedrockResponder,
    unreal2: Unreal2Responder,
}

impl AllProtocols {
    /// Every protocol answered from `state`, with each responder's defaults.
    pub fn new(state: SharedState) -> Self {
        AllProtocols {
            sqp: SqpResponder::new(state.clone()),
            onequery: OneQueryResponder::new(state.clone()),
            samp: SampResponder::new(state.clone(), SampConfig::default()),
            gamespy1: GameSpy1Responder::new(state.clone(), GameSpy1Config::default()),
            a2s: A2sResponder::new(state.clone(), A2sConfig::default()),
            quake3: Quake3Responder::new(state.clone(), Quake3Config::default()),
            gamespy2: GameSpy2Responder::new(state.clone(), GameSpy2Config::default()),
            gamespy3: GameSpy3Responder::new(state.clone(), GameSpy3Config::default()),
            quake2: Quake2Responder::new(state.clone(), Quake2Config::default()),
            teeworlds: TeeworldsResponder::new(state.clone(), TeeworldsConfig::default()),
            doom3: Doom3Responder::new(state.clone(), Doom3Config::default()),
            bedrock: BedrockResponder::new(state.clone(), BedrockConfig::default()),
            unreal2: Unreal2Responder::new(state, Unreal2Config::default()),
        }
    }

    /// Replaces the SQP responder (to change its configuration).
    #[must_use]
    pub fn with_sqp(mut self, sqp: SqpResponder) -> Self {
        self.sqp = sqp;
        self
    }

    /// Replaces the OneQuery responder (to set its access rules or token key).
    #[must_use]
    pub fn with_onequery(mut self, onequery: OneQueryResponder) -> Self {
        self.onequery = onequery;
        self
    }

    /// Replaces the SA:MP responder (to set its configuration or RCON handler).
    #[must_use]
    pub fn with_samp(mut self, samp: SampResponder) -> Self {
        self.samp = samp;
        self
    }

    /// Replaces the GameSpy v1 responder (to set its configuration).
    #[must_use]
    pub fn with_gamespy1(mut self, gamespy1: GameSpy1Responder) -> Self {
        self.gamespy1 = gamespy1;
        self
    }

    /// Replaces the A2S responder (to set its configuration or challenge secret).
    #[must_use]
    pub fn with_a2s(mut self, a2s: A2sResponder) -> Self {
        self.a2s = a2s;
        self
    }

    /// Replaces the GameSpy 2 responder (to set its configuration).
    #[must_use]
    pub fn with_gamespy2(mut self, gamespy2: GameSpy2Responder) -> Self {
        self.gamespy2 = gamespy2;
        self
    }

    /// Replaces the Quake 3 responder (to set its configuration).
    #[must_use]
    pub fn with_quake3(mut self, quake3: Quake3Responder) -> Self {
        self.quake3 = quake3;
        self
    }

    /// Replaces the Quake 2 responder (to set its configuration).
    #[must_use]
    pub fn with_quake2(mut self, quake2: Quake2Responder) -> Self {
        self.quake2 = quake2;
        self
    }

    /// Replaces the Doom 3 engine responder (to set its game and configuration).
    #[must_use]
    pub fn with_doom3(mut self, doom3: Doom3Responder) -> Self {
        self.doom3 = doom3;
        self
    }

    /// Replaces the GameSpy 3/4 responder (to set its configuration or challenge secret).
    #[must_use]
    pub fn with_gamespy3(mut self, gamespy3: GameSpy3Responder) -> Self {
        self.gamespy3 = gamespy3;
        self
    }

    /// Replaces the Bedrock responder (to set its GUID or edition).
    #[must_use]
    pub fn with_bedrock(mut self, bedrock: BedrockResponder) -> Self {
        self.bedrock = bedrock;
        self
    }

    /// Replaces the Unreal 2 responder (to set its datagram size).
    #[must_use]
    pub fn with_unreal2(mut self, unreal2: Unreal2Responder) -> Self {
        self.unreal2 = unreal2;
        self
    }
}

impl Responder for AllProtocols {
    fn handle(
        &mut self,
        from: SocketAddr,
        datagram: &[u8],
        now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        match route(datagram) {
            None => Verdict::Dropped(DropReason::Malformed),
            Some(Protocol::Sqp) => self.sqp.handle(from, datagram, now, replies),
            Some(Protocol::OneQuery) => self.onequery.handle(from, datagram, now, replies),
            Some(Protocol::Samp) => self.samp.handle(from, datagram, now, replies),
            Some(Protocol::GameSpy1) => self.gamespy1.handle(from, datagram, now, replies),
            Some(Protocol::A2s) => self.a2s.handle(from, datagram, now, replies),
            Some(Protocol::Quake3) => self.quake3.handle(from, datagram, now, replies),
            Some(Protocol::GameSpy2) => self.gamespy2.handle(from, datagram, now, replies),
            Some(Protocol::Quake2) => self.quake2.handle(from, datagram, now, replies),
            // One responder answers both: GameSpy 4 is GameSpy 3 with the challenge.
            Some(Protocol::GameSpy3 | Protocol::MinecraftQuery) => {
                self.gamespy3.handle(from, datagram, now, replies)
            }
            Some(Protocol::Teeworlds) => self.teeworlds.handle(from, datagram, now, replies),
            Some(Protocol::Doom3) => self.doom3.handle(from, datagram, now, replies),
            // RakNet has no challenge: the service charges every pong to the byte budget of
            // unproven sources, as on a Bedrock port of its own.
            Some(Protocol::Bedrock) => self.bedrock.handle(from, datagram, now, replies),
            // No challenge either: every reply is charged to the byte budgets, as on an
            // Unreal 2 port of its own.
            Some(Protocol::Unreal2) => self.unreal2.handle(from, datagram, now, replies),
            // `route` names none of these: Mumble and ASE servers answer on a port of their
            // own, Minecraft's status ping, Frostbite and TeamSpeak 3 are TCP, and FiveM's
            // `getinfo` is Quake 3's request.
            Some(
                Protocol::Mumble
                | Protocol::Ase
                | Protocol::Minecraft
                | Protocol::Fivem
                | Protocol::Frostbite
                | Protocol::TeamSpeak3,
            ) => Verdict::Dropped(DropReason::Unsupported),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_by_first_bytes_and_length() {
        assert_eq!(route(b"HYQUERY2\x01"), Some(Protocol::OneQuery));
        assert_eq!(route(b"ONEQUER"), None);
        assert_eq!(
            route(b"SAMP\x7f\x00\x00\x01\x61\x1ei"),
            Some(Protocol::Samp)
        );
        assert_eq!(route(b"\\"), Some(Protocol::GameSpy1));
        assert_eq!(route(&[1; 8]), Some(Protocol::Sqp));
        assert_eq!(route(&[1; 9]), None);
        assert_eq!(route(&[0; 6]), None);
        assert_eq!(route(&[2; 5]), None);
        assert_eq!(route(b""), None);
        for kind in *b"TUV" {
            assert_eq!(route(&[0xff, 0xff, 0xff, 0xff, kind]), Some(Protocol::A2s));
        }
        assert_eq!(route(b"\xff\xff\xff\xffW"), None);
        assert_eq!(route(b"\xfe\xff\xff\xffU"), None);
        assert_eq!(route(b"\xff\xff\xff\xff"), None);
        assert_eq!(
            route(b"\xff\xff\xff\xffgetstatus\n"),
            Some(Protocol::Quake3)
        );
        assert_eq!(
            route(b"\xff\xff\xff\xffgetinfo 12\n"),
            Some(Protocol::Quake3)
        );
        assert_eq!(route(b"\xff\xff\xff\xffgetchallenge\n"), None);
        assert_eq!(route(b"\xff\xff\xff\xffstatus\n"), Some(Protocol::Quake2));
        assert_eq!(route(b"\xff\xffgetInfo\0PiNGPoNg\0"), Some(Protocol::Doom3));
        assert_eq!(route(b"\xff\xffgetinfo\0PiNG"), None);
        assert_eq!(route(b"\xff\xffgetInfo"), None);
        assert_eq!(route(b"\xff\xff\xff\xffstatu"), None);
        assert_eq!(
            route(b"\xfe\xfd\x00CORY\xff\x00\x00"),
            Some(Protocol::GameSpy2)
        );
        // GameSpy 3 queries and challenge requests share the start, not the length.
        assert_eq!(route(b"\xfe\xfd\x00CORY\xff\x00"), None);
        assert_eq!(
            route(b"\xfe\xfd\x09\x01\x02\x03\x04"),
            Some(Protocol::GameSpy3)
        );
        assert_eq!(route(b"\xfe\xfd\x09\x01\x02\x03"), None);
        let query = b"\xfe\xfd\x00\x01\x02\x03\x04\xff\xff\xff\x01";
        assert_eq!(route(query), Some(Protocol::GameSpy3));
        let challenged = b"\xfe\xfd\x00\x01\x02\x03\x04\x00\x00\x30\x39\xff\xff\xff\x01";
        assert_eq!(route(challenged), Some(Protocol::GameSpy3));
        // GameSpy 2's 10-byte request is its own; Minecraft's basic stat is nobody's.
        assert_eq!(
            route(b"\xfe\xfd\x00\x01\x02\x03\x04\xff\xff\xff"),
            Some(Protocol::GameSpy2)
        );
        assert_eq!(route(b"\xfe\xfd\x00\x01\x02\x03\x04\x00\x00\x30\x39"), None);
        // Teeworlds' two forms of gie3, and nothing shorter; Mumble's ping is not routed.
        let gie3 = b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffgie3\x05";
        assert_eq!(route(gie3), Some(Protocol::Teeworlds));
        assert_eq!(route(&gie3[..14]), None);
        let extended = b"xe\x12\x34\x00\x00\xff\xff\xff\xffgie3\x07";
        assert_eq!(route(extended), Some(Protocol::Teeworlds));
        assert_eq!(route(&[0; 12]), None);
        // Teeworlds 0.7's token request (520 bytes, no shorter) and info request.
        let token = teeworlds::seven::Request::token(9).to_vec().unwrap();
        assert_eq!(route(&token), Some(Protocol::Teeworlds));
        assert_eq!(route(&token[..519]), None);
        let info = teeworlds::seven::Request::info(1, 2, 3).to_vec().unwrap();
        assert_eq!(route(&info), Some(Protocol::Teeworlds));
        assert_eq!(route(&info[..info.len() - 1]), None);
        // Bedrock's ping starts with SQP's `01`: told apart by its length and the magic.
        let mut ping = vec![0x01];
        ping.extend_from_slice(&0x1234u64.to_be_bytes());
        ping.extend_from_slice(bedrock::MAGIC);
        ping.extend_from_slice(&7u64.to_be_bytes());
        assert_eq!(route(&ping), Some(Protocol::Bedrock));
        assert_eq!(route(&ping[..32]), None);
        let mut wrong_magic = ping.clone();
        wrong_magic[12] ^= 1;
        assert_eq!(route(&wrong_magic), None);
        let mut longer = ping.clone();
        longer.push(0);
        assert_eq!(route(&longer), None);
        // Unreal 2: 5 bytes, UT2003's or UT2004's version, then a query. UT2003's first byte
        // is DDNet's `x`, whose request is 15 bytes; SQP's 5-byte request starts with `00`.
        for version in [unreal2::REQUEST_UT2003, unreal2::REQUEST_UT2004] {
            for query in [
                unreal2::Query::Info,
                unreal2::Query::Rules,
                unreal2::Query::Players,
                unreal2::Query::Everything,
            ] {
                let request = unreal2::Request { version, query }.to_vec().unwrap();
                assert_eq!(route(&request), Some(Protocol::Unreal2), "{request:?}");
                assert_eq!(route(&request[..4]), None);
                let mut longer = request.clone();
                longer.push(0);
                assert_eq!(route(&longer), None);
            }
        }
        assert_eq!(route(b"\x79\x00\x00\x00\x04"), None);
        assert_eq!(route(b"\x7a\x00\x00\x00\x00"), None);
        assert_eq!(route(b"\x79\x00\x00\x01\x00"), None);
        assert_eq!(route(b"xe\x00\x00\x00"), None);
    }
}
