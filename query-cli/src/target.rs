//! What every command queries: a protocol, a game or `auto` (read by `query-games`), at an
//! address; the attempts the catalogue plans run at once and the first answer wins.
//!
//! `gsq query` and the exporter's `/probe` race one target's attempts here
//! ([`first_answer`]); `gsq bulk` and the exporter's target list run many targets' attempts
//! through query-net's bulk engines and keep each target's first answer ([`bulk_first`]).

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::stream::{self, Stream, StreamExt};
use query_games::identify::identify;
use query_games::plan::{Attempt, Choice};
use query_games::Game;
use query_net::address::HostPort;
use query_net::bulk::BulkConfig;
use query_net::bulk_stream::bulk_mixed;
use query_net::learned::ServerMemory;
use query_net::srv::SrvResolver;
use query_net::{driver, engines, tcp, Options, Protocol, QueryError, ServerStatus};
use serde::Serialize;
use tokio::task::JoinSet;

use crate::exit::{classify, BadValue, Category};

/// How long `auto`'s likely attempts (the games of the port) run alone before the other
/// protocols are tried too: on a LAN or the internet's nearer half an answer comes sooner,
/// so a port that answers several protocols is named by the likely one every time.
pub const HEAD_START: Duration = Duration::from_millis(200);

/// A protocol, game or `auto`; an unknown name is [`Category::UnknownProtocol`] (exit 3).
pub fn parse_choice(text: &str) -> Result<Choice, BadValue> {
    text.parse::<Choice>()
        .map_err(|e| BadValue::new(Category::UnknownProtocol, e.to_string()))
}

/// A status and the game it came from: what `query --json`, bulk and the exporter report.
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    /// The status, its fields at the top level.
    #[serde(flatten)]
    pub status: ServerStatus,
    /// The game's id: the one asked for, or the one the answer or its port names.
    pub game: Option<&'static str>,
    /// The game's display name.
    pub game_name: Option<&'static str>,
    /// The port that answered (the game's query port, not necessarily the one given).
    pub query_port: u16,
}

impl Answer {
    /// Names the game of `status`, which answered `attempt` of `choice`.
    ///
    /// A game asked for is the game. Otherwise the answer names it ([`identify`]); under
    /// `auto`, a GameSpy 3/4 answer from a Minecraft server is reported as `minecraft-query`
    /// whichever client got it, since the two are one wire protocol.
    pub fn new(choice: Choice, status: ServerStatus) -> Answer {
        let game = choice.game().or_else(|| identify(&status));
        Answer::named(choice, status, game)
    }

    /// `status` from `game`, as [`Answer::new`] reports it.
    pub fn named(choice: Choice, mut status: ServerStatus, game: Option<&'static Game>) -> Answer {
        if choice == Choice::Auto
            && status.protocol == Protocol::GameSpy3
            && game.is_some_and(|g| g.protocol == Protocol::Minecraft)
        {
            status.protocol = Protocol::MinecraftQuery;
        }
        Answer {
            query_port: status.address.port(),
            game: game.map(|g| g.id.as_str()),
            game_name: game.map(|g| g.name.as_str()),
            status,
        }
    }
}

/// One attempt that did not answer.
#[derive(Debug)]
pub struct Unanswered {
    /// What was tried.
    pub attempt: Attempt,
    /// Where.
    pub address: SocketAddr,
    /// Why it failed.
    pub error: QueryError,
}

/// The options of one attempt: the game's text encoding unless one was chosen.
pub fn options_for(attempt: &Attempt, options: &Options) -> Options {
    let mut options = options.clone();
    if options.encoding.is_none() {
        options.encoding = attempt.game.and_then(|g| g.encoding);
    }
    options
}

/// Whether [`options_for`] would change `options` for `attempt`.
fn needs_own_options(attempt: &Attempt, options: &Options) -> bool {
    options.encoding.is_none() && attempt.game.is_some_and(|g| g.encoding.is_some())
}

