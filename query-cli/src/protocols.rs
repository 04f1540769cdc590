//! What the help texts and the README say about every protocol, kept in step with
//! [`Protocol::ALL`]: each fact is an exhaustive `match`, so a new protocol does not compile
//! until it has its title here, and the tests below check every list the user reads.

use query_net::Protocol;

/// The protocol's name as people write it, for sentences (the command-line name is
/// [`Protocol::name`]).
pub fn title(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::Sqp => "SQP",
        Protocol::OneQuery => "OneQuery",
        Protocol::Samp => "SA:MP",
        Protocol::GameSpy1 => "GameSpy v1",
        Protocol::A2s => "A2S",
        Protocol::Quake3 => "Quake 3",
        Protocol::Quake2 => "Quake 2",
        Protocol::Fivem => "FiveM",
        Protocol::Doom3 => "Doom 3",
        Protocol::GameSpy2 => "GameSpy 2",
        Protocol::GameSpy3 => "GameSpy 3/4",
        Protocol::Minecraft => "Minecraft Java",
        Protocol::MinecraftQuery => "Minecraft Query",
        Protocol::Bedrock => "Minecraft Bedrock",
        Protocol::Teeworlds => "Teeworlds/DDNet",
        Protocol::Mumble => "Mumble",
        Protocol::Ase => "All-Seeing Eye",
        Protocol::Unreal2 => "Unreal 2",
        Protocol::Frostbite => "Frostbite",
        Protocol::TeamSpeak3 => "TeamSpeak 3",
    }
}

/// Whether the client fills `teams` from the protocol's replies (when the server sends
/// teams): what the README's list of protocols that report them is checked against.
#[cfg(test)]
pub fn reports_teams(protocol: Protocol) -> bool {
    match protocol {
        Protocol::Sqp | Protocol::GameSpy1 | Protocol::GameSpy2 | Protocol::GameSpy3 => true,
        Protocol::OneQuery
        | Protocol::Samp
        | Protocol::A2s
        | Protocol::Quake3
        | Protocol::Quake2
        | Protocol::Fivem
        | Protocol::Doom3
        | Protocol::Minecraft
        | Protocol::MinecraftQuery
        | Protocol::Bedrock
        | Protocol::Teeworlds
        | Protocol::Mumble
        | Protocol::Ase
        | Protocol::Unreal2
        | Protocol::Frostbite
        | Protocol::TeamSpeak3 => false,
    }
}

/// Every protocol's title, as a list in a sentence: `SQP, OneQuery, ... and TeamSpeak 3`.
pub fn titles() -> String {
    let titles = Protocol::ALL.map(title);
    match titles.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => titles.join(""),
    }
}

/// `gsq --help`'s headline.
pub fn headline() -> String {
    format!(
        "Game-server queries ({}): query servers, answer their queries, decode captured packets.",
        titles()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    const README: &str = include_str!("../../README.md");

    /// The README's paragraph that starts with `start`, up to the next blank line.
    fn readme_paragraph(start: &str) -> &'static str {
        let at = README
            .find(start)
            .unwrap_or_else(|| panic!("the README has no {start:?}"));
        let rest = &README[at..];
        &rest[..rest.find("\n\n").unwrap_or(rest.len())]
    }

    #[test]
    fn the_headline_and_the_package_description_name_every_protocol() {
        let command = crate::cli::Cli::command();
        let headline = command.get_about().unwrap().to_string();
        for protocol in Protocol::ALL {
            assert!(headline.contains(title(protocol)), "{protocol}: {headline}");
            assert!(
                env!("CARGO_PKG_DESCRIPTION").contains(title(protocol)),
                "{protocol} missing from the package description"
            );
        }
    }

    #[test]
    fn the_exit_code_3_line_names_every_protocol() {
        let help = crate::exit::exit_codes_help();
        let line = help
            .lines()
            .find(|l| l.trim_start().starts_with("3  "))
            .unwrap();
        for protocol in Protocol::ALL {
            assert!(line.contains(protocol.name()), "{protocol}: {line}");
        }
    }

    #[test]
    fn every_protocol_argument_and_the_demo_help_name_every_protocol() {
        // `query` and `decode` take the protocol as their first argument.
        let mut command = crate::cli::Cli::command();
        command.build();
        for sub in command.get_subcommands() {
            let positional = sub.get_positionals().filter(|a| a.get_id() == "protocol");
            for arg in positional {
                let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
                for protocol in Protocol::ALL {
                    assert!(
                        help.contains(protocol.name()),
                        "gsq {} <PROTOCOL> help lacks {protocol}: {help}",
                        sub.get_name()
                    );
                }
            }
        }
        let demo = command.find_subcommand_mut("demo").unwrap();
        // Help text wraps at the terminal's width, within a title too ("TeamSpeak 3").
        let help = demo.render_long_help().to_string();
        let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
        for protocol in Protocol::ALL {
            assert!(help.contains(title(protocol)), "{protocol}: {help}");
        }
    }

    #[test]
    fn the_readme_says_which_protocols_report_teams() {
        let sentence = readme_paragraph("plus `teams` when");
        let sentence = &sentence[..sentence.find(')').unwrap()];
        for protocol in Protocol::ALL {
            assert_eq!(
                sentence.contains(title(protocol)),
                reports_teams(protocol),
                "{protocol} in {sentence:?}"
            );
        }
    }

    #[test]
    fn the_readme_lists_a_typed_query_function_for_every_protocol() {
        let sentence = readme_paragraph("`driver::query_");
        for protocol in Protocol::ALL {
            let function = format!("query_{}", protocol.name().replace('-', "_"));
            assert!(sentence.contains(&function), "{function}: {sentence}");
        }
    }

    #[test]
    fn titles_read_as_a_list() {
        let titles = titles();
        assert!(titles.starts_with("SQP, OneQuery, "), "{titles}");
        assert!(titles.ends_with(" and TeamSpeak 3"), "{titles}");
    }
}
