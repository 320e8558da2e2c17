#!/usr/bin/env python3
"""adaptrace-recover on damaged rescue files (issue #30): it must end, soon,
with an archive that OTF2's reader accepts or with a clear error, whatever
bytes a rescue file holds.

usage: recover_damaged.py rescue WORK MPIEXEC LAUNCHER DEMO
           a real rescue directory, WORK/pristine.rescue: the demo on 2
           ranks ended by SIGTERM, rank 0 spilling its events to a file
           (ADAPTRACE_ON_FULL=flush), rank 1 stopping them (stop), both
           sampling, so that every section and the spill are in it
       recover_damaged.py world-size WORK RECOVER OTF2_PRINT
           rank 0's header says 6,914 ranks instead of 2 (byte 29): the
           recovery leaves that file out in one line and recovers rank 1,
           within 5 s (it used to start 6,914 threads and write for minutes)
       recover_damaged.py records WORK RECOVER OTF2_PRINT
           records that are whole but that the writer refuses, in rank 1's
           buffer image: a Leave of another region than the one entered
           last, a sample at a finer rate than its location's at the end;
           each cuts its chain there (the whole recovery failed before)
       recover_damaged.py alone WORK RECOVER OTF2_PRINT
           rank 1's file alone, its buffer image's first byte damaged (the
           image has no check: it is written while other threads append):
           the file is left out while rebuilding, and with it the only
           rank, which is an error in two lines (the recovery took the
           run's settings from a rank without a header, a null pointer)
       recover_damaged.py mutations WORK RECOVER OTF2_PRINT CASES SEED
           CASES seeded mutations of one file each (bytes changed, at random
           or where the structure is, or the file cut short; in a third of
           them the header's and sections' checks are made to match, as for
           damage that a hash misses, so that the readers behind the checks
           see it too): each must end
           within 10 s, without a crash signal or a sanitizer report, with
           an archive otf2-print --silent -Werror accepts: the other file is
           whole, so its rank at least is recovered (the damaged file left
           out in one line, or cut where it is damaged). A failing case is
           kept in WORK/failed-<case>.
       recover_damaged.py skeleton WORK RECOVER OTF2_PRINT REPORT SEED
           SEED: a rescue file with a skeleton section (the recover fuzz
           target's seed: one rank, exited without MPI_Finalize, folding);
           its skeleton's part damaged, the section's check made to match
           (damage a hash misses): a structure length beyond the part or a
           thread count of 2^32 - 1 is refused by skeleton.adts's writer,
           and the recovery writes the archive without skeleton.adts,
           saying why ("a rank's skeleton is damaged"); names that do not
           match their count leave the file out in one line; a byte
           changed inside the structure or the timing ends as the
           mutations must, with a skeleton.adts only where
           adt_skeleton_file_read reads it back (else none, the summary
           saying the rank's skeleton is damaged), which adaptrace-report
           --skeleton shows or refuses in one line as corrupt (a call
           signature that does not decode). The intact file is recovered
           with skeleton.adts.
       recover_damaged.py skeleton-image WORK MPIEXEC LAUNCHER FOLD_PROGRAM RECOVER OTF2_PRINT REPORT REPLAY
           a run that folds (FOLD_PROGRAM: mpi-fold-sendrecv 2,000 sigterm
           on 2 ranks) ended by SIGTERM: each rank's handler saved an
           image of its skeletons. Intact, the recovery writes
           skeleton.adts from both. A byte of rank 1's image changed: its
           section's check refuses the image alone, in one line, and the
           archive is recovered with a skeleton.adts of rank 0 alone that
           names rank 1 missing, "damaged" (version 7; rank 1 counted
           "damaged" in summary.json, rank 0 "saved"): adaptrace-report
           --skeleton says so, --expand gives rank 0 exactly the calls
           the intact file gives it, the report's text says that rank 1's
           later calls are not in its figures while rank 0's are; and
           adaptrace-replay refuses the file in one line, with a non-zero
           exit, having made no MPI call but MPI_Init and MPI_Finalize
           (traced). The same with the section's check made to match: the
           image's own hash refuses it. Rank 1's rescue file removed: the
           file holds rank 0 the same and names rank 1 missing, not_saved.
"""
import concurrent.futures
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import time

