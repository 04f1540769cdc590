//! `gsq` with Frostbite and TeamSpeak 3: `serve --frostbite/--teamspeak3` queried by
//! `gsq query`, a ServerQuery login's password taken as `gsq rcon` takes it, and
//! `decode --status` of a real server's stream cut where its client read it.

mod cli_support;

use cli_support::{gsq, run, Server, StateDir, SAMPLE_STATE};

/// The `port` of [`SAMPLE_STATE`].
const VOICE_PORT: &str = "7777";

fn serve() -> Server {
    Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &["--frostbite", "127.0.0.1:0", "--teamspeak3", "127.0.0.1:0"],
        &["frostbite", "teamspeak3"],
    )
}

#[test]
fn query_reads_what_serve_answers_in_both_families() {
    let server = serve();
    let ran = run(&["query", "frostbite", &server.addr("frostbite"), "--json"]);
    assert_eq!(ran.code, Some(0), "{ran:?}");
    let status = ran.json();
    assert_eq!(status["protocol"], "frostbite");
    assert_eq!(status["version"], "BF4 1.0.3");
    assert!(!status["players"].as_array().unwrap().is_empty());

    // The sample state's port is its voice port.
    let ran = run(&[
        "query",
        "teamspeak3",
        &server.addr("teamspeak3"),
        "--voice-port",
        VOICE_PORT,
        "--json",
    ]);
    assert_eq!(ran.code, Some(0), "{ran:?}");
    let status = ran.json();
    assert_eq!(status["protocol"], "teamspeak3");
    assert_eq!(status["raw"]["query_clients"].as_array().unwrap().len(), 1);

    // No virtual server on that voice port: one line, the server's words.
    let ran = run(&[
        "query",
        "teamspeak3",
        &server.addr("teamspeak3"),
        "--voice-port",
        "9",
    ]);
    assert_ne!(ran.code, Some(0));
    assert!(
        ran.stderr.contains("invalid serverID (error 1024)"),
        "{ran:?}"
    );
    assert_eq!(ran.stderr.trim().lines().count(), 1, "{ran:?}");
}

#[test]
fn a_login_takes_its_password_from_a_file_or_the_environment() {
    let server = serve();
    let address = server.addr("teamspeak3");
    // The responder accepts no login without a password of its own: the refusal is an
    // authentication error, and the password never shows.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("password");
    std::fs::write(&file, "hunter2\nignored second line\n").unwrap();
    let file = file.to_str().unwrap();
    let ran = run(&[
        "query",
        "teamspeak3",
        &address,
        "--login",
        "serveradmin",
        "--password-file",
        file,
    ]);
    assert_ne!(ran.code, Some(0));
    assert!(
        ran.stderr.contains("refused the login of \"serveradmin\""),
        "{ran:?}"
    );
    assert!(!ran.stderr.contains("hunter2") && !ran.stdout.contains("hunter2"));

    let output = gsq(&["query", "teamspeak3", &address, "--login", "serveradmin"])
        .env("GSQ_RCON_PASSWORD", "from the environment")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("refused the login"), "{stderr}");

    // Without a password anywhere, a usage error before anything is sent.
    let ran = run(&["query", "teamspeak3", &address, "--login", "serveradmin"]);
    ran.assert_error(2, &["--login needs a password", "GSQ_RCON_PASSWORD"]);
    // A TeamSpeak 3 option given to another protocol is refused.
    let ran = run(&[
        "query",
        "frostbite",
        &server.addr("frostbite"),
        "--voice-port",
        "9987",
    ]);
    ran.assert_error(2, &["--voice-port is a teamspeak3 option"]);
}

#[test]
fn decode_status_reads_a_real_stream_cut_into_files() {
    let Some(dir) = query_tests::vectors_dir() else {
        eprintln!("vectors absent: skipped");
        return;
    };
    for (protocol, capture, name) in [
        (
            "teamspeak3",
            "teamspeak3/teamspeak3_1",
            "www.hengeofdenravi.com",
        ),
        (
            "frostbite",
            "frostbite/bfbc2_1",
            "=]RC[= STRATEGO - BC2 Conquest",
        ),
    ] {
        let path = dir.join(format!("captures/gameq/{capture}_response.txt"));
        let pieces = query_tests::split_datagrams(&std::fs::read(path).unwrap());
        let out = tempfile::tempdir().unwrap();
        let mut files = Vec::new();
        for (i, piece) in pieces.iter().enumerate() {
            let file = out.path().join(format!("read{i:02}.bin"));
            std::fs::write(&file, piece).unwrap();
            files.push(file.to_str().unwrap().to_owned());
        }
        let mut args = vec!["decode", protocol, "--status"];
        args.extend(files.iter().map(String::as_str));
        let ran = run(&args);
        assert_eq!(ran.code, Some(0), "{ran:?}");
        assert_eq!(ran.json()["name"], name);
        // Without --status, each file decodes on its own where it holds whole packets/lines.
        let ran = run(&["decode", protocol, &files[1]]);
        assert_eq!(ran.code, Some(0), "{protocol}: {ran:?}");
    }
}

/// `gsq bulk` runs the TCP families beside each other as stream targets: a connection each,
/// the line's protocol and address in its result.
#[test]
fn bulk_reads_both_families_as_stream_targets() {
    let server = serve();
    let list = format!(
        "frostbite {}\nteamspeak3 {}\n",
        server.addr("frostbite"),
        server.addr("teamspeak3")
    );
    let ran = cli_support::run_with_stdin(
        &["bulk", "-t", "2s", "-r", "0", "--voice-port", VOICE_PORT],
        &list,
    );
    assert_eq!(ran.code, Some(0), "{ran:?}");
    let mut lines = ran.json_lines();
    lines.sort_by_key(|l| l["line"].as_u64());
    assert_eq!(lines.len(), 2, "{ran:?}");
    assert_eq!(lines[0]["protocol"], "frostbite", "{:#}", lines[0]);
    assert_eq!(lines[0]["version"], "BF4 1.0.3");
    assert_eq!(lines[1]["protocol"], "teamspeak3", "{:#}", lines[1]);
    assert_eq!(lines[1]["name"], lines[0]["name"]);
}
