#!/usr/bin/env python3
"""Checks that rank 0's receives from MPI_ANY_SOURCE (and MPI_ANY_TAG)
fold (issue #25): the skeletons of two runs of mpi-master-worker, with
ITERATIONS_A and ITERATIONS_B iterations, as `adaptrace-report --skeleton`
prints them. Rank 0's workers send in another order in every iteration
(master_worker.c), so its receives repeat only when their keys hold the
wildcards they asked for, not the partner that matched. Rank 0 must have:

- the same structure in both runs (distinct calls, rules, symbols and the
  loop view line by line) but for the iteration counts: a skeleton that
  does not grow with the iterations;
- two loops at its top level: 3 × ITERATIONS of (MPI_Recv, MPI_Barrier),
  the blocking receives' rounds of every iteration in one, then
  ITERATIONS of the nonblocking receives' iterations;
- its receives as wildcards: `peer=any` in every recv and irecv record,
  `tag=any` in the irecv ones (the second loop's MPI_ANY_TAG);
- calls that differ between the runs by the iterations' difference times
  the calls of one iteration: 3 workers, 13 calls (3 MPI_Recv and 3
  MPI_Barrier; 3 MPI_Irecv, 3 MPI_Barrier and one MPI_Waitall).

usage: wildcard_check.py REPORT ARCHIVE_A ITERATIONS_A ARCHIVE_B ITERATIONS_B
Exit status 0 when all hold, 1 with what does not.
"""
import re
import subprocess
import sys

WORKERS = 3
CALLS_PER_ITERATION = 13
HEADER = re.compile(r"^rank 0 thread 0: (\d+) calls, (\d+) distinct, (\d+) rules, (\d+) symbols")


def rank0(report, archive):
    """Rank 0's header numbers and its loop view (without the timing)."""
    out = subprocess.run([report, "--skeleton", archive], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"wildcard_check: {report} --skeleton {archive} failed: {out.stderr.strip()}")
    lines = out.stdout.splitlines()
    start = next((i for i, line in enumerate(lines) if HEADER.match(line)), None)
    if start is None:
        sys.exit(f"wildcard_check: {archive}: no class of rank 0 alone in:\n{out.stdout[:2000]}")
    numbers = [int(n) for n in HEADER.match(lines[start]).groups()]
    body = []
    for line in lines[start + 1:]:
        if line.startswith("  timing:") or re.match(r"^ranks? \d", line):
            break
        body.append(re.sub(r" ctx=\d+", "", line))
    return numbers, body


def problems_of(numbers, body, iterations, archive):
    problems = []
    top_loops = [line for line in body if re.match(r"^  loop \d+ \{$", line)]
    expected = [f"  loop {WORKERS * iterations} {{", f"  loop {iterations} {{"]
    if top_loops != expected:
        problems.append(f"{archive}: rank 0's top-level loops are {top_loops}, expected {expected}")
    for line in body:
        for record in line.split(" | ")[1:]:
            kind = record.split(" ")[0]
            if kind in ("recv", "irecv") and " peer=any " not in f" {record} ":
                problems.append(f"{archive}: a receive without its wildcard source: {line.strip()}")
            if kind == "irecv" and " tag=any" not in f" {record} ":
                problems.append(f"{archive}: an MPI_Irecv without its wildcard tag: {line.strip()}")
    if not any(" | recv " in line for line in body) or not any(" | irecv " in line for line in body):
        problems.append(f"{archive}: rank 0 has no recv or no irecv record")
    return problems


def main(argv):
    if len(argv) != 6:
        sys.exit(__doc__)
    report = argv[1]
    runs = [(argv[2], int(argv[3])), (argv[4], int(argv[5]))]
    seen = [rank0(report, archive) for archive, _ in runs]
    problems = []
    for (archive, iterations), (numbers, body) in zip(runs, seen):
        problems += problems_of(numbers, body, iterations, archive)
    (calls_a, *shape_a), body_a = seen[0]
    (calls_b, *shape_b), body_b = seen[1]
    if shape_a != shape_b:
        problems.append(f"rank 0's distinct calls, rules and symbols {shape_a} and {shape_b} differ: "
                        "its skeleton grows with the iterations")
    def counted(body, iterations):
        loops = {f"  loop {WORKERS * iterations} {{": "  loop 3N {", f"  loop {iterations} {{": "  loop N {"}
        return [loops.get(line, line) for line in body]
    same, other = counted(body_a, runs[0][1]), counted(body_b, runs[1][1])
    if same != other:
        problems.append("rank 0's loop views differ beyond the iteration counts:\n  " + "\n  ".join(body_a[:40]) +
                        "\nand\n  " + "\n  ".join(body_b[:40]))
    expected = (runs[1][1] - runs[0][1]) * CALLS_PER_ITERATION
    if calls_b - calls_a != expected:
        problems.append(f"rank 0 made {calls_a} and {calls_b} calls, expected {expected} apart")
    if problems:
        print("\n".join(problems))
        return 1
    print(f"wildcard_check: rank 0 folds to {shape_a[0]} distinct calls, {shape_a[1]} rules, {shape_a[2]} symbols "
          f"for {runs[0][1]} and {runs[1][1]} iterations")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
