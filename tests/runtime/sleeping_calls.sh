#!/usr/bin/env bash
# Sleeping calls under the default sampling clock (issue #11): traced, no
# sleeping call of sleeping_calls returns early, and samples are taken.
#
# usage: sleeping_calls.sh WORK_DIR LAUNCHER PROGRAM [PRELOAD]
#   With PRELOAD (deny_perf_events), perf events are refused: adaptrace
#   must say so once and fall back to CPU-time timers, still without EINTR.
set -uo pipefail
work=$1 launcher=$2 program=$3 preload=${4:-}
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
export ADAPTRACE_OUTPUT="$work/archive"
unset ADAPTRACE_SAMPLING_CLOCK
fail() {
    echo "FAIL: $*"
    echo "--- stdout"; cat out.txt
    echo "--- stderr"; cat err.txt
    exit 1
}
if [ -n "$preload" ]; then
    LD_PRELOAD="$preload" "$launcher" "$program" >out.txt 2>err.txt || fail "exit status $?"
    [ "$(grep -c 'perf cpu-clock events are not allowed here' err.txt)" -eq 1 ] ||
        fail "the fallback from perf events is not said exactly once"
else
    "$launcher" "$program" >out.txt 2>err.txt || fail "exit status $?"
    ! grep -q 'not allowed here' err.txt || fail "perf events refused on this machine (see stderr)"
fi
grep -qx 'nanosleep_eintr 0 poll_eintr 0 usleep_eintr 0 sleep_left 0' out.txt ||
    fail "sampling changed what sleeping calls return"
python3 - "$ADAPTRACE_OUTPUT/summary.json" <<'CHECK' || fail "no samples taken"
import json, sys
sys.exit(0 if json.load(open(sys.argv[1]))["samples_taken"] > 0 else 1)
CHECK
echo "ok: $(cat out.txt)"
