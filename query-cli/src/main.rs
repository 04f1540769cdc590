//! `gsq`: query game servers, answer their queries, and decode captured packets.
//!
//! `main` parses the command line, runs the command on a tokio runtime, and turns every
//! failure into one `gsq: error: ...` line and a documented exit code (see [`exit`]). Usage
//! errors from clap are reshaped into the same one-line form.

// The doc comments of the command-line types are clap's help text, written for a terminal:
// `[IPv6]:port` and `<protocol>` there are not links or HTML.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

mod address;
mod cli;
mod commands;
mod exit;
mod logging;
mod output;
mod pcap;
mod protocols;
mod rcon_console;
mod responders;
mod state_file;
mod target;
mod target_line;

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::Parser;

use crate::cli::{Cli, Command};
use crate::exit::{Failure, Outcome};

fn main() -> ExitCode {
    install_panic_hook();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return report_clap_error(&error),
    };
    logging::init(&cli);
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("gsq: error: {failure}");
            failure.exit_code()
        }
    }
}

fn run(cli: Cli) -> Outcome {
    // `gsq bulk` is one task moving datagrams and results: on one thread it needs no wake-ups
    // across threads, which cost it more CPU than the queries themselves.
    let mut builder = match cli.command {
        Command::Bulk(_) => tokio::runtime::Builder::new_current_thread(),
        _ => {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            builder.worker_threads(2);
            builder
        }
    };
    let runtime = builder
        .enable_all()
        .build()
        .map_err(|e| Failure::internal(format!("cannot start the async runtime: {e}")))?;
    let quiet = cli.quiet;
    runtime.block_on(async move {
        match cli.command {
            Command::Query(args) => commands::query::run(args).await,
            Command::Bulk(args) => commands::bulk::run(args, quiet).await,
            Command::Rcon(args) => commands::rcon::run(args).await,
            Command::Serve(args) => commands::serve::run(*args).await,
            Command::Decode(args) => commands::decode::run(&args, quiet),
            Command::Demo(args) => commands::demo::run(&args).await,
            Command::Exporter(args) => commands::exporter::run(args).await,
            Command::Games(args) => commands::games::run(&args),
            Command::Completions(args) => commands::completions::completions(&args),
            Command::Manpage(args) => commands::completions::manpage(&args),
        }
    })
}

/// Help and version go to stdout with exit code 0; real usage errors become one line on
/// stderr and the exit code of [`clap_error_category`].
fn report_clap_error(error: &clap::Error) -> ExitCode {
    match error.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = error.print();
            if error.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                ExitCode::from(exit::Category::Usage.code())
            } else {
                ExitCode::SUCCESS
            }
        }
        _ => {
            let command = subcommand_in(std::env::args());
            eprintln!(
                "gsq: error: {}",
                one_line(&error.render().to_string(), command.as_deref())
            );
            ExitCode::from(clap_error_category(error).code())
        }
    }
}

/// The category of a command-line error: a value our parsers refused carries its own (an
/// unknown protocol is 3, a malformed address 4, a port out of range 5); anything else clap
/// refused (an unknown option, a missing argument) is a usage error.
fn clap_error_category(error: &clap::Error) -> exit::Category {
    use std::error::Error as _;
    match error.kind() {
        ErrorKind::ValueValidation => error
            .source()
            .and_then(|source| source.downcast_ref::<exit::BadValue>())
            .map_or(exit::Category::Usage, |bad| bad.category),
        _ => exit::Category::Usage,
    }
}

/// clap's multi-line error as one line: the message and tips, without the usage block, and
/// a pointer to the help of the command that was being parsed.
fn one_line(rendered: &str, command: Option<&str>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut in_usage = false;
    // Set after a line ending in ':' (e.g. "the following required arguments were not
    // provided:"): the indented lines that follow are its items.
    let mut in_list = false;
    for raw in rendered.lines() {
        let line = raw.trim();
        if line.starts_with("Usage:") {
            in_usage = true;
            continue;
        }
        if line.is_empty() {
            in_usage = false;
            in_list = false;
            continue;
        }
        if in_usage || line.starts_with("For more information") {
            continue;
        }
        let line = line.strip_prefix("error: ").unwrap_or(line);
        match parts.last_mut() {
            Some(last) if in_list && raw.starts_with(' ') => {
                if !last.ends_with(':') {
                    last.push(',');
                }
                last.push(' ');
                last.push_str(line);
            }
            _ => {
                in_list = line.ends_with(':');
                parts.push(line.to_owned());
            }
        }
    }
    parts.push(match command {
        Some(command) => format!("see 'gsq {command} --help'"),
        None => "see 'gsq --help'".to_owned(),
    });
    parts.join("; ")
}

