#!/usr/bin/env python3
"""Checks adaptrace-report's figures against what a workload of
workloads.c is known to do.

usage: check_report.py REPORT ARCHIVE pingpong|imbalance|late-sender|irregular EXPECT_DIR
       check_report.py REPORT ARCHIVE html OUTPUT_DIR [CHROMIUM]
       check_report.py REPORT ARCHIVE speedscope OUTPUT_DIR
       check_report.py REPORT ARCHIVE chrome OUTPUT_FILE [pingpong]
       check_report.py REPORT ARCHIVE shares LAUNCHER THREE_FUNCTIONS
       check_report.py REPORT ARCHIVE task-clock LAUNCHER THREE_FUNCTIONS
       check_report.py REPORT ARCHIVE page-faults LAUNCHER PAGE_FAULTS [CHROMIUM]
       check_report.py REPORT ARCHIVE rates LAUNCHER THREE_FUNCTIONS [CHROMIUM]
       check_report.py REPORT ARCHIVE flushes [CHROMIUM]

The figures below are workloads.c's constants; EXPECT_DIR/computed.RANK
holds the seconds each rank really computed (a descheduled rank computes
longer than it was told). html writes the page of
ARCHIVE into OUTPUT_DIR, checks that it loads nothing from elsewhere and,
with CHROMIUM, that a headless browser draws every section (the marker
page.js writes last) and keeps a screenshot beside it. speedscope writes
the speedscope file of ARCHIVE into OUTPUT_DIR and checks that its stacks
and weights are the report's hot call paths. chrome writes the Chrome
trace-event file of ARCHIVE to OUTPUT_FILE and checks it against the
report: one named process per rank, one slice per MPI call, each slice
within the run, one flow per matched message between slices; with
pingpong, the workload's calls on each rank too. shares traces
THREE_FUNCTIONS (tests/runtime/three_functions.c: 50/30/20 % of its CPU
time in three functions) through LAUNCHER into ARCHIVE with a buffer that
forces at least three halvings, and checks the report's weighted shares
against the CPU time the program measured in each function. rates
traces THREE_FUNCTIONS the same way on two threads and checks the
sampling rate of each location over time (issue #14): in the archive (as
otf2-print reads it) and in the report's JSON, the initial rate where the
location's sampling started, then the rate halved at each halving
summary.json counts for it, at times that never decrease within the run;
the buffer's use at each halving, in the archive two values at its time
(before the drop: within the arena and its high-water mark; after:
less, unless the location halved for overload) and the same in the
report's JSON and text; with CHROMIUM, that the page draws one step line
per location and one mark per halving, and a before and an after mark of
the buffer use per halving; and that the run had no flush and the report
says so.
page-faults traces PAGE_FAULTS (page_faults.c: a fault per page written
in touch_pages) with perf::PAGE-FAULTS and checks that the report gives
touch_pages at least 90 % of the pages as faults, and no more than the
program counted; with CHROMIUM, that the page's table of hot functions
has the counter's columns with touch_pages' counts in them.
flushes checks the mid-run flushes of an archive that has some (the
mpi-heavy run of tests/mpi/wrong_use.sh): the report's count, per
location and in all, equals the archive's BufferFlush records and
summary.json's flushes, each flush at the archive's time for the
archive's duration; with CHROMIUM, that the page draws one bar per flush.
"""
import bisect
import collections
import html
import json
import math
import os
import re
import subprocess
import sys

PINGPONG_ROUNDS, PINGPONG_BYTES = 100, 1024
IMBALANCE_INJECTED = 2 / 1.5  # two ranks: one computes 2T, the other T
LATE_ROUNDS, LATE_DELAY_SECONDS = 3, 0.200
IRREGULAR_STEPS, IRREGULAR_SLOW_STEP, IRREGULAR_SLOW_RANK, IRREGULAR_SLOW_FACTOR = 8, 5, 1, 8
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
    # Fewer messages than the page keeps: a line for each, between the
    # rows of ranks 0 and 1 (one thread each), inside the run.
    timeline = profile["timeline"]
    lines = timeline["message_lines"]
    pairs = collections.Counter((send_row, receive_row) for send_row, _, receive_row, _ in lines)
    expect(pairs == {(0, 1): PINGPONG_ROUNDS, (1, 0): PINGPONG_ROUNDS}, f"message lines by rows {pairs}")
    run_seconds = timeline["bin_seconds"] * len(timeline["mpi_share"][0])
    expect(all(0 <= line[1] <= run_seconds and 0 <= line[3] <= run_seconds for line in lines),
           f"a message line outside the run of {run_seconds} s")


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
    expect(timeline["rows"] == [{"rank": rank, "thread": 0} for rank in range(RANKS)],
           f"timeline rows {timeline['rows']}, not one per rank")
    for rank, row in enumerate(timeline["mpi_share"]):
        drawn = sum(row) * timeline["bin_seconds"]
        in_mpi = profile["ranks"][rank]["mpi_seconds"]
        expect(abs(drawn - in_mpi) <= 0.01 * in_mpi,
               f"rank {rank}: the timeline holds {drawn:.4f} s in MPI, the profile {in_mpi:.4f} s")
        # Each bin's share is printed to 3 digits.
        active = sum(timeline["active_share"][rank]) * timeline["bin_seconds"]
        span = profile["ranks"][rank]["span_seconds"]
        expect(abs(active - span) <= 0.01 * span,
               f"rank {rank}: the timeline holds {active:.4f} s of events, its span is {span:.4f} s")
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


