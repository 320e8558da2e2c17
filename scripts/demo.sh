#!/usr/bin/env bash
# The main command of README.md: installs dependencies, builds adaptrace and
# traces the bundled demo MPI program on 4 ranks. Rank 0 prints the summary
# and the path of the OTF2 archive (open its traces.otf2 in Vampir); then
# adaptrace-report writes the run's profile beside it, as text and as one
# HTML page, and says where.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" --target adaptrace adaptrace_lib adaptrace-demo adaptrace-report
mkdir -p traces
output="traces/adaptrace-demo-$(date +%Y%m%d-%H%M%S)"
mpirun --oversubscribe -np 4 build/bin/adaptrace --output "$output" build/bin/adaptrace-demo
bash scripts/show_trace.sh "$output"
build/bin/adaptrace-report --html "$output.report.html" "$output" >"$output.report.txt"
echo "report: $output.report.txt and $output.report.html (open it in a browser)"
