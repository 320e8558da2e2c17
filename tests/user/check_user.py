#!/usr/bin/python3
"""Checks the archive of a run of tests/user/user_regions.c with
python3-otf2 (Debian's /usr/bin/python3):

- every user region is a Region of paradigm USER, role FUNCTION, and
  every phase one of role CODE with the PHASE flag;
- on every location, Enter/Leave (and CallingContextEnter/Leave) nest;
  each rank's user regions are entered and left exactly in the order the
  program asked for (MODE balanced or unbalanced; the unbalanced calls
  left out, the regions left open closed at the end, nothing of the
  region begun while paused);
- the MPI calls made inside a region are recorded inside it;
- each rank's parameter values (ParameterInt, of an INT64 Parameter)
  and metric values (Metric of a class of one USER DOUBLE member) are the
  ones the program recorded, in the region it recorded them in (none
  while paused);
- with sampling (calling contexts): every sample and MPI call inside a
  user region has that region's calling context among its ancestors, no
  sample outside every user region has a user region among them, and
  each rank has samples in "kernel" (balanced) or in the innermost of
  DEEPEST nested "deep" (unbalanced: the user API's nesting limit);
- summary.json counts the unbalanced calls;
- with REPORT (adaptrace-report): its JSON lists every user region with
  its instances, and splits the profile by phase: MPI_Barrier only in
  "setup", MPI_Allreduce only in "iterate", the other calls outside every
  phase; the phases' sampled time adds up to the profile's.

usage: check_user.py ARCHIVE_DIR MODE RANKS [REPORT]
"""
import json
import os
import subprocess
import sys

import otf2

PHASES = {"setup", "iterate"}
# Region instances the user API lets a thread nest (user/user_internal.h).
DEEPEST = 64


def expected_sequence(mode):
    """(event, region) of the user regions of each rank, per thread index."""
    if mode == "balanced":
        main = [("enter", "setup"), ("leave", "setup"), ("enter", "iterate")]
        for _ in range(3):
            main += [("enter", "solver"), ("enter", "kernel"), ("leave", "kernel"), ("leave", "solver")]
        main += [("enter", "tiny"), ("leave", "tiny")] * 1000
        main += [("leave", "iterate")] + [("enter", "by macro"), ("leave", "by macro")] * 2
        return {0: main}
    main = [("enter", "a"), ("enter", "b"), ("leave", "b"), ("leave", "a"),
            ("enter", "ends paused"), ("leave", "ends paused"), ("enter", "outer"), ("leave", "outer")]
    main += [("enter", "deep")] * DEEPEST + [("leave", "deep")] * DEEPEST
    main += [("enter", "left open"), ("leave", "left open")]
    return {0: main, 1: [("enter", "crossing"), ("leave", "crossing")]}


def expected_parameters(mode):
    """(parameter or metric, value, innermost user region) of each rank's
    main thread, in order."""
    if mode == "balanced":
        return [value for step in range(3)
                for value in (("time step", step, "solver"), ("residual", 1.0 / (1 << step), "solver"))]
    return [("count", 2, None)]


def expected_counts(mode, ranks):
    if mode == "balanced":
        return {"user_region_ends_unmatched": 0, "user_region_begins_too_deep": 0,
                "user_regions_left_open": 0, "user_resumes_unmatched": 0}
    return {"user_region_ends_unmatched": 4 * ranks, "user_region_begins_too_deep": ranks,
            "user_regions_left_open": 2 * ranks, "user_resumes_unmatched": ranks}


