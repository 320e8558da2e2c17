#!/usr/bin/env python3
"""A user region in a hot loop against an MPI event's append (issue #27),
in one invocation: adaptrace-bench-user (one rank, CALLS of each kind in
turns of blocks, medians over the blocks) untraced, then traced with
sampling off and on; ROUNDS times each, the median of the rounds.

What adaptrace adds to an MPI call is its Enter and Leave appends (with
sampling, the call's calling context too): the traced MPI_Comm_rank less
the untraced one. A region's begin/end pair is the same two appends (and
the same calling context). Prints one JSON object: per mode the ns per
region pair, per MPI call untraced and traced, the MPI call's appends
(traced - untraced), and the ratio pair / appends (the goal: at most 2).

usage: run.py BUILD_DIR [--calls N] [--rounds N]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile


def run(build, scratch, traced, sampling, calls):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               ADAPTRACE_OUTPUT=os.path.join(scratch, f"archive-{sampling}"), ADAPTRACE_SAMPLING=sampling,
               ADAPTRACE_BUFFER_SIZE="512M", ADAPTRACE_QUIET="on")
    program = [os.path.join(build, "bin", "adaptrace-bench-user"), str(calls)]
    launcher = [os.path.join(build, "bin", "adaptrace")] if traced else []
    result = subprocess.run(["mpirun", "--oversubscribe", "-np", "1"] + launcher + program, env=env,
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        sys.exit(f"run.py: the run failed ({result.returncode}):\n{result.stderr}")
    if traced:
        summary = json.load(open(os.path.join(scratch, f"archive-{sampling}", "summary.json")))
        if summary["flushes"] != 0 or summary["events_dropped"] != 0:
            sys.exit("run.py: the buffer overflowed (flushes or drops); lower --calls")
        shutil.rmtree(os.path.join(scratch, f"archive-{sampling}"))
    return json.loads(result.stdout.strip().splitlines()[-1])


def median_run(build, scratch, traced, sampling, calls, rounds):
    """The median of each figure over ROUNDS runs."""
    runs = [run(build, scratch, traced, sampling, calls) for _ in range(rounds)]
    return {key: statistics.median(r[key] for r in runs) for key in ("region_pair_ns", "mpi_call_ns")}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build")
    parser.add_argument("--calls", type=int, default=500000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="adaptrace-bench-user-")
    try:
        untraced = median_run(args.build, scratch, False, "off", args.calls, args.rounds)
        result = {"calls": args.calls, "rounds": args.rounds,
                  "untraced": {"region_pair_ns": untraced["region_pair_ns"],
                               "mpi_call_ns": untraced["mpi_call_ns"]}}
        for sampling in ("off", "on"):
            traced = median_run(args.build, scratch, True, sampling, args.calls, args.rounds)
            appends = traced["mpi_call_ns"] - untraced["mpi_call_ns"]
            result[f"sampling_{sampling}"] = {
                "region_pair_ns": traced["region_pair_ns"],
                "mpi_call_ns": traced["mpi_call_ns"],
                "mpi_event_appends_ns": round(appends, 2),
                "region_pair_per_mpi_event_appends": round(traced["region_pair_ns"] / appends, 3)
                if appends > 0 else None,
            }
        print(json.dumps(result, indent=2))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
