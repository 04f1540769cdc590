//! Misuse of `#[derive(Wire)]` fails to compile with a message at the offending token. Each
//! case in `ui/wire/` has its expected compiler output pinned beside it (`.stderr`); regenerate
//! with `TRYBUILD=overwrite cargo test -p query-tests --test derive_ui` and review the diff.

#[test]
fn misuse_is_reported_at_the_offending_token() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/wire/*.rs");
}

/// Uses of keys that need more than one type to show (`until_nul` over nested packets with a
/// context) compile and run.
#[test]
fn declarations_compile_and_run() {
    let cases = trybuild::TestCases::new();
    cases.pass("ui/wire_pass/*.rs");
}
