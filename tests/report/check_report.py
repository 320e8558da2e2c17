#!/usr/bin/env python3
"""Checks adaptrace-report's figures against what a workload of
workloads.c is known to do.

usage: check_report.py REPORT ARCHIVE pingpong|imbalance|late-sender EXPECT_DIR
       check_report.py REPORT ARCHIVE html OUTPUT_DIR [CHROMIUM]
       check_report.py REPORT ARCHIVE speedscope OUTPUT_DIR

The figures below are workloads.c's constants; EXPECT_DIR/computed.RANK
holds the seconds each rank really computed (a descheduled rank computes
longer than it was told). html writes the page of
ARCHIVE into OUTPUT_DIR, checks that it loads nothing from elsewhere and,
with CHROMIUM, that a headless browser draws every section (the marker
page.js writes last) and keeps a screenshot beside it. speedscope writes
the speedscope file of ARCHIVE into OUTPUT_DIR and checks that its stacks
and weights are the report's hot call paths.
"""
import collections
import json
import re
import subprocess
import sys

PINGPONG_ROUNDS, PINGPONG_BYTES = 100, 1024
IMBALANCE_INJECTED = 2 / 1.5  # two ranks: one computes 2T, the other T
LATE_ROUNDS, LATE_DELAY_SECONDS = 3, 0.200
RANKS = 2


def fail(message):
    print(f"check_report.py: {message}", file=sys.stderr)
    sys.exit(1)


def expect(condition, message):
    if not condition:
        fail(message)


def profile_of(report, archive):
    return json.loads(subprocess.run([report, "--json", archive], check=True,
                                     capture_output=True, text=True).stdout)


def function(profile, name):
    matches = [f for f in profile["mpi_functions"] if f["name"] == name]
    expect(len(matches) == 1, f"{name} is not in the MPI profile once: {profile['mpi_functions']}")
    return matches[0]


def check_pingpong(profile, expect_dir):
    send, recv = function(profile, "MPI_Send"), function(profile, "MPI_Recv")
    expect(send["calls"] == 2 * PINGPONG_ROUNDS, f"MPI_Send calls {send['calls']}")
    expect(recv["calls"] == 2 * PINGPONG_ROUNDS, f"MPI_Recv calls {recv['calls']}")
    expect(send["bytes_sent"] == 2 * PINGPONG_ROUNDS * PINGPONG_BYTES, f"MPI_Send bytes {send['bytes_sent']}")
    expect(recv["bytes_received"] == 2 * PINGPONG_ROUNDS * PINGPONG_BYTES,
           f"MPI_Recv bytes {recv['bytes_received']}")
    one_way = [0, PINGPONG_ROUNDS, PINGPONG_ROUNDS, 0]
    expect(profile["matrix_messages"] == one_way, f"message matrix {profile['matrix_messages']}")
    expect(profile["matrix_bytes"] == [m * PINGPONG_BYTES for m in one_way],
           f"byte matrix {profile['matrix_bytes']}")
    expect(profile["messages_matched"] == 2 * PINGPONG_ROUNDS and profile["messages_unmatched"] == 0,
           f"matched {profile['messages_matched']}, unmatched {profile['messages_unmatched']}")


def computed(expect_dir):
    return [float(open(f"{expect_dir}/computed.{rank}").read()) for rank in range(RANKS)]


def check_imbalance(profile, expect_dir):
    seconds = computed(expect_dir)
    expected = max(seconds) / (sum(seconds) / RANKS)
    expect(expected >= IMBALANCE_INJECTED * 0.75, f"the ranks computed {seconds}: not the imbalance injected")
    imbalance = profile["rank_spread"]["computation_seconds"]["imbalance"]
    expect(abs(imbalance / expected - 1) <= 0.05,
           f"computation max/mean {imbalance:.4f}, the ranks computed {seconds} s ({expected:.4f}): not within 5 %")
    expect(profile["ranks_waiting_most"][0] == 0, f"ranks waiting most {profile['ranks_waiting_most']}")
    timeline = profile["timeline"]
    for rank, row in enumerate(timeline["mpi_share"]):
        drawn = sum(row) * timeline["bin_seconds"]
        in_mpi = profile["ranks"][rank]["mpi_seconds"]
        expect(abs(drawn - in_mpi) <= 0.01 * in_mpi,
               f"rank {rank}: the timeline holds {drawn:.4f} s in MPI, the profile {in_mpi:.4f} s")
    expect(sum(timeline["mpi_share"][0]) > sum(timeline["mpi_share"][1]),
           "the timeline does not show rank 0 longer in MPI than rank 1")
    expect(profile["samples"] > 0, "no samples")
    names = [f["name"] for f in profile["sampled_functions"]]
    expect("compute_for" in names, f"compute_for is not among the sampled functions {names[:10]}")
    expect(len(names) == len(set(names)), "a function name is listed twice among the sampled functions")


