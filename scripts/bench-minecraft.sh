#!/usr/bin/env bash
# Minecraft Java status over loopback: `gsq bulk` against mcstatus (async, PyPI) and gamedig
# (npm) on a fleet of Minecraft Java targets that all answer (`query-bench serve-fleet
# --protocols minecraft`: one TCP listener per target with the Java status responder, in a
# process of its own). Each client queries every target once through its library, 256 at a
# time, 2 s per attempt; `query-bench measure` reports its wall time, CPU time (user +
# system) and peak memory. Prints a markdown table: CPU per answered target, the ratios to
# gsq, and the answers lost.
#
# The peers read the status alone (handshake, status request, status response: mcstatus's
# `async_status()`, gamedig's `minecraftvanilla`), so `gsq` runs with `--no-ping`, the same
# exchange, and the ratios are to that row; `gsq + ping` is gsq's default, which pings after
# the status (a second round trip) for the pong's round trip.
#
#   scripts/bench-minecraft.sh                  # 1,000 targets
#   MC_TARGETS=5000 scripts/bench-minecraft.sh   # more
#
# Needs `cargo build --release -p query-cli -p query-bench`, node with gamedig in
# benches/peers/node_modules and Python with mcstatus in benches/peers/.venv (pinned in
# benches/peers/; `scripts/bench-all.sh` installs both), and Linux (127.77.0.0/16 loopback).
# Outputs go to target/bench-results/minecraft/.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=${MC_TARGETS:-1000}
concurrency=${MC_CONCURRENCY:-256}
timeout_ms=${MC_TIMEOUT_MS:-2000}
bin=$(realpath -m "${CARGO_TARGET_DIR:-target}")/release
out=$(realpath -m "${CARGO_TARGET_DIR:-target}")/bench-results/minecraft
python=${MC_PYTHON:-benches/peers/.venv/bin/python}
mkdir -p "$out"

# 100 targets per loopback address, ports from 20,000 (the fleet's layout).
addresses=$(( (targets + 99) / 100 ))
per=$(( (targets + addresses - 1) / addresses ))
list=$out/targets.txt
: > "$list"
for ((i = 0; i < targets; i++)); do
    a=$(( i / per )); p=$(( i % per ))
    echo "minecraft 127.77.$(( a / 200 )).$(( a % 200 + 1 )):$(( 20000 + p ))" >> "$list"
done

# The fleet runs until its stdin closes.
coproc FLEET { exec "$bin/query-bench" serve-fleet --targets "$targets" --addresses "$addresses" \
    --protocols minecraft --silent-percent 0 --drop-first-percent 0 --max-seconds 1800; }
read -r ready <&"${FLEET[0]}"
[ "$ready" = ready ] || { echo "the fleet did not start: $ready" >&2; exit 1; }

measure() { # name, then the command
    local name=$1; shift
    "$bin/query-bench" measure --stdout "$out/$name.ndjson" --limit-secs 600 -- "$@" > "$out/$name.json"
    local answered
    answered=$(grep -c -v '"error"' "$out/$name.ndjson" || true)
    echo "$name $answered $(cat "$out/$name.json")"
}

results=()
results+=("$(measure gsq "$bin/gsq" bulk "$list" --quiet -t "${timeout_ms}ms" -r 0 \
    --connections "$concurrency" --concurrency "$concurrency" --no-ping)")
results+=("$(measure gsq+ping "$bin/gsq" bulk "$list" --quiet -t "${timeout_ms}ms" -r 0 \
    --connections "$concurrency" --concurrency "$concurrency")")
if [ -x "$python" ] && "$python" -c 'import mcstatus' 2>/dev/null; then
    results+=("$(measure mcstatus "$python" benches/peers/mcstatus_bulk.py "$list" "$concurrency" "$timeout_ms" 0)")
else
    echo "mcstatus is missing ($python): skipped" >&2
fi
if [ -d benches/peers/node_modules/gamedig ]; then
    results+=("$(measure gamedig node benches/peers/gamedig_bulk.mjs "$list" "$concurrency" "$timeout_ms" 0)")
else
    echo "gamedig is missing (benches/peers/node_modules): skipped" >&2
fi
exec {FLEET[1]}>&-
wait "$FLEET_PID" 2>/dev/null || true

# name answered {"wall_secs":..,"user_secs":..,"system_secs":..,"max_rss_kib":..}
printf '%s\n' "${results[@]}" | python3 -c '
import json, sys
rows = []
for line in sys.stdin:
    name, answered, usage = line.split(" ", 2)
    usage = json.loads(usage)
    cpu = usage["user_secs"] + usage["system_secs"]
    answered = int(answered)
    rows.append((name, answered, cpu, usage))
gsq = next(r for r in rows if r[0] == "gsq")
gsq_per = gsq[2] / max(gsq[1], 1)
total = int(sys.argv[1])
print(f"Minecraft Java status, {total} loopback targets, all answering:\n")
print("| client | answered | lost | wall | CPU | CPU per answered target | / gsq | peak memory |")
print("|---|---|---|---|---|---|---|---|")
for name, answered, cpu, usage in rows:
    per = cpu / max(answered, 1)
    wall, rss = usage["wall_secs"], usage["max_rss_kib"] / 1024
    name = name.replace("+", " + ")
    print(f"| {name} | {answered} | {total - answered} | {wall:.2f} s | {cpu:.2f} s "
          f"| {per * 1e6:.0f} µs | {per / gsq_per:.2f}× | {rss:.1f} MiB |")
' "$targets"
