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
