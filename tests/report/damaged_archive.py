#!/usr/bin/env python3
"""adaptrace-report on damaged copies of a real archive (issue #30).

usage: damaged_archive.py REPORT ARCHIVE WORK_DIR cut
       damaged_archive.py REPORT ARCHIVE WORK_DIR mutations CASES SEED

cut: the largest event file of ARCHIVE (it must span two chunks at least)
cut inside its second chunk, as a copy cut short by a full disk. The
report must end within 5 s with exit status 2 and one line on stderr that
names the file; with --salvage it must end within 5 s, leave out that
location (and say why) and give every other rank exactly the figures the
intact archive gives it.

mutations: CASES damaged copies, each with one to three byte changes or
cuts at random places of random files of ARCHIVE (random.Random(SEED)).
Every case must end within 10 s, with and without --salvage: exit 0 with
a report, or exit 2 with one line on stderr that says what is damaged;
never a signal, a sanitizer report or OTF2's own messages. The cases that
fail are kept in WORK_DIR.
"""
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import time


def archive_files(archive):
    files = ["traces.otf2", "traces.def"]
    files += sorted("traces/" + name for name in os.listdir(os.path.join(archive, "traces")))
    return files


def event_chunk_size(archive):
    """The anchor file's event chunk size (report/check.c gives its layout)."""
    with open(os.path.join(archive, "traces.otf2"), "rb") as anchor:
        data = anchor.read()
    return struct.unpack_from("<Q", data, 12)[0]


def run_report(report, archive, options, limit):
    started = time.monotonic()
    try:
        result = subprocess.run([report, *options, archive], capture_output=True, text=True, timeout=limit,
                                errors="replace")
    except subprocess.TimeoutExpired:
        return None, "", f"did not end within {limit} s", limit
    return result.returncode, result.stdout, result.stderr, time.monotonic() - started


def one_damage_line(stderr):
    lines = stderr.strip().splitlines()
    return len(lines) == 1 and "damaged" in lines[0] and lines[0].startswith("adaptrace-report: ")


def check_cut(report, archive, work):
    copy = os.path.join(work, "cut")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(archive, copy)
    chunk = event_chunk_size(archive)
    events = [name for name in archive_files(archive) if name.endswith(".evt")]
    largest = max(events, key=lambda name: os.path.getsize(os.path.join(archive, name)))
    size = os.path.getsize(os.path.join(archive, largest))
    if size <= chunk:
        sys.exit(f"FAIL: {largest} is {size} bytes, one chunk of {chunk}: the run must write more events")
    cut_at = chunk + (min(size, 2 * chunk) - chunk) // 2
    with open(os.path.join(copy, largest), "r+b") as event_file:
        event_file.truncate(cut_at)
    status, _, stderr, seconds = run_report(report, copy, [], 5)
    if status != 2 or not one_damage_line(stderr) or largest not in stderr:
        sys.exit(f"FAIL: {largest} cut at byte {cut_at}: exit {status} after {seconds:.1f} s, stderr {stderr!r}")
    print(f"ok: {largest} cut at byte {cut_at}: exit 2 after {seconds:.2f} s: {stderr.strip()}")

    status, salvaged, stderr, seconds = run_report(report, copy, ["--salvage", "--json"], 5)
    if status != 0:
        sys.exit(f"FAIL: --salvage: exit {status} after {seconds:.1f} s, stderr {stderr!r}")
    salvaged = json.loads(salvaged)
    status, intact, stderr, _ = run_report(report, archive, ["--json"], 30)
    if status != 0:
        sys.exit(f"FAIL: the intact archive: exit {status}, stderr {stderr!r}")
    intact = json.loads(intact)
    left_out = salvaged["left_out"]
    if len(left_out) != 1 or largest not in left_out[0]["reason"]:
        sys.exit(f"FAIL: --salvage should leave out the location of {largest} alone: {left_out}")
    damaged_rank = left_out[0]["rank"]
    for rank, figures in enumerate(salvaged["ranks"]):
        if rank == damaged_rank:
            if figures["mpi_seconds"] != 0 or figures["span_seconds"] != 0:
                sys.exit(f"FAIL: rank {rank}, left out, still has figures: {figures}")
            continue
        for name in ("span_seconds", "mpi_seconds"):
            if figures[name] != intact["ranks"][rank][name]:
                sys.exit(f"FAIL: rank {rank}'s {name}: {figures[name]} salvaged, {intact['ranks'][rank][name]} intact")
    print(f"ok: --salvage after {seconds:.2f} s leaves out rank {damaged_rank} ({left_out[0]['reason']}); "
          f"the other ranks' span and MPI time equal the intact archive's")
    text_status, text, _, _ = run_report(report, copy, ["--salvage"], 5)
    if text_status != 0 or "left out (damaged)" not in text or largest not in text:
        sys.exit(f"FAIL: the salvaged text report does not say what it left out:\n{text[:2000]}")


def damage(copy, files, rng):
    """One to three byte changes or cuts; returns what was done."""
    done = []
    for _ in range(rng.randint(1, 3)):
        name = rng.choice(files)
        path = os.path.join(copy, name)
        size = os.path.getsize(path)
        if size == 0:
            continue
        at = rng.randrange(size)
        if rng.random() < 0.3:
            with open(path, "r+b") as damaged:
                damaged.truncate(at)
            done.append(f"{name} cut at {at}")
        else:
            with open(path, "r+b") as damaged:
                damaged.seek(at)
                old = damaged.read(1)[0]
                new = (old + rng.randint(1, 255)) % 256
                damaged.seek(at)
                damaged.write(bytes([new]))
            done.append(f"{name}[{at}] {old}->{new}")
    return done


def check_mutations(report, archive, work, cases, seed):
    rng = random.Random(seed)
    files = archive_files(archive)
    outcomes = {"read": 0, "refused": 0}
    failures = []
    slowest = 0.0
    for case in range(cases):
        copy = os.path.join(work, f"case-{case}")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(archive, copy)
        what = damage(copy, files, rng)
        failed = False
        for options in ([], ["--salvage"]):
            status, _, stderr, seconds = run_report(report, copy, options, 10)
            slowest = max(slowest, seconds)
            if status == 0 and not stderr.strip():
                outcomes["read"] += 1
            elif status == 2 and one_damage_line(stderr) and not re.search(r"\[OTF2\]|Sanitizer", stderr):
                outcomes["refused"] += 1
            else:
                failed = True
                failures.append(f"case {case} ({'; '.join(what)}) {' '.join(options)}: exit {status} after "
                                f"{seconds:.1f} s, stderr {stderr[:600]!r}")
        if not failed:
            shutil.rmtree(copy)
    print(f"{cases} damaged archives, each read with and without --salvage: {outcomes['read']} reports, "
          f"{outcomes['refused']} refusals with one line; slowest {slowest:.2f} s")
    if failures:
        print("\n".join(failures))
        sys.exit(f"FAIL: {len(failures)} readings neither reported nor refused cleanly (copies kept in {work})")


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    report, archive, work, mode = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    if mode == "cut":
        check_cut(report, archive, work)
    elif mode == "mutations" and len(sys.argv) == 7:
        check_mutations(report, archive, work, int(sys.argv[5]), int(sys.argv[6]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
