#!/usr/bin/env python3
"""The compensated archive of a whole run (adaptrace-report --compensate
--write-archive, docs/compensation.md) read back.

usage: compensated_archive_check.py REPORT OTF2_PRINT ARCHIVE OUT

OUT (removed first: the test's own output) receives the archive written
from ARCHIVE. Then:
- otf2-print --silent -Werror reads it clean;
- every location holds the same records as in ARCHIVE, kind by kind in
  the same order, and the same global definitions, kind by kind; the
  anchor's locations and definitions are the report's counts;
- its times go forward on every location, and no time was raised to keep
  them so (the report's "clamped");
- each rank's main location lost from its span exactly what the report
  says compensation removed from it (rank_removed_seconds, within a tick
  either side of the rounding), and its first event kept its time;
- the report of the written archive, not compensated again, has the
  compensated report's figures: every rank's span, MPI time, computation,
  late sender and collective waiting, every MPI function's time;
- the report states the run's measurement cost per rank as summary.json
  estimated it, compensated or not, of the archive and of the copy;
- causality holds (issue #26): the compensation makes no receive end
  before its send or a collective's exit before its last entry, leaves none
  that the archive had so, and every rule is resolved; where the run's
  clock offsets are all 0 (its ranks shared one clock: mpi-events/setup.c)
  the archive itself has no receive before its send either;
- reporting it with --compensate again is refused, as is writing into a
  directory that is not empty, and --write-archive without --compensate.
"""
import collections
import json
import shutil
import subprocess
import sys

report, otf2_print, archive, out = sys.argv[1:5]
failures = []


def fail(message):
    failures.append(message)


def run(*arguments, expect=0):
    done = subprocess.run(arguments, capture_output=True, text=True)
    if done.returncode != expect:
        sys.exit(f"{' '.join(arguments)} exited {done.returncode}, expected {expect}:\n{done.stderr[-2000:]}")
    return done


def events(directory):
    """Per location: its records' kinds in order, and their times."""
    kinds, times = collections.defaultdict(list), collections.defaultdict(list)
    listing = run(otf2_print, f"{directory}/traces.otf2").stdout
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[0].isupper() and fields[1].isdigit() and fields[2].isdigit():
            kinds[int(fields[1])].append(fields[0])
            times[int(fields[1])].append(int(fields[2]))
    return kinds, times


def definitions(directory):
    """The global definitions' kinds, counted, and the clock's line."""
    counted = collections.Counter()
    clock = None
    for line in run(otf2_print, "-G", f"{directory}/traces.otf2").stdout.splitlines():
        fields = line.split()
        if fields and fields[0].isupper() and fields[0] not in ("OTF2", "DEFINITION") and "=" not in fields[0]:
            counted[fields[0]] += 1
        if fields and fields[0] == "CLOCK_PROPERTIES":
            clock = line
    return counted, clock


def main_locations(directory):
    """location id -> rank for each rank's first location (its main thread)."""
    ranks = {}
    for line in run(otf2_print, "-G", f"{directory}/traces.otf2").stdout.splitlines():
        fields = line.split()
        if fields and fields[0] == "LOCATION" and "Group:" in line:
            group = line.split("Group:")[1].split("<")[-1].rstrip(">").strip()
            ranks.setdefault(int(group), int(fields[1]))
    return {location: rank for rank, location in ranks.items()}


shutil.rmtree(out, ignore_errors=True)
compensated = json.loads(run(report, "--json", "--compensate", "--write-archive", out, archive).stdout)
written = compensated["compensation"].get("archive")
if written is None:
    sys.exit("the compensated report says no archive was written")
run(otf2_print, "--silent", "-Werror", f"{out}/traces.otf2")

causality = compensated["compensation"]
for key in ("causality_violations", "measured_violations_left", "unresolved"):
    if causality[key] != 0:
        fail(f"the compensation's {key} is {causality[key]}, not 0")
offsets = [line.split("Offset:")[1].split(",")[0].strip()
           for line in run(otf2_print, "-C", f"{archive}/traces.otf2").stdout.splitlines()
           if line.startswith("CLOCK_OFFSET")]
if offsets and all(offset == "+0" for offset in offsets) and causality["measured_violations"] != 0:
    fail(f"{causality['measured_violations']} receives before their sends in an archive whose clocks are one")

measured_kinds, measured_times = events(archive)
copied_kinds, copied_times = events(out)
if sorted(measured_kinds) != sorted(copied_kinds):
    fail(f"locations {sorted(copied_kinds)} written, {sorted(measured_kinds)} in the archive")
