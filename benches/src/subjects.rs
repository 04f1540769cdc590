//! The responders under test, configured as a benchmark needs them, and the state they serve.

use query_net::engine::Responder;
use query_net::engines::a2s::{A2sConfig, A2sResponder};
use query_net::engines::all::AllProtocols;
use query_net::engines::gamespy1::{GameSpy1Config, GameSpy1Responder};
use query_net::engines::gamespy2::{GameSpy2Config, GameSpy2Responder};
use query_net::engines::onequery::OneQueryResponder;
use query_net::engines::quake3::{Quake3Config, Quake3Responder};
use query_net::engines::samp::{SampConfig, SampResponder};
use query_net::engines::sqp::{SqpResponder, SqpResponderConfig};
use query_net::service::Service;
use query_net::state::{PlayerState, RuleValue, ServerState, SharedState, TeamState};
use query_net::Protocol;

/// A server as a real one looks: a dozen players on two teams, a handful of typed rules.
/// Every responder in every benchmark answers from this state.
pub fn server_state() -> ServerState {
    let players = (0..12)
        .map(|i| PlayerState {
            name: format!("Player{i:02}"),
            score: i * 7,
            ping: 20 + u32::try_from(i).unwrap_or(0) * 3,
            id: None,
            uuid: None,
            team: Some(if i % 2 == 0 { "red" } else { "blue" }.to_owned()),
        })
        .collect();
    let mut state = ServerState {
        name: "Benchmark Server".to_owned(),
        map: "Highrise".to_owned(),
        game_type: "TeamDeathMatch".to_owned(),
        version: "1.0.3".to_owned(),
        language: "English".to_owned(),
        motd: "Welcome".to_owned(),
        max_players: 32,
        players,
        teams: vec![
            TeamState {
                name: "red".to_owned(),
                score: 42,
            },
            TeamState {
                name: "blue".to_owned(),
                score: 37,
            },
        ],
        port: 7777,
        ..ServerState::default()
    };
    let rules: [(&str, RuleValue); 6] = [
        ("round_time", RuleValue::Integer(300)),
        ("difficulty", RuleValue::from("hard")),
        ("friendly_fire", RuleValue::Bool(false)),
        ("gravity", RuleValue::Float(9.81)),
        ("weather", RuleValue::from("clear")),
        ("version", RuleValue::from("1.0.3")),
    ];
    state.rules = rules.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    state
}

/// The challenge table size of every SQP responder here: enough for every load-generator
/// socket to hold a challenge, small enough that thousands of responders fit in memory.
pub const SQP_CHALLENGES: usize = 4096;

/// The SQP responder.
pub fn sqp(state: &SharedState) -> SqpResponder {
    sqp_with_challenges(state, SQP_CHALLENGES)
}

/// The SQP responder with room for `challenges` outstanding challenges.
pub fn sqp_with_challenges(state: &SharedState, challenges: usize) -> SqpResponder {
    SqpResponder::with_config(
        state.clone(),
        SqpResponderConfig {
            max_challenges: challenges,
            ..SqpResponderConfig::default()
        },
    )
}

/// The SA:MP responder, as a SA:MP 0.3.7 server answers.
pub fn samp(state: &SharedState) -> SampResponder {
    SampResponder::new(state.clone(), SampConfig::default())
}

/// The GameSpy v1 responder with its default configuration.
pub fn gamespy1(state: &SharedState) -> GameSpy1Responder {
    GameSpy1Responder::new(state.clone(), GameSpy1Config::default())
}

/// The A2S responder as current Source servers answer: INFO too needs a challenge.
pub fn a2s(state: &SharedState) -> A2sResponder {
    A2sResponder::new(state.clone(), A2sConfig::default())
}

/// The GameSpy 2 responder with its default configuration.
pub fn gamespy2(state: &SharedState) -> GameSpy2Responder {
    GameSpy2Responder::new(state.clone(), GameSpy2Config::default())
}

/// The Quake 3 responder with its default configuration.
pub fn quake3(state: &SharedState) -> Quake3Responder {
    Quake3Responder::new(state.clone(), Quake3Config::default())
}