def check_irregular(profile, expect_dir):
    steps = [[float(line) for line in open(f"{expect_dir}/steps.{rank}")] for rank in range(RANKS)]
    longest = max((seconds, rank, step) for rank, row in enumerate(steps) for step, seconds in enumerate(row))
    # The rank computed its slow step longest unless the machine held one
    # of the others back longer than the factor.
    expect(longest[1:] == (IRREGULAR_SLOW_RANK, IRREGULAR_SLOW_STEP),
           f"the ranks computed {steps}: the slow step is not the longest")
    # The computation of every step lies between MPI_Barrier and
    # MPI_Allreduce, one calling context each on every rank.
    matching = [s for s in profile["segments"] if (s["from"], s["to"]) == ("MPI_Barrier", "MPI_Allreduce")]
    expect(len(matching) == 1, f"MPI_Barrier -> MPI_Allreduce segments: {matching}")
    (step,) = matching
    expect(step["from_path"].endswith("irregular > MPI_Barrier") and
           step["to_path"].endswith("irregular > MPI_Allreduce"),
           f"the step's calls are not those of irregular(): {step['from_path']} -> {step['to_path']}")
    expect(step["count"] == IRREGULAR_STEPS * RANKS and sum(step["histogram"]) == IRREGULAR_STEPS * RANKS,
           f"{step['count']} instances, histogram of {sum(step['histogram'])}, not {IRREGULAR_STEPS} × {RANKS}")
    expect((step["max_rank"], step["max_iteration"]) == (IRREGULAR_SLOW_RANK, IRREGULAR_SLOW_STEP),
           f"the longest instance is rank {step['max_rank']} iteration {step['max_iteration']}")
    expect(step["slowest_rank"] == IRREGULAR_SLOW_RANK, f"slowest rank {step['slowest_rank']}")
    # The segment holds the computing and the few calls around it, and on a
    # loaded machine the time the rank waited for a core between them (a
    # 5 % bound, 8 ms, failed once beside another job; the count above
    # already rules out two steps taken for one).
    expect(0 <= step["max_seconds"] - longest[0] <= 0.25 * longest[0],
           f"the longest instance lasts {step['max_seconds']} s, the rank computed {longest[0]} s")
    expect(step["histogram"][-1] == 1, f"the histogram does not set the slow step apart: {step['histogram']}")
    ordered = sorted(seconds for row in steps for seconds in row)
    expect(step["min_seconds"] >= ordered[0] and step["median_seconds"] >= ordered[(len(ordered) - 1) // 2],
           f"min {step['min_seconds']} or median {step['median_seconds']} below what the ranks computed {ordered}")


# The case of tests/runtime/adaptive_sampling_test.cpp's OneThread: 64 KiB
# hold ~1200 samples, and 2.5 s of CPU time sampled at 3 kHz number at
# least 7500, so that only every 8th or sparser one fits: three halvings.
THREE_FUNCTIONS = ("kernel_half", "kernel_three_tenths", "kernel_fifth")
SHARES_RUN = ["--sampling-clock", "wall", "--buffer-size", "64K", "--sampling-rate", "3000"]
SHARES_CPU_SECONDS = 2.5


def run_three_functions(launcher, program, archive, threads, cpu_seconds, options=()):
    """Traces THREE_FUNCTIONS on threads threads for cpu_seconds each
    with SHARES_RUN and the launcher options given into archive; returns
    the path of the truth file the program wrote."""
    run_dir = os.path.dirname(os.path.abspath(archive))
    os.makedirs(run_dir, exist_ok=True)
    truth_path = f"{run_dir}/truth"
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith(("ADAPTRACE_", "_ADAPTRACE_")) and name != "LD_PRELOAD"}
    subprocess.run(["rm", "-rf", archive], check=True)
    subprocess.run([launcher] + SHARES_RUN + list(options) + ["--output", archive, program, str(threads),
                                                              str(cpu_seconds), truth_path],
                   check=True, env=environment, timeout=60)
    return truth_path


def skip_unless_recorded(report, launcher, program, archive, counters, what):
    """Exits 77 (skipped) unless a short run (0.1 s) records counters
    (PAPI's list in that order) with its samples: where PAPI cannot count
    them, said before the run of SHARES_CPU_SECONDS (one at a time, both
    cores) rather than after it."""
    run_three_functions(launcher, program, archive, 1, 0.1, ["--metrics", ",".join(counters)])
    profile = profile_of(report, archive)
    if profile["counters"] != counters:
        print(f"skipped: PAPI records no {what} here (counters {profile['counters']})")
        sys.exit(77)


def trace_three_functions(launcher, program, archive, threads, options=()):
    """Traces THREE_FUNCTIONS on threads threads with SHARES_RUN and the launcher options given into
    archive; returns the truth file's lines and summary.json, after
    checking that every location halved at least three times."""
    truth_path = run_three_functions(launcher, program, archive, threads, SHARES_CPU_SECONDS, options)
    truth = [[int(field) for field in line.split()] for line in open(truth_path).read().splitlines()]
    expect([line[0] for line in truth] == list(range(threads)) and all(len(line) == 4 for line in truth),
           f"truth file {truth_path}")
    summary = json.load(open(f"{archive}/summary.json"))
    expect(len(summary["per_location"]) == threads, f"{len(summary['per_location'])} locations, not {threads}")
    for location in summary["per_location"]:
        expect(location["halvings"] >= 3, f"{location['halvings']} halvings, the test needs 3")
    return truth, summary


def check_shares(report, archive, launcher, program):
    truth, summary = trace_three_functions(launcher, program, archive, 1)
    ((_, *nanoseconds),) = truth
    (location,) = summary["per_location"]
    profile = profile_of(report, archive)
    # Every kept sample stands for 2^k initial periods: together they
    # stand for the time the location was sampled (as in the runtime test).
    expect(abs(profile["sampled_seconds"] / location["sampled_s"] - 1) <= 0.02,
           f"the samples weigh {profile['sampled_seconds']} s, the location was sampled {location['sampled_s']} s")
    exclusive = {f["name"]: f["exclusive_seconds"] for f in profile["sampled_functions"]}
    in_functions = sum(exclusive.get(name, 0) for name in THREE_FUNCTIONS)
    expect(in_functions >= 0.8 * profile["sampled_seconds"], f"samples outside the three functions: {exclusive}")
    # All samples of the one location weigh alike after its halvings.
    samples = in_functions / (profile["sampled_seconds"] / profile["samples"])
    expect_shares(exclusive, in_functions, nanoseconds, samples, "of the weighted samples",
                  f"{samples:.0f} samples, {location['halvings']} halvings")


def expect_shares(values, in_functions, nanoseconds, samples, what, detail):
    """Each of the three functions' share of in_functions (values by
    name) against its share of the CPU time: within 2 points, or 4
    standard errors of independent samples where the samples are too few
    for 2 points (adaptive_sampling_test.cpp)."""
    for name, truth_nanoseconds in zip(THREE_FUNCTIONS, nanoseconds):
        truth = truth_nanoseconds / sum(nanoseconds)
        share = values.get(name, 0) / in_functions
        bound = max(0.02, 4 * math.sqrt(truth * (1 - truth) / samples))
        expect(abs(share - truth) <= bound,
               f"{name}: {100 * share:.2f} % {what}, {100 * truth:.2f} % of the CPU time "
               f"(bound {100 * bound:.2f} points, {detail})")


