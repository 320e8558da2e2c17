#!/usr/bin/env python3
"""What folding adds to one traced MPI call (issue #25), for one build or
several side by side, in one invocation.

adaptrace-bench-self-calls (1 rank: 0-byte messages to itself, MPI_Irecv,
MPI_Send, MPI_Wait, and MPI_Comm_rank alone; sampling off) with
ADAPTRACE_SKELETON=on and =off:

1. Instructions per call of each wrapper (MPI_Comm_rank, MPI_Send,
   MPI_Irecv, MPI_Wait: their inclusive instruction counts under
   valgrind's callgrind, divided by their calls), folding on and off, and
   the difference: deterministic, the same on a loaded machine.
2. CPU time per call (the benchmark's own medians), folding on and off,
   alternating build by build for ROUNDS rounds; the medians and their
   difference (CPU time on a shared machine still varies by a few ns).

Prints one JSON object. Each build is a build directory (bin/, lib/).

usage: call_cost.py BUILD_DIR [OTHER_BUILD_DIR ...] [--rounds N] [--iterations N]
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


def environment(output, skeleton, preload=None):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               ADAPTRACE_SAMPLING="off", ADAPTRACE_OUTPUT=output, ADAPTRACE_QUIET="on",
               ADAPTRACE_SKELETON=skeleton)
    if preload:
        env["LD_PRELOAD"] = preload
    return env


def instructions(build, scratch, skeleton):
    """Instructions per call of each wrapper, under callgrind (a singleton
    MPI process: no mpirun, so that valgrind sees only the benchmark)."""
    out = os.path.join(scratch, f"callgrind-{skeleton}.out")
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                    os.path.join(build, "bin", "adaptrace-bench-self-calls"), str(CALLGRIND_ITERATIONS)],
                   env=environment(os.path.join(scratch, f"archive-{skeleton}"), skeleton,
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
    shutil.rmtree(os.path.join(scratch, f"archive-{skeleton}"), ignore_errors=True)
    return counts


def cpu_times(builds, scratch, rounds, iterations):
    results = {build: {"on": [], "off": []} for build in builds}
    for _ in range(rounds):
        for build in builds:
            for skeleton in ("on", "off"):
                output = os.path.join(scratch, "cpu")
                out = subprocess.run(["mpirun", "--oversubscribe", "-np", "1", os.path.join(build, "bin", "adaptrace"),
                                      os.path.join(build, "bin", "adaptrace-bench-self-calls"), str(iterations)],
                                     env=environment(output, skeleton), check=True, capture_output=True,
                                     text=True).stdout
                results[build][skeleton].append(json.loads(out.strip().splitlines()[-1])["ns_per_call"])
                shutil.rmtree(output, ignore_errors=True)
    medians = {}
    for build, by_skeleton in results.items():
        m = {skeleton: {loop: statistics.median(r[loop] for r in values) for loop in values[0]}
             for skeleton, values in by_skeleton.items()}
        m["added"] = {loop: round(m["on"][loop] - m["off"][loop], 2) for loop in m["on"]}
        medians[build] = m
    return medians


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("builds", nargs="+")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=50000)
    args = parser.parse_args(argv)
    for tool in ("valgrind", "callgrind_annotate", "mpirun"):
        if not shutil.which(tool):
            sys.exit(f"call_cost.py: {tool} not found")
    report = {"instructions_per_call": {}, "rounds": args.rounds, "iterations": args.iterations}
    with tempfile.TemporaryDirectory(prefix="adaptrace-call-cost-") as scratch:
        for build in args.builds:
            on, off = instructions(build, scratch, "on"), instructions(build, scratch, "off")
            report["instructions_per_call"][build] = {
                wrapper: {"on": round(on[wrapper], 1), "off": round(off[wrapper], 1),
                          "added": round(on[wrapper] - off[wrapper], 1)} for wrapper in WRAPPERS}
        report["cpu_ns_per_call"] = cpu_times(args.builds, scratch, args.rounds, args.iterations)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main(sys.argv[1:])