/// The GameSpy 3/4 responder with its default configuration (challenge required).
pub fn gamespy3(state: &SharedState) -> query_net::engines::gamespy3::GameSpy3Responder {
    query_net::engines::gamespy3::GameSpy3Responder::new(
        state.clone(),
        query_net::engines::gamespy3::GameSpy3Config::default(),
    )
}

/// The responder of one protocol, boxed so that one collection holds any. Its SQP challenge
/// table has room for `sqp_challenges` clients at once.
pub fn responder(protocol: Protocol, state: &SharedState, sqp_challenges: usize) -> DynResponder {
    DynResponder(match protocol {
        Protocol::Sqp => Box::new(sqp_with_challenges(state, sqp_challenges)),
        Protocol::OneQuery => Box::new(OneQueryResponder::new(state.clone())),
        Protocol::Samp => Box::new(samp(state)),
        Protocol::GameSpy1 => Box::new(gamespy1(state)),
        Protocol::A2s => Box::new(a2s(state)),
        Protocol::Quake3 => Box::new(quake3(state)),
        Protocol::Doom3 => Box::new(query_net::engines::doom3::Doom3Responder::new(
            state.clone(),
            query_net::engines::doom3::Doom3Config::default(),
        )),
        Protocol::Fivem => Box::new(query_net::engines::fivem::FivemResponder::new(
            state.clone(),
            query_net::engines::fivem::FivemConfig::default(),
        )),
        Protocol::Quake2 => Box::new(query_net::engines::quake2::Quake2Responder::new(
            state.clone(),
            query_net::engines::quake2::Quake2Config::default(),
        )),
        Protocol::GameSpy2 => Box::new(gamespy2(state)),
        Protocol::GameSpy3 | Protocol::MinecraftQuery => Box::new(gamespy3(state)),
        Protocol::Minecraft | Protocol::Frostbite | Protocol::TeamSpeak3 => {
            unreachable!("{protocol} is TCP: no datagram responder")
        }
        Protocol::Bedrock => Box::new(query_net::engines::bedrock::BedrockResponder::new(
            state.clone(),
            query_net::engines::bedrock::BedrockConfig::default(),
        )),
        Protocol::Teeworlds => Box::new(query_net::engines::teeworlds::TeeworldsResponder::new(
            state.clone(),
            query_net::engines::teeworlds::TeeworldsConfig::default(),
        )),
        Protocol::Mumble => Box::new(query_net::engines::mumble::MumbleResponder::new(
            state.clone(),
            query_net::engines::mumble::MumbleConfig::default(),
        )),
        Protocol::Ase => Box::new(query_net::engines::ase::AseResponder::new(
            state.clone(),
            query_net::engines::ase::AseConfig::default(),
        )),
        Protocol::Unreal2 => Box::new(query_net::engines::unreal2::Unreal2Responder::new(
            state.clone(),
            query_net::engines::unreal2::Unreal2Config::default(),
        )),
    })
}

/// A boxed responder of any protocol, usable where a [`Responder`] is expected.
pub struct DynResponder(pub Box<dyn Responder + Send>);

impl std::fmt::Debug for DynResponder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DynResponder(..)")
    }
}

impl Responder for DynResponder {
    fn handle(
        &mut self,
        from: std::net::SocketAddr,
        datagram: &[u8],
        now: query_net::clock::Now,
        replies: &mut query_net::engine::ReplySink,
    ) -> query_net::engine::Verdict {
        self.0.handle(from, datagram, now, replies)
    }
}

/// Every protocol on one port.
pub fn all_protocols(state: &SharedState) -> AllProtocols {
    AllProtocols::new(state.clone())
        .with_sqp(sqp(state))
        .with_samp(samp(state))
        .with_gamespy1(gamespy1(state))
        .with_a2s(a2s(state))
}

/// `responder` behind a [`Service`] without a rate limit or byte budget: the benchmarks send
/// from one address far faster than the default limits (10 requests per second per source,
/// 32 KiB/s per netblock to unproven sources) allow, and measure the responder, not the
/// limiters.
pub fn unlimited<R: Responder>(responder: R) -> Service<R> {
    Service::new(responder).rate_limit(None).reply_budget(None)
}