/// Queries `ip` (found by the name `host`, which Minecraft Java's handshake carries) as
/// `attempts` say, all at once (the unlikely ones after [`HEAD_START`] when
/// there are likely ones); the first answer wins and the other queries are dropped. Every
/// failure when none answers, in attempt order.
pub async fn first_answer(
    choice: Choice,
    host: &str,
    ip: IpAddr,
    attempts: &[Attempt],
    options: &Options,
    memory: &ServerMemory,
) -> Result<Answer, Vec<Unanswered>> {
    let any_likely = attempts.iter().any(|a| a.likely);
    let mut queries = JoinSet::new();
    for (index, attempt) in attempts.iter().enumerate() {
        let address = SocketAddr::new(ip, attempt.port);
        let options = options_for(attempt, options);
        let wait = if any_likely && !attempt.likely {
            HEAD_START
        } else {
            Duration::ZERO
        };
        let protocol = attempt.protocol;
        let learned = memory.of(address);
        let host = host.to_owned();
        queries.spawn(async move {
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
            let result = driver::query_at(protocol, address, &host, &options, &learned).await;
            (index, address, result)
        });
    }
    let mut failures = Vec::new();
    while let Some(joined) = queries.join_next().await {
        let (index, address, result) = match joined {
            Ok(done) => done,
            // A query that panicked is a bug: let it surface, as the query would alone.
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => continue,
        };
        match result {
            Ok(status) => return Ok(Answer::new(choice, status)),
            Err(error) => {
                tracing::debug!("{} {address}: {error}", attempts[index].protocol);
                failures.push((index, address, error));
            }
        }
    }
    failures.sort_by_key(|(index, _, _)| *index);
    Err(failures
        .into_iter()
        .map(|(index, address, error)| Unanswered {
            attempt: attempts[index],
            address,
            error,
        })
        .collect())
}

/// Where `address` is served when `choice` asks for Minecraft Java (the protocol or a game
/// of it) by a name without a port or query port: the target and port of its
/// `_minecraft._tcp` SRV record, as the game looks it up ([`SrvResolver`]); otherwise, or
/// when it has none, `address` itself. The handshake still carries the name as given.
pub async fn minecraft_srv(
    choice: Choice,
    address: &HostPort,
    query_port: Option<u16>,
) -> HostPort {
    let java = choice.protocol() == Some(Protocol::Minecraft)
        || choice
            .game()
            .is_some_and(|game| game.protocol == Protocol::Minecraft);
    if !java || !address.is_name() || address.port().is_some() || query_port.is_some() {
        return address.clone();
    }
    let Ok(resolver) = SrvResolver::system() else {
        return address.clone();
    };
    match resolver.minecraft(&address.host()).await {
        Some((target, port)) => format!("{target}:{port}")
            .parse()
            .unwrap_or_else(|_| address.clone()),
        None => address.clone(),
    }
}

/// A target of a bulk run: what the caller keeps with it, and its attempts.
#[derive(Debug)]
pub struct BulkTarget<T> {
    /// The caller's own (the input line, the list index), given back with the result.
    pub tag: T,
    /// What was asked for.
    pub choice: Choice,
    /// The host name as the user gave it, which Minecraft Java's handshake carries.
    pub host: String,
    /// Where to ask; empty when the target cannot be queried (the caller knows why).
    pub attempts: Vec<(Attempt, SocketAddr)>,
}

/// One target's attempts in flight: the tag goes back with the first answer, or once every
/// attempt failed.
struct Group<T> {
    choice: Choice,
    host: String,
    attempts: Vec<(Attempt, SocketAddr)>,
    state: Mutex<GroupState<T>>,
}

struct GroupState<T> {
    tag: Option<T>,
    pending: usize,
    /// With their attempt's index, to report them in attempt order.
    failures: Vec<(usize, Unanswered)>,
}

/// One attempt of a group, or a group without attempts (`None`).
type Item<T> = (Arc<Group<T>>, Option<usize>);

