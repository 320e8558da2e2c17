#!/usr/bin/env python3
"""Reading speed of adaptrace-report against otf2-print, in one run.

Writes one synthetic archive of a sampled MPI run (synthetic_archive:
RANKS ranks × STEPS steps × 18 events; the defaults make 10.08 million
events), then times, ROUNDS times and alternating, `otf2-print --silent`
and `adaptrace-report --json` (the whole command: definitions, the
reading pass, the matching and the JSON) on it. Both read every event
through the OTF2 reader; otf2-print --silent decodes them and prints
nothing.

Prints one JSON object: the archive's events and size, and for each tool
the median wall-clock and CPU seconds (user + system of the process;
the machine may be shared, CPU time is what it cost) and the events per
second of each; ratio_* is the report's rate over otf2-print's (above 1:
the report reads faster). The CPU seconds of every round and the ratio of
each round's pair show the spread.

usage: run.py BUILD_DIR [--ranks N] [--steps N] [--rounds N] [--scratch DIR]
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def timed(command):
    """Wall-clock and CPU seconds of one run of command, its output dropped."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def archive_bytes(directory):
    return sum(os.path.getsize(os.path.join(root, name))
               for root, _, names in os.walk(directory) for name in names)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build")
    parser.add_argument("--ranks", type=int, default=16)
    parser.add_argument("--steps", type=int, default=35000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--scratch", default="/dev/shm" if os.path.isdir("/dev/shm") else None,
                        help="where the archive is written (default /dev/shm: both tools read it from memory)")
    options = parser.parse_args()
    otf2_print = shutil.which("otf2-print")
    if otf2_print is None:
        sys.exit("run.py: otf2-print is not on PATH (Debian package otf2-tools or the OTF2 installation's bin)")
    report = os.path.join(options.build, "bin", "adaptrace-report")
    scratch = tempfile.mkdtemp(prefix="adt-report-bench-", dir=options.scratch)
    try:
        archive = os.path.join(scratch, "archive")
        written = json.loads(subprocess.run(
            [os.path.join(options.build, "bin", "synthetic_archive"), archive, str(options.ranks),
             str(options.steps)], check=True, capture_output=True, text=True).stdout)
        commands = {"otf2_print": [otf2_print, "--silent", os.path.join(archive, "traces.otf2")],
                    "report": [report, "--json", archive]}
        times = {tool: [] for tool in commands}
        for _ in range(options.rounds):
            for tool, command in commands.items():
                times[tool].append(timed(command))
        events = written["events"]
        result = {"events": events, "ranks": options.ranks, "archive_mib": round(archive_bytes(archive) / 2**20, 1),
                  "generation_seconds": written["seconds"], "rounds": options.rounds}
        for tool, runs in times.items():
            wall = statistics.median(w for w, _ in runs)
            cpu = statistics.median(c for _, c in runs)
            result[tool] = {"wall_seconds": round(wall, 3), "cpu_seconds": round(cpu, 3),
                            "events_per_second_wall": round(events / wall), "events_per_second_cpu": round(events / cpu),
                            "cpu_seconds_rounds": [round(c, 3) for _, c in runs]}
        result["ratio_cpu_rounds"] = [round(print_cpu / report_cpu, 3) for (_, print_cpu), (_, report_cpu)
                                      in zip(times["otf2_print"], times["report"])]
        for clock in ("wall", "cpu"):
            key = f"events_per_second_{clock}"
            result[f"ratio_{clock}"] = round(result["report"][key] / result["otf2_print"][key], 3)
        print(json.dumps(result, indent=1))
    finally:
        shutil.rmtree(scratch)


main()
