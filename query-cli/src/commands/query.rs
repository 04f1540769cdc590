//! `gsq query`: one server, in one protocol or in all of them at once.

use std::net::SocketAddr;

use query_games::plan::{Choice, Ports};
use query_net::engine::Bounded;
use query_net::engines::samp;
use query_net::engines::sqp::SqpClient;
use query_net::learned::ServerMemory;
use query_net::{driver, Options, Protocol, RconCommand, ServerStatus};
use query_specs::sqp::ChunkSet;
use serde_json::json;

use crate::address::HostPort;
use crate::cli::QueryArgs;
use crate::exit::{classify, Category, Failure, Outcome};
use crate::output::{print_line, render_status, sanitize, to_json, Format};
use crate::target::{first_answer, summarize, Answer, Unanswered};

/// Runs `gsq query`.
pub async fn run(args: QueryArgs) -> Outcome {
    let format = Format::choose(&args.output);
    let choice = args.protocol;
    let protocol = choice.protocol();
    if protocol.is_none() && args.rcon.is_some() {
        return Err(Failure::usage("--rcon needs a protocol, not auto")
            .hint("use 'gsq query samp ...' for RCON"));
    }
    if let Some(protocol) = protocol {
        args.client.check_applies_to(protocol)?;
    }
    let rcon = match protocol {
        Some(protocol) => rcon_command(&args, protocol)?,
        None => None,
    };
    let chunks = sqp_chunks(&args, protocol)?;
    let ports = Ports {
        given: args.address.port(),
        query: args.query_port,
    };
    let attempts = choice.attempts(ports).map_err(|e| {
        Failure::new(Category::BadAddress, e.to_string())
            .hint("'gsq games' lists each game's ports")
    })?;
    let first = attempts
        .first()
        .ok_or_else(|| Failure::internal("no attempt was planned"))?;
    let ip = resolve(&args.address, first.port).await?.ip();
    let options = args.client.options()?;
    if let Some(rcon) = rcon {
        return run_rcon(SocketAddr::new(ip, first.port), &rcon, &options, format).await;
    }
    if let Some(chunks) = chunks {
        let target = SocketAddr::new(ip, first.port);
        let status = query_sqp_chunks(target, &options, chunks).await?;
        return print_line(&render_answer(&Answer::new(choice, status), format)?);
    }
    // A one-off query starts fresh: nothing learned before changes what it does.
    let memory = ServerMemory::new();
    match first_answer(
        choice,
        &args.address.host(),
        ip,
        &attempts,
        &options,
        &memory,
    )
    .await
    {
        Ok(answer) => print_line(&render_answer(&answer, format)?),
        Err(failures) => Err(none_answered(choice, &args.address, failures)),
    }
}

/// An answer in `format`: the status's JSON with the game and the port that answered, or the
/// status's tables under a line naming the game.
fn render_answer(answer: &Answer, format: Format) -> Outcome<String> {
    match format {
        Format::Json => to_json(answer, false),
        Format::PrettyJson => to_json(answer, true),
        Format::Table => {
            let tables = render_status(&answer.status, format)?;
            Ok(match (answer.game_name, answer.game) {
                (Some(name), Some(id)) => format!("{} ({id})\n{tables}", sanitize(name)),
                _ => tables,
            })
        }
    }
}

/// The RCON command of the arguments, which only SA:MP has.
fn rcon_command(args: &QueryArgs, protocol: Protocol) -> Outcome<Option<RconCommand>> {
    let Some(command) = &args.rcon else {
        return Ok(None);
    };
    if protocol != Protocol::Samp {
        return Err(Failure::usage(format!(
            "--rcon is a SA:MP feature, not available with {protocol}"
        )));
    }
    let password = args
        .rcon_password
        .clone()
        .ok_or_else(|| Failure::usage("--rcon needs --rcon-password"))?;
    Ok(Some(RconCommand {
        password,
        command: command.clone(),
    }))
}

/// The chunks of `--chunks`, which only SQP has (`protocol` is `None` for auto).
fn sqp_chunks(args: &QueryArgs, protocol: Option<Protocol>) -> Outcome<Option<ChunkSet>> {
    match (args.chunks, protocol) {
        (None, _) => Ok(None),
        (Some(chunks), Some(Protocol::Sqp)) => Ok(Some(chunks)),
        (Some(_), Some(protocol)) => Err(Failure::usage(format!(
            "--chunks is an SQP option, not available with {protocol}"
        ))
        .hint("use --fetch to choose what other protocols fetch")),
        (Some(_), None) => Err(Failure::usage("--chunks needs the sqp protocol, not auto")
            .hint("use 'gsq query sqp ... --chunks ...'")),
    }
}

/// Queries SQP `target` for exactly `chunks`.
async fn query_sqp_chunks(
    target: SocketAddr,
    options: &Options,
    chunks: ChunkSet,
) -> Outcome<ServerStatus> {
    let what = format!("{} {target}", Protocol::Sqp);
    let session = SqpClient::with_chunks(target, options, chunks);
    driver::query_session(Bounded::from_options(session, options))
        .await
        .map_err(|e| Failure::from_query(&what, &e))
}

