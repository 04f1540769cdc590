//! What went wrong, as one line for the user and an exit code for scripts.
//!
//! Every failure `gsq` can report is a [`Failure`]: a category that picks the exit code, a
//! message saying what happened, and a hint saying what to do about it. `main` prints it as
//! `gsq: error: <message>; <hint>` and exits with the category's code, so no panic message or
//! backtrace ever reaches the user.

use std::fmt;
use std::process::ExitCode;

use query_net::QueryError;

/// The exit codes, as documented in `gsq --help`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// 1: a bug, or the output could not be written.
    Internal,
    /// 2: bad arguments (an unknown option or command, a bad option value), or an unreadable
    /// input file.
    Usage,
    /// 3: a protocol name that is none of [`query_net::Protocol::ALL`] (nor auto).
    UnknownProtocol,
    /// 4: an address that is not host, host:port, an IP or \[IPv6\]:port.
    BadAddress,
    /// 5: a port outside 1-65535 (0-65535 for listen addresses).
    PortOutOfRange,
    /// 6: the host name does not resolve.
    Resolve,
    /// 7: a socket could not be opened or bound, or the network refused the traffic.
    Network,
    /// 8: the server never answered.
    Timeout,
    /// 9: a reply (or a decoded file) is malformed or breaks the protocol.
    Malformed,
    /// 10: the state file is missing, unreadable or invalid.
    StateFile,
    /// 11: the server wants authentication (OneQuery token, RCON password).
    Auth,
    /// 12: nothing listens at the address (every request refused with ICMP port unreachable).
    Unreachable,
    /// 130: stopped by Ctrl-C before finishing (bulk).
    Interrupted,
}

impl Category {
    /// Every category, in exit-code order.
    #[cfg(test)]
    pub const ALL: [Category; 13] = [
        Category::Internal,
        Category::Usage,
        Category::UnknownProtocol,
        Category::BadAddress,
        Category::PortOutOfRange,
        Category::Resolve,
        Category::Network,
        Category::Timeout,
        Category::Malformed,
        Category::StateFile,
        Category::Auth,
        Category::Unreachable,
        Category::Interrupted,
    ];

    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Category::Internal => 1,
            Category::Usage => 2,
            Category::UnknownProtocol => 3,
            Category::BadAddress => 4,
            Category::PortOutOfRange => 5,
            Category::Resolve => 6,
            Category::Network => 7,
            Category::Timeout => 8,
            Category::Malformed => 9,
            Category::StateFile => 10,
            Category::Auth => 11,
            Category::Unreachable => 12,
            Category::Interrupted => 130,
        }
    }

    /// A short machine-readable name, used as `error_kind` in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Category::Internal => "internal",
            Category::Usage => "usage",
            Category::UnknownProtocol => "unknown_protocol",
            Category::BadAddress => "bad_address",
            Category::PortOutOfRange => "port_out_of_range",
            Category::Resolve => "resolve",
            Category::Network => "network",
            Category::Timeout => "timeout",
            Category::Malformed => "malformed",
            Category::StateFile => "state_file",
            Category::Auth => "auth",
            Category::Unreachable => "unreachable",
            Category::Interrupted => "interrupted",
        }
    }

    /// Whether the input itself is wrong (a bad line in a target list, say), as opposed to
    /// a target that was queried and failed.
    pub fn is_bad_input(self) -> bool {
        matches!(
            self,
            Category::Usage
                | Category::UnknownProtocol
                | Category::BadAddress
                | Category::PortOutOfRange
        )
    }
}

/// The exit-code table shown at the end of `gsq --help`.
pub fn exit_codes_help() -> String {
    format!(
        "\
Exit codes:
    0  success
    1  internal error (a bug), or the output could not be written
    2  usage: an unknown option or command, a bad option value, an unreadable input file
    3  unknown protocol: not one of {} (or auto)
    4  malformed address: not host, host:port, an IP address or [IPv6]:port
    5  port out of range: not 1-65535 (0-65535 to listen on)
    6  host does not resolve: the name has no address
    7  network: a socket cannot be opened or bound, or the host is unreachable
    8  timeout: the server never answered
    9  malformed reply or input: it does not decode, or breaks the protocol
   10  state file missing, unreadable, or not a valid server state
   11  authentication refused: OneQuery token or SA:MP RCON password
   12  nothing listens: every request was refused (ICMP port unreachable)
  130  interrupted by Ctrl-C (bulk writes the results it has first)",
        query_net::Protocol::names()
    )
}

/// A command-line value that was refused, as a value parser returns it to clap: the
/// message clap shows, and the category that picks the exit code. `main` finds it again as
/// the source of clap's error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadValue {
    /// The exit code's category.
    pub category: Category,
    /// What is wrong with the value.
    pub message: String,
}

impl BadValue {
    /// A value refused for `category`.
    pub fn new(category: Category, message: impl Into<String>) -> Self {
        BadValue {
            category,
            message: message.into(),
        }
    }
}

impl fmt::Display for BadValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BadValue {}

/// A failure to report: category, what happened, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    category: Category,
    message: String,
    hint: Option<String>,
}

