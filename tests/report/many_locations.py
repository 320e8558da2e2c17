#!/usr/bin/env python3
"""adaptrace-report on an intact archive of many locations: the
thread-waves program of the online tests (tests/online/thread_waves.c),
2 ranks each with its main thread and 40 threads one after another, 82
locations. The report must read it whole (exit 0) and count every
thread's calls: WAVES * ROUNDS MPI_Sendrecv calls per rank. Before, it
asked each location's OTF2 reader where it had stopped after the global
reader had closed it, read freed memory and called the archive damaged
("traces/30064771072.evt is damaged: it ends after 0 of the 281 events
its definitions give") in 5 runs of 5.

usage: many_locations.py REPORT ARCHIVE WAVES ROUNDS
"""
import json
import subprocess
import sys


def main():
    report, archive, waves, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    done = subprocess.run([report, "--json", archive], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=120)
    if done.returncode != 0:
        sys.exit(f"many_locations.py: adaptrace-report exited with {done.returncode}: {done.stderr.strip()}")
    profile = json.loads(done.stdout)
    calls = {f["name"]: f["calls"] for f in profile["mpi_functions"]}
    expected = 2 * waves * rounds
    if calls.get("MPI_Sendrecv") != expected:
        sys.exit(f"many_locations.py: {calls.get('MPI_Sendrecv')} MPI_Sendrecv calls, expected {expected}")
    print(f"adaptrace-report read the archive of {2 * (waves + 1)} locations: {expected} MPI_Sendrecv calls")


if __name__ == "__main__":
    main()
