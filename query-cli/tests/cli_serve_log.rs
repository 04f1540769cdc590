//! `gsq serve` logs long state values cut: a 10 KB server name makes a short log line, at
//! start-up and on reload.

mod cli_support;

use std::time::Duration;

use cli_support::{Server, StateDir, SAMPLE_STATE};

fn state_named(name: &str) -> String {
    SAMPLE_STATE.replace("name = \"Café Zoë\"", &format!("name = \"{name}\""))
}

#[test]
fn a_ten_kilobyte_server_name_makes_a_short_log_line() {
    let long = "N".repeat(10_000);
    let server = Server::start(
        StateDir::new("toml", &state_named(&long)),
        &["--sqp", "127.0.0.1:0"],
        &["sqp"],
    );
    let serving = server
        .wait_for_log(Duration::from_secs(10), |l| l.contains("serving"))
        .expect("a start-up line");
    assert!(serving.contains("… (10000 chars)"), "{serving}");
    assert!(serving.len() < 400, "{} bytes", serving.len());

    server.state.replace(&state_named(&"R".repeat(10_000)));
    let reloaded = server
        .wait_for_log(Duration::from_secs(10), |l| l.contains("reloaded"))
        .expect("a reload line");
    assert!(
        reloaded.contains(&format!("{}…", "R".repeat(100))),
        "{reloaded}"
    );
    assert!(reloaded.len() < 400, "{} bytes", reloaded.len());
}

#[test]
fn a_zero_stats_interval_logs_the_counters_only_on_exit() {
    let server = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &["--samp", "127.0.0.1:0", "--stats-interval", "0s"],
        &["samp"],
    );
    let client = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    client.send_to(b"not a query", server.addr("samp")).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let (status, log) = server.stop_with("INT");
    assert!(status.success(), "{status:?} {log:?}");
    let stopped = log
        .iter()
        .find(|l| l.contains("stopped:"))
        .expect("a closing line");
    assert!(stopped.contains("1 request"), "{stopped}");
}
