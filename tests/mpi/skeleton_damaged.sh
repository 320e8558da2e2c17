#!/usr/bin/env bash
# adaptrace-report --skeleton on a damaged skeleton.adts (issue #25): a
# file cut short, one with a flipped byte, one of another format version
# and a missing one each give exactly one line on stderr saying what is
# wrong and a non-zero exit (2 for a damaged file, 1 for a missing one),
# and nothing on stdout.
#
# usage: skeleton_damaged.sh REPORT ARCHIVE WORK_DIR
set -euo pipefail
report=$1 archive=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
failures=0

# expect CASE STATUS PATTERN: the archive copy in $work/CASE.
expect() {
    local case=$1 status=$2 pattern=$3 got=0
    "$report" --skeleton "$work/$case" >"$work/$case.out" 2>"$work/$case.err" || got=$?
    local lines
    lines=$(wc -l <"$work/$case.err")
    if [ "$got" -ne "$status" ] || [ "$lines" -ne 1 ] || ! grep -Eq "$pattern" "$work/$case.err" ||
        [ -s "$work/$case.out" ]; then
        echo "$case: exit $got (expected $status), $lines lines on stderr, stdout $(wc -c <"$work/$case.out") bytes:"
        cat "$work/$case.err"
        failures=$((failures + 1))
    else
        echo "$case: $(cat "$work/$case.err")"
    fi
}

copy() {
    mkdir -p "$work/$1"
    cp "$archive/skeleton.adts" "$work/$1/skeleton.adts"
}

size=$(stat -c %s "$archive/skeleton.adts")
copy cut
truncate -s $((size / 2)) "$work/cut/skeleton.adts"
expect cut 2 "skeleton.adts: corrupt or cut short: checksum mismatch"

copy flipped
"$(dirname "$0")/flip_byte.sh" "$work/flipped/skeleton.adts" $((size / 3))
expect flipped 2 "skeleton.adts: corrupt or cut short: checksum mismatch"

copy version
printf '\x08' | dd of="$work/version/skeleton.adts" bs=1 seek=8 conv=notrunc status=none
expect version 2 "skeleton.adts: skeleton format version 8, this adaptrace reads versions 6 and 7"

# Files of version 1 (before the timing), 2 (before the clock rate), 3
# (before the parameters by rank), 4 and 5 (before the receives'
# wildcards; 5 a partial file): refused by their version.
copy version1
printf '\x01' | dd of="$work/version1/skeleton.adts" bs=1 seek=8 conv=notrunc status=none
expect version1 2 "skeleton.adts: skeleton format version 1, this adaptrace reads versions 6 and 7"
copy version2
printf '\x02' | dd of="$work/version2/skeleton.adts" bs=1 seek=8 conv=notrunc status=none
expect version2 2 "skeleton.adts: skeleton format version 2, this adaptrace reads versions 6 and 7"
copy version3
printf '\x03' | dd of="$work/version3/skeleton.adts" bs=1 seek=8 conv=notrunc status=none
expect version3 2 "skeleton.adts: skeleton format version 3, this adaptrace reads versions 6 and 7"
copy version4
printf '\x04' | dd of="$work/version4/skeleton.adts" bs=1 seek=8 conv=notrunc status=none
expect version4 2 "skeleton.adts: skeleton format version 4, this adaptrace reads versions 6 and 7"
copy version5
printf '\x05' | dd of="$work/version5/skeleton.adts" bs=1 seek=8 conv=notrunc status=none
expect version5 2 "skeleton.adts: skeleton format version 5, this adaptrace reads versions 6 and 7"

copy header
printf 'NOTASKEL' | dd of="$work/header/skeleton.adts" bs=1 seek=0 conv=notrunc status=none
expect header 2 "not a skeleton file"

mkdir -p "$work/missing"
expect missing 1 "cannot read .*skeleton.adts: No such file"

# The intact file reads.
"$report" --skeleton "$archive" >"$work/intact.out"
grep -q "^rank 3 thread 0: " "$work/intact.out" || { echo "intact: no rank 3"; failures=$((failures + 1)); }
# With its timing: the span and, per pair, both histograms.
grep -q "^  timing: span [0-9.]* s (rank 3" "$work/intact.out" || { echo "intact: no timing"; failures=$((failures + 1)); }
grep -q "^    MPI_Waitall#[0-9]* after MPI_Isend#[0-9]*: [0-9]* calls" "$work/intact.out" ||
    { echo "intact: no Waitall after Isend"; failures=$((failures + 1)); }
grep -q "^      compute: mean " "$work/intact.out" || { echo "intact: no compute histogram"; failures=$((failures + 1)); }
exit $((failures > 0))
