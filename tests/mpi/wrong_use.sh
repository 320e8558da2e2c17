#!/usr/bin/env bash
# Whole-run checks of wrong use: one CASE per ctest test.
#
# usage: wrong_use.sh CASE WORK_DIR MPIEXEC LAUNCHER PROGRAM
#   CASE: unwritable-output | system | unwritable-spill | mpi-heavy
#         | preload-mpirun
#   PROGRAM is mpi-wrong-use (wrong_use.c). WORK_DIR is removed first and is
#   the working directory of the run, so that a stray default-named archive
#   (adaptrace-<date>-...) would show up in it.
set -uo pipefail
if [ $# -ne 5 ]; then
    echo "usage: $0 CASE WORK_DIR MPIEXEC LAUNCHER PROGRAM" >&2
    exit 2
fi
case=$1 work=$2 mpiexec=$3 launcher=$4 program=$5
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
archive="$work/archive"
export ADAPTRACE_OUTPUT="$archive"
# Sampling stays on (the child must not inherit a timer), at a rate that
# oversubscribed and sanitized runs keep up with.
export ADAPTRACE_SAMPLING=on ADAPTRACE_SAMPLING_RATE=1kHz

fail() {
    echo "FAIL ($case): $*"
    echo "--- stdout"; cat out.txt
    echo "--- stderr"; cat err.txt
    exit 1
}

# Runs the program on 2 ranks; sets $status.
run() {
    timeout 60 "$mpiexec" --oversubscribe -np 2 "$launcher" "$program" "$1" >out.txt 2>err.txt
    status=$?
    [ "$status" -ne 124 ] || fail "the run did not finish within 60 s"
}

no_stray_archive() {
    local stray
    stray=$(find . -maxdepth 1 -name 'adaptrace-*' -print)
    [ -z "$stray" ] || fail "a default-named archive appeared: $stray"
}

case "$case" in
unwritable-output)
    touch not-a-directory
    export ADAPTRACE_OUTPUT="$work/not-a-directory/archive"
    run plain
    [ "$status" -eq 0 ] || fail "exit status $status; a trace that cannot be written must not fail the program"
    grep -qF "$ADAPTRACE_OUTPUT" err.txt || fail "no message naming $ADAPTRACE_OUTPUT on stderr"
    no_stray_archive
    ;;
system)
    run system
    [ "$status" -eq 0 ] || fail "exit status $status"
    grep -qx "child-output-intact" out.txt || fail "the child's output is missing or altered"
    grep -qx "child status 7" out.txt || fail "the child's exit status did not reach the parent"
    [ -f "$archive/traces.otf2" ] || fail "the parent's archive $archive is missing"
    otf2-print --silent -Werror "$archive/traces.otf2" >/dev/null 2>otf2-print.txt ||
        fail "otf2-print rejects $archive: $(cat otf2-print.txt)"
    no_stray_archive
    extra=$(find "$work" -mindepth 1 -maxdepth 1 ! -name archive ! -name out.txt ! -name err.txt \
        ! -name otf2-print.txt -print)
    [ -z "$extra" ] || fail "the child left files behind: $extra"
    ;;
unwritable-spill | unwritable-spill-sampled)
    # MPI events alone overflow a 64K buffer, and the spill directory lies
    # under a regular file (deterministic, even for root): each rank says so
    # in exactly one line, even with --quiet on, the run goes on, and the
    # events it could not keep are counted under their own cause. Sampled,
    # the halvings free chunks after the first loss: the events must stay
    # stopped, or a Leave whose Enter was lost made the trace unwritable.
    touch not-a-directory
    sampling=off
    [ "$case" = unwritable-spill-sampled ] && sampling=on
    export ADAPTRACE_SPILL_DIRECTORY="$work/not-a-directory/spill" ADAPTRACE_BUFFER_SIZE=64K
    export ADAPTRACE_SAMPLING=$sampling ADAPTRACE_ON_FULL=flush ADAPTRACE_QUIET=on
    run many-calls
    [ "$status" -eq 0 ] || fail "exit status $status"
    expected="adaptrace: cannot create the spill file in '$ADAPTRACE_SPILL_DIRECTORY' (ADAPTRACE_SPILL_DIRECTORY):"
    expected+=" Not a directory; from now on events that do not fit the buffer are dropped and counted in the summary"
    [ "$(wc -l <err.txt)" -eq 2 ] || fail "not one line per rank on stderr"
    [ "$(grep -cxF "$expected" err.txt)" -eq 2 ] || fail "not the spill failure, once per rank, on stderr"
    otf2-print --silent -Werror "$archive/traces.otf2" >/dev/null 2>otf2-print.txt ||
        fail "otf2-print rejects $archive: $(cat otf2-print.txt)"
    python3 - "$archive/summary.json" <<'CHECK' || fail "summary.json does not count the events lost to the spill failure"
