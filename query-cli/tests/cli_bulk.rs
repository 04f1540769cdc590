//! `gsq bulk`: NDJSON out for every target line, errors as objects, a summary on stderr.

mod cli_support;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use cli_support::{gsq_path, run, run_with_stdin, silent_socket, Server, StateDir, SAMPLE_STATE};

/// The fields of a failure object, in order.
const FAILURE_FIELDS: [&str; 6] = [
    "target",
    "line",
    "protocol",
    "address",
    "error",
    "error_kind",
];

fn serve() -> Server {
    Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &[
            "--sqp",
            "127.0.0.1:0",
            "--samp",
            "127.0.0.1:0",
            "--no-rate-limit",
        ],
        &["sqp", "samp"],
    )
}

/// Results keyed by input line number.
fn by_line(results: Vec<Value>) -> HashMap<u64, Value> {
    let mut map = HashMap::new();
    for result in results {
        let line = result["line"].as_u64().expect("every result has its line");
        assert!(
            map.insert(line, result).is_none(),
            "line {line} reported twice"
        );
    }
    map
}

fn assert_failure(result: &Value, kind: &str, error_contains: &str) {
    let object = result.as_object().expect("an object");
    let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
    keys.sort_unstable();
    let mut expected = FAILURE_FIELDS.to_vec();
    expected.sort_unstable();
    assert_eq!(keys, expected, "{result:#}");
    assert_eq!(result["error_kind"], kind, "{result:#}");
    let error = result["error"].as_str().unwrap();
    assert!(
        error.contains(error_contains),
        "{error_contains:?} not in {error:?}"
    );
}

