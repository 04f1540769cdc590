//! The README's configuration for sharded exporters (its `prometheus.yml` and file service
//! discovery blocks) loads in a real Prometheus's `promtool check config`, the targets file
//! found and valid. Skipped without promtool (Debian's `prometheus` package ships it), except
//! under CI=true, where `.ci/run` installs it.

mod cli_support;

use std::process::Command;

use cli_support::workspace_root;

/// The fenced YAML block of the README whose first line is `first`.
fn readme_block(first: &str) -> String {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        if line == "```yaml" {
            let block: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
            if block.first() == Some(&first) {
                return block.join("\n") + "\n";
            }
        }
    }
    panic!("no ```yaml block starting with {first:?} in the README");
}

#[test]
fn the_readme_sharding_configuration_loads_in_promtool() {
    let config = readme_block("# prometheus.yml: gsq exporters sharded by target");
    let targets = readme_block(
        "# gsq/servers.yml: the game servers, by game (HOST:PORT is the port players connect to)",
    );
    // What the configuration promises: hashmod over the target, one exporter per shard.
    assert!(config.contains("action: hashmod") && config.contains("modulus: 3"));
    for shard in 0..3 {
        assert!(
            config.contains(&format!("regex: '{shard}'")),
            "shard {shard}"
        );
    }
    assert!(targets.contains("game: rust"));

    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("gsq")).unwrap();
    std::fs::write(dir.path().join("prometheus.yml"), &config).unwrap();
    std::fs::write(dir.path().join("gsq/servers.yml"), &targets).unwrap();
    let output = match Command::new("promtool")
        .args(["check", "config", "prometheus.yml"])
        .current_dir(dir.path())
        .output()
    {
        Ok(output) => output,
        Err(e) => {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("promtool is required under CI=true (apt-get install prometheus): {e}");
            }
            eprintln!("skipped: promtool does not run ({e}); apt-get install prometheus");
            return;
        }
    };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "promtool refused it: {text}");
    assert!(!text.contains("WARNING"), "{text}");
    assert!(text.contains("SUCCESS"), "{text}");

    // And promtool is no rubber stamp: a broken targets file fails.
    std::fs::write(dir.path().join("gsq/servers.yml"), "- targets: [1\n").unwrap();
    let output = Command::new("promtool")
        .args(["check", "config", "prometheus.yml"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!output.status.success());
}
