#!/usr/bin/env bash
# Whole-run tests of the endings of issue #10: a traced MPI program ends
# without MPI_Finalize in one of several ways; each process saves its data,
# adaptrace-recover makes the archive, and the archive holds every MPI call
# each rank made before the ending.
#
# usage: endings.sh CASE RANKS WORK_DIR MPIEXEC LAUNCHER PROGRAM RECOVER CHECK API
#   CASE: term        SIGTERM to mpirun (what `timeout -s TERM mpirun` and a
#                     batch system's time limit do); mpirun passes it on
#         int         SIGINT to every rank
#         segv        rank 1 dies of SIGSEGV while the others wait
#         abort       rank 1 calls MPI_Abort while the others wait
#         no-finalize every rank returns from main without MPI_Finalize
#         snapshot    every rank waits forever; ADAPTRACE_SNAPSHOT_SIGNAL
#                     (SIGUSR2) makes each save a snapshot, then SIGKILL
#         teardown    SIGTERM to every rank while the last one is stopped
#                     (a rank slow to save): the others must stay until it
#                     has saved, since the first rank to end makes mpirun
#                     SIGKILL the rest (Open MPI 4.1's teardown, whose
#                     race made this test's segv case flaky)
#   PROGRAM is mpi-endings or mpi-endings-fortran; CHECK is
#   adaptrace-mpi-trace-check, API mpi-events/mpi.api. The exit status must
#   be the one of the same run untraced.
set -uo pipefail
if [ $# -ne 9 ]; then
    echo "usage: $0 CASE RANKS WORK_DIR MPIEXEC LAUNCHER PROGRAM RECOVER CHECK API" >&2
    exit 2
fi
case=$1 ranks=$2 work=$3 mpiexec=$4 launcher=$5 program=$6 recover=$7 check=$8 api=$9
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
archive=$work/archive

fail() {
    echo "FAIL ($case): $*" >&2
    for file in *.txt; do
        echo "== $file" >&2
        tail -n 20 "$file" >&2
    done
    exit 1
}

case $case in
term | int | snapshot | teardown) mode=wait ;;
segv | abort | no-finalize) mode=$case ;;
*)
    echo "$0: unknown case '$case'" >&2
    exit 2
    ;;
esac

# wait_until SECONDS COMMAND...: polls COMMAND every 0.1 s until it
# succeeds (0) or SECONDS have passed (1).
wait_until() {
    local tenths=$(($1 * 10))
    shift
    for _ in $(seq "$tenths"); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}

# Every rank printed its line in OUT: its expectation log is written, and
# it is where the ending happens.
ranks_ready() {
    [ "$(grep -c '^rank ' "$1")" -ge "$ranks" ]
}

# Every rank's expectation log is in DIR: with abort (and no-finalize),
# the rank that ends the job waits for them before MPI_Abort (or mpirun,
# once a rank returned without MPI_Finalize) kills every rank at once,
# which may be before another rank's line reaches OUT.
logs_written() {
    [ "$(find "$1" -name 'rank.*.txt' | wc -l)" -ge "$ranks" ]
}

# Every rank's rescue file is there (written by a snapshot).
rescue_files_written() {
    [ "$(find "$archive.rescue" -name 'rank-*.adtr' 2>/dev/null | wc -l)" -ge "$ranks" ]
}

# rank_pid MPIRUN RANK: the pid of world rank RANK, a child of mpirun.
rank_pid() {
    local pid
    for pid in $(pgrep -P "$1"); do
        if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2"; then
            echo "$pid"
            return 0
        fi
    done
    return 1
}

# running PID: the process runs (ended and not yet reaped is not running).
running() {
    local state
    state=$(ps -o stat= -p "$1" 2>/dev/null) && [ "${state:0:1}" != Z ]
}

