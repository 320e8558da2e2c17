#!/usr/bin/env python3
"""Compares two runs' skeletons call by call (issue #25, adaptrace-replay):
the original's and its replay's, both traced, from `adaptrace-report
--skeleton --expand`. Calls without records (MPI_Init, MPI_Comm_rank, a
send to MPI_PROC_NULL: replay spends their recorded duration instead) are
left out on both sides; every other call must be the same, in the same
order, with the same parameters (but the calling context: replay's is its
own), on every rank.

--communicators-as-world: the original used communicators other than
MPI_COMM_WORLD, which replay replays as MPI_COMM_WORLD; the communicator
numbers and the bytes a collective received (which scale with the
communicator's size) are then left out of the comparison.

--perturb: one byte count of the replay's last rank is changed by one
before the comparison, which must then fail (the check of the check).

usage: replay_compare.py REPORT ORIGINAL_ARCHIVE REPLAY_ARCHIVE [--communicators-as-world] [--perturb]
"""
import re
import subprocess
import sys


def calls_by_rank(report, archive, as_world):
    done = subprocess.run([report, "--skeleton", "--expand", archive], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"replay_compare: {report} --skeleton --expand {archive} failed: {done.stderr.strip()}")
    ranks, current = {}, None
    for line in done.stdout.splitlines():
        if line.startswith("rank "):
            if " stopped" in line:
                sys.exit(f"replay_compare: {archive}: {line}")
            current = ranks.setdefault(line.split()[1], [])
            continue
        if " | " not in line:
            continue
        # The calling context (kept when sampling is on) is replay's own.
        line = re.sub(r" ctx=[0-9]+", "", line)
        if as_world:
            line = re.sub(r" comm=c[0-9]+", "", line)
            line = re.sub(r"( collective_end sent=[0-9]+) received=[0-9]+", r"\1", line)
        current.append(line)
    return ranks


def main():
    flags = sys.argv[4:]
    if len(sys.argv) < 4 or any(flag not in ("--communicators-as-world", "--perturb") for flag in flags):
        sys.exit(__doc__.strip().splitlines()[-1])
    report, original, replay = sys.argv[1:4]
    as_world = "--communicators-as-world" in flags
    want, got = calls_by_rank(report, original, as_world), calls_by_rank(report, replay, as_world)
    if "--perturb" in flags:
        last = got[max(got, key=int)]
        at = next(i for i, line in enumerate(last) if "bytes=" in line)
        last[at] = re.sub(r"bytes=([0-9]+)", lambda m: f"bytes={int(m.group(1)) + 1}", last[at], count=1)
    if sorted(want) != sorted(got):
        sys.exit(f"replay_compare: ranks {sorted(want)} in the original, {sorted(got)} in the replay")
    total = 0
    for rank in sorted(want, key=int):
        a, b = want[rank], got[rank]
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                sys.exit(f"replay_compare: rank {rank} call {i} differs:\n  original: {x}\n  replay:   {y}")
        if len(a) != len(b):
            sys.exit(f"replay_compare: rank {rank}: {len(a)} calls with traffic in the original, {len(b)} in the replay")
        if not a:
            sys.exit(f"replay_compare: rank {rank} has no call with traffic: nothing compared")
        total += len(a)
    print(f"replay_compare: {total} calls with traffic on {len(want)} ranks are the same in the replay")


main()
