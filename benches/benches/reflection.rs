//! A flood from sources spread over one /24 (127.0.5.x on loopback) at ten times the request
//! limit, against each protocol's responder with the default budgets and the largest state the
//! protocols allow: the bytes sent to that /24 stay within 64 KiB/s, no datagram passes 1,400
//! bytes, and a client from another netblock (127.0.0.1) gets every answer. Run with
//! `cargo bench -p query-bench --bench reflection`; it exits non-zero when a bound is missed.
//!
//! A benchmark rather than a test: it floods for half a minute and measures bytes per second,
//! which a machine busy with other work must not fail. The budgets' arithmetic is tested on a
//! virtual clock with [`query_net::limit`].

use std::time::Duration;

use query_bench::reflection::{attacks, flood, FloodConfig, Setup};

/// The bound the defaults promise a netblock that has not proved its address, over floods of
/// two seconds or more.
const BUDGET: f64 = 64.0 * 1024.0;

fn main() {
    if !cfg!(target_os = "linux") {
        // The sources are 127.0.5.x, which only Linux routes to loopback without setup.
        println!("reflection: needs Linux (all of 127.0.0.0/8 on loopback); not run");
        return;
    }
    // `cargo bench` passes `--bench`; any other argument is a filter this bench does not use.
    a_flood_from_one_netblock_gets_at_most_its_byte_budget_and_other_clients_are_answered();
    without_byte_budgets_the_same_flood_draws_far_more();
    println!("reflection: every bound held");
}

fn a_flood_from_one_netblock_gets_at_most_its_byte_budget_and_other_clients_are_answered() {
    let config = FloodConfig {
        sources: 32,
        // Ten times the default request limit of 10 per second per address.
        per_source: 100,
        duration: Duration::from_secs(4),
        // A OneQuery client pages through the 100 players in about 25 requests: within the
        // request burst of 40, not within 10 a second if it polled faster.
        poll_every: Duration::from_millis(2500),
    };
    let mut failures = Vec::new();
    for attack in attacks() {
        let after = flood(&attack, Setup::After, config).expect("flood");
        println!(
            "{}: {} requests, {} replies, {} bytes in {:.2} s: {:.0} B/s to the /24, \
             largest datagram {}, {:.1}x; client answered {} of {}; {:?}",
            after.label,
            after.requests,
            after.replies,
            after.bytes_out,
            after.seconds,
            after.out_per_second,
            after.largest_datagram,
            after.amplification,
            after.client_answered,
            after.client_queries,
            after.stats
        );
        if after.out_per_second > BUDGET {
            failures.push(format!("{}: {:.0} B/s", after.label, after.out_per_second));
        }
        if after.largest_datagram > 1400 {
            failures.push(format!(
                "{}: a {}-byte datagram",
                after.label, after.largest_datagram
            ));
        }
        if after.client_queries == 0 || after.client_answered != after.client_queries {
            failures.push(format!(
                "{}: the other client got {} of {} answers",
                after.label, after.client_answered, after.client_queries
            ));
        }
        if after.requests < 32 * 250 {
            failures.push(format!(
                "{}: only {} requests sent",
                after.label, after.requests
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

fn without_byte_budgets_the_same_flood_draws_far_more() {
    // What the test above guards against: SA:MP `d` at the request limit, as before.
    let config = FloodConfig {
        sources: 32,
        per_source: 10,
        duration: Duration::from_secs(2),
        poll_every: Duration::ZERO,
    };
    let attack = attacks()
        .into_iter()
        .find(|a| a.request.ends_with(b"d"))
        .expect("SA:MP d");
    let before = flood(&attack, Setup::Before, config).expect("flood");
    println!("before: {before:?}");
    assert!(before.out_per_second > 10.0 * BUDGET, "{before:?}");
    assert!(before.largest_datagram > 20_000, "{before:?}");
}