/// Runs the attempts of every target (all of a target's at once) through query-net's bulk
/// engines, datagram attempts through a few shared sockets and stream ones (Minecraft Java)
/// over connections of their own, at most [`BulkConfig::connections`] open, and streams one
/// result per target, in completion order: its first answer, or every attempt's failure
/// (none for a target without attempts). Memory stays bounded by the engines' concurrency:
/// a target is held until its last attempt ends. What a query learns about a server (a
/// GameSpy 3 server that wants a challenge) goes to `memory`, for the next query of it.
pub fn bulk_first<T, S>(
    targets: S,
    options: Options,
    memory: ServerMemory,
    config: BulkConfig,
) -> impl Stream<Item = (T, Result<Answer, Vec<Unanswered>>)> + Send
where
    T: Send + 'static,
    S: Stream<Item = BulkTarget<T>> + Send + Unpin + 'static,
{
    let items = targets.flat_map(|target| {
        let count = target.attempts.len();
        let group = Arc::new(Group {
            choice: target.choice,
            host: target.host,
            attempts: target.attempts,
            state: Mutex::new(GroupState {
                tag: Some(target.tag),
                pending: count.max(1),
                failures: Vec::new(),
            }),
        });
        // A target without attempts still passes once, to come out as its own failure.
        let indices: Vec<Option<usize>> = if count == 0 {
            vec![None]
        } else {
            (0..count).map(Some).collect()
        };
        stream::iter(
            indices
                .into_iter()
                .map(move |index| (Arc::clone(&group), index)),
        )
    });
    // Shared by every stream query rather than cloned into each; one of another encoding is
    // made only for an attempt whose game has one.
    let stream_options = Arc::new(options.clone());
    let results = bulk_mixed(
        items,
        |(group, index): &Item<T>| index.is_some_and(|i| group.attempts[i].0.protocol.is_stream()),
        move |(group, index): &Item<T>| match index {
            Some(index) => {
                let (attempt, address) = &group.attempts[*index];
                engines::new_session_learning(
                    attempt.protocol,
                    *address,
                    &options_for(attempt, &options),
                    &memory.of(*address),
                )
            }
            None => Err(QueryError::protocol("not a target")),
        },
        // Stream protocols learn nothing a next query could use (no challenge to remember),
        // so their targets take no place in `memory`, which stays bounded by the datagram
        // side's targets.
        move |(group, index): &Item<T>| {
            let attempt = index.map(|i| group.attempts[i]);
            let options = match attempt {
                Some((attempt, _)) if needs_own_options(&attempt, &stream_options) => {
                    Arc::new(options_for(&attempt, &stream_options))
                }
                _ => Arc::clone(&stream_options),
            };
            let group = Arc::clone(group);
            async move {
                match attempt {
                    Some((attempt, address)) => {
                        tcp::query_stream_at(attempt.protocol, address, &group.host, &options).await
                    }
                    None => Err(QueryError::protocol("not a target")),
                }
            }
        },
        config,
    );
    results.filter_map(|done| {
        let (group, index) = done.target;
        let mut state = match group.state.lock() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        };
        state.pending = state.pending.saturating_sub(1);
        let out = match (done.result, index) {
            (Ok(status), Some(_)) => state
                .tag
                .take()
                .map(|tag| (tag, Ok(Answer::new(group.choice, status)))),
            (Err(error), Some(index)) => {
                let (attempt, address) = group.attempts[index];
                state.failures.push((
                    index,
                    Unanswered {
                        attempt,
                        address,
                        error,
                    },
                ));
                finished(&mut state)
            }
            (_, None) => finished(&mut state),
        };
        std::future::ready(out)
    })
}

/// The tag and failures of a group whose attempts all failed, once.
fn finished<T>(state: &mut GroupState<T>) -> Option<(T, Result<Answer, Vec<Unanswered>>)> {
    if state.pending > 0 {
        return None;
    }
    let tag = state.tag.take()?;
    let mut failures = std::mem::take(&mut state.failures);
    failures.sort_by_key(|(index, _)| *index);
    Some((tag, Err(failures.into_iter().map(|(_, f)| f).collect())))
}

/// The attempts of `choice` at `ip`, as socket addresses.
pub fn at(ip: IpAddr, attempts: Vec<Attempt>) -> Vec<(Attempt, SocketAddr)> {
    attempts
        .into_iter()
        .map(|a| (a, SocketAddr::new(ip, a.port)))
        .collect()
}

