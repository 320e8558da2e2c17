#!/usr/bin/env python3
"""How the frames of a stripped program are named (issue #23).

usage: check_names.py REPORT LAUNCHER MPIEXEC PROGRAM STRIPPED DEBUG_FILE WORK_DIR

PROGRAM is tests/report/hot_loop.c built with -g; STRIPPED a copy without
any symbol table, DEBUG_FILE its debug information alone (objcopy
--only-keep-debug). STRIPPED is traced on two ranks:
- no function of the report is a bare address: a frame without a symbol
  is named module+offset, and hot_loop's name is the stripped file's name
  and hot_loop's address in PROGRAM's symbol table;
- each call path (its frames and their lines) appears once, not once per
  rank (the two ranks' names of _start and main are the same);
- no name carries a symbol version (@GLIBC_...), and none of adaptrace's
  own functions (adt_*) is among the functions: they are [adaptrace].
PROGRAM itself is traced too: the hot-lines table (JSON and text) puts a
line of hot_loop's loop first, and the hot call path into hot_loop names
its source lines, the loop's last.
Then DEBUG_FILE is installed where debuggers look for it by build id
(/usr/lib/debug/.build-id/xx/yyyy.debug) and the run repeated: hot_loop
and main get their names. Exit 77 (skipped) when that directory cannot be
written (not root).
"""
import json
import os
import re
import subprocess
import sys


def symbol_address(program, name):
    for line in subprocess.run(["nm", program], capture_output=True, text=True, check=True).stdout.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[2] == name:
            return int(fields[0], 16)
    sys.exit(f"FAIL: {program} has no symbol {name}")


def build_id(program):
    notes = subprocess.run(["readelf", "-n", program], capture_output=True, text=True, check=True).stdout
    match = re.search(r"Build ID: ([0-9a-f]+)", notes)
    if match is None:
        sys.exit(f"FAIL: {program} has no build id")
    return match.group(1)


def traced_report(report, launcher, mpiexec, program, archive):
    subprocess.run(["rm", "-rf", archive], check=True)
    run = subprocess.run([mpiexec, "--oversubscribe", "-np", "2", launcher, "--output", archive, "--sampling-rate",
                          "2kHz", program], capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        sys.exit(f"FAIL: the traced run failed ({run.returncode}):\n{run.stderr[-3000:]}")
    result = subprocess.run([report, "--json", archive], capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def check_stripped(profile, stripped, program):
    names = [function["name"] for function in profile["sampled_functions"]]
    bare = [name for name in names if re.fullmatch(r"0x[0-9a-f]+", name)]
    if bare:
        sys.exit(f"FAIL: functions named by bare address: {bare}")
    expected = f"{os.path.basename(stripped)}+{hex(symbol_address(program, 'hot_loop'))}"
    if expected not in names:
        sys.exit(f"FAIL: hot_loop should be named {expected}; the functions are {names}")
    versioned = [name for name in names if "@" in name]
    if versioned:
        sys.exit(f"FAIL: names with a symbol version: {versioned}")
    own = [name for name in names if name.startswith("adt_")]
    if own:
        sys.exit(f"FAIL: adaptrace's own functions among the application's: {own}")
    if len(names) != len(set(names)):
        sys.exit(f"FAIL: a function listed twice: {names}")
    # A call path is its frames and their lines: two samples in one
    # function at two lines (memmove's, in the ASan build) are two rows
    # whose names alone are the same.
    paths = [(path["path"], path["lines"]) for path in profile["hot_paths"]]
    if len(paths) != len(set(paths)):
        sys.exit(f"FAIL: a call path listed twice (once per rank?): {paths}")
    print(f"ok: stripped: {len(names)} functions, hot_loop named {expected}, no bare address, no version, "
          f"no adt_* function, every call path once")


def loop_lines(program_source):
    """The lines of hot_loop's loop: from its for to its body's line."""
    with open(program_source) as source:
        lines = source.read().splitlines()
    first = next(n for n, text in enumerate(lines, 1) if "for (int i = 0; i < iterations" in text)
    last = next(n for n, text in enumerate(lines, 1) if "sum += i" in text)
    return set(range(first, last + 1))


def check_lines(profile, report, archive):
    loop = loop_lines(os.path.join(os.path.dirname(os.path.abspath(__file__)), "hot_loop.c"))
    hottest = profile["hot_lines"][0] if profile["hot_lines"] else None
    if hottest is None or not hottest["file"].endswith("hot_loop.c") or hottest["line"] not in loop or \
            hottest["function"] != "hot_loop":
        sys.exit(f"FAIL: the hottest line should be one of hot_loop.c:{sorted(loop)} in hot_loop: "
                 f"{profile['hot_lines'][:3]}")
    into_loop = [path for path in profile["hot_paths"] if path["path"].endswith("main > hot_loop")]
    if not into_loop or not any(re.search(rf"hot_loop\.c:{line}$", into_loop[0]["lines"]) for line in loop):
        sys.exit(f"FAIL: the hot path into hot_loop should end at a line of its loop: {into_loop[:1]}")
    text = subprocess.run([report, archive], capture_output=True, text=True, check=True).stdout
    label = f"{hottest['file']}:{hottest['line']}"
    if "hot lines (exclusive)" not in text or f"{label}  hot_loop" not in text or f"> {label}" not in text:
        sys.exit(f"FAIL: the text report should show {label} in its hot lines and hot call paths")
    print(f"ok: with -g: the hottest line is {label} in hot_loop, in the hot lines and the hot call path")


def main():
    if len(sys.argv) != 8:
        sys.exit(__doc__)
    report, launcher, mpiexec, program, stripped, debug_file, work = sys.argv[1:]
    os.makedirs(work, exist_ok=True)
    check_stripped(traced_report(report, launcher, mpiexec, stripped, os.path.join(work, "stripped")), stripped,
                   program)
    with_lines = os.path.join(work, "with-lines")
    check_lines(traced_report(report, launcher, mpiexec, program, with_lines), report, with_lines)
    identity = build_id(stripped)
    directory = os.path.join("/usr/lib/debug/.build-id", identity[:2])
    installed = os.path.join(directory, identity[2:] + ".debug")
    try:
        os.makedirs(directory, exist_ok=True)
        with open(debug_file, "rb") as source, open(installed, "wb") as target:
            target.write(source.read())
    except OSError as error:
        print(f"skipped: the debug file cannot be installed at {installed}: {error}")
        sys.exit(77)
    try:
        profile = traced_report(report, launcher, mpiexec, stripped, os.path.join(work, "debug-file"))
    finally:
        os.remove(installed)
    names = [function["name"] for function in profile["sampled_functions"]]
    if "hot_loop" not in names or "main" not in names:
        sys.exit(f"FAIL: with {installed} the functions should have their names: {names}")
    print(f"ok: with the debug file at {installed}, hot_loop and main have their names")


if __name__ == "__main__":
    main()