def check_task_clock(report, archive, launcher, program):
    """perf::TASK-CLOCK (ns of CPU time) recorded with the samples of
    three_functions through the halvings of check_shares: each function's
    task-clock total is its measured CPU time (5 % under to 25 % over for
    the three together: the steal time, below) and within the bound of
    check_shares for each one's share.
    Exits 77 (skipped) where PAPI records no perf event."""
    skip_unless_recorded(report, launcher, program, archive, ["perf::TASK-CLOCK"], "perf::TASK-CLOCK")
    truth, _ = trace_three_functions(launcher, program, archive, 1, ["--metrics", "perf::TASK-CLOCK"])
    ((_, *nanoseconds),) = truth
    profile = profile_of(report, archive)
    expect(profile["counters"] == ["perf::TASK-CLOCK"],
           f"perf::TASK-CLOCK recorded in the short run, not in the long one (counters {profile['counters']})")
    counted = {f["name"]: f["exclusive_counts"]["perf::TASK-CLOCK"] for f in profile["sampled_functions"]}
    in_functions = sum(counted.get(name, 0) for name in THREE_FUNCTIONS)
    # The task clock also counts the time the host of this virtual machine
    # took the CPU away (steal), which the program's CPU clock does not:
    # 2.941 s against 2.658 s in one CI run here. So it may exceed the CPU
    # time by a quarter, never fall short of it by more than 5 %; that it
    # is exactly the thread's task clock is Sampler.TaskClockOfTheSamples
    # AddsUpToAProbeOfTheThreadsTaskClock's check (a perf_event_open probe).
    expect(0.95 <= in_functions / sum(nanoseconds) <= 1.25,
           f"the three functions' task clock is {in_functions:.0f} ns, their CPU time {sum(nanoseconds)} ns")
    samples = profile["samples"]
    expect_shares(counted, in_functions, nanoseconds, samples, "of the task clock", f"{samples} samples")
    # Inclusive: main holds all three.
    main = next(f for f in profile["sampled_functions"] if f["name"] == "main")
    expect(main["inclusive_counts"]["perf::TASK-CLOCK"] >= in_functions,
           f"main's inclusive task clock {main['inclusive_counts']} is below its callees' {in_functions}")


def check_cycles(report, archive, launcher, program):
    """PAPI_TOT_CYC and PAPI_TOT_INS recorded with the samples of
    three_functions (issue #29): each function's share of the cycles is
    its share of the CPU time within the bound of check_shares (cycles
    follow time at a steady clock), and each has its instructions per
    cycle, between 0.05 and 8, in the JSON and the text. Exits 77
    (skipped) on a machine without a hardware PMU that PAPI can use."""
    counters = ["PAPI_TOT_CYC", "PAPI_TOT_INS"]
    skip_unless_recorded(report, launcher, program, archive, counters, "cycles and instructions")
    truth, _ = trace_three_functions(launcher, program, archive, 1, ["--metrics", ",".join(counters)])
    ((_, *nanoseconds),) = truth
    profile = profile_of(report, archive)
    expect(profile["counters"] == counters,
           f"cycles and instructions recorded in the short run, not in the long one (counters {profile['counters']})")
    rows = {f["name"]: f for f in profile["sampled_functions"]}
    cycles = {name: row["exclusive_counts"]["PAPI_TOT_CYC"] for name, row in rows.items()}
    in_functions = sum(cycles.get(name, 0) for name in THREE_FUNCTIONS)
    expect_shares(cycles, in_functions, nanoseconds, profile["samples"], "of the cycles",
                  f"{profile['samples']} samples")
    for name in THREE_FUNCTIONS:
        ipc = rows[name].get("exclusive_counts_ipc")
        expect(ipc is not None and 0.05 <= ipc <= 8, f"{name}: IPC {ipc}")
    text = subprocess.run([report, archive], check=True, capture_output=True, text=True).stdout
    expect(re.search(r"PAPI_TOT_INS +IPC\n", text) is not None, "no IPC column in the text's hot functions")


# 1 s of CPU time at 1 kHz: about 1000 samples in touch_pages, 20 pages
# apart. Its faults after its last sample are counted with the next
# sample, in compute: at most a period's, 0.1 % of them. The 10 % margin
# is for the samples that land in clock_gettime, which touch_pages calls
# (a few per thousand here).
PAGE_FAULTS_RUN = ["--metrics", "perf::PAGE-FAULTS", "--sampling-rate", "1k"]
PAGE_FAULTS_PAGES, PAGE_FAULTS_CPU_SECONDS = 20000, 1.0


