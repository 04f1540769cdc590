#!/usr/bin/env bash
# Compares the codec benchmarks of an earlier commit with this tree: instructions per call
# (callgrind, over the fixed-count probes `sqp_probe` and `codec_probe`) and, with --rounds N,
# criterion's times, the two builds run in turn N times (before, after, before, after, ...).
#
#   scripts/codec-before-after.sh [--rounds N] REV
#
# REV is checked out in a temporary worktree with a target directory of its own (set
# BEFORE_TREE to a checkout of REV to reuse it and its build instead), and the `query-specs`
# benchmarks are built in both trees (`cargo bench -p query-specs --no-run`, the bench
# profile). The probes of this tree, and the capture reader they share, are copied into the
# earlier one where it lacks them, so both count the same functions; the codecs under them
# are each tree's own. The SA:MP, A2S and GameSpy packets come from the test vectors
# ($QUERY_VECTORS, by default ../shared/vectors beside the workspace). Needs valgrind and jq.
#
# Prints a markdown table: one row per codec, the instructions per call before and after and
# their ratio; with --rounds, a second table with criterion's after/before time ratio of every
# benchmark (the median over the rounds, with the lowest and highest). PROBE_ITERS (default
# 1000) sets the calls counted.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

rounds=0
if [[ ${1:-} == --rounds ]]; then
    rounds=$2
    shift 2
fi
rev=${1:?usage: scripts/codec-before-after.sh [--rounds N] REV}
for tool in valgrind jq git cargo; do
    command -v "$tool" >/dev/null || { echo "codec-before-after.sh needs $tool" >&2; exit 1; }
done

