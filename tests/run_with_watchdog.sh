#!/usr/bin/env bash
# Runs a whole-run test's command with a watchdog, so that a run that hangs
# leaves evidence instead of a bare ctest timeout.
#
# usage: run_with_watchdog.sh LIMIT_SECONDS COMMAND...
#   Runs COMMAND in its own session (stdin, stdout, stderr as given). If it
#   is still going after LIMIT_SECONDS, every thread of every process of
#   the session is shown with gdb on stderr (where gdb is installed), the
#   session is killed and the exit status is 124. Otherwise the exit
#   status is COMMAND's.
set -uo pipefail
if [ $# -lt 2 ]; then
    echo "usage: $0 LIMIT_SECONDS COMMAND..." >&2
    exit 2
fi
limit=$1
shift
# <&0: a background job of a script reads /dev/null otherwise; the
# command keeps the caller's standard input (online.behind writes to it).
setsid "$@" <&0 &
leader=$!
# Measured on the clock, not in polls: on a loaded machine each poll
# takes longer than its sleep, and counting polls outlasted ctest's own
# timeout, which then killed the run before any stack was shown.
deadline=$((SECONDS + limit))
while kill -0 "$leader" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do
    sleep 0.1
done
if kill -0 "$leader" 2>/dev/null; then
    {
        echo "run_with_watchdog.sh: still going after $limit s: $*"
        for pid in $(pgrep -s "$leader"); do
            echo "=== pid $pid: $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null)"
            if command -v gdb >/dev/null; then
                timeout 20 gdb -p "$pid" -batch -ex "thread apply all bt" 2>/dev/null | grep -E '^(Thread|#)'
            fi
        done
    } >&2
    kill -KILL -- "-$leader" 2>/dev/null
    wait "$leader"
    exit 124
fi
wait "$leader"
