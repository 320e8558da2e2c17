#!/usr/bin/env bash
# A process in the middle of loader stress ends at once on SIGTERM (issue
# #9: a sampler stuck in the loader's lock with every signal blocked made
# the job deaf to the batch system).
#
# usage: loader_sigterm.sh WORK_DIR LAUNCHER LOADER_STRESS PLUGIN
set -uo pipefail
work=$1 launcher=$2 stress=$3 plugin=$4
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
export ADAPTRACE_OUTPUT="$work/archive"
"$launcher" "$stress" dlopen "$plugin" 60 >out.txt 2>err.txt &
run=$!
# The SIGTERM once the library's constructor has set its handler (bit 15
# of SigCgt), not before (a busy machine can take seconds to get there),
# then 2 s into the stress.
catches_sigterm() {
    local mask
    mask=$(awk '/^SigCgt:/ {print $2}' "/proc/$run/status" 2>/dev/null) || return 1
    [ -n "$mask" ] && (( 0x$mask & (1 << 14) ))
}
for _ in $(seq 600); do
    catches_sigterm && break
    sleep 0.1
done
catches_sigterm || { kill -KILL "$run"; echo "FAIL: no SIGTERM handler within 60 s"; exit 1; }
sleep 2
kill -TERM "$run"
for _ in $(seq 100); do
    kill -0 "$run" 2>/dev/null || break
    sleep 0.1
done
if kill -0 "$run" 2>/dev/null; then
    kill -KILL "$run"
    echo "FAIL: still running 10 s after SIGTERM"
    exit 1
fi
wait "$run"
status=$?
[ "$status" -eq 143 ] || { echo "FAIL: exit status $status, not 143 (SIGTERM)"; cat err.txt; exit 1; }
grep -q 'was ended by SIGTERM' err.txt || { echo "FAIL: the ending is not said"; cat err.txt; exit 1; }
echo "ok: ended by SIGTERM"
