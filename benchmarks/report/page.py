#!/usr/bin/env python3
"""The report page at many ranks, in headless Chromium.

Writes a synthetic archive of RANKS ranks (synthetic_archive), its HTML
page (adaptrace-report --html), opens the page in headless Chromium and
prints one JSON object: the page's size, the milliseconds each section
took to draw (page.js records them; the timeline's draw is also what one
zoom or pan step redraws), the number of elements in the drawn DOM, and
the browser's wall-clock seconds from start to the dumped DOM.

usage: page.py BUILD_DIR [--ranks N] [--steps N] [--chromium PATH] [--keep DIR]
"""
import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build")
    parser.add_argument("--ranks", type=int, default=256)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser"))
    parser.add_argument("--keep", help="write the archive, the page and its screenshot here and keep them")
    options = parser.parse_args()
    if not options.chromium:
        sys.exit("page.py: chromium was not found (--chromium PATH)")
    scratch = options.keep or tempfile.mkdtemp(prefix="adt-report-page-")
    try:
        archive = os.path.join(scratch, "archive")
        shutil.rmtree(archive, ignore_errors=True)
        subprocess.run([os.path.join(options.build, "bin", "synthetic_archive"), archive, str(options.ranks),
                        str(options.steps)], check=True, stdout=subprocess.DEVNULL)
        page = os.path.join(scratch, "report.html")
        subprocess.run([os.path.join(options.build, "bin", "adaptrace-report"), "--html", page, archive],
                       check=True, stdout=subprocess.DEVNULL)
        browser = [options.chromium, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                   "--window-size=1300,2400"]
        start = time.monotonic()
        dumped = subprocess.run(browser + ["--dump-dom", f"file://{page}"], capture_output=True, text=True,
                                timeout=300)
        browser_seconds = time.monotonic() - start
        marker = re.search(r'id="drawn" data-milliseconds="([^"]*)">([^<]*)<', dumped.stdout)
        if marker is None:
            sys.exit(f"page.py: the page was not drawn: {dumped.stderr[-2000:]}")
        errors = [line for line in dumped.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
        result = {"ranks": options.ranks, "page_mib": round(os.path.getsize(page) / 2**20, 2),
                  "sections": marker.group(2).split(),
                  "draw_milliseconds": json.loads(html.unescape(marker.group(1))),
                  "dom_elements": len(re.findall(r"<[a-zA-Z]", re.sub(r"<script\b.*?</script>", "<script>",
                                                                     dumped.stdout, flags=re.DOTALL))),
                  "browser_seconds": round(browser_seconds, 2), "console_errors": errors[:5]}
        if options.keep:
            subprocess.run(browser + [f"--screenshot={scratch}/report.png", f"file://{page}"], capture_output=True,
                           timeout=300, check=True)
        print(json.dumps(result, indent=1))
    finally:
        if not options.keep:
            shutil.rmtree(scratch)


main()
