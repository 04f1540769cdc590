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
    /// 2: bad arguments: unknown protocol, malformed address, port out of range, unreadable
    /// input file.
    Usage,
    /// 3: the host did not resolve, or a socket could not be opened or bound.
    Network,
    /// 4: the server never answered.
    Timeout,
    /// 5: a reply (or a decoded file) is malformed or breaks the protocol.
    Malformed,
    /// 6: the state file is missing, unreadable or invalid.
    StateFile,
    /// 7: the server wants authentication (OneQuery token, RCON password).
    Auth,
    /// 130: stopped by Ctrl-C before finishing (bulk).
    Interrupted,
}

impl Category {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Category::Internal => 1,
            Category::Usage => 2,
            Category::Network => 3,
            Category::Timeout => 4,
            Category::Malformed => 5,
            Category::StateFile => 6,
            Category::Auth => 7,
            Category::Interrupted => 130,
        }
    }

    /// A short machine-readable name, used as `error_kind` in JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Category::Internal => "internal",
            Category::Usage => "usage",
            Category::Network => "network",
            Category::Timeout => "timeout",
            Category::Malformed => "malformed",
            Category::StateFile => "state_file",
            Category::Auth => "auth",
            Category::Interrupted => "interrupted",
        }
    }
}

/// The exit-code table shown at the end of `gsq --help`.
pub const EXIT_CODES_HELP: &str = "\
Exit codes:
    0  success
    1  internal error (a bug), or the output could not be written
    2  usage: bad arguments, unknown protocol, malformed address, port out of range,
       unreadable input file
    3  network: the host does not resolve, or a socket cannot be opened or bound
    4  timeout: the server never answered
    5  malformed: a reply or decoded file does not decode, or breaks the protocol
    6  invalid state file: missing, unreadable, or not a valid server state
    7  authentication required: OneQuery token or SA:MP RCON password refused
  130  interrupted by Ctrl-C (bulk writes the results it has first)";

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
        QueryError::AuthRequired(_) => (
            Category::Auth,
            Some("pass the server's secret with --token (OneQuery) or --rcon-password (SA:MP)"),
        ),
        QueryError::Malformed(_) | QueryError::Protocol(_) => (
            Category::Malformed,
            Some("the server sent a reply this protocol does not allow; is it the right protocol?"),
        ),
        QueryError::Resolve { .. } => (
            Category::Network,
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
        let all = [
            Category::Internal,
            Category::Usage,
            Category::Network,
            Category::Timeout,
            Category::Malformed,
            Category::StateFile,
            Category::Auth,
            Category::Interrupted,
        ];
        let mut codes: Vec<u8> = all.iter().map(|c| c.code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), all.len());
        for c in all {
            assert!(
                EXIT_CODES_HELP.contains(&format!("  {}  ", c.code())),
                "{c:?} missing from the help"
            );
        }
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
