#!/usr/bin/env bash
# Prints the derived-against-hand-written codec benchmarks other than the SQP one
# (scripts/bench-table.sh) as a markdown table, from the estimates criterion saved.
#
#   cargo bench -p query-specs --bench sqp_full_codec --bench samp_codec --bench a2s_codec \
#       --bench gamespy1_codec
#   scripts/codec-table.sh
#
# One row per decoded packet: criterion's slope (its mean when there is no slope) and the
# fastest sample of the derived and the hand-written decoder, their ratios, and the target the
# derive is held to, derived ≤ 1.10 × hand-written; then deku against the derived decoder on the
# SQP reply with every chunk. A group missing (the A2S, SA:MP and GameSpy
# benchmarks read real replies from the test vectors and measure nothing without them) is
# reported as such.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v jq >/dev/null || { echo "codec-table.sh needs jq" >&2; exit 1; }

criterion="${CARGO_TARGET_DIR:-target}/criterion"

# GROUP|LABEL for each packet.
packets=(
    "sqp_full_response|SQP reply with every chunk (12 rules, 30 players, 2 teams, 5 metrics)"
    "samp_players|SA:MP d, a live server's 34 players"
    "a2s_info|A2S INFO, a real CS:GO reply"
    "a2s_players|A2S PLAYER, a real CS:GO reply, 30 players"
    "gamespy1_ut99|GameSpy v1, a real UT99 reply in 3 parts: reassembly and decode, 11 players"
)

# slope GROUP CODEC: in ns.
slope() {
    jq -r '(.slope // .mean).point_estimate' "$criterion/$1/$2/new/estimates.json"
}

# fastest GROUP CODEC: the fastest sample's time per iteration, in ns.
fastest() {
    jq -r '[.times, .iters] | transpose | map(.[0] / .[1]) | min' \
        "$criterion/$1/$2/new/sample.json"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
verdict() { awk -v v="$1" 'BEGIN { print (v <= 1.10) ? "met" : "missed" }'; }
ns() { awk -v t="$1" 'BEGIN { printf "%.1f ns", t }'; }

echo "| packet | derived (slope) | hand-written (slope) | derived / hand-written | fastest samples | ratio | target ≤ 1.10 |"
echo "|---|---|---|---|---|---|---|"
for entry in "${packets[@]}"; do
    group=${entry%%|*}
    label=${entry#*|}
    if [[ ! -f $criterion/$group/derived/new/estimates.json ||
          ! -f $criterion/$group/handwritten/new/estimates.json ]]; then
        echo "| $label | not measured (run the benchmark; A2S, SA:MP and GameSpy need the test vectors) | | | | | |"
        continue
    fi
    d=$(slope "$group" derived)
    h=$(slope "$group" handwritten)
    df=$(fastest "$group" derived)
    hf=$(fastest "$group" handwritten)
    r=$(ratio "$d" "$h")
    rf=$(ratio "$df" "$hf")
    echo "| $label | $(ns "$d") | $(ns "$h") | ${r}× | $(ns "$df") / $(ns "$hf") | ${rf}× | $(verdict "$r") |"
done

# deku against the derived decoder on the SQP reply with every chunk (reported, no target).
group=sqp_full_response
if [[ -f $criterion/$group/deku/new/estimates.json && -f $criterion/$group/derived/new/estimates.json ]]; then
    k=$(slope "$group" deku)
    d=$(slope "$group" derived)
    kf=$(fastest "$group" deku)
    df=$(fastest "$group" derived)
    echo
    echo "SQP reply with every chunk, deku: $(ns "$k") (fastest sample $(ns "$kf")); deku / derived" \
        "$(ratio "$k" "$d")× (fastest samples $(ratio "$kf" "$df")×)"
fi