/// What to report when no attempt answered: the most telling category (a refused token says
/// more than a silence) and every attempt's reason; a lone attempt's error as it is.
pub fn summarize(failures: &[Unanswered]) -> (Category, String) {
    if let [only] = failures {
        return (classify(&only.error).0, only.error.to_string());
    }
    let rank = |c: Category| match c {
        Category::Auth => 0,
        Category::Malformed => 1,
        Category::Network => 2,
        Category::Unreachable => 3,
        Category::Timeout => 4,
        _ => 5,
    };
    // A refused TCP connection says only that the stream protocol is not served there; the
    // datagram protocols tried on the same port number may still be, and silent.
    let category = failures
        .iter()
        .filter(|f| !matches!(f.error, QueryError::ConnectionRefused { .. }))
        .map(|f| classify(&f.error).0)
        .min_by_key(|c| rank(*c))
        .unwrap_or(Category::Unreachable);
    let reasons: Vec<String> = failures
        .iter()
        .map(|f| format!("{} {}: {}", f.attempt.protocol, f.address, f.error))
        .collect();
    (category, reasons.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use query_net::Protocol;

    fn status(protocol: Protocol, gamename: Option<&str>) -> ServerStatus {
        let mut rules = indexmap::IndexMap::new();
        if let Some(name) = gamename {
            rules.insert("gamename".to_owned(), name.to_owned());
        }
        ServerStatus {
            protocol,
            address: "192.0.2.1:25601".parse().unwrap(),
            name: "s".into(),
            map: None,
            game_type: None,
            version: None,
            num_players: 0,
            max_players: 0,
            password: None,
            players: Vec::new(),
            teams: Vec::new(),
            rules,
            ping_ms: 1.0,
            complete: true,
            raw: serde_json::json!({}),
        }
    }

    #[test]
    fn auto_reports_a_minecraft_query_answer_as_minecraft_query_and_a_protocol_as_asked() {
        let answer = Answer::new(Choice::Auto, status(Protocol::GameSpy3, Some("MINECRAFT")));
        assert_eq!(answer.status.protocol, Protocol::MinecraftQuery);
        assert_eq!(answer.game, Some("minecraft"));
        assert_eq!(answer.query_port, 25601);

        let asked = Choice::Protocol(Protocol::GameSpy3);
        let answer = Answer::new(asked, status(Protocol::GameSpy3, Some("MINECRAFT")));
        assert_eq!(answer.status.protocol, Protocol::GameSpy3);
        assert_eq!(answer.game, Some("minecraft"));

        let answer = Answer::new(Choice::Auto, status(Protocol::GameSpy3, None));
        assert_eq!(answer.status.protocol, Protocol::GameSpy3);
        assert_eq!(answer.game, None);

        // A game asked for is the game, whatever the reply says.
        let rust = query_games::catalogue().find("rust").unwrap();
        let answer = Answer::new(Choice::Game(rust), status(Protocol::A2s, None));
        assert_eq!(answer.game_name, Some("Rust"));
    }

    #[test]
    fn several_failures_summarize_to_the_most_telling() {
        let attempt = |port| Attempt {
            protocol: Protocol::A2s,
            port,
            game: None,
            likely: true,
        };
        let failures = vec![
            Unanswered {
                attempt: attempt(1),
                address: "127.0.0.1:1".parse().unwrap(),
                error: QueryError::Timeout {
                    waiting_for: "reply",
                    attempts: 1,
                    after: Duration::from_millis(5),
                },
            },
            Unanswered {
                attempt: attempt(2),
                address: "127.0.0.1:2".parse().unwrap(),
                error: QueryError::protocol("garbage"),
            },
        ];
        let (category, text) = summarize(&failures);
        assert_eq!(category, Category::Malformed);
        assert!(
            text.starts_with("a2s 127.0.0.1:1: ") && text.contains("; a2s 127.0.0.1:2: "),
            "{text}"
        );
    }
}
