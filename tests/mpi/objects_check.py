#!/usr/bin/python3
"""Checks the windows and files of an archive of tests/mpi/objects.c (or
benchmarks/mpi/objects_memory.c) against the program's list
(EXPECT_DIR/objects.<rank>.txt, format in objects.c), with python3-otf2
(Debian's /usr/bin/python3), and the summary's count of objects not
traced:

- each rank's windows, in the order they were freed, each one
  RmaWinCreate and one RmaWinDestroy of the same window on that rank,
  with its MPI_Put records in between, on a communicator of the size
  noted;
- each rank's files, in the order they were closed, each one
  IoCreateHandle and one IoDestroyHandle of the same handle, of the file
  noted, on a communicator of the size noted;
- summary.json counts 0 windows, files and communicators not traced;
- with MOST_DEFINITIONS, the archive defines at most that many windows and
  that many I/O handles (adaptrace defines one per object alive at a time
  on a communicator, not one per object ever made).

usage: objects_check.py ARCHIVE_DIR EXPECT_DIR RANKS [MOST_DEFINITIONS]
"""
import json
import os
import sys

import otf2


def comm_size(comm):
    group = comm.group
    if getattr(group.group_type, "name", str(group.group_type)).endswith("COMM_SELF"):
        return 1
    return len(group.members)


def rank_of(location):
    return int(location.group.name.rsplit(" ", 1)[-1])


def main(argv):
    if len(argv) not in (4, 5):
        sys.stderr.write(__doc__)
        return 2
    archive, expect_dir, ranks = argv[1], argv[2], int(argv[3])
    most_definitions = int(argv[4]) if len(argv) == 5 else None
    problems = []
    summary = json.load(open(os.path.join(archive, "summary.json")))
    for key in ("mpi_communicators_untracked", "mpi_windows_untracked", "mpi_files_untracked"):
        if summary[key] != 0:
            problems.append(f"summary.json: {key} is {summary[key]}, expected 0 "
                            f"(by cause: {summary.get(key + '_by_cause', 'not given')})")
    seen = {r: [] for r in range(ranks)}
    open_windows, open_files = {}, {}
    with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
        if most_definitions is not None:
            for kind, definitions in (("windows", trace.definitions.rma_wins),
                                      ("I/O handles", trace.definitions.io_handles)):
                if len(definitions) > most_definitions:
                    problems.append(f"{len(definitions)} {kind} defined, expected at most {most_definitions}")
        for location, event in trace.events:
            rank = rank_of(location)
            windows = open_windows.setdefault(location, {})
            files = open_files.setdefault(location, {})
            if isinstance(event, otf2.events.RmaWinCreate):
                if event.win in windows:
                    problems.append(f"rank {rank}: window {event.win.name!r} created twice without a destroy")
                windows[event.win] = 0
            elif isinstance(event, otf2.events.RmaPut):
                if event.win not in windows:
                    problems.append(f"rank {rank}: a put on window {event.win.name!r}, not created")
                else:
                    windows[event.win] += 1
            elif isinstance(event, otf2.events.RmaWinDestroy):
                if event.win not in windows:
                    problems.append(f"rank {rank}: window {event.win.name!r} destroyed, not created")
                    continue
                seen[rank].append(f"window {comm_size(event.win.comm)} {windows.pop(event.win)}")
            elif isinstance(event, otf2.events.IoCreateHandle):
                if event.handle in files:
                    problems.append(f"rank {rank}: handle {event.handle.name!r} created twice without a destroy")
                files[event.handle] = True
            elif isinstance(event, otf2.events.IoDestroyHandle):
                if files.pop(event.handle, None) is None:
                    problems.append(f"rank {rank}: handle {event.handle.name!r} destroyed, not created")
                    continue
                seen[rank].append(f"file {event.handle.file.name} {comm_size(event.handle.comm)}")
    for location, windows in open_windows.items():
        if windows:
            problems.append(f"rank {rank_of(location)}: {len(windows)} windows never destroyed")
    for location, files in open_files.items():
        if files:
            problems.append(f"rank {rank_of(location)}: {len(files)} file handles never destroyed")

    for rank in range(ranks):
        with open(os.path.join(expect_dir, f"objects.{rank}.txt")) as stream:
            expected = [line.rstrip("\n") for line in stream if line.strip()]
        if seen[rank] == expected:
            continue
        problems.append(f"rank {rank}: {len(seen[rank])} windows and files in the trace, {len(expected)} made; "
                        "the first differences:")
        differences = [n for n in range(max(len(expected), len(seen[rank])))
                       if (expected[n:n + 1] or ["(nothing)"]) != (seen[rank][n:n + 1] or ["(nothing)"])]
        for number in differences[:10]:
            want = expected[number] if number < len(expected) else "(nothing)"
            got = seen[rank][number] if number < len(seen[rank]) else "(nothing)"
            problems.append(f"  #{number}: expected {want!r}, trace {got!r}")

    for problem in problems:
        print(f"objects_check.py: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