def check_late_sender(profile, expect_dir):
    injected = computed(expect_dir)[1]
    expect(injected >= LATE_ROUNDS * LATE_DELAY_SECONDS, f"rank 1 delayed its sends by {injected} s only")
    waited = profile["ranks"][0]["late_sender_seconds"]
    expect(abs(waited / injected - 1) <= 0.10,
           f"rank 0 late-sender time {waited:.4f} s, rank 1 delayed by {injected:.4f} s: not within 10 %")


def check_all_matched(profile, _expect_dir):
    # Every message the program sent was received (tests/mpi/families.c),
    # on intra- and inter-communicators alike.
    expect(profile["messages_matched"] > 0, "no message matched")
    expect(profile["messages_unmatched"] == 0,
           f"{profile['messages_unmatched']} messages unmatched of {profile['messages_matched']} matched")


def check_html(report, archive, output_dir, chromium):
    page = f"{output_dir}/report.html"
    subprocess.run([report, "--html", page, archive], check=True, stdout=subprocess.DEVNULL)
    html = open(page, encoding="utf-8").read()
    references = re.findall(r"<(?:script|link|img|iframe)\b[^>]*(?:src|href)\s*=", html, re.IGNORECASE)
    expect(not references, f"{page} loads files: {references[:3]}")
    expect(not re.search(r"(?:src|href)\s*=\s*[\"']?https?://", html, re.IGNORECASE), f"{page} refers to the web")
    if not chromium:
        return
    browser = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
               "--window-size=1300,2400"]
    drawn = subprocess.run(browser + ["--dump-dom", f"file://{page}"], capture_output=True, text=True, timeout=120)
    marker = re.search(r'id="drawn">([^<]*)<', drawn.stdout)
    expect(marker is not None, f"the page has no marker: {drawn.stderr[-2000:]}")
    expect(set(marker.group(1).split()) == {"mpi", "timeline", "matrix", "flame"},
           f"sections drawn: '{marker.group(1)}'")
    errors = [line for line in drawn.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    expect(not errors, f"console messages: {errors[:5]}")
    subprocess.run(browser + [f"--screenshot={output_dir}/report.png", f"file://{page}"],
                   capture_output=True, timeout=120, check=True)


def check_speedscope(report, archive, output_dir):
    path = f"{output_dir}/profile.speedscope.json"
    subprocess.run([report, "--speedscope", path, archive], check=True, stdout=subprocess.DEVNULL)
    speedscope = json.load(open(path))
    frames = [frame["name"] for frame in speedscope["shared"]["frames"]]
    (sampled,) = speedscope["profiles"]
    expect(sampled["type"] == "sampled" and sampled["unit"] == "seconds", f"profile header {sampled['type']}")
    expect(len(sampled["samples"]) == len(sampled["weights"]), "samples and weights differ in number")
    # Two contexts may print alike (one name, two regions): a multiset.
    stacks = collections.Counter((" > ".join(frames[f] for f in stack), round(weight, 9))
                                 for stack, weight in zip(sampled["samples"], sampled["weights"]))
    profile = profile_of(report, archive)
    expect(abs(sum(sampled["weights"]) - profile["sampled_seconds"]) <= 1e-6 * profile["sampled_seconds"],
           f"the weights add up to {sum(sampled['weights'])}, the samples to {profile['sampled_seconds']}")
    hot = collections.Counter((path["path"], round(path["seconds"], 9)) for path in profile["hot_paths"])
    expect(not hot - stacks, f"hot paths that are no stack of that weight: {list((hot - stacks).keys())[:3]}")


def main():
    report, archive, mode = sys.argv[1:4]
    if mode == "html":
        check_html(report, archive, sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else "")
        return
    if mode == "speedscope":
        check_speedscope(report, archive, sys.argv[4])
        return
    checks = {"pingpong": check_pingpong, "imbalance": check_imbalance, "late-sender": check_late_sender,
              "all-matched": check_all_matched}
    checks[mode](profile_of(report, archive), sys.argv[4])


main()
