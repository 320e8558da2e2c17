#!/usr/bin/env bash
# A PMPI tool ahead of adaptrace in the loader's order (issue #24): here
# preloaded into a program linked with libadaptrace, as a site's preloaded
# tool would be. Its MPI_Init calls PMPI_Init, so adaptrace's never runs:
# rank 0 says so in one line naming the tool and the fix (--stack), and
# every rank still writes an archive of what it recorded.
#
# usage: wrong_order.sh RUN_DIR MPIEXEC OTF2_PRINT TOOL PROGRAM
set -euo pipefail
run_dir=$1 mpiexec=$2 otf2_print=$3 tool=$4 program=$5
rm -rf "$run_dir"
mkdir -p "$run_dir/expect"
export ADAPTRACE_OUTPUT="$run_dir/archive" ADAPTRACE_SAMPLING=off COUNTING_TOOL_OUTPUT="$run_dir/expect"
"$(dirname "$0")/../run_with_watchdog.sh" 60 "$mpiexec" --oversubscribe -np 2 -x LD_PRELOAD="$tool" \
    "$program" "$run_dir/expect" </dev/null 2>"$run_dir/stderr.txt"
cat "$run_dir/stderr.txt" >&2
said=$(grep -c "^adaptrace: MPI_Init did not reach adaptrace: $tool comes ahead of libadaptrace.so" \
       "$run_dir/stderr.txt" || true)
if [ "$said" -ne 1 ]; then
    echo "wrong_order.sh: the wrong order was said $said times, expected once" >&2
    exit 1
fi
grep -q "put the tool behind adaptrace: adaptrace --stack $tool PROGRAM" "$run_dir/stderr.txt"
for rank in 0 1; do
    "$otf2_print" --silent -Werror "$run_dir/archive-rank$rank/traces.otf2"
done