def check_report(report, archive, mode, ranks):
    """The problems of adaptrace-report's JSON of the archive."""
    problems = []
    profile = json.loads(subprocess.run([report, "--json", archive], check=True, capture_output=True,
                                        text=True).stdout)
    instances = {region["name"]: region["instances"] for region in profile["user_regions"]}
    if mode == "balanced":
        want = {"setup": ranks, "iterate": ranks, "solver": 3 * ranks, "kernel": 3 * ranks, "tiny": 1000 * ranks,
                "by macro": 2 * ranks}
    else:
        want = {"a": ranks, "b": ranks, "ends paused": ranks, "outer": ranks, "deep": 64 * ranks, "left open": ranks,
                "crossing": ranks}
    if instances != want:
        problems.append(f"report: user region instances {instances}, expected {want}")
    phases = {phase["name"]: phase for phase in profile["phases"]}
    want_phases = ["(outside every phase)", "setup", "iterate"] if mode == "balanced" else []
    if list(phases) != want_phases:
        problems.append(f"report: phases {list(phases)}, expected {want_phases}")
        return problems
    if mode != "balanced":
        return problems
    calls = {name: {f["name"] for f in phase["mpi_functions"]} for name, phase in phases.items()}
    if calls["setup"] != {"MPI_Barrier"} or calls["iterate"] != {"MPI_Allreduce"} or \
            calls["(outside every phase)"] & {"MPI_Barrier", "MPI_Allreduce"} or \
            not {"MPI_Init", "MPI_Finalize"} <= calls["(outside every phase)"]:
        problems.append(f"report: MPI functions per phase {calls}")
    for name in ("setup", "iterate"):
        if phases[name]["instances"] != ranks or phases[name]["seconds"] <= 0:
            problems.append(f"report: phase {name}: {phases[name]['instances']} instances, "
                            f"{phases[name]['seconds']} s")
    sampled = sum(phase["sampled_seconds"] for phase in profile["phases"])
    if abs(sampled - profile["sampled_seconds"]) > 1e-6 * max(1.0, profile["sampled_seconds"]):
        problems.append(f"report: the phases' sampled time {sampled} s, the profile's {profile['sampled_seconds']} s")
    return problems


def user_metric_of(event):
    """The name of the user metric a Metric event records, None for the
    others (counters, the sampling rate, the buffer use)."""
    members = getattr(event.metric, "members", None)
    if not members or len(members) != 1:
        return None
    member = members[0]
    if name(member.metric_type) != "USER" or name(member.value_type) != "DOUBLE":
        return None
    return member.name


def name(value):
    return getattr(value, "name", str(value).split(".")[-1])


def ancestors(context):
    while context is not None:
        yield context
        context = context.parent


