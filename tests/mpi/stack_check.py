#!/usr/bin/env python3
"""Compares what a PMPI tool stacked behind adaptrace saw with adaptrace's
trace (issue #24), read with otf2-print (python3-otf2 0.3 cannot read the
flags of the communicators these programs make): per
rank and per function, the calls the tool counted equal the regions of
that function entered on that rank in the archive. adaptrace's own MPI
traffic (clock offsets, unification, summary) goes to PMPI_* and must not
be counted by the tool; a call that came back into adaptrace through the
tool must be in the trace once.

usage: stack_check.py OTF2_PRINT ARCHIVE_DIR RANKS counts COUNTS_DIR [FUNCTION...]
       stack_check.py OTF2_PRINT ARCHIVE_DIR RANKS ompitrace STDERR_FILE [UNTRACED_STDERR_FILE]
  counts: the counting tool's COUNTS_DIR/counts.<rank>.txt ("MPI_Name
          count" per line); with FUNCTIONS, only those are compared (the
          ones the tool wraps in the program's binding).
  ompitrace: Open MPI's libompitrace.so's lines on stderr, "MPI_SEND[r]: ...",
          counted per rank for every function it wraps (its MPI_INIT line
          names no rank and is left out); with UNTRACED_STDERR_FILE, its
          lines of the same program run without adaptrace count the same.
"""
import collections
import os
import re
import subprocess
import sys


def otf2_print(otf2_print_command, archive, *options):
    return subprocess.run([otf2_print_command, *options, os.path.join(archive, "traces.otf2")], check=True,
                          capture_output=True, text=True).stdout.splitlines()


def trace_counts(otf2_print_command, archive):
    """{rank: Counter(region name -> Enters)}, with sampling off (ENTER records)."""
    rank_of = {}
    for line in otf2_print(otf2_print_command, archive, "-G"):
        match = re.match(r'LOCATION\s+(\d+)\s.*Group: "MPI Rank (\d+)"', line)
        if match:
            rank_of[match.group(1)] = int(match.group(2))
    counts = collections.defaultdict(collections.Counter)
    for line in otf2_print(otf2_print_command, archive):
        match = re.match(r'ENTER\s+(\d+)\s+\d+\s+Region: "([^"]+)"', line)
        if match:
            counts[rank_of[match.group(1)]][match.group(2)] += 1
    return counts


def counting_tool(directory, ranks, functions):
    counts = {}
    for rank in range(ranks):
        path = os.path.join(directory, f"counts.{rank}.txt")
        if not os.path.exists(path):
            sys.exit(f"stack_check.py: {path} is missing: the tool's MPI_Finalize did not run on rank {rank}")
        with open(path) as stream:
            rows = dict((name, int(count)) for name, count in (line.split() for line in stream))
        counts[rank] = {name: count for name, count in rows.items() if not functions or name in functions}
    return counts


# What libompitrace.so (Open MPI 4.1) wraps and prints with the rank;
# its MPI_Init line names no rank.
OMPITRACE_FUNCTIONS = ["MPI_ABORT", "MPI_ACCUMULATE", "MPI_ADD_ERROR_CLASS", "MPI_ADD_ERROR_CODE",
                       "MPI_ADD_ERROR_STRING", "MPI_ALLGATHER", "MPI_ALLGATHERV", "MPI_ALLOC_MEM", "MPI_ALLREDUCE",
                       "MPI_BARRIER", "MPI_BCAST", "MPI_FINALIZE", "MPI_GET_ADDRESS", "MPI_ISEND", "MPI_RECV",
                       "MPI_REDUCE", "MPI_REQUEST_FREE", "MPI_SEND", "MPI_SENDRECV"]


def ompitrace(stderr_file, ranks):
    """{rank: {upper-case name: lines}} for every function it wraps, zeros included."""
    counts = {rank: collections.Counter({name: 0 for name in OMPITRACE_FUNCTIONS}) for rank in range(ranks)}
    with open(stderr_file, errors="replace") as stream:
        for line in stream:
            match = re.match(r"(MPI_[A-Za-z_]+)\[(\d+)\]", line)
            if match:
                counts[int(match.group(2))][match.group(1).upper()] += 1
    return counts


def main(argv):
    if len(argv) < 6 or argv[4] not in ("counts", "ompitrace"):
        sys.stderr.write(__doc__)
        return 2
    archive, ranks, mode = argv[2], int(argv[3]), argv[4]
    traced = trace_counts(argv[1], archive)
    problems = []
    if mode == "counts":
        seen = counting_tool(argv[5], ranks, set(argv[6:]))
        compared = {rank: {name: traced[rank][name] for name in seen[rank]} for rank in range(ranks)}
    else:
        seen = ompitrace(argv[5], ranks)
        compared = {rank: {name.upper(): count for name, count in traced[rank].items()
                           if name.upper() in seen[rank]} for rank in range(ranks)}
        if len(argv) > 6:
            untraced = ompitrace(argv[6], ranks)
            for rank in range(ranks):
                for name in OMPITRACE_FUNCTIONS:
                    if untraced[rank][name] != seen[rank][name]:
                        problems.append(f"rank {rank}: {name}: the tool saw {seen[rank][name]} under adaptrace, "
                                        f"{untraced[rank][name]} without")
    for rank in range(ranks):
        for name, count in sorted(seen[rank].items()):
            if compared[rank].get(name, 0) != count:
                problems.append(f"rank {rank}: {name}: the tool saw {count}, the trace has {compared[rank].get(name, 0)}")
    busy = [name for rank in range(ranks) for name, count in seen[rank].items()
            if count > 0 and name.upper() not in ("MPI_INIT", "MPI_FINALIZE")]
    if not busy:
        problems.append("the tool saw no call besides MPI_Init and MPI_Finalize: nothing compared")
    for problem in problems:
        print(f"stack_check.py: {problem}", file=sys.stderr)
    if not problems:
        print(f"stack_check.py: {len(busy)} per-rank function counts equal")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
