#!/usr/bin/python3
"""Checks a run of mpi-fold-sendrecv (2 ranks, ITERATIONS messages from
rank 0 to rank 1) under ADAPTRACE_ON_FULL=fold (issue #25,
docs/folding.md), from its summary.json, its archive (otf2-print's text)
and its skeleton (adaptrace-report --skeleton --expand):

folded        the default: each location folded from a point on; no
              flush, no event lost; every call in the skeleton (rank 0:
              ITERATIONS MPI_Send, rank 1: ITERATIONS MPI_Recv), and the
              events in the archive plus events_folded are exactly the
              events the skeleton's calls stand for (Enter, its records,
              Leave); the archive's calls are the skeleton's first ones,
              no event follows the location's one MeasurementOnOff(off),
              and samples were kept; the report says from when each
              location's events are folded. The report's MPI profile
              covers the whole run (docs/report.md, "Folded calls"): its
              calls per function are the skeleton's (ITERATIONS MPI_Send
              and MPI_Recv), with their bytes; the calls after the
              archive's are marked estimated, one time step each; its
              total MPI time lies within the skeleton's
              histograms' bounds (per pair, its calls times its shortest
              and its longest call); its communication matrix has every
              message (rank 0 to rank 1), those after the archive's from
              the skeleton.
skeleton-full run with DISTINCT_FROM: the skeleton stops (signatures_full)
              while folding: what it does not hold is counted as lost
              under not_folded, and kept + folded + not_folded events are
              all the run made (2 + 3 x ITERATIONS + 6 per location: Enter
              and Leave of MPI_Init, MPI_Comm_rank, MPI_Comm_size,
              MPI_Finalize, and of each message with its record). The
              report has the calls the skeleton holds and says that both
              skeletons stopped.
no-skeleton   ADAPTRACE_SKELETON=off: nothing can be folded, so the
              buffer flushes instead, counted in folds_flushed; no event
              lost, none folded, no MeasurementOnOff; the report, from
              the events alone, has every call and nothing estimated.
regions       run with "regions": each message inside a user region,
              whose begin and end (outside MPI calls) the skeleton does not
              hold: while folding they are dropped under not_folded, not
              counted as folded. Per location the MPI events kept plus
              events_folded are the 3 x ITERATIONS + 8 the skeleton holds,
              and the events kept are the archive's (the Leaves the
              writer adds where folding began aside).
recovered     run with no-finalize and made an archive of by
              adaptrace-recover: each location folded, kept + folded
              events are all the run made before its end (3 x ITERATIONS
              + 6: no MPI_Finalize), and in the archive no event follows
              the location's first MeasurementOnOff(off), no flush. Each
              rank saved its skeleton (an ending in normal code), so the
              archive has skeleton.adts with every call (ITERATIONS
              MPI_Send and MPI_Recv, standing for the events kept and
              folded), and the report covers the whole run as in
              "folded".
recovered-signal  the same run ended by SIGTERM on every rank (after a
              MPI_Barrier): each rank's handler saved an image of its
              skeleton, which adaptrace-recover encoded: the same checks
              as "recovered" (an MPI_Barrier in MPI_Finalize's place),
              and each rank's skeleton expands to exactly the calls the
              program made: MPI_Init, MPI_Comm_rank, MPI_Comm_size,
              ITERATIONS MPI_Send (rank 0) or MPI_Recv (rank 1), the
              MPI_Barrier.
recovered-abort   rank 1 calls MPI_Abort (its skeleton encoded in normal
              code), mpirun ends rank 0 by SIGTERM in an MPI_Barrier (an
              image): skeleton.adts from both, each rank's calls up to
              the one it was in (neither MPI_Abort nor that MPI_Barrier
              returned).
recovered-segv    rank 1 faults (SIGSEGV) after an MPI_Barrier, mpirun
              ends rank 0 by SIGTERM in a second one: skeleton.adts from
              both images, each rank's calls up to the first MPI_Barrier.

usage: fold_check.py MODE REPORT ARCHIVE ITERATIONS
Exit status 0 when everything holds, 1 with each failure said.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

failures = []


def expect(condition, message):
    if not condition:
        failures.append(message)
    return condition


def events_per_run(iterations):
    return 3 * iterations + 8


def archive_by_location(archive):
    """Per location: its calls (region names, in order), its event count
    (Enter, Leave, message records), the times of its MeasurementOnOff
    (off) records and of its last event, and its BufferFlush count; and
    its events of MPI calls and of user regions apart ("mpi", "user"),
    leaving out the Leaves that the writer adds where folding began (those
    right before the MeasurementOnOff(off), at its time)."""
    text = subprocess.run(["otf2-print", f"{archive}/traces.otf2"], capture_output=True, text=True,
                          check=True).stdout
    locations = {}
    line_pattern = re.compile(r"^(\w+)\s+(\d+)\s+(\d+)\s+(.*)$")
    for line in text.splitlines():
        match = line_pattern.match(line)
        if not match:
            continue
        kind, location, time, rest = match.group(1), int(match.group(2)), int(match.group(3)), match.group(4)
        state = locations.setdefault(location, {"calls": [], "events": 0, "off": [], "last_event": 0, "flushes": 0,
                                                "mpi": 0, "user": 0, "closing": []})
        if kind in ("ENTER", "CALLING_CONTEXT_ENTER"):
            name = re.search(r'"([^"]+)"', rest).group(1)
            if name.startswith("MPI_"):
                state["calls"].append(name)
        if kind in ("ENTER", "CALLING_CONTEXT_ENTER", "LEAVE", "CALLING_CONTEXT_LEAVE", "MPI_SEND", "MPI_RECV"):
            state["events"] += 1
            state["last_event"] = max(state["last_event"], time)
            name = re.search(r'"([^"]+)"', rest).group(1) if "LEAVE" in kind or "ENTER" in kind else "MPI_"
            group = "mpi" if name.startswith("MPI_") else "user"
            state[group] += 1
            if "LEAVE" not in kind:
                state["closing"] = []
            elif state["closing"] and state["closing"][0][0] != time:
                state["closing"] = [(time, group)]
            else:
                state["closing"].append((time, group))
        elif kind == "MEASUREMENT_ON_OFF" and "OFF" in rest:
            state["off"].append(time)
            for closed_time, group in state["closing"]:
                if closed_time == time and len(state["off"]) == 1:
                    state[group] -= 1
            state["closing"] = []
        elif kind == "BUFFER_FLUSH":
            state["flushes"] += 1
    return locations


def skeleton_calls(report, archive):
    """Per rank: its calls as the skeleton expands them."""
    text = subprocess.run([report, "--skeleton", "--expand", archive], capture_output=True, text=True,
                          check=True).stdout
    ranks, current = {}, None
    for line in text.splitlines():
        header = re.match(r"^rank (\d+) thread 0( stopped: \S+)?$", line)
        if header:
            current = ranks.setdefault(int(header.group(1)), [])
        elif current is not None and line:
            current.append(line)
    return ranks


def report_json(report, archive):
    return json.loads(subprocess.run([report, "--json", archive], capture_output=True, text=True,
                                     check=True).stdout)


def skeleton_call_bounds(report, archive):
    """The whole run's MPI time as the skeleton's histograms bound it, in
    seconds: per (previous call, call) pair of every class, its calls times
    its shortest and its longest call (printed in us to 0.001: each bound
    widened by that per call)."""
    text = subprocess.run([report, "--skeleton", archive], capture_output=True, text=True, check=True).stdout
    low = high = 0.0
    calls = None
    for line in text.splitlines():
        pair = re.match(r"^    (\S+)#\d+ after .*: (\d+) calls$", line)
        if pair:
            calls = int(pair.group(2))
            continue
        timing = re.match(r"^      call: mean \S+ us sd \S+, min (\S+) \(rank \d+\), max (\S+) ", line)
        if timing and calls is not None:
            low += calls * (float(timing.group(1)) - 0.0005) * 1e-6
            high += calls * (float(timing.group(2)) + 0.0005) * 1e-6
            calls = None
    return low, high


def check_report_covers_run(report, archive, iterations, skeleton, archive_locations):
    """The report's MPI profile and time steps from the archive's prefix
    and the skeleton's calls after it."""
    profile = report_json(report, archive)
    functions = {function["name"]: function for function in profile["mpi_functions"]}
    skeleton_counts = {}
    for calls in skeleton.values():
        for call in calls:
            name = call.split(" ")[0]
            skeleton_counts[name] = skeleton_counts.get(name, 0) + 1
    report_counts = {name: function["calls"] for name, function in functions.items()}
    expect(report_counts == skeleton_counts,
           f"the report's calls per function {report_counts} are not the skeleton's {skeleton_counts}")
    for name, field in (("MPI_Send", "bytes_sent"), ("MPI_Recv", "bytes_received")):
        function = functions.get(name, {})
        expect(function.get("calls") == iterations,
               f"the report has {function.get('calls')} {name}, the program made {iterations}")
        expect(function.get(field) == 8 * iterations,
               f"the report's {name} {field} is {function.get(field)}, the program's {8 * iterations}")
    folded = profile["events_end"].get("folded")
    if not expect(folded is not None, "the report's JSON has no folded calls"):
        return
    archived = sum(len(location["calls"]) for location in archive_locations.values())
    every_call = sum(len(calls) for calls in skeleton.values())
    expect(folded["locations"] == 2 and folded["calls"] == every_call - archived and folded["untimed"] == 0,
           f"folded {folded}: expected 2 locations and the {every_call - archived} calls after the archive's")
    estimated = sum(function["estimated_calls"] for function in functions.values())
    expect(estimated == folded["calls"], f"{estimated} calls marked estimated, {folded['calls']} folded")
    steps = sum(segment["count"] for segment in profile["segments"])
    steps_estimated = sum(segment["estimated_count"] for segment in profile["segments"])
    expect(steps == every_call - len(skeleton) and steps_estimated == folded["calls"],
           f"{steps} time steps ({steps_estimated} estimated): expected one between consecutive calls, "
           f"{every_call - len(skeleton)}, {folded['calls']} of them after the archive's calls")
    total = sum(function["seconds"] for function in functions.values())
    low, high = skeleton_call_bounds(report, archive)
    expect(low <= total <= high, f"the report's MPI time {total:.6f} s is outside the skeleton's "
                                 f"bounds [{low:.6f}, {high:.6f}] s")
    expect(folded["seconds_min"] <= folded["seconds"] <= folded["seconds_max"],
           f"the folded calls' time {folded['seconds']} outside their bounds")
    # The communication matrix covers the run: rank 0 sent every message
    # to rank 1, most of them only in the skeleton.
    expect(profile["matrix_messages"] == [0, iterations, 0, 0] and
           profile["matrix_bytes"] == [0, 8 * iterations, 0, 0],
           f"the matrix {profile['matrix_messages']} messages, {profile['matrix_bytes']} bytes: expected "
           f"{iterations} messages of 8 bytes from rank 0 to rank 1")
    expect(folded["messages"] > 0 and folded["messages_unattributed"] == 0,
           f"folded messages {folded['messages']}, unattributed {folded['messages_unattributed']}")
    check_damaged_skeleton(report, archive, iterations)
    print(f"report: {sum(report_counts.values())} calls, {folded['calls']} estimated; MPI time {total:.6f} s "
          f"in [{low:.6f}, {high:.6f}] s; {steps} time steps; matrix {profile['matrix_messages']} "
          f"({folded['messages']} messages from the skeleton)")


