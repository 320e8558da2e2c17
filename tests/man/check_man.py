#!/usr/bin/env python3
"""Checks an installed man page as man(1) renders it.

Usage: check_man.py render PAGE
       check_man.py options PAGE COMMAND
       check_man.py variables PAGE LAUNCHER

render:    `man -l` renders PAGE without a warning, with its NAME section.
options:   every option that `COMMAND --help` lists (--word) is in PAGE.
variables: every variable that `LAUNCHER --help` lists (the configuration
           table as compiled) has its entry in PAGE (a line of its own,
           the entry's heading), and PAGE has none for another variable.
Exit status 0 when it holds, 1 otherwise (each failure said).
"""
import os
import re
import subprocess
import sys


def rendered(page):
    """PAGE as man(1) prints it to a pipe, in the C locale (ASCII hyphens),
    wide enough that no entry heading is broken; man's warnings (groff's
    -w all) fail the check."""
    environment = dict(os.environ, LC_ALL="C", MANWIDTH="120", MANPAGER="cat", PAGER="cat")
    run = subprocess.run(["man", "--warnings=all", "-l", page], capture_output=True, text=True, env=environment)
    if run.returncode != 0 or run.stderr.strip():
        sys.exit(f"{page}: man -l failed (status {run.returncode}):\n{run.stderr}")
    # Bold and underline as overstriking, where man keeps them.
    return re.sub(r".\x08", "", run.stdout)


def help_of(command):
    return subprocess.run([command, "--help"], capture_output=True, text=True, check=True).stdout


def main(argv):
    if len(argv) < 3 or (argv[1], len(argv)) not in (("render", 3), ("options", 4), ("variables", 4)):
        sys.exit(__doc__)
    mode, page = argv[1], argv[2]
    text = rendered(page)
    problems = []
    if mode == "render":
        if not re.search(r"^NAME\n +\S", text, re.M):
            problems.append("no NAME section")
    elif mode == "options":
        listed = sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", help_of(argv[3]))))
        missing = [option for option in listed if not re.search(rf"(?<![\w-]){option}(?![\w-])", text)]
        if missing:
            problems.append(f"no {', '.join(missing)} (listed by {argv[3]} --help)")
        if not listed:
            problems.append(f"{argv[3]} --help lists no option")
    else:
        variables = re.findall(r"^      (ADAPTRACE_\w+) \(default:", help_of(argv[3]), re.M)
        headings = set(re.findall(r"^ +(ADAPTRACE_\w+)$", text, re.M))
        missing = [name for name in variables if name not in headings]
        unknown = sorted(headings - set(variables))
        if missing:
            problems.append(f"no entry for {', '.join(missing)} (the configuration table of {argv[3]} --help)")
        if unknown:
            problems.append(f"an entry for what {argv[3]} --help does not list: {', '.join(unknown)}")
        if not variables:
            problems.append(f"{argv[3]} --help lists no variable")
    for problem in problems:
        print(f"{page}: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
