#!/usr/bin/env python3
"""Memory of a long run of MPI objects, untraced against traced, side by
side in one invocation (issue #31).

Runs adaptrace-bench-objects (objects_memory.c) on one rank: COUNT windows
and COUNT files made, used and freed one after the other, the process's
VmRSS read SAMPLES times along the way. First untraced, then traced with
sampling off and a buffer of BUFFER (small, so that the buffer is all in
use early and flushes, and what grows after that is adaptrace's own
bookkeeping). Each traced run's archive is then checked with
tests/mpi/objects_check.py: every window and file followed.

Prints one JSON object: per case the program's own JSON (rss_kib along the
run, rss_growth_kib from the first to the last reading, seconds), and
growth_after_warmup_kib, the growth from the second reading on (the first
interval includes the buffer being touched), with its ratio per 1,000
objects.

usage: objects_memory.py BUILD_DIR [--count N] [--samples N] [--buffer SIZE]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run(build, traced, count, samples, buffer, scratch):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    notes = os.path.join(scratch, "notes-traced" if traced else "notes-untraced")
    os.makedirs(notes, exist_ok=True)
    archive = os.path.join(scratch, "archive")
    command = ["mpirun", "--oversubscribe", "-np", "1"]
    if traced:
        env.update(ADAPTRACE_SAMPLING="off", ADAPTRACE_OUTPUT=archive, ADAPTRACE_BUFFER_SIZE=buffer,
                   ADAPTRACE_QUIET="on")
        command.append(os.path.join(build, "bin", "adaptrace"))
    command += [os.path.join(build, "bin", "adaptrace-bench-objects"), str(count), str(samples), scratch]
    if traced:
        command.append(notes)
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    measured = json.loads(next(line for line in result.stdout.splitlines() if line.startswith("{")))
    rss = measured["rss_kib"]
    measured["growth_after_warmup_kib"] = rss[-1] - rss[1]
    measured["growth_after_warmup_kib_per_1000_objects"] = round(
        (rss[-1] - rss[1]) / (2 * count * (len(rss) - 2) / (len(rss) - 1)) * 1000, 3)
    if traced:
        check = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "..", "..", "tests", "mpi", "objects_check.py"),
                                archive, notes, "1"], capture_output=True, text=True)
        measured["every_object_followed"] = check.returncode == 0
        if check.returncode != 0:
            sys.stderr.write(check.stderr)
        with open(os.path.join(archive, "summary.json")) as stream:
            summary = json.load(stream)
        measured["flushes"] = summary["flushes"]
        measured["not_traced"] = {key: summary[key] for key in
                                  ("mpi_windows_untracked", "mpi_files_untracked", "mpi_communicators_untracked")}
    return measured


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build")
    parser.add_argument("--count", type=int, default=100000)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--buffer", default="4M")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="adaptrace-bench-objects-") as scratch:
        untraced = run(args.build, False, args.count, args.samples, args.buffer, scratch)
        traced = run(args.build, True, args.count, args.samples, args.buffer, scratch)
    print(json.dumps({"count_each": args.count, "buffer": args.buffer, "untraced": untraced, "traced": traced,
                      "traced_minus_untraced_growth_kib":
                          traced["growth_after_warmup_kib"] - untraced["growth_after_warmup_kib"]}, indent=1))


if __name__ == "__main__":
    main()