# rescue.h: adt_rescue_header is 4,272 bytes; each section is introduced
# by {u32 tag, u32 check, u64 bytes} and padded to 8.
HEADER_BYTES = 4272
SECTION_BYTES = 16
BUFFER_TAG = 2
CONTEXTS_TAG = 3
SKELETON_TAG = 7
END_TAG = 8
SKELETON_IMAGE_TAG = 9
HASH_START = 0xCBF29CE484222325


def fnv1a(data, value=HASH_START):
    """adt_rescue_hash (rescue.h)."""
    for byte in data:
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value


def refresh_checks(data):
    """The header's and each whole section's checks made to match their
    bytes, as adaptrace's save computes them (rescue.h)."""
    if len(data) < HEADER_BYTES:
        return
    data[HEADER_BYTES - 8:HEADER_BYTES] = bytes(8)
    data[HEADER_BYTES - 8:HEADER_BYTES] = struct.pack("<Q", fnv1a(data[:HEADER_BYTES]))
    at = HEADER_BYTES
    while at + SECTION_BYTES <= len(data):
        tag, _, size = struct.unpack_from("<IIQ", data, at)
        if at + SECTION_BYTES + size > len(data):
            return
        body = at + SECTION_BYTES
        content = HASH_START if tag in (BUFFER_TAG, CONTEXTS_TAG) else fnv1a(data[body:body + size])
        check = fnv1a(struct.pack("<IQQ", tag, size, content))
        struct.pack_into("<I", data, at + 4, (check ^ (check >> 32)) & 0xFFFFFFFF)
        at = body + (size + 7) // 8 * 8
        if tag == END_TAG:
            return


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def descendants(root):
    """The pids of every process below root, from /proc."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as stat:
                    parents[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def catches_sigterm(pid, program):
    """Whether pid runs program and has a handler for SIGTERM."""
    try:
        with open("/proc/%d/comm" % pid) as comm:
            if comm.read().strip() != program:
                return False
        with open("/proc/%d/status" % pid) as status:
            caught = next(line for line in status if line.startswith("SigCgt:"))
    except (OSError, StopIteration):
        return False
    return int(caught.split()[1], 16) & (1 << (signal.SIGTERM - 1)) != 0


def wait_for_handlers(run, program, count):
    """Until count processes named program below run catch SIGTERM (at most
    60 s: else the test fails saying so)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if sum(catches_sigterm(pid, program) for pid in descendants(run.pid)) >= count:
            return
        if run.poll() is not None:
            fail("the demo ended before it was measured (exit %d)" % run.returncode)
        time.sleep(0.1)
    run.kill()
    fail("%d processes of %s did not catch SIGTERM within 60 s" % (count, program))


def make_rescue(work, mpiexec, launcher, demo):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    archive = os.path.join(work, "archive")
    common = ["--buffer-size", "1M", "--sampling-rate", "2kHz", "--output", archive]
    command = [mpiexec, "--oversubscribe",
               "-np", "1", launcher, "--on-full", "flush"] + common + [demo, "1000000", ":",
               "-np", "1", launcher, "--on-full", "stop"] + common + [demo, "1000000"]
    with open(os.path.join(work, "run.txt"), "w") as log:
        run = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        # SIGTERM before a rank's library constructor has set its handler
        # ends it unsaved (a busy machine once took longer than a fixed
        # 2.5 s to start both), so the demo runs 2.5 s past that point.
        wait_for_handlers(run, "adaptrace-demo", 2)
        time.sleep(2.5)
        # To each rank, as a batch system ends a job: through mpiexec, the
        # rank that saved first ended, and mpiexec killed the other
        # (SIGKILL) before it had saved (rank 0, which spills, once in CI).
        for pid in descendants(run.pid):
            if catches_sigterm(pid, "adaptrace-demo"):
                os.kill(pid, signal.SIGTERM)
        try:
            run.wait(timeout=60)
        except subprocess.TimeoutExpired:
            run.kill()
            fail("the demo did not end on SIGTERM")
    rescue = archive + ".rescue"
    for rank in (0, 1):
        if not os.path.exists(os.path.join(rescue, "rank-%d.adtr" % rank)):
            fail("rank %d saved no rescue file (%s)" % (rank, open(os.path.join(work, "run.txt")).read()[-2000:]))
    os.rename(rescue, os.path.join(work, "pristine.rescue"))
    print("ok: a rescue of 2 ranks, %s bytes" % ", ".join(
        str(os.path.getsize(os.path.join(work, "pristine.rescue", "rank-%d.adtr" % rank))) for rank in (0, 1)))


