#!/usr/bin/env python3
"""The measurement cost (docs/compensation.md) that summary.json states
for a run of cost_calls.c (CALLS MPI_Comm_rank calls and one MPI_Barrier
per rank after MPI_Init, then MPI_Finalize).

usage: cost_check.py ARCHIVE RANKS CALLS on|off

Per rank's main thread: the MPI cells count every wrapped call after
MPI_Init (CALLS + MPI_Barrier + MPI_Finalize); the calls timed are those
numbered a multiple of 64 (MPI_Init is call 1; MPI_Finalize, which has no
wrapper exit, is never kept), less those the sampling handler interrupted
and those far above their class's mean (cost_outliers, per kind); each
timed class has all three parts. With sampling on, each kept sample after
MPI_Init is an event of the sample cells, timed unless an outlier.
The per-rank totals are the sums of the locations' estimates, and those
are each class's events at its mean timed cost."""
import json
import sys

archive, ranks, calls, sampling = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
summary = json.load(open(archive + "/summary.json"))
problems = []


def estimate(cells):
    """The estimate of adt_cost_total for one kind's cells."""
    timed = sum(c[1] for c in cells)
    overall = [sum(c[i] for c in cells) / timed if timed else 0 for i in (2, 3, 4)]
    total = 0.0
    for events, timed_here, before, inside, after in cells:
        mean = [before / timed_here, inside / timed_here, after / timed_here] if timed_here else overall
        total += events * sum(mean)
    return total


per_rank = {}
for line in summary["per_location"]:
    model = {key[len("cost_"):]: value for key, value in line.items() if key.startswith("cost_")}
    resolution = model["timer_resolution"]
    where = f"rank {line['rank']} thread {line['thread']}"
    if line["thread"] == 0:
        mpi = model["mpi"]
        events = sum(c[0] for c in mpi)
        if events != calls + 2:
            problems.append(f"{where}: {events} MPI events in the cost cells, expected {calls + 2}")
        expected_timed = (sum(1 for n in range(2, events + 1) if n % 64 == 0) - model["interrupted"] -
                          model["outliers"][0])
        timed = sum(c[1] for c in mpi)
        if timed != expected_timed:
            problems.append(f"{where}: {timed} timed MPI calls, expected {expected_timed}")
        if sampling == "off" and model["interrupted"] != 0:
            problems.append(f"{where}: {model['interrupted']} timed calls interrupted without sampling")
        for c, cell in enumerate(mpi):
            if cell[1] > 0 and min(cell[2:]) == 0:
                problems.append(f"{where}: gap class {c} has a part of 0 ticks over {cell[1]} timed calls")
        samples = model["sample"]
        sample_events = sum(c[0] for c in samples)
        if sampling == "off" and sample_events != 0:
            problems.append(f"{where}: {sample_events} sample events without sampling")
        if sampling == "on":
            if sample_events == 0 or sample_events > line["samples_kept"]:
                problems.append(f"{where}: {sample_events} sample events for {line['samples_kept']} kept")
            if sum(c[1] for c in samples) + model["outliers"][1] != sample_events:
                problems.append(f"{where}: {sample_events} samples, {sum(c[1] for c in samples)} timed and "
                                f"{model['outliers'][1]} outliers")
    seconds = (estimate(model["mpi"]) + estimate(model["sample"])) / resolution
    if abs(seconds - line["measurement_cost_s"]) > 1e-8 + 1e-6 * seconds:
        problems.append(f"{where}: measurement_cost_s {line['measurement_cost_s']}, its model gives {seconds}")
    per_rank[line["rank"]] = per_rank.get(line["rank"], 0.0) + line["measurement_cost_s"]

seconds, shares = summary["measurement_cost_per_rank_s"], summary["measurement_share_per_rank"]
if len(seconds) != ranks or len(shares) != ranks:
    problems.append(f"measurement cost of {len(seconds)} and share of {len(shares)} ranks, expected {ranks}")
for rank, (stated, share) in enumerate(zip(seconds, shares)):
    if stated <= 0 or abs(stated - per_rank.get(rank, 0)) > 1e-8 or not 0 < share < 1:
        problems.append(f"rank {rank}: measurement cost {stated} s ({share}) against its locations' "
                        f"{per_rank.get(rank)}")
if problems:
    sys.exit("\n".join(problems))
