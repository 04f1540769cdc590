//! `gsq query`: one server, in one protocol or in all of them at once.

use std::net::SocketAddr;

use query_net::engine::Bounded;
use query_net::engines::samp;
use query_net::engines::sqp::SqpClient;
use query_net::{driver, tcp, Options, Protocol, QueryError, RconCommand, ServerStatus};
use query_specs::sqp::ChunkSet;
use serde_json::json;
use tokio::task::JoinSet;

use crate::address::HostPort;
use crate::cli::{ProtocolChoice, QueryArgs};
use crate::exit::{classify, Category, Failure, Outcome};
use crate::output::{print_line, render_status, sanitize, to_json, Format};

/// Runs `gsq query`.
pub async fn run(args: QueryArgs) -> Outcome {
    let format = Format::choose(&args.output);
    let status = match args.protocol {
        ProtocolChoice::One(protocol) => {
            let options = args.client.options();
            let rcon = rcon_command(&args, protocol)?;
            let chunks = sqp_chunks(&args, Some(protocol))?;
            let target = resolve(&args.address, protocol.default_port()).await?;
            if let Some(rcon) = rcon {
                return run_rcon(target, &rcon, &options, format).await;
            }
            match chunks {
                Some(chunks) => query_sqp_chunks(target, &options, chunks).await?,
                // The host name goes in the handshake: proxies route by it.
                None if protocol == Protocol::Minecraft => {
                    tcp::query_minecraft(args.address.clone(), &options)
                        .await
                        .map_err(|e| Failure::from_query(&format!("{protocol} {target}"), &e))?
                }
                None => query_status(protocol, target, &options).await?,
            }
        }
        ProtocolChoice::Auto => {
            if args.rcon.is_some() {
                return Err(Failure::usage("--rcon needs a protocol, not auto")
                    .hint("use 'gsq query samp ...' for RCON"));
            }
            sqp_chunks(&args, None)?;
            query_any(&args).await?
        }
    };
    print_line(&render_status(&status, format)?)
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
    if text.is_empty() {
        return Ok(());
    }
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

/// `auto`: every protocol at once (each on its default port unless one was given); the
/// first answer wins and the other queries are dropped.
async fn query_any(args: &QueryArgs) -> Outcome<ServerStatus> {
    let any_port = args
        .address
        .port()
        .unwrap_or_else(|| Protocol::Sqp.default_port());
    let ip = resolve(&args.address, any_port).await?.ip();
    let mut queries = JoinSet::new();
    for protocol in Protocol::ALL {
        let target = SocketAddr::new(ip, args.address.port().unwrap_or(protocol.default_port()));
        let options = args.client.options();
        queries.spawn(async move {
            let result = driver::query(protocol, target, &options).await;
            (protocol, target, result)
        });
    }
    let mut failures: Vec<(Protocol, SocketAddr, QueryError)> = Vec::new();
    while let Some(joined) = queries.join_next().await {
        match joined {
            Ok((_, _, Ok(status))) => return Ok(status),
            Ok((protocol, target, Err(error))) => {
                tracing::debug!("auto: {protocol} {target}: {error}");
                failures.push((protocol, target, error));
            }
            Err(e) => return Err(Failure::internal(format!("a query task failed: {e}"))),
        }
    }
    Err(none_answered(&args.address, failures))
}

/// Why `auto` found nothing: every protocol's reason, and the most telling category
/// (a refused token says more than a silence).
fn none_answered(
    address: &HostPort,
    mut failures: Vec<(Protocol, SocketAddr, QueryError)>,
) -> Failure {
    failures.sort_by_key(|(protocol, _, _)| *protocol);
    let rank = |c: Category| match c {
        Category::Auth => 0,
        Category::Malformed => 1,
        Category::Network => 2,
        Category::Timeout => 3,
        _ => 4,
    };
    // A refused TCP connection is a stream protocol's silence: nothing listens there.
    let refused = |e: &QueryError| matches!(e, QueryError::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused);
    let category = failures
        .iter()
        .map(|(protocol, _, e)| {
            if protocol.is_stream() && refused(e) {
                Category::Timeout
            } else {
                classify(e).0
            }
        })
        .min_by_key(|c| rank(*c))
        .unwrap_or(Category::Timeout);
    let reasons: Vec<String> = failures
        .iter()
        .map(|(protocol, target, error)| format!("{protocol} {target}: {error}"))
        .collect();
    let hint = if category == Category::Timeout {
        "check the address and port; with auto and no port each protocol uses its default port"
    } else {
        "try the protocol that answered oddly on its own, with -v for details"
    };
    Failure::new(
        category,
        format!("no protocol answered at {address} ({})", reasons.join("; ")),
    )
    .hint(hint)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn timeout() -> QueryError {
        QueryError::Timeout {
            waiting_for: "request",
            attempts: 1,
            after: Duration::from_millis(10),
        }
    }

    #[test]
    fn auto_reports_every_protocol_and_the_most_telling_category() {
        let address: HostPort = "127.0.0.1".parse().unwrap();
        let at = |port| SocketAddr::from(([127, 0, 0, 1], port));
        let failures = vec![
            (Protocol::Samp, at(7777), timeout()),
            (Protocol::Sqp, at(7779), timeout()),
        ];
        let failure = none_answered(&address, failures);
        assert_eq!(failure.category(), Category::Timeout);
        let text = failure.to_string();
        assert!(
            text.find("sqp 127.0.0.1:7779").unwrap() < text.find("samp").unwrap(),
            "{text}"
        );

        let failures = vec![
            (Protocol::Sqp, at(1), timeout()),
            (
                Protocol::OneQuery,
                at(1),
                QueryError::AuthRequired("token".into()),
            ),
        ];
        assert_eq!(none_answered(&address, failures).category(), Category::Auth);
    }
}