def copy_rescue(work, name):
    """WORK/NAME/archive.rescue: the files linked, not copied (the recovery
    only reads them, then unlinks); a file to change is replaced by a copy."""
    case = os.path.join(work, name)
    shutil.rmtree(case, ignore_errors=True)
    os.makedirs(case)
    rescue = os.path.join(case, "archive.rescue")
    os.makedirs(rescue)
    pristine = os.path.join(work, "pristine.rescue")
    for file in os.listdir(pristine):
        os.link(os.path.join(pristine, file), os.path.join(rescue, file))
    return os.path.join(case, "archive")


def replace_file(path, data):
    os.unlink(path)
    with open(path, "wb") as out:
        out.write(data)


def recover(recover_path, otf2_print, archive, timeout):
    """(verdict, details): verdict None when the outcome is acceptable."""
    started = time.monotonic()
    try:
        done = subprocess.run([recover_path, "--quiet", archive], capture_output=True, text=True,
                              errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired as expired:
        return "no end within %d s" % timeout, (expired.stderr or b"")[-2000:], None
    seconds = time.monotonic() - started
    err = done.stderr
    if done.returncode < 0:
        return "killed by signal %d" % -done.returncode, err, seconds
    if "Sanitizer" in err or "runtime error:" in err:
        return "a sanitizer report", err, seconds
    if done.returncode != 0:
        if "adaptrace-recover: " not in err:
            return "exit %d without a message" % done.returncode, err, seconds
        return None, err, seconds
    checked = subprocess.run([otf2_print, "--silent", "-Werror", os.path.join(archive, "traces.otf2")],
                             capture_output=True, text=True, errors="replace", timeout=60)
    if checked.returncode != 0:
        return "an archive otf2-print rejects", err + checked.stdout[-1000:] + checked.stderr[-2000:], seconds
    return None, err, seconds


def world_size(work, recover_path, otf2_print):
    archive = copy_rescue(work, "world-size")
    damaged = os.path.join(archive + ".rescue", "rank-0.adtr")
    data = bytearray(open(damaged, "rb").read())
    if data[28:32] != struct.pack("<I", 2):
        fail("rank 0's header does not say 2 ranks at byte 28")
    data[29] = 0x1B  # 2 -> 6914
    replace_file(damaged, data)
    verdict, err, seconds = recover(recover_path, otf2_print, archive, 5)
    if verdict is not None:
        fail("%s:\n%s" % (verdict, err))
    lines = [line for line in err.splitlines() if line.strip()]
    if len(lines) != 1 or damaged not in lines[0]:
        fail("not one line naming %s:\n%s" % (damaged, err))
    if not os.path.exists(os.path.join(archive, "traces.otf2")):
        fail("no archive (stderr: %s)" % err)
    with open(os.path.join(archive, "summary.json")) as summary:
        ending = json.load(summary)["ending"]
    if ending["ranks"] != 2 or ending["ranks_saved"] != 1 or ending["ranks_not_saved"] != [0]:
        fail("the summary does not say rank 0 of 2 was not saved: %s" % ending)
    print("ok: %s (%.2f s)" % (lines[0], seconds))


# buffer/image.c and buffer_internal.h: the image header, then the
# locations, the spill, and {u64 index, chunk} per chunk of a chain; a
# chunk has {u32 next, u32 used}, then records of {u64 time, u32 size,
# u16 kind, u8 level, u8 padding} and the payload (after the sample number
# for samples).
IMAGE_HEADER_BYTES = 48
EVENT_LEVEL = 0xFF
ENTER, LEAVE, SAMPLE = 1, 2, 17  # format.h, adt_record_kind


def image_records(data):
    """(offset of the payload in data, kind, level) of every record of the
    full chunks of the buffer image in data, up to each one's `used`. A
    chain's tail is left out: its `used` says nothing yet (its fill is the
    chain's write pointer, in the location), and past that fill it may
    still hold the records of a level a halving removed (a recovery never
    reads those: damaging one there cut nothing, once under ASan)."""
    offset, _, size = next(entry for entry in sections(data) if entry[1] == BUFFER_TAG)
    image = offset + SECTION_BYTES
    _, _, chunk_bytes, _, location_count, location_bytes, _, spill_bytes = struct.unpack_from(
        "<QIIIIQQQ", data, image)
    at = image + IMAGE_HEADER_BYTES + location_count * location_bytes + spill_bytes
    while struct.unpack_from("<Q", data, at)[0] != 0xFFFFFFFF:
        chunk = at + 8
        record = chunk + 8
        _, used = struct.unpack_from("<II", data, chunk)
        while record + 16 <= chunk + min(used, chunk_bytes):
            _, record_size, kind, level, _ = struct.unpack_from("<QIHBB", data, record)
            if record_size == 0 or record_size % 8 or record + record_size > chunk + used:
                break
            yield record + 16 + (0 if level == EVENT_LEVEL else 8), kind, level
            record += record_size
        at = chunk + chunk_bytes


def records(work, recover_path, otf2_print):
    name = "rank-1.adtr"
    pristine = open(os.path.join(work, "pristine.rescue", name), "rb").read()
    found = list(image_records(pristine))
    enters = [at for at, kind, level in found if kind == ENTER and level == EVENT_LEVEL]
    if not enters:
        fail("no Enter in rank 1's buffer image")
    outer_region = struct.unpack_from("<I", pristine, enters[0])[0]
    leave = next(at for at, kind, level in found if kind == LEAVE and level == EVENT_LEVEL and
                 struct.unpack_from("<I", pristine, at)[0] != outer_region)
    sample = next((at for at, kind, level in found if kind == SAMPLE and level != EVENT_LEVEL), None)
    if sample is None:
        fail("no sample in a full chunk of a level in rank 1's buffer image")
    for case, at, value in (("a Leave of another region", leave, outer_region),
                            ("a sample at rate shift 63", sample + 4, 63)):
        archive = copy_rescue(work, "records")
        data = bytearray(pristine)
        data[at:at + 4] = struct.pack("<I", value)
        replace_file(os.path.join(archive + ".rescue", name), data)
        verdict, err, seconds = recover(recover_path, otf2_print, archive, 10)
        if verdict is None and not os.path.exists(os.path.join(archive, "traces.otf2")):
            verdict = "no archive"
        if verdict is not None:
            fail("%s: %s\n%s" % (case, verdict, err))
        with open(os.path.join(archive, "summary.json")) as summary:
            ending = json.load(summary)["ending"]
        if ending["ranks_saved"] != 2 or ending["records_cut"] == 0:
            fail("%s: not both ranks saved and records cut: %s" % (case, ending))
        print("ok: %s: cut there, %d records cut (%.2f s)" % (case, ending["records_cut"], seconds))


def alone(work, recover_path, otf2_print):
    name = "rank-1.adtr"
    archive = copy_rescue(work, "alone")
    os.unlink(os.path.join(archive + ".rescue", "rank-0.adtr"))
    data = bytearray(open(os.path.join(work, "pristine.rescue", name), "rb").read())
    offset, _, _ = next(entry for entry in sections(data) if entry[1] == BUFFER_TAG)
    data[offset + SECTION_BYTES] ^= 0xFF
    replace_file(os.path.join(archive + ".rescue", name), data)
    verdict, err, seconds = recover(recover_path, otf2_print, archive, 10)
    if verdict is not None:
        fail("%s:\n%s" % (verdict, err))
    lines = err.splitlines()
    if len(lines) != 2 or name not in lines[0] or "left out" not in lines[0] or "no usable rescue file" not in lines[1]:
        fail("not the file left out, then no usable file:\n%s" % err)
    print("ok: %s (%.2f s)" % (" / ".join(lines), seconds))


def sections(data):
    """(offset, tag, bytes) of each section of an intact file."""
    found, at = [], HEADER_BYTES
    while at + SECTION_BYTES <= len(data):
        tag, _, size = struct.unpack_from("<IIQ", data, at)
        found.append((at, tag, size))
        at += SECTION_BYTES + (size + 7) // 8 * 8
        if tag == END_TAG:
            break
    return found


def mutate(rng, data, layout):
    """The changed bytes and a description of the change."""
    data = bytearray(data)
    how = rng.random()
    if how < 0.15:
        cut = rng.randrange(len(data))
        return data[:cut], "cut to %d bytes" % cut
    if how < 0.55:
        # Where the structure is: the header, a section's header or first
        # bytes (the buffer image's header and bookkeeping, the journal's
        # first entries, the tree's header).
        offset, tag, size = rng.choice(layout)
        if rng.random() < 0.2:
            at = rng.randrange(HEADER_BYTES)
        elif rng.random() < 0.3:
            at = offset + rng.randrange(SECTION_BYTES)
        else:
            reach = min(size, 65536 if tag == BUFFER_TAG else 4096)
            at = offset + SECTION_BYTES + (rng.randrange(reach) if reach else 0)
    else:
        at = rng.randrange(len(data))
    at = min(at, len(data) - 1)
    kind = rng.random()
    if kind < 0.4:
        data[at] ^= 1 << rng.randrange(8)
        return data, "bit flipped at %d" % at
    if kind < 0.7:
        data[at] = rng.randrange(256)
        return data, "byte set at %d" % at
    at -= at % 4
    value = rng.choice([0, 1, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, rng.randrange(1 << 32)])
    if at + 8 <= len(data) and rng.random() < 0.5:
        value = rng.choice([value, (1 << 64) - 1, 1 << 40])
        data[at:at + 8] = struct.pack("<Q", value)
        return data, "u64 %#x at %d" % (value, at)
    data[at:at + 4] = struct.pack("<I", value & 0xFFFFFFFF)
    return data, "u32 %#x at %d" % (value & 0xFFFFFFFF, at)


def mutations(work, recover_path, otf2_print, cases, seed):
    pristine = os.path.join(work, "pristine.rescue")
    names = sorted(os.listdir(pristine))
    contents = {name: open(os.path.join(pristine, name), "rb").read() for name in names}
    layouts = {name: sections(contents[name]) for name in names}

    def one(case):
        rng = random.Random(seed * 1000003 + case)
        name = rng.choice(names)
        data, change = mutate(rng, contents[name], layouts[name])
        if rng.random() < 1 / 3:
            refresh_checks(data)
            change += " (checks made to match)"
        archive = copy_rescue(work, "case-%d" % case)
        replace_file(os.path.join(archive + ".rescue", name), data)
        verdict, err, seconds = recover(recover_path, otf2_print, archive, 10)
        if verdict is None and not os.path.exists(os.path.join(archive, "traces.otf2")):
            verdict = "no archive, though the other file is whole"
        if verdict is None and len([line for line in err.splitlines() if name in line]) > 1:
            verdict = "more than one line on %s" % name
        if verdict is None:
            shutil.rmtree(os.path.dirname(archive))
        else:
            os.rename(os.path.dirname(archive), os.path.join(work, "failed-%d" % case))
        return case, name, change, verdict, err, seconds

    for entry in os.listdir(work):
        if entry.startswith("failed-") or entry.startswith("case-"):
            shutil.rmtree(os.path.join(work, entry))
    started = time.monotonic()
    failures, outcomes, slowest = [], {"recovered": 0, "left out": 0}, 0.0
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for case, name, change, verdict, err, seconds in pool.map(one, range(cases)):
            slowest = max(slowest, seconds or 0.0)
            if verdict is not None:
                failures.append("case %d (%s, %s): %s\n%s" % (case, name, change, verdict, err[-1500:]))
            elif "left out" in err:
                outcomes["left out"] += 1
            else:
                outcomes["recovered"] += 1
    print("%d cases (seed %d) in %.1f s, slowest %.2f s: %d recovered with both ranks (the damage cut off or "
          "harmless), %d with the damaged file left out, %d failed" % (
              cases, seed, time.monotonic() - started, slowest, outcomes["recovered"], outcomes["left out"],
              len(failures)))
    for failure in failures:
        print("FAIL: " + failure, file=sys.stderr)
    if failures:
        sys.exit(1)


def skeleton(work, recover_path, otf2_print, report, seed):
    pristine = bytes(open(seed, "rb").read())
    found = [(at + SECTION_BYTES, size) for at, tag, size in sections(bytearray(pristine)) if tag == SKELETON_TAG]
    if len(found) != 1:
        fail(f"{seed} has {len(found)} skeleton sections, expected one")
    body, _ = found[0]
    function_count, names_bytes, part_bytes = struct.unpack_from("<IIQ", pristine, body)
    part = body + 16 + names_bytes

    def changed(offset, packing, value):
        data = bytearray(pristine)
        struct.pack_into(packing, data, offset, value)
        refresh_checks(data)
        return data

    cases = {
        "intact": (bytearray(pristine), "written"),
        "structure-length": (changed(part, "<Q", 1 << 62), "refused"),
        "thread-count": (changed(part + 8, "<I", 0xFFFFFFFF), "refused"),
        "names-count": (changed(body, "<I", function_count + 1), "left out"),
        "structure-byte": (changed(part + 12 + 40, "<B", pristine[part + 12 + 40] ^ 0xFF), "ends"),
        "timing-byte": (changed(part + part_bytes - 24, "<B", pristine[part + part_bytes - 24] ^ 0xFF), "ends"),
    }
    for name, (data, expected) in cases.items():
        case = os.path.join(work, "skeleton-" + name)
        shutil.rmtree(case, ignore_errors=True)
        os.makedirs(os.path.join(case, "archive.rescue"))
        archive = os.path.join(case, "archive")
        with open(os.path.join(archive + ".rescue", "rank-0.adtr"), "wb") as out:
            out.write(data)
        verdict, err, _ = recover(recover_path, otf2_print, archive, 30)
        if verdict is not None:
            fail(f"skeleton {name}: {verdict}: {err[-2000:]}")
        written = os.path.exists(os.path.join(archive, "skeleton.adts"))
        if expected == "written" and not written:
            fail(f"skeleton {name}: no skeleton.adts from an intact section: {err}")
        if expected == "refused":
            summary = json.load(open(os.path.join(archive, "summary.json")))
            problem = summary.get("ending_skeleton", {}).get("problem", "")
            if written or "a rank's skeleton is damaged" not in problem:
                fail(f"skeleton {name}: skeleton.adts {'written' if written else 'not written'}, "
                     f"problem {problem!r}: expected it refused as damaged")
        if expected == "left out" and "its skeleton's function names do not match their count" not in err:
            fail(f"skeleton {name}: the file was not left out for its names: {err}")
        if written:
            shown = subprocess.run([report, "--skeleton", archive], capture_output=True, text=True,
                                   errors="replace", timeout=60)
            refused = shown.returncode > 0 and len(shown.stderr.strip().splitlines()) == 1 and \
                "corrupt" in shown.stderr
            if shown.returncode != 0 and (expected == "written" or not refused):
                fail(f"skeleton {name}: adaptrace-report --skeleton exit {shown.returncode}: {shown.stderr[-2000:]}")
        elif expected == "ends":
            summary = json.load(open(os.path.join(archive, "summary.json")))
            problem = summary.get("ending_skeleton", {}).get("problem", "")
            if "a rank's skeleton is damaged" not in problem:
                fail(f"skeleton {name}: no skeleton.adts, and the summary's problem is {problem!r}")
        print(f"skeleton {name}: {'skeleton.adts written' if written else 'no skeleton.adts'}")


def expanded_by_rank(report, archive):
    """adaptrace-report --skeleton --expand ARCHIVE: each rank's lines (its
    threads' headers and calls), by rank."""
    shown = subprocess.run([report, "--skeleton", "--expand", archive], capture_output=True, text=True,
                           errors="replace", timeout=60)
    if shown.returncode != 0 or "Sanitizer" in shown.stderr or "runtime error:" in shown.stderr:
        fail("adaptrace-report --skeleton --expand %s: exit %d: %s" % (archive, shown.returncode, shown.stderr[-2000:]))
    ranks, rank = {}, None
    for line in shown.stdout.splitlines():
        if line.startswith("rank ") and " thread " in line:
            rank = int(line.split()[1])
        if rank is not None and not line.startswith("rank 1: no skeleton ("):
            ranks.setdefault(rank, []).append(line)
    return ranks, shown.stdout


def sanitizer_report(case, tool, err):
    if "Sanitizer" in err or "runtime error:" in err:
        fail("skeleton image %s: a sanitizer report from %s:\n%s" % (case, tool, err[-3000:]))


def rank1_missing(case, archive, report, intact_rank0, cause):
    """The recovered archive's skeleton.adts holds rank 0, exactly as the
    intact file does, and names rank 1 missing for cause."""
    shown = subprocess.run([report, "--skeleton", archive], capture_output=True, text=True, errors="replace",
                           timeout=60)
    sanitizer_report(case, "adaptrace-report --skeleton", shown.stderr)
    lines = shown.stdout.splitlines()
    missing = "rank 1: no skeleton (%s)" % cause
    if shown.returncode != 0 or missing not in lines or \
            not any(line.startswith("rank 0 thread 0: ") for line in lines) or \
            any(line.startswith("rank 1 thread") or line.startswith("ranks ") for line in lines):
        fail("skeleton image %s: adaptrace-report --skeleton (exit %d) does not show rank 0's class and %r:\n%s%s" %
             (case, shown.returncode, missing, shown.stdout[-3000:], shown.stderr[-1000:]))
    ranks, text = expanded_by_rank(report, archive)
    if ranks.get(0) != intact_rank0 or 1 in ranks or text.splitlines()[-1] != missing:
        fail("skeleton image %s: --expand gives rank 0 %d lines (the intact file %d) and rank 1 %s" %
             (case, len(ranks.get(0, [])), len(intact_rank0), ranks.get(1, [])[:3]))


def partial_skeleton(case, archive, report, replay, mpiexec, launcher, intact_rank0):
    """The recovered archive's skeleton.adts holds rank 0 and names rank 1
    missing (damaged); the report and the replay say so."""
    rank1_missing(case, archive, report, intact_rank0, "damaged")
    full = subprocess.run([report, archive], capture_output=True, text=True, errors="replace", timeout=120)
    sanitizer_report(case, "adaptrace-report", full.stderr)
    missing_line = "on ranks whose skeleton skeleton.adts lacks: rank 1 (damaged)"
    if full.returncode != 0 or missing_line not in full.stdout or \
            "rank 1 thread 0: events after t=" not in full.stdout or \
            "but skeleton.adts lacks this rank's skeleton (damaged): not in the figures" not in full.stdout or \
            "calls on 1 folded location come from skeleton.adts" not in full.stdout:
        fail("skeleton image %s: the report (exit %d) does not say rank 1's later calls are missing while rank 0's "
             "are added:\n%s%s" % (case, full.returncode, full.stdout[-4000:], full.stderr[-1000:]))
    trace = os.path.join(os.path.dirname(archive), "replay.trace")
    environment = dict(os.environ, ADAPTRACE_OUTPUT=trace, ADAPTRACE_SAMPLING="off")
    replayed = subprocess.run([mpiexec, "--oversubscribe", "-np", "2", launcher, replay, archive],
                              capture_output=True, text=True, errors="replace", timeout=120,
                              stdin=subprocess.DEVNULL, env=environment)
    sanitizer_report(case, "adaptrace-replay", replayed.stderr)
    said = [line for line in replayed.stderr.splitlines() if line.startswith("adaptrace-replay:")]
    expected = ("adaptrace-replay: skeleton.adts lacks the skeletons of 1 of its 2 ranks (rank 1: damaged): "
                "replay needs every rank's calls")
    if replayed.returncode == 0 or said != [expected] or replayed.stdout:
        fail("skeleton image %s: adaptrace-replay exit %d, its lines %s, stdout %r: expected one line %r" %
             (case, replayed.returncode, said, replayed.stdout[-500:], expected))
    calls, _ = expanded_by_rank(report, trace)
    made = sorted(line for lines in calls.values() for line in lines if not line.startswith("rank "))
    if made != ["MPI_Finalize", "MPI_Finalize", "MPI_Init", "MPI_Init"]:
        fail("skeleton image %s: the refused replay made other calls: %s" % (case, made[:10]))
    return said[0]


def skeleton_image(work, mpiexec, launcher, fold_program, recover_path, otf2_print, report, replay):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    archive = os.path.join(work, "archive")
    with open(os.path.join(work, "run.txt"), "w") as log:
        subprocess.run([mpiexec, "--oversubscribe", "-np", "2", launcher, "--buffer-size", "16M", "--output", archive,
                        fold_program, "2000", "-1", "sigterm"], stdout=log, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL, timeout=60)
    name = "rank-1.adtr"
    try:
        data = bytearray(open(os.path.join(archive + ".rescue", name), "rb").read())
    except OSError:
        fail("rank 1 saved no rescue file (%s)" % open(os.path.join(work, "run.txt")).read()[-2000:])
    os.rename(archive + ".rescue", os.path.join(work, "pristine.rescue"))
    found = [entry for entry in sections(data) if entry[1] == SKELETON_IMAGE_TAG]
    if len(found) != 1:
        fail("rank 1's rescue file has %d skeleton image sections, expected one" % len(found))
    offset, _, size = found[0]
    # A byte of the image's slabs: after the section's head, the names
    # and the image's own head, in the middle of the section.
    damaged_at = offset + SECTION_BYTES + size // 2
    for case, refresh in (("intact", False), ("check", False), ("hash", True)):
        changed = bytearray(data)
        if case != "intact":
            changed[damaged_at] ^= 0x5A
        if refresh:
            refresh_checks(changed)
        case_archive = copy_rescue(work, "image-" + case)
        replace_file(os.path.join(case_archive + ".rescue", name), changed)
        verdict, err, _ = recover(recover_path, otf2_print, case_archive, 30)
        if verdict is not None:
            fail("skeleton image %s: %s:\n%s" % (case, verdict, err))
        summary = json.load(open(os.path.join(case_archive, "summary.json")))
        causes = summary.get("ending_skeleton", {}).get("ranks_by_cause", {})
        problem = summary.get("ending_skeleton", {}).get("problem", "")
        written = os.path.exists(os.path.join(case_archive, "skeleton.adts"))
        if case == "intact":
            if not written or causes.get("saved") != 2 or problem != "":
                fail("skeleton image intact: skeleton.adts %s, ranks by cause %s, problem %r" %
                     ("written" if written else "not written", causes, problem))
            intact_ranks, _ = expanded_by_rank(report, case_archive)
            if len(intact_ranks.get(0, [])) < 1000 or len(intact_ranks.get(1, [])) < 1000:
                fail("skeleton image intact: --expand gives %s lines by rank" %
                     {r: len(lines) for r, lines in intact_ranks.items()})
        else:
            why = "its check does not match" if case == "check" else "its hash does not match"
            lines = [line for line in err.splitlines() if "skeleton" in line]
            if len(lines) != 1 or name not in lines[0] or why not in lines[0] or "left out" not in lines[0]:
                fail("skeleton image %s: not one line saying the image is damaged (%s):\n%s" % (case, why, err))
            if not written or causes.get("damaged") != 1 or causes.get("saved") != 1 or \
                    problem != "1 rank saved a damaged skeleton image":
                fail("skeleton image %s: skeleton.adts %s, ranks by cause %s, problem %r" %
                     (case, "written" if written else "not written", causes, problem))
            if summary.get("ending", {}).get("ranks_saved") != 2:
                fail("skeleton image %s: the rest of rank 1's file was not recovered: %s" %
                     (case, summary.get("ending")))
            refusal = partial_skeleton(case, case_archive, report, replay, mpiexec, launcher, intact_ranks[0])
        print("skeleton image %s: %s" % (case, lines[0] if case != "intact" else "skeleton.adts written"))
        if case != "intact":
            print("skeleton image %s: rank 1 named missing (damaged); %s" % (case, refusal))
    # Rank 1's rescue file gone: its skeleton is missing, not_saved.
    case_archive = copy_rescue(work, "image-no-file")
    os.unlink(os.path.join(case_archive + ".rescue", name))
    verdict, err, _ = recover(recover_path, otf2_print, case_archive, 30)
    if verdict is not None:
        fail("skeleton image no-file: %s:\n%s" % (verdict, err))
    skeleton = json.load(open(os.path.join(case_archive, "summary.json"))).get("ending_skeleton", {})
    if skeleton.get("written") is not True or skeleton.get("problem") != "1 rank saved no rescue file (or a damaged one)":
        fail("skeleton image no-file: summary.json's ending_skeleton is %s" % skeleton)
    rank1_missing("no-file", case_archive, report, intact_ranks[0], "not_saved")
    print("skeleton image no-file: rank 1 named missing (not_saved)")


def main(argv):
    if len(argv) == 6 and argv[1] == "rescue":
        make_rescue(*argv[2:])
    elif len(argv) == 5 and argv[1] == "world-size":
        world_size(*argv[2:])
    elif len(argv) == 5 and argv[1] == "records":
        records(*argv[2:])
    elif len(argv) == 5 and argv[1] == "alone":
        alone(*argv[2:])
    elif len(argv) == 7 and argv[1] == "skeleton":
        skeleton(*argv[2:])
    elif len(argv) == 10 and argv[1] == "skeleton-image":
        skeleton_image(*argv[2:])
    elif len(argv) == 7 and argv[1] == "mutations":
        mutations(argv[2], argv[3], argv[4], int(argv[5]), int(argv[6]))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv)
