//! The suite's markdown report: one table of ratios against their targets, then the details.
//!
//! Reads what the other parts saved: `responder.json` and `bulk.json` (this program),
//! `allocations.json` (the `reply_allocations` bench), and criterion's estimates of the
//! `service_handle` and `sqp_query_response` groups. A part that did not run is reported as
//! missing rather than failing the report.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// Where the saved results are.
#[derive(Debug, Clone)]
pub struct Sources {
    /// `responder.json`, `bulk.json`, `allocations.json`.
    pub results: PathBuf,
    /// Criterion's output directory (`target/criterion`).
    pub criterion: PathBuf,
    /// Only the bulk-client ratios and table, for a bulk run with other settings than the
    /// suite's main one.
    pub bulk_only: bool,
}

fn load(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// Criterion's slope estimate (its mean without one) of `group/bench`, in nanoseconds.
fn criterion_ns(sources: &Sources, bench: &str) -> Option<f64> {
    let estimates = load(&sources.criterion.join(bench).join("new/estimates.json"))?;
    let estimate = if estimates["slope"].is_object() {
        &estimates["slope"]
    } else {
        &estimates["mean"]
    };
    estimate["point_estimate"].as_f64()
}

/// One row of the ratio table.
struct Ratio {
    name: String,
    value: Option<f64>,
    /// e.g. "≥ 0.80".
    target: String,
    /// Whether `value` meets the target.
    check: fn(f64) -> bool,
    unit: &'static str,
    note: String,
}

fn fmt_value(value: Option<f64>, unit: &str) -> String {
    match value {
        Some(v) if unit.is_empty() && v.fract() == 0.0 => format!("{v:.0}"),
        Some(v) if v.is_finite() => format!("{v:.2}{unit}"),
        _ => "not measured".to_owned(),
    }
}

fn verdict(ratio: &Ratio) -> &'static str {
    if ratio.target == "—" {
        return "—";
    }
    match ratio.value {
        Some(v) if v.is_finite() => {
            if (ratio.check)(v) {
                "met"
            } else {
                "missed"
            }
        }
        _ => "—",
    }
}

fn responder_rate(responder: &Option<Value>, subject: &str) -> Option<f64> {
    responder
        .as_ref()?
        .as_array()?
        .iter()
        .find(|r| r["subject"] == subject)?["replies_per_sec"]
        .as_f64()
}

/// The chosen run of `tool` on `set` with `targets` targets, from `bulk.json`.
fn chosen<'a>(bulk: &'a Option<Value>, tool: &str, set: &str, targets: u64) -> Option<&'a Value> {
    let bulk = bulk.as_ref()?;
    let choice = bulk["chosen"].as_array()?.iter().find(|c| {
        c["tool"] == tool && c["target_set"] == set && c["targets"].as_u64() == Some(targets)
    })?;
    bulk["runs"].get(usize::try_from(choice["run"].as_u64()?).ok()?)
}

fn run_field(run: Option<&Value>, field: &str) -> Option<f64> {
    run?[field].as_f64()
}

fn div(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some(a? / b?)
}

