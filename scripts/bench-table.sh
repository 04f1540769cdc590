#!/usr/bin/env bash
# Prints the SQP codec benchmark as a markdown table, from the estimates criterion saved.
#
#   cargo bench -p query-specs --bench sqp_codec -- --measurement-time 3
#   scripts/bench-table.sh
#
# Time per operation is criterion's slope estimate (its mean when there is no slope), with the
# 95% confidence interval. Ratios are the targets the codec is held to: the derived codec
# within 10% of the hand-written one, and deku at least 2.5 times slower to decode.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v jq >/dev/null || { echo "bench-table.sh needs jq" >&2; exit 1; }

group_dir="${CARGO_TARGET_DIR:-target}/criterion/sqp_query_response"
codecs=(derived handwritten deku)

# estimate OPERATION CODEC FIELD: FIELD is point_estimate, lower_bound or upper_bound, in ns.
estimate() {
    local file="$group_dir/$1/$2/new/estimates.json"
    [[ -f $file ]] || { echo "missing $file: run the benchmark first" >&2; exit 1; }
    jq -r --arg f "$3" '(.slope // .mean) as $e | if $f == "point_estimate" then $e.point_estimate else $e.confidence_interval[$f] end' "$file"
}

# ratio A B: A / B to two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# verdict VALUE OP LIMIT: "met" or "missed".
verdict() { awk -v v="$1" -v l="$3" -v op="$2" 'BEGIN { ok = (op == "<=") ? v <= l : v >= l; print ok ? "met" : "missed" }'; }

# cell OPERATION CODEC: "12.3 ns (12.1–12.5)".
cell() {
    awk -v p="$(estimate "$1" "$2" point_estimate)" \
        -v lo="$(estimate "$1" "$2" lower_bound)" \
        -v hi="$(estimate "$1" "$2" upper_bound)" \
        'BEGIN { printf "%.1f ns (%.1f–%.1f)", p, lo, hi }'
}

echo "| operation | derived | hand-written | deku | derived / hand-written | deku / derived |"
echo "|---|---|---|---|---|---|"
for op in decode encode; do
    derived=$(estimate "$op" derived point_estimate)
    hand=$(estimate "$op" handwritten point_estimate)
    deku=$(estimate "$op" deku point_estimate)
    echo "| $op | $(cell "$op" derived) | $(cell "$op" handwritten) | $(cell "$op" deku) | $(ratio "$derived" "$hand")× | $(ratio "$deku" "$derived")× |"
done

decode_vs_hand=$(ratio "$(estimate decode derived point_estimate)" "$(estimate decode handwritten point_estimate)")
deku_vs_decode=$(ratio "$(estimate decode deku point_estimate)" "$(estimate decode derived point_estimate)")
encode_vs_hand=$(ratio "$(estimate encode derived point_estimate)" "$(estimate encode handwritten point_estimate)")
echo
echo "Targets: derived decode ≤ 1.10 × hand-written: $decode_vs_hand ($(verdict "$decode_vs_hand" "<=" 1.10));" \
    "deku decode ≥ 2.5 × derived: $deku_vs_decode ($(verdict "$deku_vs_decode" ">=" 2.5));" \
    "derived encode ≤ 1.10 × hand-written: $encode_vs_hand ($(verdict "$encode_vs_hand" "<=" 1.10))."
