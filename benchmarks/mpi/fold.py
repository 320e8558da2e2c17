#!/usr/bin/env python3
"""ADAPTRACE_ON_FULL=fold against flush and stop on an MPI-heavy run (issue
#25), side by side in one invocation: 2 ranks x ITERATIONS 8-byte messages
(tests/mpi/fold_sendrecv.c, rank 0 sends, rank 1 receives) with a 16 MiB
buffer and the default sampling, untraced and under each policy,
alternating case by case for ROUNDS rounds.

Per policy: the median wall time of the whole mpirun (and its ratio to
the untraced run's), and from the last round summary.json's flushes,
events kept, events_folded, events dropped, samples kept, the archive's
bytes (traces.otf2, traces.def, traces/), skeleton.adts' bytes, and
whether `otf2-print --silent -Werror` reads the archive.

Prints one JSON object.

usage: fold.py BUILD_DIR [--iterations N] [--rounds N] [--buffer SIZE]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from skeleton import archive_bytes

POLICIES = ("fold", "flush", "stop")


def run_once(build, policy, iterations, buffer, archive):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               ADAPTRACE_QUIET="on")
    program = [os.path.join(build, "bin", "mpi-fold-sendrecv"), str(iterations)]
    launcher = [] if policy is None else [os.path.join(build, "bin", "adaptrace"), "--buffer-size", buffer,
                                          "--on-full", policy, "--output", archive]
    command = ["mpirun", "--oversubscribe", "-np", "2"] + launcher + program
    started = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"fold.py: {' '.join(command)} failed with status {done.returncode}:\n{done.stderr}")
    return seconds


def describe(archive):
    summary = json.load(open(os.path.join(archive, "summary.json")))
    skeleton = os.path.join(archive, "skeleton.adts")
    readable = subprocess.run(["otf2-print", "--silent", "-Werror", os.path.join(archive, "traces.otf2")],
                              capture_output=True, check=False).returncode == 0
    return {
        "flushes": summary["flushes"],
        "events_kept": summary["mpi_events"],
        "events_folded": summary["events_folded"],
        "events_dropped": summary["events_dropped"],
        "locations_folded": summary["locations_folded"],
        "event_stops": summary["event_stops"],
        "samples_kept": summary["samples_kept"],
        "skeleton_calls": summary["skeleton_calls"],
        "archive_bytes": archive_bytes(archive),
        "skeleton_bytes": os.path.getsize(skeleton) if os.path.exists(skeleton) else 0,
        "otf2_print_werror_ok": readable,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--iterations", type=int, default=1000000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--buffer", default="16M")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="adaptrace-fold-bench-")
    try:
        times = {name: [] for name in ("untraced",) + POLICIES}
        last = {}
        for round_index in range(args.rounds):
            for policy in (None,) + POLICIES:
                name = policy or "untraced"
                archive = os.path.join(work, f"{name}-{round_index}")
                times[name].append(run_once(args.build, policy, args.iterations, args.buffer, archive))
                if policy is not None:
                    last[name] = describe(archive)
                    shutil.rmtree(archive)
        untraced = statistics.median(times["untraced"])
        result = {"iterations": args.iterations, "ranks": 2, "buffer": args.buffer, "rounds": args.rounds,
                  "untraced_wall_s": round(untraced, 3)}
        for policy in POLICIES:
            wall = statistics.median(times[policy])
            result[policy] = dict(last[policy], wall_s=round(wall, 3), wall_ratio_to_untraced=round(wall / untraced, 2))
        print(json.dumps(result, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