export QUERY_VECTORS="${QUERY_VECTORS:-$(cd "$root/.." && pwd)/shared/vectors}"
export PROBE_ITERS="${PROBE_ITERS:-1000}"
work=$(mktemp -d)
before=${BEFORE_TREE:-}
cleanup() {
    if [[ -z ${BEFORE_TREE:-} && -n $before ]]; then
        git -C "$root" worktree remove --force "$before" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
if [[ -z $before ]]; then
    before=$work/before
    git -C "$root" worktree add --quiet --detach "$before" "$rev"
fi
for probe in sqp_probe.rs codec_probe.rs sqp_full_fixture capture; do
    [[ -e $before/specs/benches/$probe ]] || cp -r "$root/specs/benches/$probe" "$before/specs/benches/"
done

# build TREE TARGET_DIR OUT: the benchmarks' executables, one "name path" a line, into OUT.
build() {
    (cd "$1" && CARGO_TARGET_DIR=$2 cargo bench -p query-specs --no-run --message-format=json) |
        jq -r 'select(.reason == "compiler-artifact" and .executable != null)
               | "\(.target.name) \(.executable)"' >"$3"
}
echo "building $rev in $before ..." >&2
build "$before" "${BEFORE_TARGET:-$before/target}" "$work/before.exes"
echo "building this tree ..." >&2
build "$root" "${CARGO_TARGET_DIR:-$root/target}" "$work/after.exes"

exe() { awk -v n="$2" '$1 == n { print $2 }' "$work/$1.exes"; }

# count SIDE BENCH TEST FUNCTION: instructions per call of BENCH::FUNCTION while TEST runs.
count() {
    local log=$work/callgrind.log
    valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect="$2::$4" \
        "$(exe "$1" "$2")" --exact "$3" --test-threads 1 >/dev/null 2>"$log"
    awk -v iters="$PROBE_ITERS" '/Collected :/ { printf "%.0f", $NF / iters }' "$log"
}

# BENCH TEST FUNCTION LABEL
probes=(
    "sqp_probe probe decode_derived|SQP 102-byte reply: decode"
    "sqp_probe probe encode_derived|SQP 102-byte reply: encode"
    "sqp_probe probe decode_handwritten|SQP 102-byte reply: hand-written decode (control)"
    "codec_probe sqp_full sqp_full_decode_derived|SQP reply with every chunk: decode"
    "codec_probe sqp_full sqp_full_encode_derived|SQP reply with every chunk: encode"
    "codec_probe sqp_full sqp_full_decode_handwritten|SQP reply with every chunk: hand-written decode (control)"
    "codec_probe samp samp_decode_derived|SA:MP d, 34 players: decode"
    "codec_probe samp samp_encode_derived|SA:MP d, 34 players: encode"
    "codec_probe samp samp_decode_handwritten|SA:MP d, 34 players: hand-written decode (control)"
    "codec_probe a2s_info a2s_decode_derived|A2S INFO: decode"
    "codec_probe a2s_info a2s_encode_derived|A2S INFO: encode"
    "codec_probe a2s_info a2s_info_decode_handwritten|A2S INFO: hand-written decode (control)"
    "codec_probe a2s_players a2s_decode_derived|A2S PLAYER, 30 players: decode"
    "codec_probe a2s_players a2s_encode_derived|A2S PLAYER, 30 players: encode"
    "codec_probe a2s_players a2s_players_decode_handwritten|A2S PLAYER, 30 players: hand-written decode (control)"
    "codec_probe gamespy1 gamespy1_decode_derived|GameSpy v1 UT99, 3 parts: reassembly and decode"
    "codec_probe gamespy1 gamespy1_encode_derived|GameSpy v1 UT99: encode of the pairs"
    "codec_probe gamespy1 gamespy1_decode_handwritten|GameSpy v1 UT99: hand-written reassembly and decode (control)"
)

echo "| codec | $rev (instructions/call) | now | now / $rev |"
echo "|---|---|---|---|"
for entry in "${probes[@]}"; do
    read -r bench test function <<<"${entry%%|*}"
    b=$(count before "$bench" "$test" "$function")
    a=$(count after "$bench" "$test" "$function")
    if [[ -z $b || -z $a || $b == 0 || $a == 0 ]]; then
        echo "| ${entry#*|} | not counted (the test vectors missing?) | | |"
        continue
    fi
    echo "| ${entry#*|} | $b | $a | $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }') |"
done

((rounds > 0)) || exit 0

benches=(sqp_codec sqp_full_codec a2s_codec samp_codec gamespy1_codec)
for ((r = 1; r <= rounds; r++)); do
    for side in before after; do
        for bench in "${benches[@]}"; do
            echo "round $r: $bench, $side ..." >&2
            CRITERION_HOME=$work/criterion-$side-$r "$(exe "$side" "$bench")" --bench \
                --warm-up-time 1 --measurement-time 3 >/dev/null 2>&1
        done
    done
done

# time SIDE ROUND ID: criterion's slope (its mean when there is no slope), in ns.
time_of() {
    jq -r '(.slope // .mean).point_estimate' "$work/criterion-$1-$2/$3/new/estimates.json"
}

echo
echo "| benchmark | now / $rev time, median of $rounds rounds | lowest | highest |"
echo "|---|---|---|---|"
(cd "$work/criterion-after-1" && find . -path '*/new/estimates.json' | sed 's|^\./||; s|/new/estimates.json$||' | sort) |
    while read -r id; do
        ratios=()
        for ((r = 1; r <= rounds; r++)); do
            [[ -f $work/criterion-before-$r/$id/new/estimates.json ]] || continue
            ratios+=("$(awk -v a="$(time_of after "$r" "$id")" -v b="$(time_of before "$r" "$id")" \
                'BEGIN { printf "%.4f", a / b }')")
        done
        ((${#ratios[@]} > 0)) || continue
        printf '%s\n' "${ratios[@]}" | sort -n | awk -v id="$id" '
            { v[NR] = $1 }
            END {
                m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
                printf "| %s | %.3f | %.3f | %.3f |\n", id, m, v[1], v[NR]
            }'
    done
