#!/usr/bin/python3
"""Checks the I/O records of an archive of tests/mpi/io.c against the
I/O expectations the program wrote (EXPECT_DIR/io.<rank>.txt, format in
io.c), with python3-otf2 (Debian's /usr/bin/python3):

- each rank's I/O records, in order, with the MPI call they are in, their
  file, modes, flags, byte counts and seek offsets, are exactly the ones
  the program noted;
- every IoOperationBegin is completed exactly once, on the same handle
  and location, after it (and issued in between where it is noted);
- a file opened on MPI_COMM_WORLD is one IoFile and one IoHandle for
  every rank, scoped by a communicator of every rank; a file opened on
  MPI_COMM_SELF is one IoHandle per rank; handles are named after their
  file and belong to the IoParadigm "MPI-IO".

usage: io_check.py ARCHIVE_DIR EXPECT_DIR RANKS
"""
import os
import sys

import otf2

UNDEFINED_UINT64 = (1 << 64) - 1


def enum_name(value):
    return getattr(value, "name", str(value).split(".")[-1])


def flag_names(flags):
    value = int(getattr(flags, "value", flags))
    names = [name for bit, name in ((1, "NON_BLOCKING"), (2, "COLLECTIVE")) if value & bit]
    return "|".join(names) or "NONE"


def bytes_text(count):
    return "-" if count == UNDEFINED_UINT64 else str(count)


def comm_size(comm):
    group = comm.group
    if enum_name(group.group_type) == "COMM_SELF":
        return 1
    return len(group.members)


def describe(call, event):
    """The expectation line of one I/O event, or None for other events."""
    if isinstance(event, otf2.events.IoCreateHandle):
        handle = event.handle
        return f"{call} create {handle.file.name} {enum_name(event.mode)} {comm_size(handle.comm)}"
    if isinstance(event, otf2.events.IoOperationBegin):
        return (f"{call} begin {event.handle.file.name} {enum_name(event.mode)} "
                f"{flag_names(event.operation_flags)} {bytes_text(event.bytes_request)}")
    if isinstance(event, otf2.events.IoOperationIssued):
        return f"{call} issued {event.handle.file.name}"
    if isinstance(event, otf2.events.IoOperationComplete):
        return f"{call} complete {event.handle.file.name} {bytes_text(event.bytes_result)}"
    if isinstance(event, otf2.events.IoSeek):
        return (f"{call} seek {event.handle.file.name} {event.offset_request} {enum_name(event.whence)} "
                f"{event.offset_result}")
    if isinstance(event, otf2.events.IoDestroyHandle):
        return f"{call} destroy {event.handle.file.name}"
    if isinstance(event, otf2.events.IoDeleteFile):
        return f"{call} delete {event.file.name}"
    return None


def is_shared(name):
    """The file every rank opens (the others are each rank's own)."""
    return os.path.basename(name).startswith("shared")


def rank_of(location):
    return int(location.group.name.rsplit(" ", 1)[-1])


def main(argv):
    if len(argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    archive, expect_dir, ranks = argv[1], argv[2], int(argv[3])
    problems = []
    seen = {r: [] for r in range(ranks)}
    stacks, pending, created = {}, {}, {}
    with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
        defs = trace.definitions
        paradigms = [p.identification for p in defs.io_paradigms]
        if paradigms != ["MPI-IO"]:
            problems.append(f"I/O paradigms {paradigms}, expected ['MPI-IO']")
        for handle in defs.io_handles:
            if handle.name != handle.file.name:
                problems.append(f"handle {handle.name!r} of file {handle.file.name!r}: not named after its file")
            if handle.io_paradigm.identification != "MPI-IO":
                problems.append(f"handle {handle.name!r} is not an MPI-IO handle")
        for location, event in trace.events:
            rank = rank_of(location)
            stack = stacks.setdefault(location, [])
            if isinstance(event, (otf2.events.Enter, otf2.events.CallingContextEnter)):
                region = event.region if isinstance(event, otf2.events.Enter) else event.calling_context.region
                stack.append(region.name)
                continue
            if isinstance(event, (otf2.events.Leave, otf2.events.CallingContextLeave)):
                stack.pop()
                continue
            line = describe(stack[-1] if stack else "(outside any call)", event)
            if line is None:
                continue
            seen[rank].append(line)
            where = f"rank {rank}: {line}"
            operations = pending.setdefault(location, {})
            if isinstance(event, otf2.events.IoCreateHandle):
                created.setdefault(event.handle.file.name, {})[rank] = event.handle
            elif isinstance(event, otf2.events.IoOperationBegin):
                key = (event.handle, event.matching_id)
                if key in operations:
                    problems.append(f"{where}: matching id {event.matching_id} begun twice")
                operations[key] = False
            elif isinstance(event, otf2.events.IoOperationIssued):
                key = (event.handle, event.matching_id)
                if operations.get(key) is not False:
                    problems.append(f"{where}: issued without its begin, or twice")
                operations[key] = True
            elif isinstance(event, otf2.events.IoOperationComplete):
                if operations.pop((event.handle, event.matching_id), None) is None:
                    problems.append(f"{where}: completes an operation not begun (matching id {event.matching_id})")
        for location, operations in pending.items():
            for handle, matching_id in operations:
                problems.append(f"rank {rank_of(location)}: operation {matching_id} on {handle.name} never completes")
        for stack_location, stack in stacks.items():
            if stack:
                problems.append(f"rank {rank_of(stack_location)}: regions left open: {stack}")

    for rank in range(ranks):
        with open(os.path.join(expect_dir, f"io.{rank}.txt")) as stream:
            expected = [line.rstrip("\n") for line in stream if line.strip()]
        if seen[rank] != expected:
            problems.append(f"rank {rank}: I/O records differ from the expectations")
            for number in range(max(len(expected), len(seen[rank]))):
                want = expected[number] if number < len(expected) else "(nothing)"
                got = seen[rank][number] if number < len(seen[rank]) else "(nothing)"
                mark = "  " if want == got else "!="
                problems.append(f"  {mark} expected {want!r}, trace {got!r}")

    for name, by_rank in created.items():
        handles = set(by_rank.values())
        if is_shared(name):
            if len(by_rank) != ranks or len(handles) != 1:
                problems.append(f"{name}: opened on MPI_COMM_WORLD but {len(handles)} handles on {len(by_rank)} ranks")
        elif len(by_rank) != 1:
            problems.append(f"{name}: a rank's own file created on ranks {sorted(by_rank)}")
    own_handles = [h for name, by_rank in created.items() if not is_shared(name) for h in by_rank.values()]
    if len(set(own_handles)) != ranks:
        problems.append(f"{len(set(own_handles))} handles for the {ranks} ranks' own files")

    for problem in problems:
        print(f"io_check.py: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
