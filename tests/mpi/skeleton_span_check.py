#!/usr/bin/python3
"""The skeleton's times in seconds (issue #25): each class's span, as
`adaptrace-report --skeleton` prints it (the longest of its ranks' first
MPI call's Leave to last MPI call's Enter, and the rank that had it),
must equal that rank's span in the OTF2 archive of the same run within
a microsecond. The skeleton holds trace-clock ticks and the file their
rate; a reader that took the ticks for nanoseconds (as before version 3)
is off by the clock's GHz.

usage: skeleton_span_check.py REPORT_COMMAND ARCHIVE
"""
import re
import subprocess
import sys

import otf2

from skeleton_check import archive_calls


def archive_spans(archive):
    """{rank: seconds from its first MPI call's Leave to its last one's
    Enter}, outermost calls of thread 0 (skeleton_check.py's walk)."""
    with otf2.reader.open(f"{archive}/traces.otf2") as trace:
        resolution = trace.timer_resolution
    return {rank: (location.last_enter - location.first_leave) / resolution
            for (rank, thread), location in archive_calls(archive).items()
            if thread == 0 and location.first_leave is not None}


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    out = subprocess.run([argv[1], "--skeleton", argv[2]], capture_output=True, text=True, check=True).stdout
    printed = [(float(s), int(r)) for s, r in re.findall(r"^  timing: span ([0-9.]+) s \(rank (\d+),", out, re.M)]
    if not printed:
        sys.exit("skeleton_span_check: no timing line in the skeleton's text")
    spans = archive_spans(argv[2])
    failed = False
    for seconds, rank in printed:
        if abs(seconds - spans[rank]) > 1e-6:
            print(f"rank {rank}: the skeleton's span is {seconds:.6f} s, the archive's {spans[rank]:.6f} s")
            failed = True
    if failed:
        return 1
    print(f"skeleton_span_check: {len(printed)} spans agree with the archive")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