def check_damaged_skeleton(report, archive, iterations):
    """A copy of the archive whose skeleton.adts has one byte changed: the
    report still reads the archive, says why the skeleton was not used and
    adds no call (its figures are the archive's prefix)."""
    with tempfile.TemporaryDirectory() as scratch:
        copy = os.path.join(scratch, "archive")
        shutil.copytree(archive, copy)
        with open(os.path.join(copy, "skeleton.adts"), "r+b") as skeleton:
            skeleton.seek(64)
            byte = skeleton.read(1)
            skeleton.seek(64)
            skeleton.write(bytes([byte[0] ^ 0xFF]))
        profile = report_json(report, copy)
        folded = profile["events_end"].get("folded", {})
        functions = {function["name"]: function for function in profile["mpi_functions"]}
        expect("corrupt" in folded.get("skeleton_error", "") and folded.get("calls") == 0,
               f"a damaged skeleton.adts: folded {folded}, expected its error and no call added")
        expect(0 < functions.get("MPI_Send", {}).get("calls", 0) < iterations and
               all(function.get("estimated_calls", 0) == 0 for function in functions.values()),
               "a damaged skeleton.adts still added calls")
        text = subprocess.run([report, copy], capture_output=True, text=True, check=True).stdout
        expect("Folded calls left out: " in text and "corrupt" in text,
               "the report's text does not say that the damaged skeleton was left out")


