//! The README's amplification table says what the first request from an unknown address
//! draws from each responder, per protocol and request: a byte count, not a rate, so it is a
//! test. The sustained floods are measured by the `reflection` benchmark.

#![cfg(target_os = "linux")]

use std::net::SocketAddr;

use query_bench::reflection::{self, attacks};
use query_net::engines::all::{route, AllProtocols, ROUTED};
use query_net::service::Service;
use query_net::state::SharedState;

/// The README's table says what the first request from an unknown address draws, per
/// protocol and request: the responders must still send exactly that, on a port of their own
/// and, for the protocols it routes, on the all-protocols port.
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
        let agrees = |bytes_out: u64| match at_most {
            true => bytes_out <= documented,
            false => bytes_out == documented,
        };
        let first = reflection::first_request(&attack).expect("first request");
        if !agrees(first.bytes_out) {
            failures.push(format!(
                "{}: the README says {documented} B, the responder sent {} B",
                attack.label, first.bytes_out
            ));
        }
        // The README says the figures hold on the `--all` port for the protocols it routes.
        if ROUTED.contains(&attack.protocol) {
            assert_eq!(
                route(&attack.request),
                Some(attack.protocol),
                "{}",
                attack.label
            );
            // The same service in front of the all-protocols responder, without sockets:
            // what the driver sends is what the service returns.
            let state = SharedState::new(reflection::largest_state());
            let mut all = Service::new(AllProtocols::new(state));
            let from: SocketAddr = "192.0.2.1:5000".parse().unwrap();
            let bytes_out: usize = all.handle(from, &attack.request).map(<[u8]>::len).sum();
            if !agrees(bytes_out as u64) {
                failures.push(format!(
                    "{} on the --all port: the README says {documented} B, it sent {bytes_out} B",
                    attack.label
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
