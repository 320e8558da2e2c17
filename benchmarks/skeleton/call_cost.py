#!/usr/bin/env python3
"""What one setting adds to one traced MPI call, for one build or several
side by side, in one invocation: by default folding (issue #25,
ADAPTRACE_SKELETON=on against off); with --compare ADAPTRACE_ANALYZERS 1 0
the stream to an analyzer (issue #28: its records, chunk sends and
progress on the wrapper's path).

adaptrace-bench-self-calls (1 rank: 0-byte messages to itself, MPI_Irecv,
MPI_Send, MPI_Wait, and MPI_Comm_rank alone; sampling off) with the
variable at its two values:

1. Instructions per call of each wrapper (MPI_Comm_rank, MPI_Send,
   MPI_Irecv, MPI_Wait: their inclusive instruction counts under
   valgrind's callgrind, divided by their calls), at each value, and the
   difference: deterministic, the same on a loaded machine (an analyzer,
   spawned from the singleton, runs outside valgrind).
2. CPU time per call (the benchmark's own medians), at each value,
   alternating build by build for ROUNDS rounds; the medians and their
   difference (CPU time on a shared machine still varies by a few ns).

Prints one JSON object, "added" being the first value's figure less the
second's. Each build is a build directory (bin/, lib/).

usage: call_cost.py BUILD_DIR [OTHER_BUILD_DIR ...] [--rounds N] [--iterations N]
                    [--compare VARIABLE WITH WITHOUT]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

WRAPPERS = ("MPI_Comm_rank", "MPI_Send", "MPI_Irecv", "MPI_Wait")
# Loops of the benchmark, each of REPETITIONS (self_calls.c) runs.
REPETITIONS = 7
CALLGRIND_ITERATIONS = 2000


def environment(output, setting, preload=None):
    """setting: (variable, value)."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               ADAPTRACE_SAMPLING="off", ADAPTRACE_OUTPUT=output, ADAPTRACE_QUIET="on")
    env[setting[0]] = setting[1]
    if preload:
        env["LD_PRELOAD"] = preload
    return env


def instructions(build, scratch, setting):
    """Instructions per call of each wrapper, under callgrind (a singleton
    MPI process: no mpirun, so that valgrind sees only the benchmark)."""
    value = setting[1]
    out = os.path.join(scratch, f"callgrind-{value}.out")
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                    os.path.join(build, "bin", "adaptrace-bench-self-calls"), str(CALLGRIND_ITERATIONS)],
                   env=environment(os.path.join(scratch, f"archive-{value}"), setting,
                                   os.path.join(build, "lib", "libadaptrace.so")),
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", out], check=True,
                               capture_output=True, text=True).stdout
    calls = CALLGRIND_ITERATIONS * REPETITIONS
    counts = {}
    for line in annotated.splitlines():
        fields = line.split()
        for wrapper in WRAPPERS:
            if len(fields) >= 3 and fields[-2] == f"???:{wrapper}" and "libadaptrace.so" in fields[-1]:
                counts[wrapper] = int(fields[0].replace(",", "")) / calls
    missing = [w for w in WRAPPERS if w not in counts]
    if missing:
        sys.exit(f"call_cost.py: no callgrind count for {missing} in {build}")
    shutil.rmtree(os.path.join(scratch, f"archive-{value}"), ignore_errors=True)
    return counts


def cpu_times(builds, scratch, rounds, iterations, variable, values):
    results = {build: {value: [] for value in values} for build in builds}
    for _ in range(rounds):
        for build in builds:
            for value in values:
                output = os.path.join(scratch, "cpu")
                out = subprocess.run(["mpirun", "--oversubscribe", "-np", "1", os.path.join(build, "bin", "adaptrace"),
                                      os.path.join(build, "bin", "adaptrace-bench-self-calls"), str(iterations)],
                                     env=environment(output, (variable, value)), check=True, capture_output=True,
                                     text=True).stdout
                results[build][value].append(json.loads(out.strip().splitlines()[-1])["ns_per_call"])
                shutil.rmtree(output, ignore_errors=True)
    medians = {}
    for build, by_value in results.items():
        m = {value: {loop: statistics.median(r[loop] for r in runs) for loop in runs[0]}
             for value, runs in by_value.items()}
        m["added"] = {loop: round(m[values[0]][loop] - m[values[1]][loop], 2) for loop in m[values[0]]}
        medians[build] = m
    return medians


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("builds", nargs="+")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=50000)
    parser.add_argument("--compare", nargs=3, metavar=("VARIABLE", "WITH", "WITHOUT"),
                        default=("ADAPTRACE_SKELETON", "on", "off"))
    args = parser.parse_args(argv)
    variable, values = args.compare[0], args.compare[1:]
    if values[0] == values[1]:
        sys.exit(f"call_cost.py: --compare {variable} needs two different values")
    for tool in ("valgrind", "callgrind_annotate", "mpirun"):
        if not shutil.which(tool):
            sys.exit(f"call_cost.py: {tool} not found")
    report = {"compared": {"variable": variable, "with": values[0], "without": values[1]},
              "instructions_per_call": {}, "rounds": args.rounds, "iterations": args.iterations}
    with tempfile.TemporaryDirectory(prefix="adaptrace-call-cost-") as scratch:
        for build in args.builds:
            with_it, without = (instructions(build, scratch, (variable, value)) for value in values)
            report["instructions_per_call"][build] = {
                wrapper: {values[0]: round(with_it[wrapper], 1), values[1]: round(without[wrapper], 1),
                          "added": round(with_it[wrapper] - without[wrapper], 1)} for wrapper in WRAPPERS}
        report["cpu_ns_per_call"] = cpu_times(args.builds, scratch, args.rounds, args.iterations, variable, values)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main(sys.argv[1:])