def check_folded(summary, report, archive, iterations):
    lines = {line["rank"]: line for line in summary["per_location"]}
    expect(summary["flushes"] == 0, f"{summary['flushes']} flushes, expected none")
    expect(summary["events_dropped"] == 0, f"events dropped: {summary['events_dropped_by_cause']}")
    expect(summary["locations_folded"] == 2, f"locations_folded is {summary['locations_folded']}, expected 2")
    expect(summary["events_folded"] == sum(line["events_folded"] for line in lines.values()),
           "per_location events_folded do not add up to events_folded")
    skeleton = skeleton_calls(report, archive)
    archive_locations = archive_by_location(archive)
    for rank, message in ((0, "MPI_Send"), (1, "MPI_Recv")):
        line, calls, location = lines[rank], skeleton.get(rank, []), archive_locations.get(rank)
        if not expect(location is not None, f"rank {rank}: no events in the archive"):
            continue
        expect(sum(call.startswith(message + " ") for call in calls) == iterations,
               f"rank {rank}: the skeleton has {sum(c.startswith(message) for c in calls)} {message}, "
               f"the program made {iterations}")
        expect(line["folded_after_s"] is not None and line["events_folded"] > 0,
               f"rank {rank}: not folded: {line}")
        # Each call stands for its Enter, its records (" | " each) and its Leave.
        represented = sum(2 + call.count(" | ") for call in calls)
        expect(line["mpi_events"] + line["events_folded"] == represented,
               f"rank {rank}: {line['mpi_events']} events kept + {line['events_folded']} folded, the skeleton's "
               f"calls stand for {represented}")
        expect(represented == events_per_run(iterations),
               f"rank {rank}: the skeleton stands for {represented} events, the program made "
               f"{events_per_run(iterations)}")
        # The archive: the events kept (a call open where folding began is
        # closed there: one Leave more), the skeleton's first calls, one
        # MeasurementOnOff(off) after every event, no flush.
        expect(location["events"] - line["mpi_events"] in (0, 1),
               f"rank {rank}: {location['events']} events in the archive, {line['mpi_events']} kept")
        archived = location["calls"]
        expect(0 < len(archived) < len(calls) and [c.split(" ")[0] for c in calls[:len(archived)]] == archived,
               f"rank {rank}: the archive's {len(archived)} calls are not the first of the skeleton's {len(calls)}")
        expect(len(location["off"]) == 1 and location["off"][0] >= location["last_event"],
               f"rank {rank}: MeasurementOnOff(off) at {location['off']}, last event at {location['last_event']}")
        expect(location["flushes"] == 0, f"rank {rank}: {location['flushes']} BufferFlush records")
        if summary["samples_taken"] > 0:
            expect(line["samples_kept"] > 0, f"rank {rank}: no sample kept beside the folded events")
    check_report_covers_run(report, archive, iterations, skeleton, archive_locations)
    text = subprocess.run([report, archive], capture_output=True, text=True, check=True).stdout
    expect("Buffer flushes: no flush\n" in text and "held every event" not in text,
           "the report's text claims the buffer held every event")
    for rank in (0, 1):
        expect(re.search(rf"rank {rank} thread 0: events after t=[0-9.]+ s are folded", text) is not None,
               f"the report does not say from when rank {rank}'s events are folded")