/// The whole report.
pub fn markdown(sources: &Sources) -> String {
    let responder = load(&sources.results.join("responder.json"));
    let allocations = load(&sources.results.join("allocations.json"));
    let bulk = load(&sources.results.join("bulk.json"));
    let mut out = String::new();

    let echo = responder_rate(&responder, "echo");
    let sqp = responder_rate(&responder, "sqp");
    let all = responder_rate(&responder, "all");
    let sqp_allocs = allocations.as_ref().and_then(|a| {
        a.as_array()?
            .iter()
            .find(|r| r["subject"] == "SQP responder")?["allocations_per_reply"]
            .as_f64()
    });
    let (targets, large) = bulk.as_ref().map_or((0, 0), |b| {
        (
            b["targets"].as_u64().unwrap_or(0),
            b["large_targets"].as_u64().unwrap_or(0),
        )
    });
    let peer_targets = bulk.as_ref().and_then(|b| {
        b["chosen"]
            .as_array()?
            .iter()
            .find(|c| c["target_set"] == "samp+gamespy1")?["targets"]
            .as_u64()
    });
    let gsq_peers = chosen(&bulk, "gsq", "samp+gamespy1", peer_targets.unwrap_or(0));
    let gamedig = chosen(&bulk, "gamedig", "samp+gamespy1", peer_targets.unwrap_or(0));
    let opengsq = chosen(&bulk, "opengsq", "samp+gamespy1", peer_targets.unwrap_or(0));
    let answering_targets = bulk
        .as_ref()
        .and_then(|b| b["answering_targets"].as_u64())
        .unwrap_or(0);
    let answering = |tool| chosen(&bulk, tool, crate::bulk::ANSWERING, answering_targets);
    let (gsq_answering, gamedig_answering, opengsq_answering) =
        (answering("gsq"), answering("gamedig"), answering("opengsq"));
    let gsq_all = chosen(&bulk, "gsq", "all", targets);
    let gsq_large = chosen(&bulk, "gsq", "all", large);
    // Memory depends on the queries in flight: compare the large run with the main run's run
    // at the same concurrency.
    let gsq_same_level = gsq_large.and_then(|large_run| {
        bulk.as_ref()?["runs"].as_array()?.iter().find(|r| {
            r["tool"] == "gsq"
                && r["target_set"] == "all"
                && r["targets"].as_u64() == Some(targets)
                && r["concurrency"] == large_run["concurrency"]
        })
    });
    let rate = |run: Option<&Value>| run_field(run, "targets_per_sec");
    let rss = |run: Option<&Value>| run_field(run, "peak_rss_mib");
    let cpu_per_target =
        |run: Option<&Value>| div(run_field(run, "cpu_secs"), run_field(run, "targets"));
    let cpu_per_answer =
        |run: Option<&Value>| div(run_field(run, "cpu_secs"), run_field(run, "answered"));
    let micros = |run: Option<&Value>| fmt_value(cpu_per_answer(run).map(|s| s * 1e6), " µs");
    let codec =
        |op: &str, codec: &str| criterion_ns(sources, &format!("sqp_query_response/{op}/{codec}"));
    let concurrency = |run: Option<&Value>| {
        run.and_then(|r| r["concurrency"].as_u64())
            .map_or_else(|| "—".to_owned(), |c| c.to_string())
    };

    let responders = [
        Ratio {
            name: "SQP responder / tokio UDP echo (replies/s)".to_owned(),
            value: div(sqp, echo),
            target: "≥ 0.80".to_owned(),
            check: |v| v >= 0.8,
            unit: "×",
            note: String::new(),
        },
        Ratio {
            name:
                "SA:MP responder with --gso / tokio UDP echo (replies/s, pipelined load generator)"
                    .to_owned(),
            value: div(
                responder_rate(&responder, "samppipelined"),
                responder_rate(&responder, "echopipelined"),
            ),
            target: "≥ 1.3".to_owned(),
            check: |v| v >= 1.3,
            unit: "×",
            note: "batched calls; the replies to each of the load's 2 ports leave segmented (GSO)"
                .to_owned(),
        },
        Ratio {
            name: "the same by default: every reply a message of its own (as to distinct clients)"
                .to_owned(),
            value: div(
                responder_rate(&responder, "samppipelinedunsegmented"),
                responder_rate(&responder, "echopipelined"),
            ),
            target: "—".to_owned(),
            check: |_| true,
            unit: "×",
            note: "batched calls only".to_owned(),
        },
        Ratio {
            name: "all-protocols responder / tokio UDP echo (replies/s, SQP load)".to_owned(),
            value: div(all, echo),
            target: "—".to_owned(),
            check: |_| true,
            unit: "×",
            note: String::new(),
        },
        Ratio {
            name: "SQP responder allocations per reply (steady state)".to_owned(),
            value: sqp_allocs,
            target: "0".to_owned(),
            check: |v| v == 0.0,
            unit: "",
            note: String::new(),
        },
    ];
    // The comparison with the peer clients: all a bulk-only report shows.
    let peers = [
        Ratio {
            name: format!(
                "gsq bulk / gamedig (targets/s, {} SA:MP + GameSpy v1 targets)",
                peer_targets.unwrap_or(0)
            ),
            value: div(rate(gsq_peers), rate(gamedig)),
            target: "≥ 10".to_owned(),
            check: |v| v >= 10.0,
            unit: "×",
            note: format!(
                "concurrency {} vs {}",
                concurrency(gsq_peers),
                concurrency(gamedig)
            ),
        },
        Ratio {
            name: format!(
                "gsq bulk / opengsq (targets/s, {} SA:MP + GameSpy v1 targets)",
                peer_targets.unwrap_or(0)
            ),
            value: div(rate(gsq_peers), rate(opengsq)),
            target: "≥ 10".to_owned(),
            check: |v| v >= 10.0,
            unit: "×",
            note: format!(
                "concurrency {} vs {}",
                concurrency(gsq_peers),
                concurrency(opengsq)
            ),
        },
        Ratio {
            name: "CPU time per target: gamedig / gsq bulk (same runs)".to_owned(),
            value: div(cpu_per_target(gamedig), cpu_per_target(gsq_peers)),
            target: "—".to_owned(),
            check: |_| true,
            unit: "×",
            note: String::new(),
        },
        Ratio {
            name: "CPU time per target: opengsq / gsq bulk (same runs)".to_owned(),
            value: div(cpu_per_target(opengsq), cpu_per_target(gsq_peers)),
            target: "—".to_owned(),
            check: |_| true,
            unit: "×",
            note: String::new(),
        },
    ];
    // Against the fleet where every target answers; its runs are left out of the extra bulk
    // runs (`--answering-targets 0`).
    let answering_ratios = [
        Ratio {
            name: format!(
                "CPU per answered target: gamedig / gsq bulk ({answering_targets} targets that all answer)"
            ),
            value: div(cpu_per_answer(gamedig_answering), cpu_per_answer(gsq_answering)),
            target: "≥ 5".to_owned(),
            check: |v| v >= 5.0,
            unit: "×",
            note: format!(
                "{} vs {}",
                micros(gamedig_answering),
                micros(gsq_answering)
            ),
        },
        Ratio {
            name: "CPU per answered target: opengsq / gsq bulk (same runs)".to_owned(),
            value: div(cpu_per_answer(opengsq_answering), cpu_per_answer(gsq_answering)),
            target: "—".to_owned(),
            check: |_| true,
            unit: "×",
            note: format!("{} vs {}", micros(opengsq_answering), micros(gsq_answering)),
        },
        Ratio {
            name: "gsq bulk / gamedig at its best level (targets/s, same targets)".to_owned(),
            value: div(rate(gsq_answering), rate(gamedig_answering)),
            target: "≥ 3".to_owned(),
            check: |v| v >= 3.0,
            unit: "×",
            note: format!(
                "concurrency {} vs {}",
                concurrency(gsq_answering),
                concurrency(gamedig_answering)
            ),
        },
        Ratio {
            name: "gsq bulk answers lost (same targets)".to_owned(),
            value: run_field(gsq_answering, "lost"),
            target: "0".to_owned(),
            check: |v| v == 0.0,
            unit: "",
            note: String::new(),
        },
    ];
    let answering_shown: &[Ratio] = if answering_targets > 0 {
        &answering_ratios
    } else {
        &[]
    };
    let rest = [
        Ratio {
            name: format!("gsq bulk answers lost ({targets} targets, all protocols)"),
            value: run_field(gsq_all, "lost"),
            target: "0".to_owned(),
            check: |v| v == 0.0,
            unit: "",
            note: format!("concurrency {}", concurrency(gsq_all)),
        },
        Ratio {
            name: format!("gsq bulk peak memory, {targets} targets"),
            value: rss(gsq_all),
            target: "< 64 MiB".to_owned(),
            check: |v| v < 64.0,
            unit: " MiB",
            note: String::new(),
        },
        Ratio {
            name: format!("gsq bulk peak memory, {large} / {targets} targets (same concurrency)"),
            value: div(rss(gsq_large), rss(gsq_same_level)),
            target: format!("< {:.0} (sublinear)", large as f64 / targets.max(1) as f64),
            check: |v| v < 10.0,
            unit: "×",
            note: format!(
                "{} vs {} MiB at concurrency {}; {} lost at {large}",
                fmt_value(rss(gsq_large), ""),
                fmt_value(rss(gsq_same_level), ""),
                concurrency(gsq_large),
                fmt_value(run_field(gsq_large, "lost"), "")
            ),
        },
        Ratio {
            name: "SQP decode: derived / hand-written".to_owned(),
            value: div(codec("decode", "derived"), codec("decode", "handwritten")),
            target: "≤ 1.10".to_owned(),
            check: |v| v <= 1.10,
            unit: "×",
            note: String::new(),
        },
        Ratio {
            name: "SQP decode: deku / derived".to_owned(),
            value: div(codec("decode", "deku"), codec("decode", "derived")),
            target: "≥ 2.5".to_owned(),
            check: |v| v >= 2.5,
            unit: "×",
            note: String::new(),
        },
        Ratio {
            name: "SQP encode: derived / hand-written".to_owned(),
            value: div(codec("encode", "derived"), codec("encode", "handwritten")),
            target: "≤ 1.10".to_owned(),
            check: |v| v <= 1.10,
            unit: "×",
            note: String::new(),
        },
    ];
    out.push_str("| ratio | value | target | verdict | note |\n|---|---|---|---|---|\n");
    let shown: Vec<&Ratio> = if sources.bulk_only {
        peers.iter().chain(answering_shown).collect()
    } else {
        responders
            .iter()
            .chain(&peers)
            .chain(answering_shown)
            .chain(&rest)
            .collect()
    };
    for ratio in shown {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            ratio.name,
            fmt_value(ratio.value, ratio.unit),
            ratio.target,
            verdict(ratio),
            ratio.note
        );
    }

    if sources.bulk_only {
        out.push('\n');
        bulk_table(&mut out, bulk.as_ref());
        return out;
    }

    out.push_str("\n### Responder throughput\n\n");
    match responder.as_ref().and_then(Value::as_array) {
        Some(rows) => {
            out.push_str(
                "| subject | clients | replies/s | per round | p50 µs | p99 µs | responder CPU ns/reply | responder busy | load generator CPU ns/reply | load generator busy | timeouts |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
            );
            for row in rows {
                let f = |k: &str| row[k].as_f64().unwrap_or(f64::NAN);
                let _ = writeln!(
                    out,
                    "| {} | {} | {:.0} | {} | {:.1} | {:.1} | {:.0} | {:.0}% | {:.0} | {:.0}% | {} |",
                    subject_label(row["subject"].as_str().unwrap_or("?")),
                    row["clients"],
                    f("replies_per_sec"),
                    row["rounds_per_sec"]
                        .as_array()
                        .map(|r| r
                            .iter()
                            .filter_map(Value::as_f64)
                            .map(|v| format!("{v:.0}"))
                            .collect::<Vec<_>>()
                            .join(", "))
                        .unwrap_or_default(),
                    f("p50_us"),
                    f("p99_us"),
                    f("server_ns_per_reply"),
                    f("server_busy") * 100.0,
                    f("client_ns_per_reply"),
                    f("client_busy") * 100.0,
                    row["timeouts"],
                );
            }
        }
        None => out.push_str("not measured\n"),
    }
    let handle = |bench: &str| {
        criterion_ns(sources, &format!("service_handle/{bench}"))
            .map_or_else(|| "not measured".to_owned(), |ns| format!("{ns:.0} ns"))
    };
    let _ = writeln!(
        out,
        "\n`Service::handle` without sockets (criterion): SQP challenge + query pair {}, the same through the all-protocols responder {}, SA:MP `i` {}, `r` {}, `d` {}.",
        handle("sqp_pair"),
        handle("all_sqp_pair"),
        handle("samp_i"),
        handle("samp_r"),
        handle("samp_d"),
    );

    out.push_str("\n### Allocations per reply\n\n");
    match allocations.as_ref().and_then(Value::as_array) {
        Some(rows) => {
            out.push_str("| responder | requests | answered | allocations | bytes | allocations / reply |\n|---|---|---|---|---|---|\n");
            for row in rows {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {:.3} |",
                    row["subject"].as_str().unwrap_or("?"),
                    row["requests"],
                    row["answered"],
                    row["allocations"],
                    row["bytes"],
                    row["allocations_per_reply"].as_f64().unwrap_or(f64::NAN),
                );
            }
        }
        None => out.push_str("not measured\n"),
    }

    out.push_str("\n### Bulk clients\n\n");
    bulk_table(&mut out, bulk.as_ref());
    out
}

