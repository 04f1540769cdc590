#!/usr/bin/env bash
# Runs the whole benchmark suite on loopback and prints one markdown report, ratios first.
#
#   scripts/bench-all.sh                 # the report on stdout, progress on stderr
#
# Parts, each bounded in time:
#   1. responder throughput: `query-bench responder` (echo, SQP, all-protocols under one
#      request in flight per client socket; echo and SA:MP under a pipelined load generator
#      that batches its own calls; 3 s each);
#   2. allocations per reply: `cargo bench -p query-bench --bench reply_allocations`;
#   3. Service::handle without sockets: `cargo bench -p query-bench --bench service`;
#   4. the SQP codec against a hand-written codec and deku: `cargo bench -p query-specs
#      --bench sqp_codec`, tabled by scripts/bench-table.sh; then the other derived decoders
#      against hand-written ones (an SQP reply with every chunk, SA:MP `d`, A2S INFO and
#      PLAYER, a 3-part GameSpy v1 UT99 reply: `--bench sqp_full_codec --bench samp_codec
#      --bench a2s_codec --bench gamespy1_codec`), tabled by scripts/codec-table.sh;
#   5. reflection: `query-bench reflection`, the reply bytes a flood from one /24 draws from
#      each protocol with the largest state, before and after byte budgets (3 s per flood);
#   6. bulk clients: `query-bench bulk` (gsq bulk, gamedig, opengsq against a fleet of 10,000
#      loopback targets, then gsq alone against 100,000, then the three against 5,000 SA:MP
#      and GameSpy v1 targets that all answer); then the three again with 250 ms per attempt,
#      and against 100,000 targets;
#   7. Minecraft Java status over TCP: `scripts/bench-minecraft.sh` (gsq, mcstatus and gamedig
#      against 1,000 loopback targets that all answer; `MC_TARGETS` for more).
# Results are saved in target/bench-results/ (JSON, the clients' outputs, REPORT.md).
#
# Needs node and npm (gamedig), python3 with venv (opengsq), jq, and Linux. The peers are
# installed, at the versions pinned in benches/peers/, into benches/peers/node_modules and
# benches/peers/.venv. Run as root, the responder part runs at real-time priority
# (SCHED_FIFO 10) so that other processes on the machine add no scheduling delay; the report
# says whether it did.
#
# Environment: BENCH_SECONDS (responder window, default 3), BENCH_TARGETS (default 10000),
# BENCH_LARGE_TARGETS (default 100000, 0 skips), BENCH_SKIP_PEERS=1 (gsq only),
# BENCH_SKIP_EXTRA_BULK=1 (only the main bulk run, not the 250 ms and long-list ones; also
# skipped when BENCH_LARGE_TARGETS is 0).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${BENCH_SECONDS:-3}
targets=${BENCH_TARGETS:-10000}
large=${BENCH_LARGE_TARGETS:-100000}
# Absolute: cargo runs benchmarks from their package's directory.
target_dir=$(realpath -m "${CARGO_TARGET_DIR:-target}")
out=$target_dir/bench-results
bin=$target_dir/release
started=$(date +%s)
mkdir -p "$out"
rm -f "$out"/*.json "$out"/*/*.json

step() { printf '\n== %s\n' "$*" >&2; }

step "build (release)"
cargo build --release -p query-cli -p query-bench >&2

peers=()
if [[ ${BENCH_SKIP_PEERS:-0} != 1 ]]; then
    step "install the peer clients (pinned)"
    (cd benches/peers && { [[ -d node_modules/gamedig ]] || npm ci --no-audit --no-fund >&2; })
    if [[ ! -x benches/peers/.venv/bin/python ]]; then
        python3 -m venv benches/peers/.venv
    fi
    benches/peers/.venv/bin/python -m pip install --quiet --disable-pip-version-check \
        -r benches/peers/requirements.txt >&2
else
    peers=(--no-peers)
fi

realtime=()
if [[ $(id -u) == 0 ]] && chrt -f 10 true 2>/dev/null; then
    realtime=(chrt -f 10)