def check_page_faults(report, archive, launcher, program, chromium):
    """perf::PAGE-FAULTS recorded with the samples of page_faults.c: at
    least 90 % of the pages touch_pages writes are faults the report counts
    to touch_pages (exclusive), and at most 5 % more than the faults the
    program counted in it (the first sample in touch_pages also adds what
    compute faulted before it). Exits 77 (skipped) where PAPI records no
    perf event."""
    run_dir = os.path.dirname(os.path.abspath(archive))
    os.makedirs(run_dir, exist_ok=True)
    truth_path = f"{run_dir}/truth"
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith(("ADAPTRACE_", "_ADAPTRACE_")) and name != "LD_PRELOAD"}
    subprocess.run(["rm", "-rf", archive], check=True)
    subprocess.run([launcher] + PAGE_FAULTS_RUN + ["--output", archive, program, str(PAGE_FAULTS_PAGES),
                                                   str(PAGE_FAULTS_CPU_SECONDS), truth_path],
                   check=True, env=environment, timeout=60)
    pages, faults = (int(field) for field in open(truth_path).read().split())
    # Fewer faults than pages: a page came already mapped (a huge page).
    expect(pages == PAGE_FAULTS_PAGES and faults >= pages, f"{faults} faults in touch_pages for {pages} pages")
    profile = profile_of(report, archive)
    if profile["counters"] != ["perf::PAGE-FAULTS"]:
        print(f"skipped: PAPI records no perf::PAGE-FAULTS here (counters {profile['counters']})")
        sys.exit(77)
    counted = {f["name"]: f["exclusive_counts"]["perf::PAGE-FAULTS"] for f in profile["sampled_functions"]}
    in_touch_pages = counted.get("touch_pages", 0)
    expect(0.9 * pages <= in_touch_pages <= 1.05 * faults,
           f"touch_pages: {in_touch_pages} page faults in the report, {faults} counted by the program "
           f"for {pages} pages; all functions: {counted}")
    if not chromium:
        return
    dom = draw_page(report, archive, run_dir, chromium)
    functions = re.search(r'id="hot-functions"[^>]*>(.*?)</table>', dom, re.DOTALL)
    expect(functions is not None, "no table of hot functions on the page")
    headings = re.findall(r"<th>([^<]*)</th>", functions.group(1))
    expect(headings[-2:] == ["perf::PAGE-FAULTS exclusive", "perf::PAGE-FAULTS inclusive"],
           f"the hot functions' columns: {headings}")
    touch_pages = re.search(r"<tr class=\"row\"><td>touch_pages</td>(.*?)</tr>", functions.group(1))
    expect(touch_pages is not None and re.findall(r"<td>([^<]*)</td>", touch_pages.group(1))[-2] ==
           f"{in_touch_pages:,.0f}", f"touch_pages' row on the page: {touch_pages and touch_pages.group(1)}")


def otf2_printed(archive, *options):
    return subprocess.run(["otf2-print", *options, f"{archive}/traces.otf2"], check=True, capture_output=True,
                          text=True).stdout


def archive_clock(archive):
    """The archive's time offset and resolution (ticks per second)."""
    properties = re.search(r"^CLOCK_PROPERTIES\s+Ticks per Seconds: (\d+), Global Offset: (\d+)",
                           otf2_printed(archive, "-G"), re.MULTILINE)
    expect(properties is not None, "otf2-print shows no clock properties")
    return int(properties.group(2)), int(properties.group(1))


def archive_rates(archive):
    """The sampling-rate and buffer-use Metric events of each location as
    otf2-print reads them: {location id: [(time in ticks, rate in Hz)]},
    {location id: [(time in ticks, bytes)]}, with the archive's time offset
    and resolution."""
    printed = otf2_printed(archive)
    rates = collections.defaultdict(list)
    for location, time, value in re.findall(
            r"^METRIC\s+(\d+)\s+(\d+)\s+Metric: .*\(\"sampling rate\" <\d+>; DOUBLE; ([^)]+)\)", printed,
            re.MULTILINE):
        rates[int(location)].append((int(time), float(value)))
    uses = collections.defaultdict(list)
    for location, time, value in re.findall(
            r"^METRIC\s+(\d+)\s+(\d+)\s+Metric: .*\(\"buffer use\" <\d+>; UINT64; (\d+)\)", printed, re.MULTILINE):
        uses[int(location)].append((int(time), int(value)))
    return (rates, uses) + archive_clock(archive)


def expect_halved_steps(steps, halvings, initial_hz, start, end, where, digits):
    """steps: (time, Hz) in order; one more than halvings, the rate halved
    at each (to the significant digits the source prints), times never
    decreasing (a drop over several empty levels steps through each shift
    at one time, docs/otf2-records.md) within [start, end]."""
    expect(len(steps) == 1 + halvings, f"{where}: {len(steps)} rate steps, {halvings} halvings: {steps}")
    for k, (time, hz) in enumerate(steps):
        expect(float(f"{hz:.{digits}g}") == float(f"{initial_hz / 2 ** k:.{digits}g}"),
               f"{where}: step {k} at {hz} Hz, not {initial_hz} / 2^{k}")
        expect(start <= time <= end, f"{where}: step {k} at {time}, outside the run [{start}, {end}]")
        expect(k == 0 or time >= steps[k - 1][0], f"{where}: step {k} at {time}, before step {k - 1}")


def expect_buffer_use(uses, steps, summary, location):
    """uses: a location's buffer-use values in the archive, (time, bytes):
    two at each halving's time (its steps after the first), the bytes in
    use before the drop within the process's arena and its high-water
    mark, then after it; where no halving was for overload (each drop
    emptied a level that held samples), less after, except at the shifts a
    drop over empty levels passed (a step at the time of the next one),
    which free nothing."""
    where = f"archive, location {(location['rank'], location['thread'])}"
    expect(len(uses) == 2 * (len(steps) - 1), f"{where}: {len(uses)} buffer-use values, {len(steps) - 1} halvings")
    for k, (time, _) in enumerate(steps[1:]):
        (before_time, before), (after_time, after) = uses[2 * k], uses[2 * k + 1]
        expect(before_time == after_time == time, f"{where}: halving {k + 1} at {time}, its buffer use at "
                                                  f"{before_time} and {after_time}")
        expect(0 < before <= min(summary["arena_bytes"], summary["buffer_high_water_bytes"]),
               f"{where}: {before} bytes in use before halving {k + 1}, arena {summary['arena_bytes']}, "
               f"high-water mark {summary['buffer_high_water_bytes']}")
        passed_empty_level = k + 2 < len(steps) and steps[k + 2][0] == time
        if passed_empty_level:
            expect(after == before, f"{where}: halving {k + 1} passed an empty level, {after} of {before} bytes")
        elif location["overload_halvings"] == 0:
            expect(after < before, f"{where}: halving {k + 1} left {after} of {before} bytes in use")


def check_thread_rows(profile, summary):
    """One timeline row per thread, by rank then thread, each with events
    and none inside MPI (three_functions calls no MPI); returns the rows."""
    timeline = profile["timeline"]
    threads = sorted(({"rank": location["rank"], "thread": location["thread"]}
                      for location in summary["per_location"]), key=lambda row: (row["rank"], row["thread"]))
    expect(timeline["rows"] == threads, f"timeline rows {timeline['rows']}, the threads {threads}")
    expect(len(timeline["mpi_share"]) == len(threads) == len(timeline["active_share"]),
           f"{len(timeline['mpi_share'])} and {len(timeline['active_share'])} rows of shares, {len(threads)} threads")
    for row, mpi, active in zip(threads, timeline["mpi_share"], timeline["active_share"]):
        expect(not any(mpi), f"{row}: MPI on the timeline of a program without MPI")
        expect(sum(active) > 0 and all(0 <= share <= 1.0005 for share in active),
               f"{row}: shares of its time with events {active[:20]}...")
    return threads