/// The bulk runs' settings and one row per run, the chosen levels in bold.
fn bulk_table(out: &mut String, bulk: Option<&Value>) {
    match bulk {
        Some(bulk) => {
            let _ = writeln!(
                out,
                "Every tool: {} ms per attempt, {} retry; 20% of targets silent (so no run can end before {:.1} s), 5% drop their first datagram{}; gsq bulk with `--sockets {}`. The chosen level (**bold**) is the fastest that lost no answer; levels are tried upwards until one loses answers.\n",
                bulk["timeout_ms"],
                bulk["retries"],
                bulk["timeout_ms"].as_f64().unwrap_or(0.0) / 1000.0
                    * (bulk["retries"].as_f64().unwrap_or(0.0) + 1.0),
                if bulk["answering_targets"].as_u64().unwrap_or(0) > 0 {
                    ", except in the `answering` set, a third fleet where every target answers at once"
                } else {
                    ""
                },
                bulk["gsq_sockets"]
            );
            out.push_str("| tool | targets | concurrency | wall s | targets/s | answered / responsive | lost | false answers | peak RSS MiB | CPU s |\n|---|---|---|---|---|---|---|---|---|---|\n");
            let chosen: Vec<u64> = bulk["chosen"]
                .as_array()
                .map(|c| c.iter().filter_map(|c| c["run"].as_u64()).collect())
                .unwrap_or_default();
            for (i, run) in bulk["runs"].as_array().into_iter().flatten().enumerate() {
                let f = |k: &str| run[k].as_f64().unwrap_or(f64::NAN);
                let bold = if chosen.contains(&(i as u64)) {
                    "**"
                } else {
                    ""
                };
                let _ = writeln!(
                    out,
                    "| {bold}{}{bold} | {} {} | {bold}{}{bold} | {:.2} | {bold}{:.0}{bold} | {} / {} | {} | {} | {:.1} | {:.2} |{}",
                    tool_label(run["tool"].as_str().unwrap_or("?")),
                    run["targets"],
                    run["target_set"].as_str().unwrap_or("?"),
                    run["concurrency"],
                    f("wall_secs"),
                    f("targets_per_sec"),
                    run["answered"],
                    run["responsive"],
                    run["lost"],
                    run["false_answers"],
                    f("peak_rss_mib"),
                    f("cpu_secs"),
                    if run["killed"] == true { " killed at the time limit" } else { "" },
                );
            }
        }
        None => out.push_str("not measured\n"),
    }
}

fn subject_label(subject: &str) -> &str {
    match subject {
        "echo" => "tokio UDP echo (socket limit)",
        "sqp" => "SQP responder",
        "all" => "all-protocols responder, SQP load",
        "a2s" => "A2S responder, INFO load",
        "sqpplain" => "SQP responder, one call per datagram",
        "echopipelined" => "tokio UDP echo, pipelined load (socket limit)",
        "samppipelined" => "SA:MP responder with --gso, pipelined `i` load",
        "samppipelinedunsegmented" => "SA:MP responder, pipelined `i` load",
        other => other,
    }
}

fn tool_label(tool: &str) -> &str {
    match tool {
        "gsq" => "gsq bulk",
        other => other,
    }
}
