#!/usr/bin/env python3
"""The measurement cost (docs/compensation.md) that summary.json states
for a run of cost_calls.c (CALLS MPI_Comm_rank calls and one MPI_Barrier
per rank after MPI_Init, then MPI_Finalize; "cold": each call after a
sleep of 1.2 ms).

usage: cost_check.py ARCHIVE RANKS CALLS on|off [cold]

Per rank's main thread: the MPI cells count every wrapped call after
MPI_Init (CALLS + MPI_Barrier + MPI_Finalize), each under its record kind
(model version 2): MPI_Comm_rank and MPI_Finalize under "mpi_other",
MPI_Barrier under "mpi_collective", none under "mpi_p2p"; the calls timed from their
wrapper's entry (a cell's timed_before) are those numbered a multiple of
64 (MPI_Init is call 1; MPI_Finalize, which has no wrapper exit, is never
kept), less those the sampling handler interrupted and those far above
their class's mean (cost_outliers, per kind), and up to 8 per class more
(the first calls of a kind's class, core.h adt_cost_choose_timing); a class
holding fewer than 8 timings has its other calls timed from their Enter
(inside and after parts): each class holds at least min(its events, 8)
timings, less the interrupted, the outliers and MPI_Finalize, and at most
8 timed from the Enter. cold: the calls (all but the Barrier) are in the last class
(gap >= 1 ms), and all but its first are timed whole until the class
holds 8. Each timed class has its parts. With sampling on, each kept
sample after MPI_Init is an event of the sample cells, timed unless an
outlier. The per-rank totals are the sums of the locations' estimates,
and those are each class's events at its mean timed cost."""
import json
import sys

archive, ranks, calls, sampling = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
cold = sys.argv[5:] == ["cold"]
summary = json.load(open(archive + "/summary.json"))
problems = []


def estimate(cells):
    """The estimate of adt_cost_total for one kind's cells: [events, timed,
    before, inside, after, timed_before] each; a part from its class where
    the class timed it, else from all."""
    timed, timed_before = sum(c[1] for c in cells), sum(c[5] for c in cells)
    overall_inside_after = [sum(c[i] for c in cells) / timed if timed else 0 for i in (3, 4)]
    overall_before = sum(c[2] for c in cells) / timed_before if timed_before else 0
    total = 0.0
    for events, timed_here, before, inside, after, before_here in cells:
        inside_after = [inside / timed_here, after / timed_here] if timed_here else overall_inside_after
        total += events * (sum(inside_after) + (before / before_here if before_here else overall_before))
    return total


per_rank = {}
for line in summary["per_location"]:
    model = {key[len("cost_"):]: value for key, value in line.items() if key.startswith("cost_")}
    resolution = model["timer_resolution"]
    where = f"rank {line['rank']} thread {line['thread']}"
    if model.get("model") != 2:
        problems.append(f"{where}: cost model version {model.get('model')}, expected 2")
        continue
    kinds = {kind: model["mpi_" + kind] for kind in ("other", "p2p", "collective")}
    if line["thread"] == 0:
        for kind, expected in (("other", calls + 1), ("p2p", 0), ("collective", 1)):
            events = sum(c[0] for c in kinds[kind])
            if events != expected:
                problems.append(f"{where}: {events} MPI events in the {kind} cost cells, expected {expected}")
        mpi = [cell for cells in kinds.values() for cell in cells]
        events = sum(c[0] for c in mpi)
        expected_timed = sum(1 for n in range(2, events + 1) if n % 64 == 0)
        lost = model["interrupted"] + sum(model["outliers"][:3])
        timed_before = sum(c[5] for c in mpi)
        if not expected_timed - lost <= timed_before <= expected_timed + 8 * len(mpi):
            problems.append(f"{where}: {timed_before} MPI calls timed from their entry, expected {expected_timed} "
                            f"less up to {lost} interrupted or outliers, and up to {8 * len(mpi)} more")
        if sampling == "off" and model["interrupted"] != 0:
            problems.append(f"{where}: {model['interrupted']} timed calls interrupted without sampling")
        # MPI_Finalize, never kept, is one call of some class.
        missing = sum(max(0, min(cell[0], 8) - cell[1]) for cell in mpi)
        if missing > lost + 1:
            problems.append(f"{where}: {missing} timings missing from classes of fewer than 8 ({mpi}), expected at "
                            f"most {lost} interrupted or outliers and MPI_Finalize")
        for c, (cell_events, timed, before, inside, after, cell_before) in enumerate(mpi):
            if timed - cell_before > 8:
                problems.append(f"{where}: gap class {c}: {timed} timed, {cell_before} of them from their entry; "
                                f"expected at most 8 from their Enter")
            if (timed > 0 and min(inside, after) == 0) or (cell_before > 0 and before == 0):
                problems.append(f"{where}: gap class {c} has a part of 0 ticks over {timed} timed calls")
        cold_cell = kinds["other"][4]
        if cold and cold_cell[0] < calls:
            problems.append(f"{where}: {cold_cell[0]} calls in the last gap class, expected the {calls} cold ones")
        if cold and cold_cell[5] < min(calls - 1, 8) - lost:
            problems.append(f"{where}: {cold_cell[5]} cold calls timed from their entry, expected at least "
                            f"{min(calls - 1, 8)} less {lost} interrupted or outliers")
        samples = model["sample"]
        sample_events = sum(c[0] for c in samples)
        if sampling == "off" and sample_events != 0:
            problems.append(f"{where}: {sample_events} sample events without sampling")
        if sampling == "on":
            if sample_events == 0 or sample_events > line["samples_kept"]:
                problems.append(f"{where}: {sample_events} sample events for {line['samples_kept']} kept")
            if sum(c[1] for c in samples) + model["outliers"][3] != sample_events:
                problems.append(f"{where}: {sample_events} samples, {sum(c[1] for c in samples)} timed and "
                                f"{model['outliers'][3]} outliers")
    seconds = (sum(estimate(cells) for cells in kinds.values()) + estimate(model["sample"])) / resolution
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