# run NAME traced|untraced: the program under mpirun, ended as CASE says;
# the exit status of mpirun in $status.
run() {
    local name=$1 how=$2
    local -a command=("$program" "$mode" "$work/expect-$name")
    [ "$how" = traced ] && command=("$launcher" "${command[@]}")
    mkdir -p "$work/expect-$name"
    "$mpiexec" --oversubscribe -np "$ranks" "${command[@]}" >"$name-out.txt" 2>"$name-err.txt" </dev/null &
    local mpirun=$!
    local ready=(ranks_ready "$name-out.txt")
    [ "$case" = abort ] || [ "$case" = no-finalize ] && ready=(logs_written "$work/expect-$name")
    wait_until 60 "${ready[@]}" || { kill -KILL "$mpirun"; fail "$name: the ranks did not get ready"; }
    case $case in
    term) kill -TERM "$mpirun" ;;
    int) pkill -INT -P "$mpirun" ;;
    snapshot)
        if [ "$how" = traced ]; then
            pkill -USR2 -P "$mpirun"
            wait_until 30 rescue_files_written || fail "$name: not every rank saved a snapshot"
        fi
        pkill -KILL -P "$mpirun"
        ;;
    teardown)
        local slow first
        slow=$(rank_pid "$mpirun" $((ranks - 1))) || fail "$name: no process of rank $((ranks - 1))"
        first=$(rank_pid "$mpirun" 0) || fail "$name: no process of rank 0"
        kill -STOP "$slow"
        pkill -TERM -P "$mpirun"
        if [ "$how" = traced ]; then
            wait_until 30 test -e "$archive.rescue/rank-0.adtr" || fail "$name: rank 0 did not save on SIGTERM"
            sleep 0.5
            running "$first" ||
                fail "$name: rank 0 ended before rank $((ranks - 1)) saved (mpirun would SIGKILL that save)"
        fi
        # From here mpirun ends the job its own way once a rank has ended.
        kill -CONT "$slow"
        ;;
    esac
    # At most 60 s more (ctest's TIMEOUT is 150 s for both runs).
    for _ in $(seq 600); do
        kill -0 "$mpirun" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$mpirun" 2>/dev/null && { kill -KILL "$mpirun"; fail "$name: mpirun did not end"; }
    wait "$mpirun"
    status=$?
}

run untraced untraced
untraced=$status
export ADAPTRACE_OUTPUT=$archive ADAPTRACE_SAMPLING=on ADAPTRACE_SAMPLING_RATE=1kHz ADAPTRACE_SNAPSHOT_SIGNAL=USR2
run traced traced
traced=$status
unset ADAPTRACE_OUTPUT ADAPTRACE_SAMPLING ADAPTRACE_SAMPLING_RATE ADAPTRACE_SNAPSHOT_SIGNAL
[ "$traced" -eq "$untraced" ] || fail "exit status $traced traced, $untraced untraced"

lines=$(grep -c '^adaptrace: ' traced-err.txt)
[ "$lines" -eq 1 ] || fail "$lines lines from adaptrace for the run, not 1"
grep -q "saved in $archive.rescue; after the job, run: adaptrace-recover $archive" traced-err.txt ||
    fail "the line does not say where the data is and how to recover it"
[ ! -e "$archive" ] || fail "$archive exists before the recovery"

"$recover" "$archive" >recover-out.txt 2>recover-err.txt || fail "adaptrace-recover failed"
otf2-print --silent -Werror "$archive/traces.otf2" >otf2-print.txt 2>&1 || fail "otf2-print rejects the archive"
"$check" --archive "$archive" --expect "$work/expect-traced" --api "$api" \
    --gtest_filter='TraceCheck.OneLocation*:TraceCheck.RegionsNest*:TraceCheck.EveryCallOnItsRankInOrder:TraceCheck.EverySend*' \
    >check.txt 2>&1 || fail "the recovered archive does not hold every call of every rank"

# How the run ended, and the MPI calls still open then: every waiting
# rank's MPI_Recv, the aborting rank's MPI_Abort; the faulting rank and
# ranks that returned have none.
case $case in
term | teardown) how=SIGTERM open=$ranks ;;
int) how=SIGINT open=$ranks ;;
segv) how=SIGSEGV open=$((ranks - 1)) ;;
abort) how=MPI_Abort open=$ranks ;;
no-finalize) how="exit without MPI_Finalize" open=0 ;;
snapshot) how="snapshot (SIGUSR2)" open=$ranks ;;
esac
python3 - "$archive/summary.json" "$ranks" "$how" "$open" <<'CHECK' || fail "summary.json does not say how the run ended"
import json, sys
summary = json.load(open(sys.argv[1]))
ending = summary["ending"]
ranks = int(sys.argv[2])
problems = []
if ending["how"] != sys.argv[3]:
    problems.append(f"ending.how is {ending['how']!r}, not {sys.argv[3]!r}")
if ending["regions_closed"] != int(sys.argv[4]):
    problems.append(f"{ending['regions_closed']} regions closed at the ending, not {sys.argv[4]}")
if ending["messages_unmatched"] != 0:
    problems.append(f"{ending['messages_unmatched']} messages unmatched; every message sent was received")
if ending["ranks_saved"] != ranks or summary["ranks"] != ranks:
    problems.append(f"{ending['ranks_saved']} of {summary['ranks']} ranks saved, not {ranks}")
if summary["samples_kept"] <= 0:
    problems.append("no sample kept")
for problem in problems:
    print(problem, file=sys.stderr)
sys.exit(1 if problems else 0)
CHECK
[ ! -e "$archive.rescue" ] || fail "the rescue files are left after the recovery"
echo "PASS ($case, $ranks ranks)"
