#!/usr/bin/env bash
# adaptrace-replay on bad input (issue #25): the wrong number of ranks, a
# missing, cut, damaged skeleton or one of another format version (1,
# before the timing; 5, before the wildcards), and a call replay cannot
# issue (a cancelled request) each give exactly one line from
# adaptrace-replay naming the problem, a non-zero exit and nothing on
# stdout; and nothing half-done: the refused replay, traced, made no MPI
# call but MPI_Init and MPI_Finalize on any rank.
#
# usage: replay_bad_input.sh MPIEXEC LAUNCHER REPLAY REPORT ARCHIVE(4 ranks) REFUSED_ARCHIVE(2 ranks) WORK_DIR
set -euo pipefail
mpiexec=$1 launcher=$2 replay=$3 report=$4 archive=$5 refused=$6 work=$7
rm -rf "$work"
mkdir -p "$work"
failures=0

# expect CASE RANKS ARCHIVE PATTERN: replay ARCHIVE on RANKS ranks, traced
# into $work/CASE.trace.
expect() {
    local case=$1 ranks=$2 target=$3 pattern=$4 got=0
    ADAPTRACE_OUTPUT="$work/$case.trace" ADAPTRACE_SAMPLING=off \
        "$(dirname "$0")/../run_with_watchdog.sh" 60 "$mpiexec" --oversubscribe -np "$ranks" "$launcher" "$replay" \
        "$target" </dev/null >"$work/$case.out" 2>"$work/$case.err" || got=$?
    grep '^adaptrace-replay:' "$work/$case.err" >"$work/$case.lines" || true
    local lines
    lines=$(wc -l <"$work/$case.lines")
    if [ "$got" -eq 0 ] || [ "$lines" -ne 1 ] || ! grep -Eq "$pattern" "$work/$case.lines" || [ -s "$work/$case.out" ]; then
        echo "$case: exit $got, $lines lines from adaptrace-replay, stdout $(wc -c <"$work/$case.out") bytes:"
        cat "$work/$case.err"
        failures=$((failures + 1))
        return
    fi
    echo "$case: $(cat "$work/$case.lines")"
    # Nothing half-done: each rank of the traced replay called MPI_Init and MPI_Finalize only.
    local calls
    calls=$("$report" --skeleton --expand "$work/$case.trace" | grep -v '^rank ' | sort | uniq -c | tr -s ' ' | tr '\n' ';')
    if [ "$calls" != " $ranks MPI_Finalize; $ranks MPI_Init;" ]; then
        echo "$case: the refused replay made other calls: $calls"
        failures=$((failures + 1))
    fi
}

copy() {
    mkdir -p "$work/$1"
    cp "$archive/skeleton.adts" "$work/$1/skeleton.adts"
}

expect ranks 2 "$archive" "adaptrace-replay: the skeleton holds 4 ranks, this run has 2: run it with mpirun -np 4"

mkdir -p "$work/missing"
expect missing 2 "$work/missing" "adaptrace-replay: cannot open .*/missing/skeleton.adts: No such file"

size=$(stat -c %s "$archive/skeleton.adts")
copy cut
truncate -s $((size * 2 / 3)) "$work/cut/skeleton.adts"
expect cut 4 "$work/cut" "skeleton.adts: corrupt or cut short: checksum mismatch"

copy flipped
"$(dirname "$0")/flip_byte.sh" "$work/flipped/skeleton.adts" $((size / 2))
expect flipped 4 "$work/flipped" "skeleton.adts: corrupt or cut short: checksum mismatch"

# The oldest and the newest version refused: replay says what the reader
# says, by one path for every version; the reader's refusal of each of
# versions 1 to 5 is SkeletonFile.TheVersionsWithoutTimingClockRateParametersOrWildcardsAreNamed's
# (tests/skeleton/file_test.cpp), without mpirun's ~1 s a case.
copy version1
printf '\x01' | dd of="$work/version1/skeleton.adts" bs=1 seek=8 conv=notrunc status=none
expect version1 4 "$work/version1" "skeleton.adts: skeleton format version 1, this adaptrace reads versions 6 and 7"

copy version5
printf '\x05' | dd of="$work/version5/skeleton.adts" bs=1 seek=8 conv=notrunc status=none
expect version5 4 "$work/version5" "skeleton.adts: skeleton format version 5, this adaptrace reads versions 6 and 7"

expect unsupported 2 "$refused" "adaptrace-replay: rank 0: cannot replay MPI_Wait: a cancelled request"

exit $((failures > 0))