def main(argv):
    if len(argv) not in (4, 5):
        sys.stderr.write(__doc__)
        return 2
    archive, mode, ranks = argv[1], argv[2], int(argv[3])
    problems = []
    expected = expected_sequence(mode)
    with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
        user_regions = set()
        for region in trace.definitions.regions:
            if name(region.paradigm) != "USER":
                continue
            user_regions.add(region.name)
            role, flags = name(region.region_role), name(region.region_flags)
            want = ("CODE", "PHASE") if region.name in PHASES else ("FUNCTION", "NONE")
            if (role, flags) != want:
                problems.append(f"region {region.name}: role {role}, flags {flags}, expected {want}")
        # "paused" and "in callback" are registered, but begun and ended
        # only while paused and inside an MPI call.
        wanted_regions = {r for sequence in expected.values() for _, r in sequence} | (
            {"paused", "in callback"} if mode == "unbalanced" else set())
        if user_regions != wanted_regions:
            problems.append(f"user regions {sorted(user_regions)}, expected {sorted(wanted_regions)}")

        parameter_names = {p.name for p in trace.definitions.parameters
                           if name(p.parameter_type) == "INT64"}
        want_names = {p for p, value, _ in expected_parameters(mode) if isinstance(value, int)}
        if parameter_names != want_names:
            problems.append(f"INT64 parameters {sorted(parameter_names)}, expected {sorted(want_names)}")
        metric_names = {m.name for m in trace.definitions.metric_members
                        if name(m.metric_type) == "USER" and name(m.value_type) == "DOUBLE"}
        want_metrics = {p for p, value, _ in expected_parameters(mode) if isinstance(value, float)}
        if metric_names != want_metrics:
            problems.append(f"USER DOUBLE metrics {sorted(metric_names)}, expected {sorted(want_metrics)}")
        stacks, sequences, innermost_samples, parameters = {}, {}, {}, {}
        for location, event in trace.events:
            rank = int(location.group.name.rsplit(" ", 1)[-1])
            thread = 0 if location.name == "Master thread" else int(location.name.rsplit(" ", 1)[-1])
            stack = stacks.setdefault(location, [])
            is_enter = isinstance(event, (otf2.events.Enter, otf2.events.CallingContextEnter))
            is_leave = isinstance(event, (otf2.events.Leave, otf2.events.CallingContextLeave))
            context = getattr(event, "calling_context", None)
            region = event.region if isinstance(event, (otf2.events.Enter, otf2.events.Leave)) else \
                context.region if context is not None else None
            open_user = [entry for entry in stack if entry[0].name in user_regions]
            # "left open" was begun in unbalanced(), which has returned
            # (unless inlined into main) when MPI_Reduce and MPI_Finalize
            # are called: their stacks no longer run through the frame that
            # began it, so they are not placed below it (docs/sampling.md).
            if is_enter or isinstance(event, otf2.events.CallingContextSample):
                if context is not None and open_user and open_user[-1][0].name != "left open":
                    innermost = open_user[-1][1]
                    if innermost is not None and all(node != innermost for node in ancestors(context)):
                        problems.append(f"rank {rank}: {name(type(event))} at {region.name} inside "
                                        f"{open_user[-1][0].name} is not below its calling context")
                above = context.parent if is_enter and context is not None else context
                if context is not None and not open_user and \
                        any(node.region.name in user_regions for node in ancestors(above)):
                    problems.append(f"rank {rank}: {name(type(event))} at {region.name} outside every user "
                                    f"region is below one")
                if isinstance(event, otf2.events.CallingContextSample) and open_user and (
                        open_user[-1][0].name == "kernel" or
                        sum(entry[0].name == "deep" for entry in open_user) == DEEPEST):
                    innermost_samples[rank] = innermost_samples.get(rank, 0) + 1
            if isinstance(event, otf2.events.ParameterInt):
                parameters.setdefault(rank, []).append(
                    (event.parameter.name, event.value, open_user[-1][0].name if open_user else None))
            if isinstance(event, otf2.events.Metric) and user_metric_of(event) is not None:
                parameters.setdefault(rank, []).append(
                    (user_metric_of(event), event.values[0], open_user[-1][0].name if open_user else None))
            if is_enter:
                stack.append((region, context))
                if name(region.paradigm) == "MPI" and mode == "balanced" and region.name in (
                        "MPI_Barrier", "MPI_Allreduce"):
                    inside = open_user[-1][0].name if open_user else None
                    want = "setup" if region.name == "MPI_Barrier" else "solver"
                    if inside != want:
                        problems.append(f"rank {rank}: {region.name} recorded inside {inside}, expected {want}")
            elif is_leave:
                if not stack or stack[-1][0] != region:
                    problems.append(f"rank {rank} thread {thread}: leaves {region.name} while "
                                    f"{stack[-1][0].name if stack else 'nothing'} is innermost")
                    continue
                stack.pop()
            if (is_enter or is_leave) and region.name in user_regions:
                sequences.setdefault((rank, thread), []).append(("enter" if is_enter else "leave", region.name))
        sampled = any(isinstance(c, otf2.definitions.CallingContext) for c in trace.definitions.calling_contexts)

    for (rank, thread), sequence in sorted(sequences.items()):
        if sequence != expected.get(thread):
            problems.append(f"rank {rank} thread {thread}: user regions {sequence[:12]}... "
                            f"({len(sequence)} events), expected {expected.get(thread, [])[:12]}... "
                            f"({len(expected.get(thread, []))})")
    for rank in range(ranks):
        for thread in expected:
            if (rank, thread) not in sequences:
                problems.append(f"rank {rank} thread {thread}: no user region recorded")
        if parameters.get(rank, []) != expected_parameters(mode):
            problems.append(f"rank {rank}: parameters {parameters.get(rank, [])}, expected {expected_parameters(mode)}")
        if sampled and innermost_samples.get(rank, 0) == 0:
            where = "kernel" if mode == "balanced" else f"the {DEEPEST}th deep"
            problems.append(f"rank {rank}: no sample inside region {where}")
    summary = json.load(open(os.path.join(archive, "summary.json")))
    for key, count in expected_counts(mode, ranks).items():
        if summary.get(key) != count:
            problems.append(f"summary.json: {key} is {summary.get(key)}, expected {count}")
    if len(argv) == 5:
        problems += check_report(argv[4], archive, mode, ranks)
    for problem in problems:
        print(f"check_user.py: {archive}: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
