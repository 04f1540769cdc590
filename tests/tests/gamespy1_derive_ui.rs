//! Misuse of `#[derive(KeyValues)]` fails to compile with errors at the attribute or field that
//! caused them, all reported together (pinned in `gamespy1_ui/*.stderr`).

#[test]
fn misuse_is_a_compile_error_at_its_span() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/gamespy1_ui/*.rs");
}