fi

step "responder throughput (${seconds} s per subject)"
"${realtime[@]}" "$bin/query-bench" responder --seconds "$seconds" --json "$out/responder.json"

step "allocations per reply"
QUERY_BENCH_OUT=$out cargo bench -p query-bench --bench reply_allocations >&2

step "Service::handle without sockets"
cargo bench -p query-bench --bench service -- --measurement-time 3 --warm-up-time 1 >&2

step "SQP codec: derived, hand-written, deku"
cargo bench -p query-specs --bench sqp_codec -- --measurement-time 3 >&2

step "codecs: derived against hand-written (SQP every chunk, SA:MP d, A2S, GameSpy v1)"
cargo bench -p query-specs --bench sqp_full_codec --bench samp_codec --bench a2s_codec \
    --bench gamespy1_codec -- --measurement-time 3 >&2

step "reflection: a flood from one /24, before and after byte budgets"
"$bin/query-bench" reflection --seconds "$seconds" --json "$out/reflection.json" \
    > "$out/reflection.md"

step "bulk clients (${targets} targets, then ${large} for gsq)"
"$bin/query-bench" bulk --targets "$targets" --large-targets "$large" "${peers[@]}" \
    --gsq "$bin/gsq" --out-dir "$out"

# The silent targets put a floor of timeout x attempts under every run, which a tool that keeps
# thousands of queries in flight reaches and one that keeps hundreds does not. Two more runs
# show how the comparison moves with the floor and with the list's length.
extra_bulk=1
[[ ${BENCH_SKIP_EXTRA_BULK:-0} == 1 || $large == 0 ]] && extra_bulk=0
if [[ $extra_bulk == 1 ]]; then
    step "bulk clients, 250 ms per attempt (${targets} targets)"
    "$bin/query-bench" bulk --targets "$targets" --large-targets 0 --answering-targets 0 --timeout-ms 250 \
        "${peers[@]}" --gsq "$bin/gsq" --out-dir "$out/timeout-250ms"

    step "bulk clients, ${large} targets, each tool at its level of the main run"
    "$bin/query-bench" bulk --targets "$large" --large-targets 0 --answering-targets 0 --gsq-levels 2000,5000 \
        --gamedig-levels 250 --opengsq-levels 250 "${peers[@]}" --gsq "$bin/gsq" \
        --out-dir "$out/large-list"
fi

step "Minecraft Java status: gsq, mcstatus, gamedig (${MC_TARGETS:-1000} targets)"
scripts/bench-minecraft.sh > "$out/minecraft.md"

elapsed=$(( $(date +%s) - started ))
{
    echo "## Benchmarks"
    echo
    echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(uname -sr)."
    echo "Command: \`scripts/bench-all.sh\`; the suite took ${elapsed} s."
    if [[ ${#realtime[@]} -gt 0 ]]; then
        echo "Responder part at real-time priority (\`${realtime[*]}\`); rate limiter off in every benchmark responder."
    else
        echo "Responder part at normal priority; rate limiter off in every benchmark responder."
    fi
    echo
    "$bin/query-bench" report --results "$out" --criterion "$target_dir/criterion"
    echo
    echo "### SQP codec"
    echo
    scripts/bench-table.sh
    echo
    echo "### Codecs: derived against hand-written"
    echo
    scripts/codec-table.sh
    echo
    echo "### Reflection: a flood from one /24 (bytes out ÷ bytes in)"
    echo
    cat "$out/reflection.md"
    echo
    echo "### Minecraft Java status"
    echo
    cat "$out/minecraft.md"
    if [[ $extra_bulk == 1 ]]; then
        echo
        echo "### Bulk clients, 250 ms per attempt"
        echo
        "$bin/query-bench" report --bulk-only --results "$out/timeout-250ms"
        echo
        echo "### Bulk clients, ${large} targets"
        echo
        "$bin/query-bench" report --bulk-only --results "$out/large-list"
    fi
} | tee "$out/REPORT.md"
