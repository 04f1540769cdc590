//! `gsq completions` and `gsq manpage`: generated from the command line itself, so every
//! command and option is in them.

mod cli_support;

use cli_support::run;

#[test]
fn every_shell_gets_a_script_that_knows_the_commands_and_options() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let ran = run(&["completions", shell]);
        assert_eq!(ran.code, Some(0), "{shell}: {ran:#?}");
        for word in [
            "query", "bulk", "serve", "decode", "exporter", "timeout", "fetch",
        ] {
            assert!(ran.stdout.contains(word), "{shell} script lacks {word}");
        }
    }
    run(&["completions", "tcsh"]).assert_error(2, &["tcsh"]);
}

#[test]
fn the_manual_page_is_roff_with_every_command() {
    let ran = run(&["manpage"]);
    assert_eq!(ran.code, Some(0), "{ran:#?}");
    assert!(ran.stdout.starts_with(".ie"), "{}", &ran.stdout[..80]);
    assert!(ran.stdout.contains(".TH gsq 1"), "no title");
    for command in ["query", "bulk", "serve", "decode", "demo", "exporter"] {
        assert!(ran.stdout.contains(command), "{command} missing");
    }

    let dir = tempfile::tempdir().unwrap();
    let ran = run(&["manpage", "--dir", dir.path().to_str().unwrap()]);
    assert_eq!(ran.code, Some(0), "{ran:#?}");
    for page in ["gsq.1", "gsq-query.1", "gsq-serve.1", "gsq-decode.1"] {
        let text = std::fs::read_to_string(dir.path().join(page))
            .unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(text.contains(".TH"), "{page}");
    }
    let query = std::fs::read_to_string(dir.path().join("gsq-query.1")).unwrap();
    assert!(query.contains("deadline"), "the options are in the page");

    run(&["manpage", "--dir", "/nonexistent/gsq-man"]).assert_error(2, &["cannot write"]);
}