impl Failure {
    /// A failure of `category` saying `message`.
    pub fn new(category: Category, message: impl Into<String>) -> Self {
        Failure {
            category,
            message: message.into(),
            hint: None,
        }
    }

    /// A usage failure.
    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(Category::Usage, message)
    }

    /// A state-file failure.
    pub fn state_file(message: impl Into<String>) -> Self {
        Self::new(Category::StateFile, message)
    }

    /// An internal failure.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(Category::Internal, message)
    }

    /// Adds what the user can do about it.
    #[must_use]
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The category, which decides the exit code.
    pub fn category(&self) -> Category {
        self.category
    }

    /// What happened, without the hint.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The exit code to end the process with.
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.category.code())
    }

    /// A failed query of `what` (a protocol and address, e.g. `sqp 127.0.0.1:7779`).
    pub fn from_query(what: &str, error: &QueryError) -> Self {
        let (category, hint) = classify(error);
        let failure = Failure::new(category, format!("{what}: {error}"));
        match hint {
            Some(hint) => failure.hint(hint),
            None => failure,
        }
    }
}

/// The category of a query error and the advice that goes with it.
pub fn classify(error: &QueryError) -> (Category, Option<&'static str>) {
    match error {
        QueryError::Timeout { .. } => (
            Category::Timeout,
            Some("check that the server is up and the port is its query port, or raise --timeout"),
        ),
        QueryError::Deadline { .. } => (
            Category::Timeout,
            Some("the server answers, but too slowly for one query: raise --deadline"),
        ),
        QueryError::AnsweredElsewhere { .. } => (
            Category::Timeout,
            Some("the server's replies come from another of its addresses: query that address, or bind the server to the address players use"),
        ),
        QueryError::NothingListens { .. } | QueryError::ConnectionRefused { .. } => (
            Category::Unreachable,
            Some("the host is up but that port is closed: check the port (the query port often differs from the game port)"),
        ),
        QueryError::AuthRequired(_) => (
            Category::Auth,
            Some("pass the server's secret with --token (OneQuery) or --rcon-password (SA:MP)"),
        ),
        QueryError::ServerReply(_) => (
            Category::Malformed,
            Some(
                "the server answered this query, so it speaks the protocol, but this reply of it \
                 is broken or of a version this client does not read",
            ),
        ),
        QueryError::Malformed(_) | QueryError::Protocol(_) => (
            Category::Malformed,
            Some("the server sent a reply this protocol does not allow; is it the right protocol?"),
        ),
        QueryError::Address(bad) => (crate::address::category(bad), None),
        QueryError::Resolve { .. } => (
            Category::Resolve,
            Some("check the host name, or give an IP address"),
        ),
        QueryError::Io(_) => (
            Category::Network,
            Some("check the network connection and the address"),
        ),
        // Unsupported (no engine in this build) and whatever later versions add.
        _ => (Category::Internal, None),
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "; {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Failure {}

/// The result of a command.
pub type Outcome<T = ()> = Result<T, Failure>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn codes_are_distinct_and_documented() {
        let all = Category::ALL;
        let mut codes: Vec<u8> = all.iter().map(|c| c.code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), all.len());
        assert!(codes.iter().all(|&c| c != 0), "0 is success");
        let mut names: Vec<&str> = all.iter().map(|c| c.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len());
        let help = exit_codes_help();
        for c in all {
            assert!(
                help.contains(&format!("  {}  ", c.code())),
                "{c:?} missing from the help"
            );
        }
        let listed = help
            .lines()
            .filter(|line| line.trim_start().starts_with(|c: char| c.is_ascii_digit()))
            .count();
        assert_eq!(
            listed,
            all.len() + 1,
            "every code and success, nothing else"
        );
    }

    #[test]
    fn the_bad_inputs_of_the_issue_have_their_own_codes() {
        let codes = [
            (Category::UnknownProtocol, 3),
            (Category::BadAddress, 4),
            (Category::PortOutOfRange, 5),
            (Category::Resolve, 6),
            (Category::Timeout, 8),
            (Category::StateFile, 10),
        ];
        for (category, code) in codes {
            assert_eq!(category.code(), code, "{category:?}");
        }
        let resolve = QueryError::Resolve {
            host: "nowhere.invalid:1".to_owned(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such host"),
        };
        assert_eq!(classify(&resolve).0, Category::Resolve);
        let io = QueryError::Io(std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            "refused",
        ));
        assert_eq!(classify(&io).0, Category::Network);
    }

    #[test]
    fn a_timeout_reads_as_one_line_with_advice() {
        let error = QueryError::Timeout {
            waiting_for: "challenge request",
            attempts: 3,
            after: Duration::from_secs(3),
        };
        let failure = Failure::from_query("sqp 127.0.0.1:9", &error);
        assert_eq!(failure.category(), Category::Timeout);
        let text = failure.to_string();
        assert!(!text.contains('\n'), "{text}");
        assert!(text.starts_with("sqp 127.0.0.1:9: no reply to the challenge request"));
        assert!(text.contains("--timeout"), "{text}");
    }
}
