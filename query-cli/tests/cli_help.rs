//! `--help` exists for every command, shows examples, and documents the exit codes.

mod cli_support;

use cli_support::run;

#[test]
fn top_level_help_lists_commands_examples_and_every_exit_code() {
    let ran = run(&["--help"]);
    assert_eq!(ran.code, Some(0), "{ran:#?}");
    let help = &ran.stdout;
    for command in ["query", "bulk", "serve", "decode", "demo"] {
        assert!(help.contains(command), "{command} missing:\n{help}");
    }
    assert!(help.contains("Examples:"), "{help}");
    assert!(help.contains("gsq demo"), "{help}");
    assert!(help.contains("Exit codes:"), "{help}");
    for (code, meaning) in [
        ("0", "success"),
        ("1", "internal"),
        ("2", "usage"),
        ("3", "unknown protocol"),
        ("4", "malformed address"),
        ("5", "port out of range"),
        ("6", "host does not resolve"),
        ("7", "network"),
        ("8", "timeout"),
        ("9", "malformed reply"),
        ("10", "state file"),
        ("11", "authentication"),
        ("12", "nothing listens"),
        ("130", "interrupted"),
    ] {
        let documented = help.lines().any(|line| {
            line.trim_start().starts_with(&format!("{code}  ")) && line.contains(meaning)
        });
        assert!(
            documented,
            "exit code {code} ({meaning}) not documented:\n{help}"
        );
    }
}

#[test]
fn every_command_has_help_with_examples() {
    for (command, example) in [
        ("query", "gsq query sqp"),
        ("bulk", "gsq bulk servers.txt"),
        ("serve", "gsq serve state.toml"),
        ("decode", "gsq decode sqp --hex"),
        ("demo", "gsq demo"),
    ] {
        let ran = run(&[command, "--help"]);
        assert_eq!(ran.code, Some(0), "{command}: {ran:#?}");
        assert!(
            ran.stdout.contains("Usage: gsq "),
            "{command}:\n{}",
            ran.stdout
        );
        assert!(
            ran.stdout.contains("Examples:"),
            "{command}:\n{}",
            ran.stdout
        );
        assert!(ran.stdout.contains(example), "{command}:\n{}", ran.stdout);
        assert!(
            ran.stdout.contains("Exit codes: 0 "),
            "{command}:\n{}",
            ran.stdout
        );
        assert_eq!(ran.stderr, "", "{command}");
    }
}

#[test]
fn query_help_documents_the_default_ports_and_json_fields() {
    let help = run(&["query", "--help"]).stdout;
    for port in ["sqp 7779", "onequery 5520", "samp 7777", "gamespy1 23000"] {
        assert!(help.contains(port), "{port} missing:\n{help}");
    }
    for field in [
        "protocol",
        "address",
        "num_players",
        "ping_ms",
        "complete",
        "raw",
    ] {
        assert!(help.contains(field), "{field} missing:\n{help}");
    }
    for option in [
        "--timeout",
        "--retries",
        "--fetch",
        "--encoding",
        "--token",
        "--rcon",
        "--rcon-password",
        "--chunks",
        "--json",
        "--pretty",
    ] {
        assert!(help.contains(option), "{option} missing:\n{help}");
    }
}

#[test]
fn help_subcommand_and_version_work() {
    let ran = run(&["help", "serve"]);
    assert_eq!(ran.code, Some(0), "{ran:#?}");
    assert!(ran.stdout.contains("--all"), "{}", ran.stdout);

    let ran = run(&["--version"]);
    assert_eq!(ran.code, Some(0));
    assert!(ran.stdout.starts_with("gsq "), "{}", ran.stdout);
}

#[test]
fn no_command_is_a_usage_error() {
    let ran = run(&[]);
    assert_eq!(ran.code, Some(2), "{ran:#?}");
    assert!(ran.stderr.contains("Usage: gsq"), "{}", ran.stderr);
}
