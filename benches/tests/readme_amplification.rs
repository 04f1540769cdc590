//! The README's amplification table says what the first request from an unknown address
//! draws from each responder, per protocol and request: a byte count, not a rate, so it is a
//! test. The sustained floods are measured by the `reflection` benchmark.

#![cfg(target_os = "linux")]

use query_bench::reflection::{self, attacks};

/// The README's table says what the first request from an unknown address draws, per
/// protocol and request: the responders must still send exactly that.
#[test]
fn the_first_request_draws_what_the_readme_says() {
    let readme = include_str!("../../README.md");
    let mut failures = Vec::new();
    for attack in attacks() {
        let row = format!("| {} ({}) |", attack.label, attack.request.len());
        let Some(line) = readme.lines().find(|line| line.starts_with(&row)) else {
            failures.push(format!("{}: no row in the README", attack.label));
            continue;
        };
        // `≤ N B` where the reply's size varies (a challenge of 6 to 11 characters).
        let cell = line[row.len()..].split(" B").next().unwrap().trim();
        let (at_most, number) = match cell.strip_prefix('≤') {
            Some(number) => (true, number.trim()),
            None => (false, cell),
        };
        let documented: u64 = number.replace(',', "").parse().unwrap();
        let first = reflection::first_request(&attack).expect("first request");
        let agrees = match at_most {
            true => first.bytes_out <= documented,
            false => first.bytes_out == documented,
        };
        if !agrees {
            failures.push(format!(
                "{}: the README says {documented} B, the responder sent {} B",
                attack.label, first.bytes_out
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
