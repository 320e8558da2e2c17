#!/usr/bin/env bash
# Runs one whole-run MPI test program traced, for the checks that follow.
#
# usage: run_traced.sh RUN_DIR MPIEXEC RANKS SAMPLING COMMAND...
#   Removes RUN_DIR and creates RUN_DIR/expect (where the test programs
#   write their expectations), then runs `MPIEXEC --oversubscribe -np RANKS
#   COMMAND...` with ADAPTRACE_OUTPUT=RUN_DIR/archive and
#   ADAPTRACE_SAMPLING=SAMPLING (on|off), its stderr copied to
#   RUN_DIR/stderr.txt. COMMAND is either the launcher and the program, or a
#   program linked with libadaptrace, and its arguments.
set -euo pipefail
if [ $# -lt 5 ]; then
    echo "usage: $0 RUN_DIR MPIEXEC RANKS on|off COMMAND..." >&2
    exit 2
fi
run_dir=$1 mpiexec=$2 ranks=$3 sampling=$4
shift 4
rm -rf "$run_dir"
mkdir -p "$run_dir/expect"
export ADAPTRACE_OUTPUT="$run_dir/archive" ADAPTRACE_SAMPLING="$sampling"
# A low rate keeps sampling cheap on oversubscribed cores; samples are not checked here.
export ADAPTRACE_SAMPLING_RATE=1kHz
# A stall shows every rank's stacks before the run is killed (ctest's
# TIMEOUT is 120 s; the stacks of five processes take up to ~40 s under load).
# What the run says on stderr is kept in RUN_DIR/stderr.txt for the checks.
status=0
"$(dirname "$0")/../run_with_watchdog.sh" 80 "$mpiexec" --oversubscribe -np "$ranks" "$@" </dev/null \
    2>"$run_dir/stderr.txt" || status=$?
cat "$run_dir/stderr.txt" >&2
[ "$status" -eq 0 ] || exit "$status"
for file in traces.otf2 traces.def summary.json; do
    if [ ! -f "$ADAPTRACE_OUTPUT/$file" ]; then
        echo "run_traced.sh: $ADAPTRACE_OUTPUT/$file is missing after the run" >&2
        exit 1
    fi
done
if ! grep -q "\"ranks\": $ranks," "$ADAPTRACE_OUTPUT/summary.json"; then
    echo "run_traced.sh: $ADAPTRACE_OUTPUT/summary.json does not say \"ranks\": $ranks" >&2
    exit 1
fi
# One per_location line for each location of each rank, adding up to the totals.
python3 - "$ADAPTRACE_OUTPUT/summary.json" "$ranks" <<'CHECK'
import json, sys
summary = json.load(open(sys.argv[1]))
lines = summary["per_location"]
problems = []
if len(lines) != summary["locations"]:
    problems.append(f"{len(lines)} per_location lines for {summary['locations']} locations")
if {line["rank"] for line in lines} != set(range(int(sys.argv[2]))):
    problems.append("per_location does not name every rank")
for field, total in (("halvings", "halvings"), ("samples_taken", "samples_taken"),
                     ("samples_kept", "samples_kept"), ("mpi_events", "mpi_events")):
    if sum(line[field] for line in lines) != summary[total]:
        problems.append(f"per_location {field} do not add up to {total}")
for problem in problems:
    print(f"run_traced.sh: {sys.argv[1]}: {problem}", file=sys.stderr)
sys.exit(1 if problems else 0)
CHECK
