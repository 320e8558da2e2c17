#!/usr/bin/env bash
# A folded run (ADAPTRACE_ON_FULL=fold) that ends without MPI_Finalize
# (ENDING no-finalize: exit, normal code; sigterm: every rank raises
# SIGTERM, a save in a signal handler; abort: rank 1 calls MPI_Abort, in
# normal code, and mpirun ends rank 0 by SIGTERM; segv: rank 1 faults and
# mpirun ends rank 0 by SIGTERM):
# each rank saves what it holds, adaptrace-recover makes the archive, and
# the archive marks where each location's events were folded, readable by
# `otf2-print --silent -Werror`, and holds skeleton.adts made from the
# skeletons the ranks saved (fold_check.py recovered says the rest).
#
# usage: fold_recover.sh WORK_DIR MPIEXEC LAUNCHER PROGRAM RECOVER REPORT ITERATIONS ENDING
set -uo pipefail
if [ $# -ne 8 ]; then
    echo "usage: $0 WORK_DIR MPIEXEC LAUNCHER PROGRAM RECOVER REPORT ITERATIONS no-finalize|sigterm|abort|segv" >&2
    exit 2
fi
work=$1 mpiexec=$2 launcher=$3 program=$4 recover=$5 report=$6 iterations=$7 ending=$8
rm -rf "$work"
mkdir -p "$work"
archive=$work/archive
# Open MPI reports ranks that return without MPI_Finalize (or end by a
# signal) and exits non-zero: the status is the program's doing, not
# adaptrace's.
ADAPTRACE_OUTPUT=$archive ADAPTRACE_SAMPLING_RATE=1kHz \
    "$mpiexec" --oversubscribe -np 2 "$launcher" --buffer-size 16M "$program" "$iterations" -1 "$ending" \
    </dev/null >"$work/run.txt" 2>&1
[ -d "$archive.rescue" ] || { cat "$work/run.txt" >&2; echo "FAIL: no rescue file $archive.rescue" >&2; exit 1; }
"$recover" "$archive" >"$work/recover.txt" 2>&1 || { cat "$work/recover.txt" >&2; echo "FAIL: adaptrace-recover" >&2; exit 1; }
# Every ending saves the skeletons: in normal code encoded, in an ending
# signal's handler as an image of their share, which adaptrace-recover
# encodes.
expected="events from then on are only in skeleton.adts"
case "$ending" in
    sigterm) check=recovered-signal ;;
    abort) check=recovered-abort ;;
    segv) check=recovered-segv ;;
    *) check=recovered ;;
esac
grep -qF "$expected" "$work/recover.txt" ||
    { cat "$work/recover.txt" >&2; echo "FAIL: the summary does not say: $expected" >&2; exit 1; }
otf2-print --silent -Werror "$archive/traces.otf2" || { echo "FAIL: otf2-print -Werror" >&2; exit 1; }
exec /usr/bin/python3 "$(dirname "$0")/fold_check.py" "$check" "$report" "$archive" "$iterations"
