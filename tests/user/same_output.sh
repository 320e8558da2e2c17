#!/usr/bin/env bash
# A program of the user API behaves as without adaptrace: its standard
# output traced (through the launcher) is the same as untraced, and both
# runs succeed.
#
# usage: same_output.sh RUN_DIR MPIEXEC RANKS LAUNCHER PROGRAM [ARGS...]
set -euo pipefail
if [ $# -lt 5 ]; then
    echo "usage: $0 RUN_DIR MPIEXEC RANKS LAUNCHER PROGRAM [ARGS...]" >&2
    exit 2
fi
run_dir=$1 mpiexec=$2 ranks=$3 launcher=$4
shift 4
rm -rf "$run_dir"
mkdir -p "$run_dir"
watchdog="$(dirname "$0")/../run_with_watchdog.sh"
"$watchdog" 80 "$mpiexec" --oversubscribe -np "$ranks" "$@" </dev/null >"$run_dir/untraced.txt"
ADAPTRACE_OUTPUT="$run_dir/archive" ADAPTRACE_SAMPLING_RATE=1kHz \
    "$watchdog" 80 "$mpiexec" --oversubscribe -np "$ranks" "$launcher" "$@" </dev/null >"$run_dir/traced.txt"
if [ ! -f "$run_dir/archive/traces.otf2" ]; then
    echo "same_output.sh: the traced run wrote no archive" >&2
    exit 1
fi
if [ ! -s "$run_dir/untraced.txt" ] || ! diff -u "$run_dir/untraced.txt" "$run_dir/traced.txt"; then
    echo "same_output.sh: the output traced differs from the output untraced (or is empty)" >&2
    exit 1
fi