import json, sys
summary = json.load(open(sys.argv[1]))
# Each loss under its cause: on each rank's one location the first event
# that found no chunk (the spill would have freed one) stopped its events.
assert summary["event_stops_spill_failed"] == 2, summary
causes = summary["events_dropped_by_cause"]
assert sum(causes.values()) == summary["events_dropped"], causes
assert causes["no_chunk"] == 2 and causes["stopped"] > 0 and causes["too_large"] == 0, causes
assert sum(summary["samples_dropped_by_cause"].values()) == summary["samples_dropped"], summary
assert summary["flushes"] == 0, summary
CHECK
    no_stray_archive
    ;;
preload-mpirun)
    # The library preloaded into mpirun itself (issue #11): mpirun is the
    # measured process, its ranks take the measurement over in MPI_Init,
    # and mpirun writes no archive of its own.
    library="$(dirname "$launcher")/../lib/libadaptrace.so"
    preload="$library"
    asan=$(ldd "$library" | awk '/libasan/ {print $3}')
    [ -z "$asan" ] || preload="$asan:$library"
    LD_PRELOAD="$preload" timeout 60 "$mpiexec" --oversubscribe -np 2 "$program" plain >out.txt 2>err.txt
    status=$?
    [ "$status" -eq 0 ] || fail "exit status $status"
    grep -q '"ranks": 2,' "$archive/summary.json" || fail "the archive is not the two ranks' ($archive/summary.json)"
    python3 - "$archive/summary.json" <<'CHECK' || fail "no MPI events in the archive"
import json, sys
assert json.load(open(sys.argv[1]))["mpi_events"] > 0
CHECK
    ! grep -q 'no trace written' err.txt || fail "a process reports a failed write"
    no_stray_archive
    ;;
mpi-heavy)
    # MPI events alone overflow a 256K buffer many times (20000 barriers):
    # the flushes cannot be avoided, so the samples keep their floor of the
    # buffer instead of being halved away (before: 24 halvings to 2.4 Hz and
    # 0 samples kept), and the summary says why the flushes happened.
    export ADAPTRACE_BUFFER_SIZE=256K ADAPTRACE_ON_FULL=flush ADAPTRACE_SAMPLING_RATE=10kHz
    run many-calls
    [ "$status" -eq 0 ] || fail "exit status $status"
    grep -q '^adaptrace: flushes: MPI events alone filled the buffer' err.txt || fail "the flushes are not explained"
    otf2-print --silent -Werror "$archive/traces.otf2" >/dev/null 2>otf2-print.txt ||
        fail "otf2-print rejects $archive: $(cat otf2-print.txt)"
    python3 - "$archive/summary.json" <<'CHECK' || fail "summary.json: no profile kept beside the flushes"
import json, sys
summary = json.load(open(sys.argv[1]))
assert summary["flushes"] > 0, summary
assert summary["flushes_at_sample_floor"] > 0, summary
assert summary["first_flush_after_s"] > 0, summary
assert summary["samples_kept"] > 0, summary
CHECK
    no_stray_archive
    ;;
*)
    echo "$0: unknown CASE '$case' (accepted: unwritable-output, abort, no-finalize, system, unwritable-spill," \
         "mpi-heavy, segv, sigterm, preload-mpirun)" >&2
    exit 2
    ;;
esac
echo "PASS ($case)"
