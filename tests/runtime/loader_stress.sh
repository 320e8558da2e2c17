#!/usr/bin/env bash
# Runs one loader stress program traced (issue #9) and checks what the user
# gets: the run ends, the archive is valid, the summary accounts for every
# sample and says how many were skipped and why.
#
# usage: loader_stress.sh WORK_DIR OTF2_PRINT LIMIT_SECONDS COMMAND...
#   COMMAND is the launcher and the program (or mpirun and both); it runs
#   in WORK_DIR with ADAPTRACE_OUTPUT=WORK_DIR/archive. A run still going
#   after LIMIT_SECONDS hung: tests/run_with_watchdog.sh shows every thread
#   of every process of the run with gdb, then the run is killed and the
#   test fails.
set -uo pipefail
if [ $# -lt 4 ]; then
    echo "usage: $0 WORK_DIR OTF2_PRINT LIMIT_SECONDS COMMAND..." >&2
    exit 2
fi
work=$1 otf2_print=$2 limit=$3
shift 3
tests=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
export ADAPTRACE_OUTPUT="$work/archive"

fail() {
    echo "FAIL: $*"
    echo "--- stdout"; cat out.txt
    echo "--- stderr"; tail -n 200 err.txt
    exit 1
}

"$tests/run_with_watchdog.sh" "$limit" "$@" >out.txt 2>err.txt
status=$?
[ "$status" -ne 124 ] || fail "hung (killed after $limit s; the stacks are at the end of stderr)"
[ "$status" -eq 0 ] || fail "exit status $status"
grep -q '^done' out.txt || fail "the program did not finish its work"
"$otf2_print" --silent -Werror "$ADAPTRACE_OUTPUT/traces.otf2" >otf2-print.txt 2>&1 ||
    fail "otf2-print rejects the archive: $(head -n 5 otf2-print.txt)"
grep -q 'skipped ([0-9]* while code was being unloaded or registered)' err.txt ||
    fail "the summary on stderr does not say why samples were skipped"
python3 - "$ADAPTRACE_OUTPUT/summary.json" <<'CHECK' || fail "summary.json does not account for the samples"
import json, sys
s = json.load(open(sys.argv[1]))
problems = []
if s["samples_taken"] == 0:
    problems.append("no samples taken")
if s["samples_taken"] != s["samples_kept"] + s["samples_removed"] + s["skipped_samples"] + s["samples_dropped"]:
    problems.append("taken != kept + removed + skipped + dropped")
if not 0 <= s["skipped_samples_code_changing"] <= s["skipped_samples"]:
    problems.append("skipped_samples_code_changing is not part of skipped_samples")
if "paths_cut" not in s:
    problems.append("no paths_cut")
for problem in problems:
    print(f"{sys.argv[1]}: {problem}", file=sys.stderr)
sys.exit(1 if problems else 0)
CHECK
echo "ok: $(grep -E 'samples:' err.txt | head -n 1)"