def check_skeleton_full(summary, report, archive, iterations):
    stops = summary["skeleton_stopped_by_cause"]
    expect(stops["signatures_full"] == 2, f"skeleton_stopped_by_cause is {stops}, expected signatures_full 2")
    expect(summary["flushes"] == 0, f"{summary['flushes']} flushes, expected none")
    losses = summary["events_dropped_by_cause"]
    expect(losses["not_folded"] > 0 and summary["events_dropped"] == losses["not_folded"],
           f"events dropped: {losses}, expected all of them not_folded")
    for line in summary["per_location"]:
        expect(line["folded_after_s"] is not None and line["events_folded"] > 0, f"not folded: {line}")
    kept_folded = summary["mpi_events"] + summary["events_folded"] + losses["not_folded"]
    expect(kept_folded == 2 * events_per_run(iterations),
           f"{summary['mpi_events']} kept + {summary['events_folded']} folded + {losses['not_folded']} not folded, "
           f"the program made {2 * events_per_run(iterations)}")
    # The report adds the calls the skeleton holds, up to where it stopped,
    # and says that the rest is in neither.
    skeleton = skeleton_calls(report, archive)
    profile = report_json(report, archive)
    folded = profile["events_end"].get("folded", {})
    expect(folded.get("locations") == 2 and folded.get("locations_stopped") == 2,
           f"folded {folded}: expected 2 locations, both stopped")
    report_sends = {function["name"]: function["calls"] for function in profile["mpi_functions"]}.get("MPI_Send")
    skeleton_sends = sum(call.startswith("MPI_Send ") for call in skeleton.get(0, []))
    expect(report_sends == skeleton_sends and 0 < skeleton_sends < iterations,
           f"the report has {report_sends} MPI_Send, the stopped skeleton {skeleton_sends} of {iterations}")


