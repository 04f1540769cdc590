//! Log lines on stderr, through `tracing`.
//!
//! `serve` is a long-running sidecar whose log is its interface, so it logs at `info`; the
//! other commands print results and only log warnings. `-v` / `-q` move the level, and the
//! `GSQ_LOG` environment variable takes a full tracing filter (`GSQ_LOG=query_net=trace`).

use std::borrow::Cow;
use std::io::{self, IsTerminal};

use tracing::Level;
use tracing_subscriber::EnvFilter;

use crate::cli::{Cli, Command};

/// The most characters of one value (a server name, a rule) a log line shows.
pub const MAX_LOGGED_CHARS: usize = 100;

/// `value` cut to [`MAX_LOGGED_CHARS`] characters with an ellipsis and its full length, so a
/// state with a 10 KB server name cannot make a 10 KB log line.
pub fn cut(value: &str) -> Cow<'_, str> {
    match value.char_indices().nth(MAX_LOGGED_CHARS) {
        None => Cow::Borrowed(value),
        Some((end, _)) => Cow::Owned(format!(
            "{}… ({} chars)",
            &value[..end],
            value.chars().count()
        )),
    }
}

/// Installs the stderr logger for the command about to run.
pub fn init(cli: &Cli) {
    let base = match cli.command {
        Command::Serve(_) => Level::INFO,
        _ => Level::WARN,
    };
    let level = if cli.quiet {
        Level::ERROR
    } else {
        match cli.verbose {
            0 => base,
            1 => Level::DEBUG,
            _ => Level::TRACE,
        }
    };
    let filter = EnvFilter::try_from_env("GSQ_LOG")
        .unwrap_or_else(|_| EnvFilter::new(level.as_str().to_ascii_lowercase()));
    let stderr_is_terminal = io::stderr().is_terminal();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .with_ansi(stderr_is_terminal)
        .with_target(false);
    // Timestamps matter for a server's log; a one-shot command's warnings read better bare.
    let installed = if matches!(cli.command, Command::Serve(_)) {
        subscriber.try_init()
    } else {
        subscriber.without_time().try_init()
    };
    if let Err(e) = installed {
        eprintln!("gsq: warning: logging is off: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_cut_with_an_ellipsis_on_a_character_boundary() {
        assert_eq!(cut("short"), "short");
        let exact = "é".repeat(MAX_LOGGED_CHARS);
        assert_eq!(cut(&exact), exact.as_str());
        let long = "é".repeat(10_000);
        let shown = cut(&long);
        assert!(shown.starts_with(&"é".repeat(MAX_LOGGED_CHARS)), "{shown}");
        assert!(shown.ends_with("… (10000 chars)"), "{shown}");
        assert_eq!(
            shown.chars().count(),
            MAX_LOGGED_CHARS + "… (10000 chars)".chars().count()
        );
    }
}
