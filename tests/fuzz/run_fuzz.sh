#!/usr/bin/env bash
# One fuzz target's test (tests/fuzz/CMakeLists.txt): every kept
# regression input first, each must end cleanly; then a run of SECONDS
# from the committed corpus with a fixed seed. A crash, a sanitizer
# report, a run over 10 s or over 1 GiB fails the test; its input is left
# in WORK_DIR (move it to the regressions directory once the reader is
# fixed).
#
# usage: run_fuzz.sh FUZZER CORPUS_DIR REGRESSIONS_DIR SECONDS WORK_DIR
set -euo pipefail
if [ $# -ne 5 ]; then
    echo "usage: $0 FUZZER CORPUS_DIR REGRESSIONS_DIR SECONDS WORK_DIR" >&2
    exit 2
fi
fuzzer=$1 corpus=$2 regressions=$3 seconds=$4 work=$5
# Memory is bounded by what the process holds (RSS), not by the size it
# asks malloc for: OTF2 asks for as much as a damaged count says (2^64
# bytes for an id map) and handles the refusal, as glibc refuses it too;
# ASan returns NULL for it as glibc does (allocator_may_return_null).
limits=(-timeout=10 -rss_limit_mb=1024 -malloc_limit_mb=1048576)
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
shopt -s nullglob
kept=("$regressions"/*)
if ((${#kept[@]})); then
    echo "regressions: ${#kept[@]} inputs"
    "$fuzzer" "${limits[@]}" -artifact_prefix="$work/artifacts/" "${kept[@]}"
fi
cp "$corpus"/* "$work/corpus/"
# One seed: the same inputs in the same order on every run, so that the
# test passes or fails alike everywhere (a faster machine only gets
# further); the long runs (docs/design-notes.md) explore with others.
"$fuzzer" "${limits[@]}" -seed=1 -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
    "$work/corpus" 2>&1 | grep -v '^#[0-9]' || true
found=("$work/artifacts"/*)
if ((${#found[@]})); then
    echo "FAIL: inputs that crashed, hung or took too much memory: ${found[*]}"
    exit 1
fi