def check_rates(report, archive, launcher, program, chromium):
    _, summary = trace_three_functions(launcher, program, archive, 2)
    initial_hz = summary["initial_rate_hz"]
    rates, uses, offset, resolution = archive_rates(archive)
    profile = profile_of(report, archive)
    threads = check_thread_rows(profile, summary)
    run_seconds = profile["timeline"]["bin_seconds"] * len(profile["timeline"]["mpi_share"][0])
    reported = {(r["rank"], r["thread"]): [(s["seconds"], s["hz"]) for s in r["steps"]]
                for r in profile["sampling_rates"]}
    reported_uses = {(r["rank"], r["thread"]): r["buffer_use"] for r in profile["sampling_rates"]}
    expect(len(reported) == len(summary["per_location"]), f"the report has rates of {list(reported)}")
    for location in summary["per_location"]:
        key = (location["rank"], location["thread"])
        halvings = location["halvings"]
        location_id = location["rank"] + (location["thread"] << 32)
        steps = rates[location_id]
        # otf2-print prints 6 significant digits (%g), the JSON all 17.
        expect_halved_steps(steps, halvings, initial_hz, offset, offset + run_seconds * resolution,
                            f"archive, location {key}", 6)
        expect_halved_steps(reported[key], halvings, initial_hz, 0, run_seconds, f"report, location {key}", 17)
        for (ticks, _), (seconds, _) in zip(steps, reported[key]):
            expect(abs((ticks - offset) / resolution - seconds) <= 1e-6,
                   f"report, location {key}: a step at {seconds} s, in the archive at {(ticks - offset) / resolution} s")
        expect_buffer_use(uses[location_id], steps, summary, location)
        reported_use = [(u["seconds"], u["bytes"]) for u in reported_uses[key]]
        expect(len(reported_use) == len(uses[location_id]) and all(
            abs((ticks - offset) / resolution - seconds) <= 1e-6 and value == reported_bytes
            for (ticks, value), (seconds, reported_bytes) in zip(uses[location_id], reported_use)),
            f"report, location {key}: buffer use {reported_use}, not the archive's")
    text = subprocess.run([report, archive], check=True, capture_output=True, text=True).stdout
    expect("Sampling rate over time" in text and text.count("halved at t=") == sum(
        location["halvings"] for location in summary["per_location"]), f"the text report's rates: {text[-2000:]}")
    expect(text.count(" B -> ") == summary["halvings"], f"the text report's buffer use: {text[-2000:]}")
    page_dom = draw_page(report, archive, os.path.dirname(os.path.abspath(archive)), chromium) if chromium else None
    check_no_flush(report, archive, summary, page_dom)
    if chromium:
        section = re.search(r'id="rates"[^>]*>(.*?)</div>', page_dom, re.DOTALL)
        expect(section is not None and "<svg" in section.group(1), "no chart of the sampling rates on the page")
        lines = len(re.findall(r"<path[^>]*stroke-width", section.group(1)))
        marks = len(re.findall(r'<circle class="halving"', section.group(1)))
        expect(lines == len(summary["per_location"]), f"{lines} rate lines on the page")
        expect(marks == sum(location["halvings"] for location in summary["per_location"]),
               f"{marks} halvings marked on the page")
        section = re.search(r'id="buffer-use"[^>]*>(.*?)</div>', page_dom, re.DOTALL)
        expect(section is not None and "<svg" in section.group(1), "no chart of the buffer use on the page")
        for mark in ("use-before", "use-after"):
            count = len(re.findall(rf'<circle class="{mark}"', section.group(1)))
            expect(count == summary["halvings"], f"{count} {mark} marks on the page, {summary['halvings']} halvings")
        labels = re.search(r'id="timeline"[^>]*data-rows="([^"]*)"', page_dom)
        expect(labels is not None and json.loads(html.unescape(labels.group(1))) == [
            f"rank {row['rank']} / thread {row['thread']}" for row in threads],
            f"timeline rows on the page: {labels and labels.group(1)}")


def check_no_flush(report, archive, summary, chromium_dom):
    """A run without a flush: the report counts none, and says so in the
    text and (given the page's DOM) on the page."""
    expect(summary["flushes"] == 0, f"summary.json counts {summary['flushes']} flushes: the run was to have none")
    flushes = profile_of(report, archive)["flushes"]
    expect(flushes["count"] == 0 and flushes["events"] == [] and flushes["per_location"] == [],
           f"the report has flushes: {flushes}")
    text = subprocess.run([report, archive], check=True, capture_output=True, text=True).stdout
    expect("Buffer flushes: no flush" in text, f"the text does not say there was no flush: {text[-600:]}")
    if chromium_dom is not None:
        section = re.search(r'id="flushes"[^>]*>(.*?)</div>', chromium_dom, re.DOTALL)
        expect(section is not None and "No flush" in section.group(1), "the page does not say there was no flush")


def archive_flushes(archive):
    """The BufferFlush records as otf2-print reads them: {location id:
    [(time, stop time) in ticks]}, with the archive's time offset and
    resolution."""
    flushes = collections.defaultdict(list)
    for location, time, stop in re.findall(r"^BUFFER_FLUSH\s+(\d+)\s+(\d+)\s+Stop Time: (\d+)",
                                           otf2_printed(archive), re.MULTILINE):
        flushes[int(location)].append((int(time), int(stop)))
    return (flushes,) + archive_clock(archive)


