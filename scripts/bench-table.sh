#!/usr/bin/env bash
# Prints the SQP codec benchmark as a markdown table, from the estimates criterion saved.
#
#   cargo bench -p query-specs --bench sqp_codec -- --measurement-time 3
#   scripts/bench-table.sh
#
# Two estimates per benchmark: criterion's slope (its mean when there is no slope) with the 95%
# confidence interval, and the fastest sample (the least disturbed by other processes, so the
# steadier of the two on a busy machine). The ratios are those the codec is held to: the
# derived codec within 10% of the hand-written one, and deku at least 2.5 times slower to decode.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v jq >/dev/null || { echo "bench-table.sh needs jq" >&2; exit 1; }

group_dir="${CARGO_TARGET_DIR:-target}/criterion/sqp_query_response"

# file OPERATION CODEC NAME: a file criterion saved for one benchmark.
file() {
    local path="$group_dir/$1/$2/new/$3"
    [[ -f $path ]] || { echo "missing $path: run the benchmark first" >&2; exit 1; }
    echo "$path"
}

# slope OPERATION CODEC FIELD: FIELD is point_estimate, lower_bound or upper_bound; in ns.
slope() {
    jq -r --arg f "$3" '(.slope // .mean) as $e
        | if $f == "point_estimate" then $e.point_estimate else $e.confidence_interval[$f] end' \
        "$(file "$1" "$2" estimates.json)"
}

# fastest OPERATION CODEC: the fastest sample's time per iteration, in ns.
fastest() {
    jq -r '[.times, .iters] | transpose | map(.[0] / .[1]) | min' "$(file "$1" "$2" sample.json)"
}

# ratio A B: A / B to two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# verdict VALUE OP LIMIT: "met" or "missed".
verdict() {
    awk -v v="$1" -v op="$2" -v l="$3" \
        'BEGIN { ok = (op == "<=") ? v <= l : v >= l; print ok ? "met" : "missed" }'
}

ns() { awk -v t="$1" 'BEGIN { printf "%.1f ns", t }'; }

echo "| operation | estimate | derived | hand-written | deku | derived / hand-written | deku / derived |"
echo "|---|---|---|---|---|---|---|"
targets=()
for estimate in slope fastest; do
    for op in decode encode; do
        declare -A t=()
        cells=()
        for codec in derived handwritten deku; do
            if [[ $estimate == slope ]]; then
                t[$codec]=$(slope "$op" "$codec" point_estimate)
                cells+=("$(ns "${t[$codec]}") ($(ns "$(slope "$op" "$codec" lower_bound)")–$(ns "$(slope "$op" "$codec" upper_bound)"))")
            else
                t[$codec]=$(fastest "$op" "$codec")
                cells+=("$(ns "${t[$codec]}")")
            fi
        done
        vs_hand=$(ratio "${t[derived]}" "${t[handwritten]}")
        deku_vs=$(ratio "${t[deku]}" "${t[derived]}")
        label=$([[ $estimate == slope ]] && echo "slope (95% CI)" || echo "fastest sample")
        echo "| $op | $label | ${cells[0]} | ${cells[1]} | ${cells[2]} | ${vs_hand}× | ${deku_vs}× |"
        targets+=("$op, $label: derived ≤ 1.10 × hand-written: $vs_hand ($(verdict "$vs_hand" "<=" 1.10))")
        if [[ $op == decode ]]; then
            targets+=("$op, $label: deku ≥ 2.5 × derived: $deku_vs ($(verdict "$deku_vs" ">=" 2.5))")
        fi
        unset t
    done
done
echo
echo "Targets:"
printf -- '- %s\n' "${targets[@]}"
