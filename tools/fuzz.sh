#!/usr/bin/env bash
# Coverage-guided fuzzing of the scenario and profile parsers with libFuzzer,
# on stable Rust (no cargo-fuzz, no nightly): the coverage instrumentation is
# LLVM's SanitizerCoverage, asked for with stable -C flags.
#
#   tools/fuzz.sh [TARGET] [RUNS] [-- LIBFUZZER OPTIONS...]
#
# TARGET: scenario_toml (default), scenario_json, profile_toml, or all.
# RUNS:   inputs to try per target (default 1000000; 0 = until stopped).
# The corpus starts from the repository's scenarios and profiles and grows in
# fuzz/corpus/TARGET (not committed); a crash is saved in fuzz/artifacts/ and
# ends the run with a non-zero status. `make fuzz` runs every target.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

target=${1:-scenario_toml}
runs=${2:-1000000}
shift $(( $# >= 2 ? 2 : $# ))
[[ ${1:-} == -- ]] && shift
extra=("$@")

export RUSTFLAGS="--cfg fuzzing -Cpasses=sancov-module \
 -Cllvm-args=-sanitizer-coverage-level=4 \
 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
 -Cllvm-args=-sanitizer-coverage-pc-table \
 -Cllvm-args=-sanitizer-coverage-trace-compares \
 -Cdebug-assertions -Coverflow-checks"
# With an explicit --target the flags reach the fuzzed code only, not the
# build scripts (which have no libFuzzer to link with).
host=$(rustc -vV | sed -n 's/^host: //p')
cargo build --release --quiet --bins --target "$host"
bin=target/$host/release

seed_corpus() {
    local dir=corpus/$1
    mkdir -p "$dir" artifacts/"$1"
    case $1 in
        scenario_toml) cp -n ../scenarios/*.toml "$dir"/ ;;
        profile_toml) cp -n ../crates/vmsched-core/profiles/*.toml "$dir"/ ;;
        scenario_json)
            for f in ../scenarios/*.toml; do
                python3 -c 'import json, sys, tomllib; print(json.dumps(tomllib.load(open(sys.argv[1], "rb"))))' \
                    "$f" >"$dir/$(basename "$f" .toml).json"
            done ;;
    esac
}

run_one() {
    seed_corpus "$1"
    echo "fuzzing $1: $runs inputs"
    "$bin/$1" "corpus/$1" -runs="$runs" -max_len=16384 -timeout=10 \
        -rss_limit_mb=2048 -artifact_prefix="artifacts/$1/" -print_final_stats=1 "${extra[@]}"
}

if [[ $target == all ]]; then
    for t in scenario_toml scenario_json profile_toml; do run_one "$t"; done
else
    run_one "$target"
fi