def check_flushes(report, archive, chromium):
    summary = json.load(open(f"{archive}/summary.json"))
    records, offset, resolution = archive_flushes(archive)
    flushes = profile_of(report, archive)["flushes"]
    total = sum(len(times) for times in records.values())
    expect(total > 0, "the archive has no BufferFlush record: the run was to flush")
    expect(flushes["count"] == total == summary["flushes"],
           f"flushes: {flushes['count']} in the report, {total} in the archive, {summary['flushes']} in summary.json")
    per_location = {(l["rank"], l["thread"]): l for l in flushes["per_location"]}
    expect(len(per_location) == len(records), f"the report has flushes on {list(per_location)}, the archive on "
                                              f"{list(records)}")
    for location, times in records.items():
        key = (location & 0xFFFFFFFF, location >> 32)
        expect(key in per_location and per_location[key]["count"] == len(times),
               f"location {key}: {len(times)} flushes in the archive, the report has {per_location.get(key)}")
        expect(abs(per_location[key]["seconds"] - sum(stop - time for time, stop in times) / resolution) <= 1e-6,
               f"location {key}: the report's {per_location[key]['seconds']} s flushing against the archive's")
        reported = [(f["seconds"], f["duration_seconds"]) for f in flushes["events"]
                    if (f["rank"], f["thread"]) == key]
        expected = [((time - offset) / resolution, (stop - time) / resolution) for time, stop in times]
        expect(len(reported) == len(expected) and all(
            abs(a - b) <= 1e-6 and abs(c - d) <= 1e-6 for (a, c), (b, d) in zip(reported, expected)),
            f"location {key}: the report's flushes {reported[:3]}... are not the archive's {expected[:3]}...")
    expect(abs(flushes["seconds"] - sum(l["seconds"] for l in flushes["per_location"])) <= 1e-6,
           f"the flushes take {flushes['seconds']} s in all, not the locations' sum")
    text = subprocess.run([report, archive], check=True, capture_output=True, text=True).stdout
    expect(f"Buffer flushes: {total} flushes" in text, f"the text does not count the flushes: {text[-1200:]}")
    expect(text.count(" flushes, ") + text.count(" flush, ") == 1 + len(records),
           f"the text does not list each location's flushes: {text[-1200:]}")
    if chromium:
        dom = draw_page(report, archive, os.path.dirname(os.path.abspath(archive)), chromium)
        section = re.search(r'id="flushes"[^>]*>(.*?)</div>', dom, re.DOTALL)
        expect(section is not None and f"{total} flushes" in section.group(1), "the page does not count the flushes")
        bars = len(re.findall(r'<rect class="flush"', section.group(1)))
        expect(bars == total, f"{bars} flushes drawn on the page, {total} in the archive")


def check_all_matched(profile, _expect_dir):
    # Every message the program sent was received (tests/mpi/families.c),
    # on intra- and inter-communicators alike.
    expect(profile["messages_matched"] > 0, "no message matched")
    expect(profile["messages_unmatched"] == 0,
           f"{profile['messages_unmatched']} messages unmatched of {profile['messages_matched']} matched")


HEADLESS = ["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--window-size=1300,2400"]


def write_page(report, archive, output_dir):
    page = f"{output_dir}/report.html"
    subprocess.run([report, "--html", page, archive], check=True, stdout=subprocess.DEVNULL)
    html = open(page, encoding="utf-8").read()
    references = re.findall(r"<(?:script|link|img|iframe)\b[^>]*(?:src|href)\s*=", html, re.IGNORECASE)
    expect(not references, f"{page} loads files: {references[:3]}")
    expect(not re.search(r"(?:src|href)\s*=\s*[\"']?https?://", html, re.IGNORECASE), f"{page} refers to the web")
    return page