def check_regions(summary, archive, iterations):
    expect(summary["flushes"] == 0, f"{summary['flushes']} flushes, expected none")
    expect(summary["locations_folded"] == 2, f"locations_folded is {summary['locations_folded']}, expected 2")
    losses = summary["events_dropped_by_cause"]
    expect(losses["not_folded"] > 0 and summary["events_dropped"] == losses["not_folded"],
           f"events dropped: {losses}, expected the user regions' after folding under not_folded")
    made = 2 * (events_per_run(iterations) + 2 * iterations)
    expect(summary["mpi_events"] + summary["events_folded"] + losses["not_folded"] == made,
           f"{summary['mpi_events']} kept + {summary['events_folded']} folded + {losses['not_folded']} not folded, "
           f"the program made {made}")
    locations = archive_by_location(archive)
    for line in summary["per_location"]:
        location = locations[line["rank"]]
        expect(location["mpi"] + location["user"] == line["mpi_events"],
               f"rank {line['rank']}: {location['mpi']} MPI and {location['user']} user region events in the "
               f"archive, {line['mpi_events']} kept")
        expect(location["mpi"] + line["events_folded"] == events_per_run(iterations),
               f"rank {line['rank']}: {location['mpi']} MPI events kept + {line['events_folded']} folded, the "
               f"skeleton holds {events_per_run(iterations)}")


def expect_all_saved(summary):
    saved = summary.get("ending_skeleton", {})
    causes = saved.get("ranks_by_cause", {})
    expect(saved.get("written") is True and causes.get("saved") == 2 and
           all(count == 0 for cause, count in causes.items() if cause != "saved"),
           f"summary.json's ending_skeleton is {saved}: expected skeleton.adts written from both ranks' skeletons")


def expect_calls(report, archive, iterations, last_calls):
    """Each rank's skeleton expands to exactly MPI_Init, MPI_Comm_rank,
    MPI_Comm_size, its ITERATIONS messages, then last_calls."""
    skeleton = skeleton_calls(report, archive)
    for rank, message in ((0, "MPI_Send"), (1, "MPI_Recv")):
        functions = [call.split(" ", 1)[0] for call in skeleton.get(rank, [])]
        made = ["MPI_Init", "MPI_Comm_rank", "MPI_Comm_size"] + [message] * iterations + last_calls
        if functions != made:
            first = next((i for i, (a, b) in enumerate(zip(functions, made)) if a != b), min(len(functions), len(made)))
            expect(False, f"rank {rank}: the skeleton's calls differ from the program's at call {first}: "
                          f"{functions[first:first + 3]} against {made[first:first + 3]} "
                          f"({len(functions)} calls, the program made {len(made)})")


def check_recovered(summary, report, archive, iterations, signal):
    expect("ending" in summary, "summary.json says nothing of the ending: not a recovered archive")
    expect(summary["flushes"] == 0 and summary["events_dropped"] == 0,
           f"flushes {summary['flushes']}, events dropped {summary['events_dropped_by_cause']}: expected none")
    expect(summary["locations_folded"] == 2, f"locations_folded is {summary['locations_folded']}, expected 2")
    # No MPI_Finalize (Enter, Leave); with the signal an MPI_Barrier in its
    # place (Enter, CollectiveBegin, CollectiveEnd, Leave).
    made = events_per_run(iterations) + (2 if signal else -2)
    for line in summary["per_location"]:
        expect(line["folded_after_s"] is not None, f"rank {line['rank']}: not folded: {line}")
        expect(line["mpi_events"] + line["events_folded"] == made,
               f"rank {line['rank']}: {line['mpi_events']} kept + {line['events_folded']} folded, the program "
               f"made {made}")
    archive_locations = archive_by_location(archive)
    for rank, location in archive_locations.items():
        expect(location["off"] and min(location["off"]) >= location["last_event"] and location["flushes"] == 0,
               f"rank {rank}: MeasurementOnOff(off) at {location['off']}, last event at {location['last_event']}, "
               f"{location['flushes']} flushes")
    # Each rank saved its skeleton (an exit without MPI_Finalize: encoded
    # in normal code; SIGTERM: an image of it, from the signal handler),
    # and the recovered archive has skeleton.adts with every call, which
    # the report adds to the archive's prefix.
    expect_all_saved(summary)
    if signal:
        expect_calls(report, archive, iterations, ["MPI_Barrier"])
    if not expect(os.path.exists(f"{archive}/skeleton.adts"), "the recovered archive has no skeleton.adts"):
        return
    skeleton = skeleton_calls(report, archive)
    lines = {line["rank"]: line for line in summary["per_location"]}
    for rank, message in ((0, "MPI_Send"), (1, "MPI_Recv")):
        calls = skeleton.get(rank, [])
        expect(sum(call.startswith(message + " ") for call in calls) == iterations,
               f"rank {rank}: the recovered skeleton has {sum(c.startswith(message) for c in calls)} {message}, "
               f"the program made {iterations}")
        represented = sum(2 + call.count(" | ") for call in calls)
        expect(represented == made and lines[rank]["mpi_events"] + lines[rank]["events_folded"] == represented,
               f"rank {rank}: the recovered skeleton's calls stand for {represented} events, "
               f"{lines[rank]['mpi_events']} kept + {lines[rank]['events_folded']} folded, the program made {made}")
    check_report_covers_run(report, archive, iterations, skeleton, archive_locations)


