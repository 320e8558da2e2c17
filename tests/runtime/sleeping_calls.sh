#!/usr/bin/env bash
# Sleeping calls under every sampling clock (issue #11): traced, no
# sleeping call of sleeping_calls returns early, the program's own signal
# still cuts its sleep and its poll short, and samples are taken.
#
# usage: sleeping_calls.sh WORK_DIR LAUNCHER PROGRAM OTF2_PRINT MODE [PRELOAD]
#   MODE cpu: the default clock on perf cpu-clock events.
#   MODE cpu-no-perf: PRELOAD (deny_perf_events) refuses perf events;
#     adaptrace must say so once and fall back to CPU-time timers.
#   MODE wall: the wall clock's timer signals are held back during the
#     sleeping calls; the main thread, which sleeps ~1.9 s, must still be
#     sampled at its rate, at the sleeping calls (their samples are the
#     expirations caught up when each call returns).
set -uo pipefail
work=$1 launcher=$2 program=$3 otf2_print=$4 mode=$5 preload=${6:-}
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
case $mode in
cpu-no-perf)
    LD_PRELOAD="$preload" "$launcher" "$program" >out.txt 2>err.txt || fail "exit status $?"
    [ "$(grep -c 'perf cpu-clock events are not allowed here' err.txt)" -eq 1 ] ||
        fail "the fallback from perf events is not said exactly once" ;;
cpu)
    "$launcher" "$program" >out.txt 2>err.txt || fail "exit status $?"
    ! grep -q 'not allowed here' err.txt || fail "perf events refused on this machine (see stderr)" ;;
wall)
    ADAPTRACE_SAMPLING_CLOCK=wall "$launcher" "$program" >out.txt 2>err.txt || fail "exit status $?" ;;
*)
    fail "unknown mode $mode" ;;
esac
grep -qx 'nanosleep_eintr 0 poll_eintr 0 usleep_eintr 0 sleep_left 0 own_signal_sleep_cut 1 own_signal_poll_eintr 1' out.txt ||
    fail "sampling changed what sleeping calls return"
python3 - "$ADAPTRACE_OUTPUT/summary.json" <<'CHECK' || fail "no samples taken"
import json, sys
sys.exit(0 if json.load(open(sys.argv[1]))["samples_taken"] > 0 else 1)
CHECK
if [ "$mode" = wall ]; then
    "$otf2_print" -G "$ADAPTRACE_OUTPUT/traces.otf2" >definitions.txt 2>&1 || fail "otf2-print -G failed"
    "$otf2_print" "$ADAPTRACE_OUTPUT/traces.otf2" >events.txt 2>&1 || fail "otf2-print failed"
    python3 - definitions.txt events.txt "$ADAPTRACE_OUTPUT/summary.json" <<'CHECK' || fail "the sleeps were not sampled"
# The main thread's samples (location 0) whose leaf is a sleeping call of
# libc: at least 90 % of the ~1.9 s the program asks to sleep, at the
# initial rate (the timer's expirations are counted by the kernel, so load
# does not change them), each kept sample standing for 2^k taken ones
# after k halvings.
import json, re, sys
regions, parents = {}, {}
for line in open(sys.argv[1]):
    m = re.match(r'REGION\s+(\d+)\s+Name: "([^"]*)"', line)
    if m:
        regions[m.group(1)] = m.group(2)
    m = re.match(r'CALLING_CONTEXT\s+(\d+)\s+Region: "[^"]*" <(\d+)>', line)
    if m:
        parents[m.group(1)] = m.group(2)
sleeping = {"sleep", "usleep", "nanosleep", "__nanosleep", "poll", "__poll"}
at_sleep = 0
for line in open(sys.argv[2]):
    m = re.match(r'CALLING_CONTEXT_SAMPLE\s+0\s+\d+\s+Calling Context: "[^"]*" <(\d+)>', line)
    if m and regions[parents[m.group(1)]] in sleeping:
        at_sleep += 1
summary = json.load(open(sys.argv[3]))
main = [l for l in summary["per_location"] if l["thread"] == 0][0]
weighted = at_sleep * 2 ** main["halvings"]
wanted = 0.9 * 1.9 * summary["initial_rate_hz"]
print(f"samples at sleeping calls on the main thread: {at_sleep} kept, {weighted} weighted (want >= {wanted:.0f})")
sys.exit(0 if weighted >= wanted else 1)
CHECK
fi
echo "ok: $(cat out.txt)"