for location, kinds in measured_kinds.items():
    if copied_kinds.get(location) != kinds:
        have = collections.Counter(copied_kinds.get(location, []))
        fail(f"location {location}: records {dict(have)} written, {dict(collections.Counter(kinds))} in the archive")
total = sum(len(kinds) for kinds in copied_kinds.values())
if total != written["events"] or len(copied_kinds) != written["locations"]:
    fail(f"{total} events of {len(copied_kinds)} locations read back, the report says {written}")
if written["clamped"] != 0:
    fail(f"{written['clamped']} times were raised to keep their location's order")
for location, times in copied_times.items():
    back = [k for k in range(1, len(times)) if times[k] < times[k - 1]]
    if back:
        fail(f"location {location}: time goes back at its event {back[0]}")

measured_definitions, _ = definitions(archive)
copied_definitions, clock = definitions(out)
measured_definitions.pop("CLOCK_OFFSET", None)
if measured_definitions != copied_definitions:
    fail(f"definitions {dict(copied_definitions)} written, {dict(measured_definitions)} in the archive")
if sum(copied_definitions.values()) != written["definitions"]:
    fail(f"{sum(copied_definitions.values())} global definitions read back, the report says {written['definitions']}")
resolution = int(clock.split("Ticks per Seconds:")[1].split(",")[0])
offset = int(clock.split("Global Offset:")[1].split(",")[0])
length = int(clock.split("Length:")[1].split(",")[0])
first = min(min(times) for times in copied_times.values())
last = max(max(times) for times in copied_times.values())
if offset > first or offset + length <= last:
    fail(f"the clock's offset {offset} and length {length} do not span the times {first} to {last}")

removed = compensated["compensation"]["rank_removed_seconds"]
for location, rank in main_locations(out).items():
    measured, copied = measured_times[location], copied_times[location]
    if copied[0] != measured[0]:
        fail(f"rank {rank}: its first event moved from {measured[0]} to {copied[0]}")
    lost = (measured[-1] - measured[0]) - (copied[-1] - copied[0])
    if abs(lost - removed[rank] * resolution) > 1.5:
        fail(f"rank {rank}: its span lost {lost} ticks, the report removed {removed[rank] * resolution:.1f}")

plain = json.loads(run(report, "--json", out).stdout)
for rank, (have, want) in enumerate(zip(plain["ranks"], compensated["ranks"])):
    for field, value in want.items():
        if abs(have[field] - value) > 2.0 / resolution:
            fail(f"rank {rank}: {field} {have[field]} from the written archive, {value} compensated")
# By name: functions of equal time may be listed in either order.
plain_functions = {function["name"]: function["seconds"] for function in plain["mpi_functions"]}
compensated_functions = {function["name"]: function["seconds"] for function in compensated["mpi_functions"]}
if sorted(plain_functions) != sorted(compensated_functions):
    fail(f"MPI functions {sorted(plain_functions)} from the written archive, {sorted(compensated_functions)} compensated")
for name, want in compensated_functions.items():
    have = plain_functions.get(name)
    if have is None or abs(have - want) > 1e-6 * max(1.0, want):
        fail(f"{name}: {have} s from the written archive, {want} s compensated")

summary = json.load(open(f"{archive}/summary.json"))
stated = {"rank_seconds": summary["measurement_cost_per_rank_s"], "rank_share": summary["measurement_share_per_rank"]}
measured = json.loads(run(report, "--json", archive).stdout)
for name, figures in (("measured", measured), ("compensated", compensated), ("written archive's", plain)):
    cost = figures["measurement_cost"]
    if cost is None or any(abs(a - b) > 1e-12 for key in stated for a, b in zip(cost[key], stated[key])) or \
            len(cost["rank_seconds"]) != len(stated["rank_seconds"]):
        fail(f"the {name} report states the measurement cost {cost}, summary.json {stated}")
if "Measurement cost (the run's estimate" not in run(report, archive).stdout:
    fail("the text report does not state the measurement cost")

again = run(report, "--compensate", out, expect=1)
if "compensated already" not in again.stderr:
    fail(f"compensating the written archive again: {again.stderr.strip()}")
refused = run(report, "--compensate", "--write-archive", out, archive, expect=2)
if "not empty" not in refused.stderr:
    fail(f"writing into a full directory: {refused.stderr.strip()}")
refused = run(report, "--write-archive", out + ".other", archive, expect=2)
if "needs --compensate" not in refused.stderr:
    fail(f"--write-archive without --compensate: {refused.stderr.strip()}")

if failures:
    sys.exit("\n".join(failures[:20]))
print(f"{total} events of {len(copied_kinds)} locations and {written['definitions']} definitions written, "
      f"ranks' spans reduced by {', '.join(f'{s:.6f}' for s in removed)} s as reported")