def draw_page(report, archive, output_dir, chromium):
    """Writes the page, draws it in the headless browser and returns its
    DOM, after checking that every section was drawn without a console
    message."""
    page = write_page(report, archive, output_dir)
    drawn = subprocess.run([chromium] + HEADLESS + ["--dump-dom", f"file://{page}"], capture_output=True, text=True,
                           timeout=120)
    marker = re.search(r'id="drawn"[^>]*>([^<]*)<', drawn.stdout)
    expect(marker is not None, f"the page has no marker: {drawn.stderr[-2000:]}")
    expect(set(marker.group(1).split()) == {"mpi", "timeline", "matrix", "steps", "flame", "regions", "rates", "buffer-use",
                                            "flushes"},
           f"sections drawn: '{marker.group(1)}'")
    errors = [line for line in drawn.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    expect(not errors, f"console messages: {errors[:5]}")
    return drawn.stdout


def check_html(report, archive, output_dir, chromium):
    if not chromium:
        write_page(report, archive, output_dir)
        return
    dom = draw_page(report, archive, output_dir, chromium)
    steps = re.search(r'id="step-histograms"[^>]*>(.*?)</div></div>\s*<h2>', dom, re.DOTALL)
    expect(steps is not None and "<svg" in steps.group(1) and "iteration" in steps.group(1),
           "no histogram of time steps on the page")
    rates = re.search(r'id="rates"[^>]*>(.*?)</div>', dom, re.DOTALL)
    expect(rates is not None and "<svg" in rates.group(1) and "stroke-width" in rates.group(1),
           "no chart of the sampling rates on the page")
    subprocess.run([chromium] + HEADLESS + [f"--screenshot={output_dir}/report.png", f"file://{output_dir}/report.html"],
                   capture_output=True, timeout=120, check=True)


def check_message_lines(report, archive, output_dir, chromium):
    """The ping-pong's page draws a line per message with the whole run in
    view (fewer than page.js's cap)."""
    dom = draw_page(report, archive, output_dir, chromium)
    drawn = re.search(r'id="timeline"[^>]*data-message-lines="(\d+)"', dom)
    expect(drawn is not None and int(drawn.group(1)) == 2 * PINGPONG_ROUNDS,
           f"message lines drawn: {drawn and drawn.group(1)}, the ping-pong sent {2 * PINGPONG_ROUNDS}")


SYNTHETIC_RANKS, SYNTHETIC_STEPS, SYNTHETIC_STEP_SECONDS = 128, 200, 100e-6


def check_thinned_lines(report, synthetic_archive, output_dir):
    """A synthetic run of 25 600 messages (each rank sends one to the next
    each step, benchmarks/report/synthetic_archive.c), more than the
    16 384 lines a profile keeps: every other message is kept, from the
    first step to the last."""
    archive = f"{output_dir}/archive"
    os.makedirs(output_dir, exist_ok=True)
    subprocess.run(["rm", "-rf", archive], check=True)
    subprocess.run([synthetic_archive, archive, str(SYNTHETIC_RANKS), str(SYNTHETIC_STEPS)], check=True,
                   stdout=subprocess.DEVNULL)
    profile = profile_of(report, archive)
    messages = SYNTHETIC_RANKS * SYNTHETIC_STEPS
    expect(profile["messages_matched"] == messages, f"{profile['messages_matched']} messages matched")
    timeline = profile["timeline"]
    lines = timeline["message_lines"]
    expect(len(lines) == messages // 2, f"{len(lines)} message lines kept of {messages}")
    expect(all(receive_row == (send_row + 1) % SYNTHETIC_RANKS for send_row, _, receive_row, _ in lines),
           "a message line not from a rank to the next")
    run_seconds = timeline["bin_seconds"] * len(timeline["mpi_share"][0])
    sent = sorted(line[1] for line in lines)
    expect(sent[0] <= SYNTHETIC_STEP_SECONDS and sent[-1] >= run_seconds - 2 * SYNTHETIC_STEP_SECONDS,
           f"the lines kept are sent from {sent[0]} s to {sent[-1]} s of a run of {run_seconds} s")


# Counters of known increments per sample (synthetic_archive.c): PAPI's
# presets, and native perf names with a qualifier and a counter that is
# neither instructions, cycles nor misses. Per sample: IPC 2.5 and 8
# misses per 1,000 instructions in both.
DERIVED_COUNTERS = {
    "presets": {"PAPI_TOT_CYC": 1000, "PAPI_TOT_INS": 2500, "PAPI_L1_DCM": 20},
    "native": {"perf::PAGE-FAULTS": 3, "perf::CPU-CYCLES": 1000, "perf::INSTRUCTIONS:u=0": 2500,
               "perf::L1-DCACHE-LOAD-MISSES": 20},
}
DERIVED_RANKS, DERIVED_STEPS, DERIVED_SAMPLES_PER_STEP = 2, 50, 4


def check_derived_counters(report, synthetic_archive, output_dir, chromium):
    """The report's counts, instructions per cycle and misses per 1,000
    instructions of archives whose counters grow by known increments, per
    function, per call path, in the flame graph's frames (JSON and text),
    and the page's columns and flame graph weighted by a counter."""
    for kind, increments in DERIVED_COUNTERS.items():
        archive = f"{output_dir}/{kind}/archive"
        os.makedirs(f"{output_dir}/{kind}", exist_ok=True)
        subprocess.run(["rm", "-rf", archive], check=True)
        subprocess.run([synthetic_archive, archive, str(DERIVED_RANKS), str(DERIVED_STEPS),
                        ",".join(f"{name}={increment}" for name, increment in increments.items())],
                       check=True, stdout=subprocess.DEVNULL)
        samples = DERIVED_RANKS * DERIVED_STEPS * DERIVED_SAMPLES_PER_STEP
        totals = {name: samples * increment for name, increment in increments.items()}
        misses = [name for name in increments if "MISS" in name or name == "PAPI_L1_DCM"]
        profile = profile_of(report, archive)
        expect(profile["counters"] == list(increments), f"{kind}: counters {profile['counters']}")
        sampled = {row["name"]: row for row in profile["sampled_functions"]}
        kernel, solve = sampled["kernel"], sampled["solve"]
        for row, key, what in ((kernel, "exclusive_counts", "kernel exclusive"),
                               (solve, "inclusive_counts", "solve inclusive"),
                               (profile["hot_paths"][0], "counts", "the hot path")):
            expect(row[key] == totals, f"{kind}, {what}: {row[key]}, expected {totals}")
            expect(row.get(f"{key}_ipc") == 2.5, f"{kind}, {what}: IPC {row.get(f'{key}_ipc')}")
            expect(row.get(f"{key}_per_1k_instructions") == {name: 8 for name in misses},
                   f"{kind}, {what}: per 1k instructions {row.get(f'{key}_per_1k_instructions')}")
        expect(f"exclusive_counts_ipc" not in solve and "exclusive_counts_per_1k_instructions" not in solve,
               f"{kind}: ratios of solve's zero exclusive counts: {solve}")
        frames = {}
        stack = [("", profile["flame"])]
        while stack:
            path, node = stack.pop()
            frames[f"{path}/{node['name']}"] = node.get("counts")
            stack += [(f"{path}/{node['name']}", child) for child in node.get("children", [])]
        expected = [totals[name] for name in increments]
        expect(frames.get("/all") == expected and frames.get("/all/main/solve/kernel") == expected,
               f"{kind}: flame graph counts {frames}")
        text = subprocess.run([report, archive], check=True, capture_output=True, text=True).stdout
        kernel_row = re.search(r"hot functions, exclusive\n.*\n(.*kernel)\n", text)
        expect(kernel_row is not None and kernel_row.group(1).split()[-3:] == ["2.50", "8.000", "kernel"],
               f"{kind}: the text's kernel row {kernel_row and kernel_row.group(1)}")
        if not chromium:
            continue
        weight = misses[0]
        page = write_page(report, archive, f"{output_dir}/{kind}")
        drawn = subprocess.run([chromium] + HEADLESS + ["--dump-dom", f"file://{page}#flame={weight}"],
                               capture_output=True, text=True, timeout=120)
        errors = [line for line in drawn.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
        expect(not errors, f"{kind}: console messages: {errors[:5]}")
        dom = drawn.stdout
        graph = re.search(r'id="flame-graph"[^>]*data-weight="([^"]*)"', dom)
        expect(graph is not None and graph.group(1) == weight, f"{kind}: flame graph weighted by {graph and graph.group(1)}")
        selected = re.search(r'<option value="(\d+)" selected="">([^<]*)</option>', dom)
        expect(selected is not None and selected.group(2) == weight, f"{kind}: option selected {selected and selected.group(0)}")
        expect(f"kernel: {totals[weight]:,} {weight} (100.0 %)" in dom,
               f"{kind}: no flame frame 'kernel: {totals[weight]:,} {weight} (100.0 %)' on the page")
        functions = re.search(r'id="hot-functions"[^>]*>(.*?)</table>', dom, re.DOTALL)
        headings = re.findall(r"<th>([^<]*)</th>", functions.group(1)) if functions else []
        expect(f"{weight} per 1k instructions exclusive" in headings and "IPC exclusive" in headings,
               f"{kind}: the hot functions' columns {headings}")


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


def nanoseconds(microseconds):
    """The file's times are microseconds to the nanosecond: compared as
    integers, a record at the very end of its slice is inside it."""
    return round(microseconds * 1000)


def outermost_slices(slices):
    """The slices of one thread (in nanoseconds) that no other slice
    holds, by start: any time inside a slice is inside one of these."""
    outer = []
    for start, end in sorted(slices, key=lambda s: (s[0], -s[1])):
        if not outer or start >= outer[-1][1]:
            outer.append((start, end))
        elif end > outer[-1][1]:
            fail(f"slices overlap without nesting: {outer[-1]} and {(start, end)}")
    return outer


def inside_slice(outer, time):
    i = bisect.bisect_right([start for start, _ in outer], time) - 1
    return i >= 0 and outer[i][0] <= time <= outer[i][1]


def check_chrome(report, archive, output_file, workload):
    subprocess.run([report, "--chrome-trace", output_file, archive], check=True, stdout=subprocess.DEVNULL)
    trace = json.load(open(output_file))
    profile = profile_of(report, archive)
    events = trace["traceEvents"]
    ranks = len(profile["ranks"])
    processes = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    expect(processes == {rank: f"rank {rank}" for rank in range(ranks)}, f"process names {processes}")
    threads = {(e["pid"], e["tid"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    run_end = nanoseconds(trace["otherData"]["run_microseconds"])
    slices = [e for e in events if e["ph"] == "X"]
    for e in slices:
        expect((e["pid"], e["tid"]) in threads, f"a slice on an unnamed thread: {e}")
        expect(e["dur"] >= 0 and e["ts"] >= 0 and nanoseconds(e["ts"]) + nanoseconds(e["dur"]) <= run_end,
               f"a slice outside the run (0 to {run_end} ns): {e}")
    mpi = collections.Counter(e["name"] for e in slices if e["cat"] == "mpi")
    calls = collections.Counter()
    for f in profile["mpi_functions"]:
        calls[f["name"]] += f["calls"]
    expect(mpi == calls, f"MPI slices {dict(mpi)}, calls in the profile {dict(calls)}")
    # The archive's timer resolution: the slices of a function add up to
    # its time in the profile (a function nothing is nested in).
    for f in profile["mpi_functions"]:
        if f["name"] in ("MPI_Send", "MPI_Recv") and workload == "pingpong":
            total = sum(e["dur"] for e in slices if e["name"] == f["name"]) / 1e6
            expect(abs(total - f["seconds"]) <= 1e-6 * f["calls"] + 1e-6 * f["seconds"],
                   f"{f['name']} slices last {total} s, the profile says {f['seconds']} s")
    for rank in range(ranks):
        spans = [(e["ts"], e["ts"] + e["dur"]) for e in slices if e["pid"] == rank]
        expect(spans, f"rank {rank} has no slice")
        # The span is printed to 9 digits, the slices' ends rounded to the ns.
        span = profile["ranks"][rank]["span_seconds"] * 1e6
        expect(max(end for _, end in spans) - min(start for start, _ in spans) <= span * (1 + 1e-8) + 2e-3,
               f"rank {rank}: slices over more than its span of {span} us")
        if workload == "pingpong":
            per_name = collections.Counter(e["name"] for e in slices if e["pid"] == rank)
            expect(per_name["MPI_Send"] == PINGPONG_ROUNDS and per_name["MPI_Recv"] == PINGPONG_ROUNDS,
                   f"rank {rank}: {per_name['MPI_Send']} MPI_Send and {per_name['MPI_Recv']} MPI_Recv slices")
    outer = collections.defaultdict(list)
    for e in slices:
        start = nanoseconds(e["ts"])
        outer[(e["pid"], e["tid"])].append((start, start + nanoseconds(e["dur"])))
    outer = {thread: outermost_slices(spans) for thread, spans in outer.items()}
    flows = collections.defaultdict(dict)
    for e in events:
        if e["ph"] in "sf":
            expect(e["ph"] not in flows[e["id"]], f"flow {e['id']} has two '{e['ph']}' ends")
            expect(e.get("bp") == "e" and inside_slice(outer.get((e["pid"], e["tid"]), []), nanoseconds(e["ts"])),
                   f"a flow end outside any slice of its thread: {e}")
            flows[e["id"]][e["ph"]] = e
    expect(all(len(ends) == 2 for ends in flows.values()), "a flow without its start or finish")
    expect(len(flows) == profile["messages_matched"],
           f"{len(flows)} flows, {profile['messages_matched']} messages matched")
    if workload == "pingpong":
        pairs = collections.Counter((ends["s"]["pid"], ends["f"]["pid"]) for ends in flows.values())
        expect(pairs == {(0, 1): PINGPONG_ROUNDS, (1, 0): PINGPONG_ROUNDS}, f"flows by ranks {pairs}")


def main():
    report, archive, mode = sys.argv[1:4]
    if mode == "html":
        check_html(report, archive, sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else "")
        return
    if mode == "message-lines":
        check_message_lines(report, archive, sys.argv[4], sys.argv[5])
        return
    if mode == "thinned-lines":
        check_thinned_lines(report, archive, sys.argv[4])
        return
    if mode == "derived-counters":
        check_derived_counters(report, archive, sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else "")
        return
    if mode == "speedscope":
        check_speedscope(report, archive, sys.argv[4])
        return
    if mode == "chrome":
        check_chrome(report, archive, sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else "")
        return
    if mode == "shares":
        check_shares(report, archive, sys.argv[4], sys.argv[5])
        return
    if mode == "task-clock":
        check_task_clock(report, archive, sys.argv[4], sys.argv[5])
        return
    if mode == "cycles":
        check_cycles(report, archive, sys.argv[4], sys.argv[5])
        return
    if mode == "page-faults":
        check_page_faults(report, archive, sys.argv[4], sys.argv[5], sys.argv[6] if len(sys.argv) > 6 else "")
        return
    if mode == "flushes":
        check_flushes(report, archive, sys.argv[4] if len(sys.argv) > 4 else "")
        return
    if mode == "rates":
        check_rates(report, archive, sys.argv[4], sys.argv[5], sys.argv[6] if len(sys.argv) > 6 else "")
        return
    checks = {"pingpong": check_pingpong, "imbalance": check_imbalance, "late-sender": check_late_sender,
              "irregular": check_irregular, "all-matched": check_all_matched}
    checks[mode](profile_of(report, archive), sys.argv[4])


main()
