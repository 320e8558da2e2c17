#!/usr/bin/python3
"""The report page of a run of tests/user/user_regions.c (balanced) draws
the user regions and the phases: drawn in headless Chromium without a
console message, its regions table lists "solver" and "kernel", its
phases table has a row for each phase (and the calls outside every phase)
with MPI_Barrier in "setup" and MPI_Allreduce in "iterate". Without
CHROMIUM only that the page is written.

usage: check_page.py REPORT ARCHIVE_DIR OUTPUT_DIR [CHROMIUM]
"""
import os
import re
import subprocess
import sys

HEADLESS = ["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--window-size=1300,2400"]


def rows(dom, table_id):
    """The cells of each row of the table in the element table_id."""
    found = re.search(rf'id="{table_id}"[^>]*>(.*?)</table>', dom, re.DOTALL)
    if found is None:
        return []
    return [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r'<tr class="row">(.*?)</tr>', found.group(1))]


def main(argv):
    if len(argv) not in (4, 5):
        sys.stderr.write(__doc__)
        return 2
    report, archive, output_dir = argv[1:4]
    os.makedirs(output_dir, exist_ok=True)
    page = os.path.join(output_dir, "report.html")
    subprocess.run([report, "--html", page, archive], check=True, stdout=subprocess.DEVNULL)
    if len(argv) == 4 or not argv[4]:
        return 0 if os.path.getsize(page) > 0 else 1
    drawn = subprocess.run([argv[4]] + HEADLESS + ["--dump-dom", f"file://{page}"], capture_output=True, text=True,
                           timeout=120)
    problems = []
    errors = [line for line in drawn.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    if errors:
        problems.append(f"console messages: {errors[:5]}")
    marker = re.search(r'id="drawn"[^>]*>([^<]*)<', drawn.stdout)
    if marker is None or "regions" not in marker.group(1).split():
        problems.append(f"the regions section was not drawn: {marker and marker.group(1)}")
    regions = {row[0] for row in rows(drawn.stdout, "user-regions")}
    if not {"solver", "kernel", "setup", "iterate"} <= regions:
        problems.append(f"regions table: {sorted(regions)}")
    phases = {row[0]: row for row in rows(drawn.stdout, "phases")}
    if list(phases) != ["(outside every phase)", "setup", "iterate"]:
        problems.append(f"phases table rows: {list(phases)}")
    elif "MPI_Barrier" not in phases["setup"][5] or "MPI_Allreduce" not in phases["iterate"][5]:
        problems.append(f"phases' MPI functions: setup {phases['setup'][5]}, iterate {phases['iterate'][5]}")
    for problem in problems:
        print(f"check_page.py: {page}: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
