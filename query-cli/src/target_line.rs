//! A line of a target list, as `gsq bulk` and the exporter's `--targets` file read it:
//! `<game|protocol|auto> <host[:port]>`, or `<host[:port]>` with a default choice. Blank lines and
//! lines starting with `#` name no target. One parser, so both read a list the same way.

use query_games::plan::Choice;

use crate::address::HostPort;
use crate::exit::{Category, Failure};

/// A line that names a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetLine {
    /// The game, protocol or `auto` the line names (or the default).
    pub choice: Choice,
    pub address: HostPort,
    /// The target as written, without the protocol.
    pub target: String,
}

/// A line that names no usable target: what it says, as written, and why it is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    /// The target as written (the whole line when it cannot be split).
    pub target: String,
    /// The line's game or protocol as written, or the default one, when there is one.
    pub protocol: Option<String>,
    pub failure: Failure,
}

/// Whether `line` names a target at all (not blank, not a `#` comment).
pub fn is_target_line(line: &str) -> bool {
    let line = line.trim();
    !line.is_empty() && !line.starts_with('#')
}

/// Parses a line that [names a target](is_target_line).
pub fn parse(text: &str, default_choice: Option<Choice>) -> Result<TargetLine, BadLine> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    let bad = |target: &str, protocol: Option<String>, failure: Failure| BadLine {
        target: target.to_owned(),
        protocol,
        failure,
    };
    let with_address = |choice: Choice, address: &str| {
        parse_address(address)
            .map(|parsed| TargetLine {
                choice,
                address: parsed,
                target: address.to_owned(),
            })
            .map_err(|failure| bad(address, Some(choice.to_string()), failure))
    };
    match fields.as_slice() {
        [address] => match default_choice {
            Some(choice) => with_address(choice, address),
            None => Err(bad(
                address,
                None,
                Failure::usage(
                    "no protocol: write '<game|protocol|auto> <host[:port]>', or pass --protocol",
                ),
            )),
        },
        [protocol, address] => match protocol.parse::<Choice>() {
            Ok(choice) => with_address(choice, address),
            Err(e) => Err(bad(
                address,
                Some((*protocol).to_owned()),
                Failure::new(Category::UnknownProtocol, e.to_string()),
            )),
        },
        _ => Err(bad(
            text.trim(),
            None,
            Failure::usage("expected '<game|protocol|auto> <host[:port]>' or '<host[:port]>'"),
        )),
    }
}

fn parse_address(text: &str) -> Result<HostPort, Failure> {
    text.parse::<HostPort>()
        .map_err(|e| Failure::new(crate::address::category(&e), e.to_string()))
}

#[cfg(test)]
mod tests {
    use query_net::Protocol;

    use super::*;

    #[test]
    fn a_bad_line_keeps_its_target_and_protocol_as_written() {
        let bad = parse("quake9 host:1", None).unwrap_err();
        assert_eq!(bad.target, "host:1");
        assert_eq!(bad.protocol.as_deref(), Some("quake9"));
        assert_eq!(bad.failure.category(), Category::UnknownProtocol);

        let bad = parse("sqp host:99999", None).unwrap_err();
        assert_eq!(bad.target, "host:99999");
        assert_eq!(bad.protocol.as_deref(), Some("sqp"));
        assert_eq!(bad.failure.category(), Category::PortOutOfRange);

        let bad = parse("::1:7779", Some(Choice::Protocol(Protocol::Samp))).unwrap_err();
        assert_eq!(bad.protocol.as_deref(), Some("samp"));
        assert_eq!(bad.failure.category(), Category::BadAddress);

        let bad = parse("sqp a b", None).unwrap_err();
        assert_eq!(bad.target, "sqp a b");
        assert_eq!(bad.failure.category(), Category::Usage);

        let good = parse(" samp example.org:7777 ", None).unwrap();
        assert_eq!(good.choice, Choice::Protocol(Protocol::Samp));
        let game = parse("rust example.org", None).unwrap();
        assert_eq!(game.choice.protocol(), Some(Protocol::A2s));
        assert_eq!(good.target, "example.org:7777");
        assert!(!is_target_line("  # comment"));
        assert!(!is_target_line("   "));
    }
}