/// Runs an SA:MP RCON command and prints the console lines it produced.
async fn run_rcon(
    target: SocketAddr,
    rcon: &RconCommand,
    options: &Options,
    format: Format,
) -> Outcome {
    let what = format!("samp rcon {target}");
    let session =
        samp::rcon_session(target, rcon, options).map_err(|e| Failure::from_query(&what, &e))?;
    let lines = driver::query_session(Bounded::from_options(session, options))
        .await
        .map_err(|e| Failure::from_query(&what, &e))?;
    if lines.is_empty() {
        // The server answered the probe query but printed nothing for the command within the
        // timeout: RCON is off there (SA:MP ignores RCON without an rcon_password), or this
        // command prints nothing. An empty list with exit 0 would read as success.
        return Err(Failure::new(
            Category::Timeout,
            format!(
                "{what}: the server answers queries but sent no RCON output for {:?}",
                rcon.command
            ),
        )
        .hint("RCON is off on that server (no rcon_password), or the command prints nothing"));
    }
    let text = match format {
        Format::Table => lines
            .iter()
            .map(|line| sanitize(line))
            .collect::<Vec<_>>()
            .join("\n"),
        Format::Json | Format::PrettyJson => to_json(
            &json!({
                "protocol": Protocol::Samp,
                "address": target,
                "command": rcon.command,
                "lines": lines,
            }),
            format == Format::PrettyJson,
        )?,
    };
    print_line(&text)
}

/// The socket address of `address`, looked up if it is a name.
pub async fn resolve(address: &HostPort, default_port: u16) -> Outcome<SocketAddr> {
    address.resolve(default_port).await.map_err(|e| {
        let (category, hint) = classify(&e);
        let failure = Failure::new(category, e.to_string());
        match hint {
            Some(hint) => failure.hint(hint),
            None => failure,
        }
    })
}

/// Queries `target` in `protocol` with the real client engine.
pub async fn query_status(
    protocol: Protocol,
    target: SocketAddr,
    options: &Options,
) -> Outcome<ServerStatus> {
    let what = format!("{protocol} {target}");
    let result = driver::query(protocol, target, options).await;
    result.map_err(|e| Failure::from_query(&what, &e))
}

/// Why nothing answered: a lone attempt's error as the query gives it; for several, every
/// attempt's reason and the most telling category.
fn none_answered(choice: Choice, address: &HostPort, failures: Vec<Unanswered>) -> Failure {
    if let [only] = failures.as_slice() {
        let what = format!("{} {}", only.attempt.protocol, only.address);
        return Failure::from_query(&what, &only.error);
    }
    let (category, reasons) = summarize(&failures);
    let hint = match (choice, category) {
        (Choice::Auto, Category::Timeout | Category::Unreachable) => {
            "check the address and port; with auto and no port each protocol uses its default port"
        }
        (_, Category::Timeout | Category::Unreachable) => {
            "check the address and port; a game's HOST:PORT is the port players connect to (--query-port gives the query port)"
        }
        _ => "try the protocol that answered oddly on its own, with -v for details",
    };
    let what = match choice {
        Choice::Auto => "no protocol answered".to_owned(),
        other => format!("{other} did not answer"),
    };
    Failure::new(category, format!("{what} at {address} ({reasons})")).hint(hint)
}

#[cfg(test)]
mod tests {
    use super::*;
    use query_net::QueryError;
    use std::time::Duration;

    fn timeout() -> QueryError {
        QueryError::Timeout {
            waiting_for: "request",
            attempts: 1,
            after: Duration::from_millis(10),
        }
    }

    fn unanswered(protocol: Protocol, port: u16, error: QueryError) -> Unanswered {
        Unanswered {
            attempt: query_games::plan::Attempt {
                protocol,
                port,
                game: None,
                likely: false,
            },
            address: SocketAddr::from(([127, 0, 0, 1], port)),
            error,
        }
    }

    #[test]
    fn auto_reports_every_protocol_and_the_most_telling_category() {
        let address: HostPort = "127.0.0.1".parse().unwrap();
        let failures = vec![
            unanswered(Protocol::Sqp, 7779, timeout()),
            unanswered(Protocol::Samp, 7777, timeout()),
        ];
        let failure = none_answered(Choice::Auto, &address, failures);
        assert_eq!(failure.category(), Category::Timeout);
        let text = failure.to_string();
        assert!(
            text.find("sqp 127.0.0.1:7779").unwrap() < text.find("samp").unwrap(),
            "{text}"
        );

        let failures = vec![
            unanswered(Protocol::Sqp, 1, timeout()),
            unanswered(
                Protocol::OneQuery,
                1,
                QueryError::AuthRequired("token".into()),
            ),
        ];
        assert_eq!(
            none_answered(Choice::Auto, &address, failures).category(),
            Category::Auth
        );
    }

    #[test]
    fn a_lone_attempt_fails_as_its_query_does() {
        let address: HostPort = "127.0.0.1:9".parse().unwrap();
        let failure = none_answered(
            Choice::Protocol(Protocol::Samp),
            &address,
            vec![unanswered(Protocol::Samp, 9, timeout())],
        );
        assert!(
            failure.to_string().starts_with("samp 127.0.0.1:9: "),
            "{failure}"
        );
    }

    #[test]
    fn a_game_names_itself_when_no_port_answers() {
        let address: HostPort = "127.0.0.1:26900".parse().unwrap();
        let sdtd = query_games::catalogue().find("sdtd").unwrap();
        let failure = none_answered(
            Choice::Game(sdtd),
            &address,
            vec![
                unanswered(Protocol::A2s, 26901, timeout()),
                unanswered(Protocol::A2s, 26900, timeout()),
            ],
        );
        let text = failure.to_string();
        assert!(
            text.starts_with("sdtd did not answer at 127.0.0.1:26900"),
            "{text}"
        );
        assert!(
            text.contains("a2s 127.0.0.1:26901") && text.contains("a2s 127.0.0.1:26900"),
            "{text}"
        );
    }
}
