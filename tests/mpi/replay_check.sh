#!/usr/bin/env bash
# adaptrace-replay on a traced run (issue #25): the replay, traced with
# adaptrace too, must issue exactly the original's calls with traffic, in
# order, with their parameters, on every rank (replay_compare.py), and
# print one JSON object with both spans and the number of calls the
# skeleton holds. Timings are not checked (benchmarks/skeleton/replay.py).
#
# usage: replay_check.sh MPIEXEC LAUNCHER REPLAY REPORT ORIGINAL_ARCHIVE WORK_DIR RANKS [--communicators-as-world]
set -euo pipefail
mpiexec=$1 launcher=$2 replay=$3 report=$4 original=$5 work=$6 ranks=$7
shift 7
rm -rf "$work"
mkdir -p "$work"
status=0
ADAPTRACE_OUTPUT="$work/replay" ADAPTRACE_SAMPLING=off \
    "$(dirname "$0")/../run_with_watchdog.sh" 80 "$mpiexec" --oversubscribe -np "$ranks" "$launcher" "$replay" \
    "$original" </dev/null >"$work/replay.json" 2>"$work/replay.err" || status=$?
if [ "$status" -ne 0 ]; then
    echo "replay_check: the replay exited with $status:"
    cat "$work/replay.err"
    exit 1
fi
python3 "$(dirname "$0")/replay_compare.py" "$report" "$original" "$work/replay" "$@"
calls=$("$report" --skeleton --expand "$original" | grep -vc '^rank ')
python3 - "$work/replay.json" "$ranks" "$calls" <<'PYTHON'
import json, sys
lines = [line for line in open(sys.argv[1]) if line.strip()]
if len(lines) != 1:
    sys.exit(f"replay_check: {len(lines)} lines on stdout, expected one JSON object")
result = json.loads(lines[0])
ranks, calls = int(sys.argv[2]), int(sys.argv[3])
problems = []
if result["ranks"] != ranks:
    problems.append(f"ranks {result['ranks']}, expected {ranks}")
if result["calls"] != calls:
    problems.append(f"calls {result['calls']}, the skeleton holds {calls}")
if not result["original_span_s"] > 0 or not result["replay_span_s"] > 0:
    problems.append(f"spans {result['original_span_s']} and {result['replay_span_s']}")
if result["compute"] != "mean":
    problems.append(f"compute {result['compute']}, expected mean by default")
if problems:
    sys.exit("replay_check: " + "; ".join(problems))
print(f"replay_check: {lines[0].strip()}")
PYTHON
