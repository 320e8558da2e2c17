#!/usr/bin/env bash
# A rank ended by a signal in the middle of one of its own folds (issue
# #25, `interrupted_fold`): the fold would end only after the handler, and
# its thread's tables are half changed, so the save keeps the events but
# not the skeleton, and says why. No timing can place a signal inside a
# fold of microseconds, so gdb does: it stops the program at the entry of
# its 10th fold (adt_skeleton_fold, after the thread flagged itself as
# folding) and delivers SIGTERM there. adaptrace-recover then recovers the
# events, writes no skeleton.adts, and summary.json counts the rank under
# interrupted_fold with that reason.
#
# usage: fold_interrupted.sh WORK_DIR MPIEXEC LAUNCHER PROGRAM RECOVER
#   PROGRAM: mpi-endings (its mode "wait": calls, then a receive that
#   never completes)
# Exits 77 (skipped) where gdb is missing or may not trace the program.
set -uo pipefail
if [ $# -ne 5 ]; then
    echo "usage: $0 WORK_DIR MPIEXEC LAUNCHER PROGRAM RECOVER" >&2
    exit 2
fi
work=$1 mpiexec=$2 launcher=$3 program=$4 recover=$5
rm -rf "$work"
mkdir -p "$work/expect"
archive=$work/archive
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
command -v gdb >/dev/null || { echo "SKIP: no gdb" >&2; exit 77; }
# The launcher's environment reaches the program through gdb; sampling
# off, so that no timer signal comes between the breakpoint and SIGTERM.
# Open MPI reports the rank that ended without MPI_Finalize and exits
# non-zero: the program's doing.
ADAPTRACE_SAMPLING=off "$(dirname "$0")/../run_with_watchdog.sh" 80 "$mpiexec" --oversubscribe -np 1 "$launcher" --buffer-size 16M --output "$archive" \
    gdb -batch -nx -ex 'set breakpoint pending on' -ex 'handle SIGTERM nostop noprint pass' \
    -ex 'break adt_skeleton_fold' -ex run -ex 'continue 9' -ex 'info breakpoints' -ex 'signal SIGTERM' \
    --args "$program" wait "$work/expect" </dev/null >"$work/run.txt" 2>&1
if grep -q "ptrace: Operation not permitted\|Could not trace the inferior\|Couldn't get registers" "$work/run.txt"; then
    echo "SKIP: gdb may not trace the program here" >&2
    exit 77
fi
grep -q "breakpoint already hit 10 times" "$work/run.txt" ||
    { cat "$work/run.txt" >&2; fail "gdb did not stop in the 10th adt_skeleton_fold"; }
[ -d "$archive.rescue" ] || { cat "$work/run.txt" >&2; fail "no rescue file $archive.rescue"; }
"$recover" "$archive" >"$work/recover.txt" 2>&1 || { cat "$work/recover.txt" >&2; fail "adaptrace-recover"; }
otf2-print --silent -Werror "$archive/traces.otf2" || fail "otf2-print -Werror"
[ ! -e "$archive/skeleton.adts" ] || fail "skeleton.adts written from an interrupted fold"
exec /usr/bin/python3 - "$archive/summary.json" <<'EOF'
import json
import sys

summary = json.load(open(sys.argv[1]))
skeleton = summary["ending_skeleton"]
ranks = skeleton["ranks_by_cause"]
want = {cause: int(cause == "interrupted_fold") for cause in ranks}
problems = []
if ranks != want:
    problems.append(f"ending_skeleton.ranks_by_cause {ranks}, expected {want}")
if skeleton["written"] or skeleton["problem"] != "1 rank were ended by a signal in the middle of a fold":
    problems.append(f"ending_skeleton {skeleton}")
# The calls made before the signal are recovered: MPI_Init, the ranks,
# and the rounds' calls up to the 10th fold.
if summary["mpi_events"] < 10:
    problems.append(f"{summary['mpi_events']} MPI events recovered")
for problem in problems:
    print(f"FAIL: {problem}", file=sys.stderr)
sys.exit(1 if problems else 0)
EOF