#[test]
fn a_mixed_list_gives_one_line_per_target_and_a_summary() {
    let server = serve();
    let silent = silent_socket();
    let silent_address = silent.local_addr().unwrap().to_string();
    let list = format!(
        "# servers to check\n\
         \n\
         sqp {sqp}\n\
         samp {samp}\n\
         quake9 127.0.0.1:1\n\
         sqp 127.0.0.1:99999\n\
         sqp {silent}\n\
         \t# an indented comment\n\
         {samp}\n\
         samp no-such-host.invalid\n\
         sqp one two\n\
         SQP {sqp}\n\
         samp host:abc\n",
        sqp = server.addr("sqp"),
        samp = server.addr("samp"),
        silent = silent_address,
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("servers.txt");
    std::fs::write(&path, list).unwrap();

    let ran = run(&["bulk", path.to_str().unwrap(), "-t", "200ms", "-r", "0"]);
    let results = by_line(ran.json_lines());
    assert_eq!(results.len(), 10, "{ran:#?}");

    let sqp = &results[&3];
    assert_eq!(sqp["protocol"], "sqp");
    assert_eq!(sqp["address"], server.addr("sqp"));
    assert_eq!(sqp["name"], "Café Zoë");
    assert_eq!(sqp["num_players"], 2);
    assert_eq!(sqp["players"][1]["name"], "Jürgen");
    assert_eq!(sqp["target"], server.addr("sqp"));
    assert!(sqp.get("error").is_none());
    assert_eq!(results[&4]["protocol"], "samp");
    assert_eq!(results[&4]["password"], false);
    assert_eq!(
        results[&12]["protocol"], "sqp",
        "protocol names ignore case"
    );

    assert_failure(
        &results[&5],
        "unknown_protocol",
        "unknown protocol \"quake9\"",
    );
    assert_eq!(
        results[&5]["protocol"], "quake9",
        "the line's protocol, as written"
    );
    assert_failure(&results[&6], "port_out_of_range", "out of range");
    assert_eq!(results[&6]["protocol"], "sqp");
    assert_failure(&results[&7], "timeout", "no reply");
    assert_eq!(results[&7]["address"], silent_address);
    assert_failure(&results[&9], "usage", "--protocol");
    assert_failure(&results[&10], "resolve", "cannot resolve");
    assert_failure(&results[&13], "bad_address", "port \"abc\" is not a number");
    assert_eq!(results[&13]["protocol"], "samp");
    assert_failure(
        &results[&11],
        "usage",
        "expected '<game|protocol|auto> <host[:port]>'",
    );

    let summary = ran.stderr.trim();
    assert!(
        summary.starts_with(
            "gsq: bulk: 3 answered, 1 timed out, 1 failed, 5 bad lines; 10 targets in "
        ),
        "{summary}"
    );
}

#[test]
fn stdin_with_a_default_protocol() {
    let server = serve();
    let input = format!("{0}\n{0}\n\n# done\n", server.addr("samp"));
    let ran = run_with_stdin(
        &[
            "bulk",
            "--protocol",
            "samp",
            "-",
            "--concurrency",
            "1",
            "--rate",
            "50",
        ],
        &input,
    );
    let results = ran.json_lines();
    assert_eq!(results.len(), 2, "{ran:#?}");
    for result in &results {
        assert_eq!(result["protocol"], "samp");
        assert_eq!(result["name"], "Café Zoë");
    }
    assert!(ran.stderr.contains("2 answered"), "{}", ran.stderr);

    let ran = run_with_stdin(&["bulk", "--quiet"], "");
    assert_eq!(ran.code, Some(0), "{ran:#?}");
    assert_eq!(ran.stdout, "");
    assert_eq!(ran.stderr, "");
}

#[test]
fn many_targets_through_a_small_window() {
    let server = serve();
    let input: String = (0..60)
        .map(|i| {
            let protocol = if i % 2 == 0 { "sqp" } else { "samp" };
            format!("{protocol} {}\n", server.addr(protocol))
        })
        .collect();
    let started = Instant::now();
    let ran = run_with_stdin(&["bulk", "--concurrency", "8", "--sockets", "2"], &input);
    let results = by_line(ran.json_lines());
    assert_eq!(results.len(), 60);
    assert!(
        results.values().all(|r| r["name"] == "Café Zoë"),
        "{ran:#?}"
    );
    assert!(
        ran.stderr
            .contains("60 answered, 0 timed out, 0 failed, 0 bad lines"),
        "{}",
        ran.stderr
    );
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn results_stream_while_the_list_is_still_being_written() {
    let server = serve();
    let mut child = Command::new(gsq_path())
        .args(["bulk", "--protocol", "sqp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{}", server.addr("sqp")).unwrap();
    stdin.flush().unwrap();

    // The first result arrives although stdin is still open.
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let first = rx.recv_timeout(Duration::from_secs(10));
    let first = first.unwrap_or_else(|_| {
        let _ = child.kill();
        panic!("no result before the end of the input");
    });
    let first: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(first["name"], "Café Zoë");

    writeln!(stdin, "{}", server.addr("sqp")).unwrap();
    drop(stdin);
    let second = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("a second result");
    assert!(second.contains("Café Zoë"));
    let status = child.wait().unwrap();
    assert!(status.success());
}

#[test]
fn ctrl_c_writes_what_is_done_and_exits_130() {
    let server = serve();
    let silent = silent_socket();
    let list = format!(
        "sqp {}\nsqp {}\n",
        server.addr("sqp"),
        silent.local_addr().unwrap()
    );
    let mut child = Command::new(gsq_path())
        .args(["bulk", "--timeout", "20s", "--retries", "0"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(list.as_bytes()).unwrap();
    drop(stdin);
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    // The answer comes first; the silent target would keep the run going for 20 s.
    let first = lines.next().expect("a first line").unwrap();
    assert!(first.contains("Café Zoë"), "{first}");

    let started = Instant::now();
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let output = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(output.status.code(), Some(130));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("gsq: bulk interrupted: 1 answered"),
        "{stderr}"
    );
    assert!(stderr.contains("gsq: error: interrupted"), "{stderr}");
}

#[test]
fn rate_spaces_the_datagrams_out() {
    // GameSpy v1 takes one request datagram per target, so 12 targets are 12 datagrams: at 4
    // per second (bursts of one at that rate) the last goes out 11 × 250 ms = 2.75 s after the
    // first. Only a lower bound is checked: a slow machine makes the run longer, never shorter.
    let server = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &["--gamespy1", "127.0.0.1:0", "--no-rate-limit"],
        &["gamespy1"],
    );
    let input = format!("{}\n", server.addr("gamespy1")).repeat(12);
    let started = Instant::now();
    let ran = run_with_stdin(
        &["bulk", "--protocol", "gamespy1", "--rate", "4", "-t", "5s"],
        &input,
    );
    let elapsed = started.elapsed();
    let results = ran.json_lines();
    assert_eq!(results.len(), 12, "{ran:#?}");
    assert!(results.iter().all(|r| r["name"] == "Café Zoë"), "{ran:#?}");
    assert!(
        elapsed >= Duration::from_millis(2500),
        "12 datagrams at --rate 4 went out in {elapsed:?}"
    );
}

/// A closed port answers with ICMP "port unreachable", which bulk's shared sockets hear on
/// Linux: the line fails at once as `unreachable`, long before its timeouts would end it,
/// and the live targets beside it are answered.
#[cfg(target_os = "linux")]
#[test]
fn a_closed_port_is_unreachable_at_once_in_bulk() {
    let server = serve();
    let closed = {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.local_addr().unwrap()
    };
    let list = format!(
        "sqp {closed}\nsamp {closed}\nsqp {sqp}\n",
        sqp = server.addr("sqp")
    );
    let started = Instant::now();
    let ran = run_with_stdin(&["bulk", "-t", "3s", "-r", "2"], &list);
    let took = started.elapsed();
    let results = by_line(ran.json_lines());
    assert_eq!(results.len(), 3, "{ran:#?}");
    for line in [1, 2] {
        assert_failure(&results[&line], "unreachable", "nothing listens");
    }
    assert_eq!(results[&3]["name"], "Café Zoë");
    // Three attempts of three seconds each would take nine.
    assert!(took < Duration::from_secs(3), "took {took:?}");
}
