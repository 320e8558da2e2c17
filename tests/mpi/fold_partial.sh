#!/usr/bin/env bash
# A rank without a skeleton at MPI_Finalize (issue #25): rank 1 traced with
# ADAPTRACE_SKELETON=off, rank 0 folding. The merge up the tree takes rank
# 1 as missing (not_folding) instead of losing every rank's skeleton:
# skeleton.adts (version 7) holds rank 0's calls exactly (MPI_Init,
# MPI_Comm_rank, MPI_Comm_size, ITERATIONS MPI_Send, MPI_Finalize) and
# names rank 1 missing; rank 0 says so in one line.
#
# usage: fold_partial.sh RUN_DIR MPIEXEC LAUNCHER FOLD_PROGRAM REPORT
set -euo pipefail
run_dir=$1 mpiexec=$2 launcher=$3 program=$4 report=$5
iterations=3000
rm -rf "$run_dir"
mkdir -p "$run_dir"
export ADAPTRACE_SAMPLING=off
"$(dirname "$0")/../run_with_watchdog.sh" 90 "$mpiexec" --oversubscribe \
    -np 1 -x ADAPTRACE_SKELETON=on "$launcher" --output "$run_dir/archive" "$program" $iterations : \
    -np 1 -x ADAPTRACE_SKELETON=off "$launcher" --output "$run_dir/archive" "$program" $iterations \
    </dev/null >"$run_dir/stdout.txt" 2>"$run_dir/stderr.txt"
failures=0
fail() {
    echo "fold_partial.sh: $*" >&2
    failures=$((failures + 1))
}
! grep -q "Sanitizer\|runtime error:" "$run_dir/stderr.txt" || fail "a sanitizer report: $(cat "$run_dir/stderr.txt")"
said=$(grep -c "^adaptrace: skeleton.adts lacks the skeletons of 1 of the 2 ranks (adaptrace-report --skeleton says which and why)$" \
       "$run_dir/stderr.txt" || true)
[ "$said" -eq 1 ] || fail "rank 0 said $said times that skeleton.adts lacks a rank, expected once: $(tail -5 "$run_dir/stderr.txt")"
"$report" --skeleton "$run_dir/archive" >"$run_dir/skeleton.txt" 2>>"$run_dir/report.err"
grep -qx "rank 0 thread 0: $((iterations + 4)) calls, 5 distinct, 1 rules, 5 symbols" "$run_dir/skeleton.txt" ||
    fail "rank 0's class is not its $((iterations + 4)) calls in one loop: $(grep -v '^ ' "$run_dir/skeleton.txt")"
[ "$(tail -1 "$run_dir/skeleton.txt")" = "rank 1: no skeleton (not_folding)" ] ||
    fail "the last line is not rank 1 missing: $(tail -1 "$run_dir/skeleton.txt")"
"$report" --skeleton --expand "$run_dir/archive" >"$run_dir/expanded.txt" 2>>"$run_dir/report.err"
[ "$(head -1 "$run_dir/expanded.txt")" = "rank 0 thread 0" ] && [ "$(grep -c '^rank ' "$run_dir/expanded.txt")" -eq 2 ] &&
    [ "$(tail -1 "$run_dir/expanded.txt")" = "rank 1: no skeleton (not_folding)" ] ||
    fail "--expand is not rank 0's thread, then rank 1 missing: $(grep '^rank ' "$run_dir/expanded.txt")"
grep -v '^rank ' "$run_dir/expanded.txt" | awk '{ print $1 }' | sort | uniq -c | tr -s ' ' >"$run_dir/calls.txt"
expected=" 1 MPI_Comm_rank
 1 MPI_Comm_size
 1 MPI_Finalize
 1 MPI_Init
 $iterations MPI_Send"
[ "$(cat "$run_dir/calls.txt")" = "$expected" ] || fail "the expanded calls are not rank 0's: $(cat "$run_dir/calls.txt")"
[ ! -s "$run_dir/report.err" ] || fail "adaptrace-report said: $(cat "$run_dir/report.err")"
if [ "$failures" -eq 0 ]; then
    echo "fold_partial.sh: rank 0's $((iterations + 4)) calls kept, rank 1 named missing (not_folding)"
fi
exit $((failures > 0))