def check_recovered_ended_by_one(summary, report, archive, iterations, how, last_calls):
    """Rank 1 ended the run (how), mpirun ended rank 0 by SIGTERM: both
    saved their skeletons (rank 0's as an image, from its handler), and
    skeleton.adts has each rank's calls up to the one it was in."""
    ending = summary.get("ending", {})
    expect(ending.get("how") == how and ending.get("ranks_saved") == 2,
           f"summary.json's ending is {ending}: expected {how}, both ranks saved")
    expect_all_saved(summary)
    if expect(os.path.exists(f"{archive}/skeleton.adts"), "the recovered archive has no skeleton.adts"):
        expect_calls(report, archive, iterations, last_calls)


def check_no_skeleton(summary, report, archive, iterations):
    expect(summary["flushes"] > 0 and summary["folds_flushed"] == summary["flushes"],
           f"flushes {summary['flushes']}, folds_flushed {summary['folds_flushed']}: expected equal and more than 0")
    expect(summary["locations_folded"] == 0 and summary["events_folded"] == 0,
           f"folded without a skeleton: {summary['locations_folded']} locations, {summary['events_folded']} events")
    expect(summary["events_dropped"] == 0, f"events dropped: {summary['events_dropped_by_cause']}")
    # Each flush appends its BufferFlush record to the events kept.
    expect(summary["mpi_events"] == 2 * events_per_run(iterations) + summary["flushes"],
           f"{summary['mpi_events']} events kept, the program made {2 * events_per_run(iterations)} and "
           f"{summary['flushes']} flushes")
    for rank, location in archive_by_location(archive).items():
        expect(not location["off"], f"rank {rank}: MeasurementOnOff(off) without folding")
    profile = report_json(report, archive)
    functions = {function["name"]: function for function in profile["mpi_functions"]}
    expect("folded" not in profile["events_end"] and all("estimated_calls" not in f for f in functions.values()),
           "the report of a run that did not fold has estimated calls")
    expect(functions.get("MPI_Send", {}).get("calls") == iterations,
           f"the report has {functions.get('MPI_Send', {}).get('calls')} MPI_Send, the program made {iterations}")


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("folded", "skeleton-full", "no-skeleton", "regions", "recovered",
                                                           "recovered-signal", "recovered-abort", "recovered-segv"):
        sys.exit(__doc__)
    mode, report, archive, iterations = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    summary = json.load(open(f"{archive}/summary.json"))
    if mode == "folded":
        check_folded(summary, report, archive, iterations)
    elif mode == "skeleton-full":
        check_skeleton_full(summary, report, archive, iterations)
    elif mode == "regions":
        check_regions(summary, archive, iterations)
    elif mode in ("recovered", "recovered-signal"):
        check_recovered(summary, report, archive, iterations, mode == "recovered-signal")
    elif mode == "recovered-abort":
        check_recovered_ended_by_one(summary, report, archive, iterations, "MPI_Abort", [])
    elif mode == "recovered-segv":
        check_recovered_ended_by_one(summary, report, archive, iterations, "SIGSEGV", ["MPI_Barrier"])
    else:
        check_no_skeleton(summary, report, archive, iterations)
    for failure in failures:
        print(f"fold_check.py {mode}: {failure}", file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