/// The subcommand named on the command line, if any, for pointing at its help.
fn subcommand_in(args: impl Iterator<Item = String>) -> Option<String> {
    use clap::CommandFactory;
    let command = Cli::command();
    args.skip(1)
        .find(|arg| command.find_subcommand(arg).is_some())
}

/// A panic is a bug: say so in one line, without a backtrace, and exit 1.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_owned());
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("gsq: internal error: {message}{place}; this is a bug, please report it");
        std::process::exit(i32::from(exit::Category::Internal.code()));
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_errors_become_one_line_with_the_tip() {
        let error = Cli::try_parse_from(["gsq", "query", "quake9", "h"]).unwrap_err();
        let line = one_line(&error.render().to_string(), Some("query"));
        assert!(!line.contains('\n'), "{line}");
        assert!(line.contains("unknown protocol \"quake9\""), "{line}");
        assert!(!line.contains("Usage:"), "{line}");
        assert!(line.ends_with("see 'gsq query --help'"), "{line}");
    }

    #[test]
    fn refused_values_keep_their_exit_code() {
        use exit::Category;
        for (args, category) in [
            (
                &["gsq", "query", "quake9", "h"][..],
                Category::UnknownProtocol,
            ),
            (
                &["gsq", "decode", "doom", "x"][..],
                Category::UnknownProtocol,
            ),
            (
                &["gsq", "bulk", "--protocol", "tribes"][..],
                Category::UnknownProtocol,
            ),
            (&["gsq", "query", "sqp", "h:x"][..], Category::BadAddress),
            (
                &["gsq", "query", "sqp", "::1:7779"][..],
                Category::BadAddress,
            ),
            (
                &["gsq", "decode", "a2s", "c.pcap", "--port", "99999"][..],
                Category::PortOutOfRange,
            ),
            (
                &["gsq", "decode", "a2s", "c.pcap", "--port", "x"][..],
                Category::Usage,
            ),
            (
                &["gsq", "query", "sqp", "h:70000"][..],
                Category::PortOutOfRange,
            ),
            (
                &["gsq", "serve", "s.toml", "--sqp", "localhost:1"][..],
                Category::BadAddress,
            ),
            (
                &["gsq", "serve", "s.toml", "--sqp", "70000"][..],
                Category::PortOutOfRange,
            ),
            (
                &["gsq", "query", "sqp", "h", "--timeout", "soon"][..],
                Category::Usage,
            ),
            (
                &["gsq", "query", "sqp", "h", "--fetch", "gossip"][..],
                Category::Usage,
            ),
            (&["gsq", "query"][..], Category::Usage),
        ] {
            let error = Cli::try_parse_from(args).unwrap_err();
            assert_eq!(clap_error_category(&error), category, "{args:?}");
        }
    }

    #[test]
    fn missing_arguments_read_as_a_list() {
        let error = Cli::try_parse_from(["gsq", "query"]).unwrap_err();
        let line = one_line(&error.render().to_string(), None);
        assert!(
            line.starts_with(
                "the following required arguments were not provided: <GAME|PROTOCOL>, <ADDRESS>;"
            ),
            "{line}"
        );
    }

    #[test]
    fn the_subcommand_is_found_among_the_arguments() {
        let args = ["gsq", "-v", "bulk", "x"].map(String::from);
        assert_eq!(subcommand_in(args.into_iter()).as_deref(), Some("bulk"));
        let args = ["gsq", "nope"].map(String::from);
        assert_eq!(subcommand_in(args.into_iter()), None);
    }
}
