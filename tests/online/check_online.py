#!/usr/bin/python3
"""Whole-run tests of online analysis (issue #28): streamed.c under mpirun,
2 ranks and 1 analyzer.

usage: check_online.py CASE RUN_DIR MPIEXEC LAUNCHER PROGRAM REPORT OTF2_PRINT [PAGE]

CASE:
  equal    the final live/report.json has, per MPI function, the calls and
           bytes that adaptrace-report --json finds in the archive of the
           same run, per sampled function the exclusive and inclusive
           samples and seconds it finds, and its per-rank figures add up
           to them;
  threads  tests/online/threads.c, PROGRAM being that program: other
           threads' full event chunks streamed through the main thread
           (check_threads); threads-live: their calls in the live
           reports during the run (check_threads_live); threads-killed:
           the same with its analyzer
           killed mid-run (check_threads_killed); threads-recovered: its
           ranks ended by SIGTERM and recovered (check_threads_recovered);
  families the same for the C families program of the MPI tests
           (tests/mpi/families.c: every family of MPI calls, the
           nonblocking collectives' bytes at the calls that complete them
           included), PROGRAM being that program;
  nested   the same for the regions program of the MPI tests
           (tests/mpi/regions.c), PROGRAM being that program: its
           generalized request's query callback calls MPI_Status_set_*
           inside MPI_Wait and MPI_Request_get_status, so each function's
           seconds equal adaptrace-report's only if the stream gives a call
           its exclusive time (less its nested MPI calls'), and the archive
           must show such nesting (python3-otf2) with more nested time than
           the comparison's bound;
  rates    a run of samples that halves its rate (64 KiB buffer, 10 kHz)
           with 1 analyzer (5 s without an MPI call: the samples that find
           the stream's ring full go to the buffer): the live report's
           sampling rates over time and
           buffer use at each halving, and each rank's span, are
           adaptrace-report's;
  samples  the same for a run that computes a second between its
           MPI_Allreduce calls (samples outside MPI);
  two      the same on 4 ranks with 2 analyzers (their totals summed,
           their sampled profiles gathered on analyzer 0); then the demo
           on 4 ranks and 2 analyzers: each analyzer writes its own
           ranks' parts of the archive (and says so), and the archive has
           the records of an offline run's;
  halved-offline  the run of profile and samples-streamed without
           analyzers halves its buffers 4 times or more: their fixture
           (CMakeLists.txt), which both compare with;
  profile  a run of samples that halves 4 times or more offline on a
           small buffer keeps its initial rate with
           ADAPTRACE_ONLINE_OUTPUT=profile and 1 analyzer, writes no trace
           files, and its final report.json has the samples streamed;
  metrics  the run of samples-streamed with perf::TASK-CLOCK
           (ADAPTRACE_METRICS): the samples and their counter values leave
           the buffers in their event chunks, no halving, every sample in
           the analyzer's archive with its Metric record as offline, and
           adaptrace-report's task clock of the sampled functions adds up
           to the counter's last values, which the final live report has
           per rank, and its counts per sampled function are
           adaptrace-report's (exit 77 where PAPI cannot add it);
  ring     12 s without an MPI call at 5 kHz (more samples than the
           ring's minimum) on the default buffer: the ring's share of the
           budget holds them all, none is lost to ring_full or halved
           (exit 77 where overload halvings left too few samples);
  samples-streamed  the run of profile, with the default
           ADAPTRACE_ONLINE_OUTPUT=trace: the samples leave the buffers in
           their event chunks, no halving, every sample in the analyzer's
           archive at the initial rate's weight;
  profile_calls  a run of MPI events (3,000 rounds of streamed.c's
           point-to-point, nonblocking and collective calls) fills a
           64 KiB buffer offline (flushes); with
           ADAPTRACE_ONLINE_OUTPUT=profile and 1 analyzer the ranks' MPI
           events stay out of their buffers (no flush, no halving, only
           MPI_Init's Enter and Leave there), and the final report.json
           has, per MPI function and rank, the calls and bytes the offline
           archive of the same program has;
  behind   the analyzer held (SIGSTOP) while the ranks make 3,000 rounds
           of calls, with small TCP socket buffers to it: every chunk is
           in flight, the calls that find none are counted as
           analyzer_behind and sent as totals per function at
           MPI_Finalize (the analyzer let go, SIGCONT, after the rounds),
           and the final live report has, per function and rank, the
           calls and bytes of the run's archive;
  demo     the same for the bundled adaptrace-demo on 4 ranks (halo
           exchange, row communicators, reductions, a gather);
  live     a run computing ~6 s has a live/report.json within its first
           seconds whose call counts grow between two reads before the end;
  refused  a singleton whose MPI refuses spawning (Open MPI's isolated
           singleton has no runtime to spawn with): one line says so, and
           the run writes its offline archive;
  preloaded  libadaptrace.so and ADAPTRACE_ANALYZERS reach every process
           mpirun starts, the analyzer too: the library stays inert in
           the analyzer (no archive of its own, no analyzers of its own,
           no line of its own), the ranks' live report is final;
  killed   the analyzer killed (SIGKILL) mid-run, under mpirun
           --enable-recovery: the application exits 0 and its archive is
           complete (otf2-print --silent -Werror).
  killed-second  4 ranks, 2 analyzers, analyzer 1 killed (SIGKILL) once
           the live report exists: the run exits 0 (no report round
           waits for the dead analyzer), its archive is complete, and the
           last live report names ranks 2 and 3 as without analyzer.
  killed-first  the same with analyzer 0 killed, the one that writes
           the live report and the archive: the run exits 0, the ranks
           write the archive, ranks 0 and 1 are named without analyzer.
  killed-middle  3 ranks, 3 analyzers, analyzer 1 killed: analyzers 0
           and 2 go on, and rank 1 alone is named without analyzer.
  stopped-killed  the events-streamed run, its analyzer stopped (SIGSTOP)
           during the rounds and killed (SIGKILL) after them: every
           chunk sent and not confirmed by the analyzer is written back by
           its rank, the archive has the offline run's records
           (check_stopped_killed);
  events-streamed  a run of MPI events that flushes a 64 KiB buffer to its
           spill file again and again offline: with the analyzer the
           ranks' full event chunks are streamed during the run (no
           flush), and the analyzer's archive has the records of the
           offline run per location (BufferFlush records aside);
  unwritten  analyzer 0 cannot write the archive (its address space
           limited during the run): it says why, and the ranks write the
           archive themselves, complete, as summary.json and stderr say.
  unwritten-second  the same with 2 ranks and 2 analyzers, analyzer 1
           limited: it cannot rebuild its rank's part, analyzer 0 writes
           none of its own either (the analyzers agree first), both say
           why, and the ranks write the archive themselves.
  rank-killed  a rank killed (SIGKILL) mid-run: mpirun ends the job, the
           analyzer with SIGTERM, and analyzer 0 writes a last live report
           of what it received that says so (ended_by, no rank finished),
           with the page beside it where the build has one.
  user-regions  the user API's program (tests/user, balanced): the live
           report equals adaptrace-report, the samples in its regions
           named by the regions' names (check_user_regions).
  full-tree  MPI_Allreduce from 1,024 call paths on 64 KiB buffers, whose
           calling-context tree cannot hold them: every call in the
           archive, the live report equal to adaptrace-report
           (check_full_tree).
  thread-waves  40 threads per rank one after another, more than a
           rank's rings of message ends: the live report equals
           adaptrace-report, every thread's ends in its late sender and
           collective waiting (check_thread_waves).
  loaded   ranks that ask MPI before MPI_Init, and load an object after
           it and compute in it: the live report equals adaptrace-report,
           the calls before MPI_Init included and the object's frames
           named by their functions (check_loaded).
  recovered-in-flight  the same run, its analyzer stopped (SIGSTOP)
           before the rounds and killed (SIGKILL) as the ranks are ended
           by SIGTERM after them: the chunks each rank had sent and the
           analyzer never wrote come from the rescue files, nothing is
           missing (check_recovered_in_flight).
  recovered-events  the events-streamed run (64 KiB buffers, 3,000 rounds)
           then computing, ended by SIGTERM to the ranks once the rounds are
           done: adaptrace-recover rebuilds the archive from the rescue
           files and the analyzer's files of streamed event chunks; every
           location runs from MPI_Init's Enter, balanced, and holds every
           MPI call of the 3,000 rounds (streamed during the run); the
           files of streamed events are gone once recovered. A copy with
           rank 0's file cut in half recovers with rank 0's list cut
           there, the events missing said in one line and counted in
           summary.json.
  page     the final live/report.html beside live/report.json embeds the
           same report and loads nothing; with PAGE a chromium, a headless
           browser draws its sections without a console message, a row per
           MPI function and the sampled functions. PAGE "no-chromium": the
           page is not drawn; "not-built" (ADAPTRACE_REPORT_HTML=OFF): no
           page, and the analyzer says so in one line.
"""
import html
import re
import json
import os
import shutil
import signal
import subprocess
import sys
import time

# Open MPI's TCP between the ranks and the processes they spawn uses the
# first interface; on hosts whose external one is not reachable from
# itself only the loopback works.
# 100 Hz: the comparisons of the sampled profiles need a run without
# halvings, and at 1 kHz a loaded machine under ASan made the sampler's
# overload protection halve once (a CI run: 112 samples removed, none of
# them the stream could take back). The profile case sets its own rate.
# The TCP ports: each Open MPI process listens on the lowest free port
# from 1024 on, so a killed analyzer's port may at once be another
# test's new process's, which a rank that connects to its analyzer again
# then reaches. That is the likeliest cause of two hangs of
# online.threads-killed beside other tests ("connect() to
# 127.0.0.1:1029 failed", one rank gone without a word, the other
# waiting for it until the watchdog), never seen in 20 runs alone, not
# reproduced on purpose. Each run of this script
# takes ports of its own, 128 from a base its pid picks above 10000
# (IPv4 and IPv6 alike).
PORTS = str(10000 + os.getpid() % 400 * 128)
ENVIRONMENT = dict(os.environ, OMPI_MCA_btl_tcp_if_include="lo", ADAPTRACE_SAMPLING_RATE="100Hz",
                   OMPI_MCA_btl_tcp_port_min_v4=PORTS, OMPI_MCA_btl_tcp_port_min_v6=PORTS)
# Generous bounds: the test machine may be loaded. A run still going after
# WATCHDOG_S shows every thread of its processes (run_with_watchdog.sh).
RUN_LIMIT_S = 100
WATCHDOG_S = 80
WATCHDOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run_with_watchdog.sh")


def fail(message):
    sys.exit(f"check_online.py: {message}")


def run(command, run_dir, environment=ENVIRONMENT, expect_status=0, stdin_text=""):
    """Runs command, stdin_text on its standard input (none by default:
    read, it ends at once)."""
    with open(os.path.join(run_dir, "stderr.txt"), "w") as stderr:
        status = subprocess.run(command, input=stdin_text.encode(), stderr=stderr, env=environment,
                                timeout=RUN_LIMIT_S).returncode
    text = open(os.path.join(run_dir, "stderr.txt")).read()
    sys.stderr.write(text)
    if status != expect_status:
        fail(f"{command} exited with {status}, expected {expect_status}")
    return text


def check_archive(archive, otf2_print):
    status = subprocess.run([otf2_print, "--silent", "-Werror", os.path.join(archive, "traces.otf2")],
                            stdout=subprocess.DEVNULL).returncode
    if status != 0:
        fail(f"otf2-print --silent -Werror failed on {archive}")


def traced(mpiexec, launcher, archive, arguments, options=(), ranks=2, analyzers=1):
    return [WATCHDOG, str(WATCHDOG_S), mpiexec, "--oversubscribe", "-np", str(ranks), *options, launcher, "--analyzers",
            str(analyzers), "--output", archive, *arguments]


def read_live(archive):
    """live/report.json, or None while there is none (it is replaced by a
    rename, so a read never sees half of it)."""
    try:
        with open(os.path.join(archive, "live", "report.json")) as live:
            return json.load(live)
    except FileNotFoundError:
        return None


def run_acting(command, run_dir, act, environment=ENVIRONMENT, stdout=None, stdin=subprocess.DEVNULL):
    """Runs command (stdin closed unless given: subprocess.PIPE for act to
    write, stderr into run_dir/stderr.txt, stdout as given:
    subprocess.PIPE for act to read), calls act(process) while it runs,
    waits for its end (killed if it outlives act or RUN_LIMIT_S) and
    returns its exit status and stderr, which it also echoes."""
    with open(os.path.join(run_dir, "stderr.txt"), "w") as stderr:
        process = subprocess.Popen(command, stdin=stdin, stdout=stdout, stderr=stderr,
                                   env=environment, text=True)
        try:
            act(process)
            status = process.wait(timeout=RUN_LIMIT_S)
        finally:
            if process.poll() is None:
                process.kill()
    text = open(os.path.join(run_dir, "stderr.txt")).read()
    sys.stderr.write(text)
    return status, text


def analyzer_once_live(process, archive, analyzers=1, index=0):
    """The pid of analyzer index of the run's analyzers, once its first
    live report is there (or the run ended): the spawned analyzers' own
    MPI_COMM_WORLD rank is their index."""
    while process.poll() is None and read_live(archive) is None:
        time.sleep(0.1)
    found = subprocess.run(["pgrep", "-f", f"adaptrace-analyzer {archive} "], stdout=subprocess.PIPE,
                           text=True).stdout.split()
    if len(found) != analyzers:
        fail(f"expected {analyzers} analyzer processes of {archive}, found {found}")
    for pid in found:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            if f"OMPI_COMM_WORLD_RANK={index}".encode() in environ.read().split(b"\0"):
                return int(pid)
    fail(f"no analyzer {index} among {found}")


def analyzer_held_through_rounds(process, archive):
    """Stops (SIGSTOP) the run's analyzer once its live report exists, then
    lets rank 0 of streamed.c ("signalled", stdin and stdout piped) begin
    its rounds, and returns the stopped analyzer's pid once rank 0 says
    they are done; where it says anything else, the analyzer is killed
    (SIGKILL), not left stopped, and the test fails."""
    held = analyzer_once_live(process, archive)
    os.kill(held, signal.SIGSTOP)
    process.stdin.write("go\n")
    process.stdin.close()
    line = process.stdout.readline()
    if line.strip() != "rounds done":
        os.kill(held, signal.SIGKILL)
        fail(f"the program said {line!r}, expected 'rounds done'")
    return held


def total_calls(report):
    return sum(function["calls"] for function in report["mpi_functions"])


def check_equal(run_dir, mpiexec, launcher, program, report, otf2_print, ranks=2, arguments=(),
                expected_functions=("MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Waitall", "MPI_Allreduce", "MPI_Bcast",
                                    "MPI_Init", "MPI_Finalize"), analyzers=1, command=None, receivers_unknown=0,
                point_to_point=True, environment=ENVIRONMENT):
    """command: the run's own (it writes run_dir/archive), in place of
    adaptrace --analyzers under mpirun (check_mpmd.py's MPMD launch);
    receivers_unknown: the sends to no rank the program makes (left out of
    both matrices); point_to_point: whether it sends any (else both
    matrices are empty); environment: the run's."""
    archive = os.path.join(run_dir, "archive")
    stderr = run(command or traced(mpiexec, launcher, archive, [program, *arguments], ranks=ranks,
                                   analyzers=analyzers), run_dir, environment)
    check_archive(archive, otf2_print)
    check_written_by_analyzers(archive, stderr)
    live = read_live(archive)
    if live is None or not live["final"]:
        fail(f"no final live report in {archive}/live: {live}")
    if live["analyzers"] != analyzers:
        fail(f"{live['analyzers']} analyzers in the live report, {analyzers} asked for")
    # The other analyzers' round reports: none with one analyzer, and at
    # least the final round's with more.
    rounds = (live["round_report_bytes"], live["round_report_largest_bytes"])
    if (analyzers == 1 and rounds != (0, 0)) or (analyzers > 1 and not 0 < rounds[1] <= rounds[0]):
        fail(f"round reports of {rounds[0]} bytes, the largest {rounds[1]}, with {analyzers} analyzers")
    every_rank = list(range(ranks))
    if live["connected_ranks"] != every_rank or live["finished_ranks"] != every_rank:
        fail(f"ranks connected {live['connected_ranks']}, finished {live['finished_ranks']}, expected {every_rank}")
    if any(live["calls_not_streamed_by_cause"].values()):
        fail(f"calls not streamed: {live['calls_not_streamed_by_cause']}")
    offline = json.loads(subprocess.run([report, "--json", archive], stdout=subprocess.PIPE, check=True).stdout)
    fields = ("calls", "bytes_sent", "bytes_received")
    expected = {f["name"]: tuple(f[k] for k in fields) for f in offline["mpi_functions"]}
    found = {f["name"]: tuple(f[k] for k in fields) for f in live["mpi_functions"]}
    if found != expected:
        fail(f"live report {found} != adaptrace-report {expected}")
    for name in expected_functions:
        if name not in found:
            fail(f"{name} is not in the live report")
    # Times: each call's ticks at the archive's rate, so within a tick (at
    # most a nanosecond here) a call of the offline figure.
    offline_seconds = {f["name"]: f["seconds"] for f in offline["mpi_functions"]}
    for f in live["mpi_functions"]:
        if abs(f["seconds"] - offline_seconds[f["name"]]) > 1e-9 * f["calls"]:
            fail(f"{f['name']}: {f['seconds']} s live, {offline_seconds[f['name']]} s in adaptrace-report")
    summed = {}
    for rank in live["per_rank"]:
        for f in rank["mpi_functions"]:
            previous = summed.get(f["name"], (0, 0, 0))
            summed[f["name"]] = tuple(a + f[k] for a, k in zip(previous, fields))
    if summed != found:
        fail(f"the ranks' figures {summed} do not add up to the totals {found}")
    summary = json.load(open(os.path.join(archive, "summary.json")))
    check_calls_reached(summary, found)
    print(f"live report = adaptrace-report for {len(found)} functions")
    check_rank_spread(live, offline)
    check_steps(live, offline)
    check_rates(live, offline)
    check_matrix(live, offline, receivers_unknown, point_to_point)
    check_waiting(live, offline, summary, ranks, analyzers, receivers_unknown, point_to_point)
    check_sampled(live, offline, summary)


def check_waiting(live, offline, summary, ranks, analyzers, receivers_unknown=0, point_to_point=True):
    """Late sender and collective waiting: the event feed's analysis
    (feed/waiting.c) fed live by the analyzers from the ranks' message and
    collective ends, and by adaptrace-report from the archive. The counts
    are adaptrace-report's exactly and each rank's seconds too, up to the
    ticks-to-seconds rate (the ranks of one host share a clock: their
    offsets are 0, not measured, so the ticks compared are the same on
    both sides), with any number of analyzers: the messages whose two ends
    went to different analyzers (from adaptrace-report's matrix) and the
    collectives with members on several are matched by analyzer 0 from the
    ends the others' round reports carry, none left out under
    peer_on_other_analyzer. The receivers_unknown sends to no rank are
    left out as peer_unknown (adaptrace-report matches none of them
    either)."""
    for key in ("messages_matched", "messages_unmatched", "collectives_matched", "waiting_ends_not_matched_by_cause"):
        if key not in live:
            fail(f"no {key} in the live report")
    left_out = live["waiting_ends_not_matched_by_cause"]
    expected_causes = dict({cause: 0 for cause in left_out}, peer_unknown=receivers_unknown)
    if left_out != expected_causes or \
            summary["online_waiting_ends_not_streamed_by_cause"] != dict(expected_causes, peer_on_other_analyzer=0):
        fail(f"message or collective ends not matched: {left_out}, "
             f"summary {summary['online_waiting_ends_not_streamed_by_cause']}, expected {expected_causes}")
    if summary["online_waiting_ends_streamed"] == 0:
        fail("summary.json says no message or collective end streamed")
    analyzer_of = [rank * analyzers // ranks for rank in range(ranks)]
    matrix = offline["matrix_messages"]
    across = sum(matrix[sender * ranks + receiver] for sender in range(ranks) for receiver in range(ranks)
                 if analyzer_of[sender] != analyzer_of[receiver])
    if offline["messages_unmatched"] != 0:
        fail(f"adaptrace-report left {offline['messages_unmatched']} message ends unmatched in a test program")
    found = (live["messages_matched"], live["messages_unmatched"], live["collectives_matched"])
    expected = (offline["messages_matched"], 0, offline["collectives_matched"])
    if found != expected:
        fail(f"live messages matched, unmatched and collectives matched {found}, adaptrace-report's {expected} "
             f"({across} messages across analyzers)")
    matched = offline["messages_matched"] + offline["collectives_matched"]
    figures = ("late_sender_seconds", "collective_wait_seconds")
    for rank, offline_rank in zip(live["per_rank"], offline["ranks"]):
        for figure in figures:
            value, expected_value = rank[figure], offline_rank[figure]
            if abs(value - expected_value) > 1e-9 * matched + 1e-6 * expected_value:
                fail(f"rank {rank['rank']}: {figure} {value} live, {expected_value} in adaptrace-report")
    for figure in figures:
        spread, expected_spread = live["rank_spread"][figure], offline["rank_spread"][figure]
        for key in ("min", "mean", "max"):
            if abs(spread[key] - expected_spread[key]) > 1e-9 * matched + 1e-6 * expected_spread[key]:
                fail(f"{figure} per rank, {key}: {spread[key]} live, {expected_spread[key]} in adaptrace-report")
    if (point_to_point and not any(rank["late_sender_seconds"] > 0 for rank in offline["ranks"])) or \
            not any(rank["collective_wait_seconds"] > 0 for rank in offline["ranks"]):
        fail("adaptrace-report found no late sender or no collective waiting: the comparison shows nothing")
    # The ranks by their waiting, most first: the feed's one ordering of the
    # same ticks on both sides, so the same list, not one up to rounding.
    if live.get("ranks_waiting_most") != offline["ranks_waiting_most"]:
        fail(f"ranks waiting most {live.get('ranks_waiting_most')} live, "
             f"{offline['ranks_waiting_most']} in adaptrace-report")
    print(f"late sender and collective waiting: {live['messages_matched']} messages and "
          f"{live['collectives_matched']} collectives matched live with {analyzers} analyzer(s), as "
          f"adaptrace-report ({across} messages across analyzers), each rank's seconds equal adaptrace-report's, "
          f"ranks waiting most {live['ranks_waiting_most']} as adaptrace-report's")


def check_matrix(live, offline, receivers_unknown=0, point_to_point=True):
    """The communication matrix (messages and bytes per sending and
    receiving world rank, row-major) from the stream's message records:
    exactly adaptrace-report's, and not empty where the program sends
    point-to-point; no message left out of it but the receivers_unknown
    sends to no rank, which adaptrace-report's leaves out too."""
    for key in ("matrix_messages", "matrix_bytes"):
        if key not in live:
            fail(f"no {key} in the live report")
        if live[key] != offline[key]:
            fail(f"{key}: {live[key]} live, {offline[key]} in adaptrace-report")
    if point_to_point and sum(offline["matrix_messages"]) == 0:
        fail("adaptrace-report's matrix is empty: nothing compared")
    left_out = live["messages_not_in_matrix_by_cause"]
    if left_out != dict({cause: 0 for cause in left_out}, receiver_unknown=receivers_unknown):
        fail(f"messages not in the live matrix: {left_out}, expected {receivers_unknown} with receiver unknown")
    print(f"live matrix = adaptrace-report's: {sum(live['matrix_messages'])} messages, "
          f"{sum(live['matrix_bytes'])} bytes")


def check_rank_spread(live, offline):
    """Each rank's seconds in MPI and their spread over the ranks (the
    imbalance), both from the event feed's analyses: within a tick (a
    nanosecond here) a call of adaptrace-report's."""
    calls = [sum(f["calls"] for f in rank["mpi_functions"]) for rank in live["per_rank"]]
    for rank, offline_rank, rank_calls in zip(live["per_rank"], offline["ranks"], calls):
        if abs(rank["mpi_seconds"] - offline_rank["mpi_seconds"]) > 1e-9 * rank_calls:
            fail(f"rank {rank['rank']}: {rank['mpi_seconds']} s in MPI live, "
                 f"{offline_rank['mpi_seconds']} s in adaptrace-report")
    spread, expected = live["rank_spread"]["mpi_seconds"], offline["rank_spread"]["mpi_seconds"]
    for key in ("min", "mean", "max"):
        if abs(spread[key] - expected[key]) > 1e-9 * max(calls):
            fail(f"time in MPI per rank, {key}: {spread[key]} live, {expected[key]} in adaptrace-report")
    # max / mean: the two figures' bounds, relative, add up (a balanced or
    # empty run: 1 on both sides).
    tick_bound = 1e-9 * max(calls)
    relative = (tick_bound / expected["max"] + tick_bound / expected["mean"]) if expected["mean"] > 0 else 0
    if abs(spread["imbalance"] - expected["imbalance"]) > expected["imbalance"] * relative + 1e-9:
        fail(f"imbalance of the time in MPI: {spread['imbalance']} live, {expected['imbalance']} in adaptrace-report")
    print(f"time in MPI per rank and its imbalance ({spread['imbalance']:.4f}) = adaptrace-report's")
    check_span(live, offline, tick_bound)


def check_span(live, offline, tick_bound):
    """Each rank's span (its main thread's first to last event: the start
    of its sampling or MPI_Init's Enter, to MPI_Finalize's Leave) and its
    computation (span less time in MPI), and their spread, both from the
    event feed's analysis. The span exactly adaptrace-report's: the same
    two times at the same rate, and the ranks of one host need no clock
    correction; the computation within the time in MPI's bound."""
    for rank, offline_rank in zip(live["per_rank"], offline["ranks"]):
        if rank["span_seconds"] != offline_rank["span_seconds"]:
            fail(f"rank {rank['rank']}: span {rank['span_seconds']} s live, "
                 f"{offline_rank['span_seconds']} s in adaptrace-report")
        if abs(rank["computation_seconds"] - offline_rank["computation_seconds"]) > tick_bound:
            fail(f"rank {rank['rank']}: computation {rank['computation_seconds']} s live, "
                 f"{offline_rank['computation_seconds']} s in adaptrace-report")
        if rank["span_seconds"] <= 0 or rank["computation_seconds"] <= 0:
            fail(f"rank {rank['rank']}: no span or no computation in the live report: {rank}")
    for figure, bound in (("span_seconds", 0), ("computation_seconds", tick_bound)):
        spread, expected = live["rank_spread"][figure], offline["rank_spread"][figure]
        for key in ("min", "mean", "max"):
            if abs(spread[key] - expected[key]) > bound:
                fail(f"{figure} per rank, {key}: {spread[key]} live, {expected[key]} in adaptrace-report")
        if abs(spread["imbalance"] - expected["imbalance"]) > 1e-6 * expected["imbalance"]:
            fail(f"imbalance of {figure}: {spread['imbalance']} live, {expected['imbalance']} in adaptrace-report")
    print(f"span and computation per rank and their imbalance "
          f"({live['rank_spread']['computation_seconds']['imbalance']:.4f}) = adaptrace-report's")


def check_steps(live, offline):
    """The time steps (the computation between consecutive outermost MPI
    calls, per pair of calls), the event feed's on both sides. The live
    report keys them by MPI function; adaptrace-report by calling context
    when sampling is on (these runs), so one pair of functions can be
    several of its keys (one per call site): where the offline report
    lists every key (its --json lists 20), the pairs must be the same,
    each pair's instances and time the sum of its keys'; else a pair's
    instances at least those of its keys listed. A pair that is one key
    offline (its instances all of the pair's) must have all its figures:
    counts, the longest instance's rank and
    iteration, the slowest rank and the histogram exactly, the durations
    (each one's ticks at the archive's rate) exactly, the sums within a
    tick a step (they add in another order)."""
    if live["time_steps_unknown"] != 0:
        fail(f"time steps not known live: {live['time_steps_unknown']}")
    if live["segment_count"] == 0 or offline["segment_count"] == 0:
        fail(f"no time steps: {live['segment_count']} live, {offline['segment_count']} in adaptrace-report")
    pairs = {}
    for step in offline["segments"]:
        pairs.setdefault((step["from"], step["to"]), []).append(step)
    found = {(step["from"], step["to"]): step for step in live["segments"]}
    if offline["segment_count"] == len(offline["segments"]):
        if live["segment_count"] != len(pairs) or set(found) != set(pairs):
            fail(f"time steps {sorted(found)} ({live['segment_count']}) live, {sorted(pairs)} in adaptrace-report")
    every_key = offline["segment_count"] == len(offline["segments"])
    compared = 0
    for pair, step in found.items():
        keys = pairs.get(pair)
        if keys is None:
            continue
        bound = 1e-9 * step["count"]
        listed = sum(k["count"] for k in keys)
        if step["count"] < listed or (every_key and (step["count"] != listed or abs(
                step["total_seconds"] - sum(k["total_seconds"] for k in keys)) > bound * 2)):
            fail(f"time step {pair}: {step} live, {keys} in adaptrace-report")
        if len(keys) > 1 or step["count"] != listed:
            continue
        key = keys[0]
        for figure in ("count", "max_rank", "max_iteration", "slowest_rank", "histogram", "min_seconds",
                       "median_seconds", "p95_seconds", "max_seconds"):
            if step[figure] != key[figure]:
                fail(f"time step {pair}, {figure}: {step[figure]} live, {key[figure]} in adaptrace-report")
        for figure in ("total_seconds", "mean_seconds", "slowest_rank_mean_seconds"):
            if abs(step[figure] - key[figure]) > bound:
                fail(f"time step {pair}, {figure}: {step[figure]} live, {key[figure]} in adaptrace-report")
        compared += 1
    if compared == 0:
        fail("no time step compared figure by figure")
    print(f"time steps = adaptrace-report's: {live['segment_count']} pairs of MPI functions, "
          f"{compared} compared figure by figure")


def check_rates(live, offline, halvings=0):
    """The main threads' sampling rates over time (each halving's time
    after the run's start and its rate) and the buffer's use at each
    halving: exactly adaptrace-report's "sampling_rates" (the buffer's
    stamps the archive's metrics are written from, at the same rate; the
    ranks of one host need no clock correction), with halvings or more on
    some rank."""
    expected = [rates for rates in offline["sampling_rates"] if rates["thread"] == 0]
    if live["sampling_rates"] != expected:
        fail(f"sampling rates {live['sampling_rates']} live, {expected} in adaptrace-report")
    most = max((len(rates["steps"]) - 1 for rates in expected), default=-1)
    if most < halvings:
        fail(f"{most} halvings at most on a rank, the test needs {halvings}")
    print(f"sampling rates over time = adaptrace-report's: {len(expected)} ranks, {most} halvings at most")


def check_rates_halved(run_dir, mpiexec, launcher, program, report, otf2_print):
    """A run of samples on a 64 KiB buffer at 10 kHz with 1 analyzer
    (ADAPTRACE_ONLINE_OUTPUT=trace) that computes 5 s of CPU time without
    an MPI call: the stream's ring of samples fills (32,768 of them),
    the samples that find it full go to the buffer, which halves:
    the final live report's rates over time, with their halvings, and
    each rank's span are adaptrace-report's of the archive."""
    small = dict(ENVIRONMENT, ADAPTRACE_BUFFER_SIZE="64K", ADAPTRACE_SAMPLING_RATE="10kHz")
    archive = os.path.join(run_dir, "archive")
    run(traced(mpiexec, launcher, archive, [program, "5", "0", "alone"]), run_dir, small)
    check_archive(archive, otf2_print)
    live = read_live(archive)
    if live is None or not live["final"]:
        fail(f"no final live report in {archive}/live: {live}")
    offline = json.loads(subprocess.run([report, "--json", archive], stdout=subprocess.PIPE, check=True).stdout)
    check_rates(live, offline, halvings=1)
    check_span(live, offline, 1e-9 * sum(f["calls"] for f in live["mpi_functions"]))


def check_written_by_analyzers(archive, stderr):
    """ADAPTRACE_ONLINE_OUTPUT=trace: analyzer 0 wrote the archive from the
    ranks' end states, and summary.json and the stderr summary say so with
    its bytes."""
    summary = json.load(open(os.path.join(archive, "summary.json")))
    if summary["online_archive_written_by_analyzers"] != 1 or \
            summary["online_archive_not_written_by_analyzers_because"] is not None:
        fail("summary.json does not say that the analyzers wrote the archive")
    said = [line for line in stderr.splitlines() if "written by the online analyzers" in line]
    if len(said) != 1 or f"{summary['bytes_written'] / 1048576:.1f} MiB" not in said[0]:
        fail(f"expected one line saying the analyzers wrote the archive and its {summary['bytes_written']} bytes, "
             f"found {said}")
    if any("write it themselves" in line for line in stderr.splitlines()):
        fail("a line says the ranks wrote the archive")
    check_bytes_written(archive, summary)


def check_bytes_written(archive, summary):
    """summary.json's bytes_written are the archive's OTF2 files."""
    files = [os.path.join(archive, name) for name in ("traces.otf2", "traces.def")]
    files += [os.path.join(archive, "traces", name) for name in os.listdir(os.path.join(archive, "traces"))]
    on_disk = sum(os.path.getsize(path) for path in files)
    if summary["bytes_written"] != on_disk:
        fail(f"summary.json of {archive} has {summary['bytes_written']} bytes written, its OTF2 files {on_disk}")


def records_per_location(archive, left_out=()):
    """{(rank group, location): [record]} of the archive, read with
    python3-otf2, times, samples and the classes left_out aside: each
    record its class, the region of an Enter or Leave (or of a calling
    context's), and the fields of a message or collective."""
    import otf2
    found = {}
    with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
        for location, event in trace.events:
            if isinstance(event, otf2.events.CallingContextSample) or type(event).__name__ in left_out:
                continue
            record = [type(event).__name__]
            if hasattr(event, "region"):
                record.append(event.region.name)
            if hasattr(event, "calling_context"):
                record.append(event.calling_context.region.name)
            record += [str(getattr(event, field)) for field in
                       ("receiver", "sender", "msg_tag", "msg_length", "size_sent", "size_received", "root",
                        "collective_op") if hasattr(event, field)]
            found.setdefault((location.group.name, location.name), []).append(tuple(record))
    return found


def check_calls_reached(summary, found):
    """summary.json counts every call of the report: streamed one by one,
    or sent as totals at the end."""
    reached = summary["online_calls_streamed"] + summary["online_calls_sent_as_totals"]
    if reached != sum(c for c, _, _ in found.values()):
        fail(f"summary.json streamed {summary['online_calls_streamed']} calls and sent "
             f"{summary['online_calls_sent_as_totals']} as totals, the report has "
             f"{sum(c for c, _, _ in found.values())}")


def archive_calls_per_rank(archive):
    """{(rank, function): (calls, bytes sent, bytes received)} of the
    archive's MPI calls, read with python3-otf2; bytes attributed as
    adaptrace-report does, to the innermost MPI call open when the record
    was written."""
    import otf2
    found, stacks = {}, {}
    with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
        for location, event in trace.events:
            rank = int(location.group.name.rsplit(" ", 1)[-1])
            stack = stacks.setdefault(location, [])
            if isinstance(event, (otf2.events.Enter, otf2.events.CallingContextEnter)):
                region = event.region if isinstance(event, otf2.events.Enter) else event.calling_context.region
                stack.append(region.name)
                continue
            if isinstance(event, (otf2.events.Leave, otf2.events.CallingContextLeave)):
                name = stack.pop()
                if name.startswith("MPI_"):
                    calls, sent, received = found.get((rank, name), (0, 0, 0))
                    found[(rank, name)] = (calls + 1, sent, received)
                continue
            if isinstance(event, (otf2.events.MpiSend, otf2.events.MpiIsend)):
                moved = (event.msg_length, 0)
            elif isinstance(event, (otf2.events.MpiRecv, otf2.events.MpiIrecv)):
                moved = (0, event.msg_length)
            elif isinstance(event, otf2.events.MpiCollectiveEnd):
                moved = (event.size_sent, event.size_received)
            else:
                continue
            inside = next((name for name in reversed(stack) if name.startswith("MPI_")), None)
            if inside is None:
                fail(f"a message record outside any MPI call on rank {rank}: {event}")
            calls, sent, received = found.get((rank, inside), (0, 0, 0))
            found[(rank, inside)] = (calls, sent + moved[0], received + moved[1])
    return found


def check_profile_calls(run_dir, mpiexec, launcher, program, report, otf2_print):
    """MPI events that fill a 64 KiB buffer offline stay out of it with
    ADAPTRACE_ONLINE_OUTPUT=profile, and the analyzers' final report has,
    per function and rank, the calls and bytes of the offline archive."""
    small = dict(ENVIRONMENT, ADAPTRACE_BUFFER_SIZE="64K")
    arguments = [program, "0", "3000"]
    offline_dir = os.path.join(run_dir, "offline")
    os.makedirs(offline_dir)
    offline = os.path.join(offline_dir, "archive")
    run([WATCHDOG, str(WATCHDOG_S), mpiexec, "--oversubscribe", "-np", "2", launcher, "--output", offline,
         *arguments], offline_dir, small)
    check_archive(offline, otf2_print)
    filled = json.load(open(os.path.join(offline, "summary.json")))
    if filled["flushes"] == 0 or filled["events_dropped"] != 0:
        fail(f"the offline run flushed {filled['flushes']} times and dropped {filled['events_dropped']} events: "
             f"the test needs MPI events that fill the buffer, all kept")
    expected = archive_calls_per_rank(offline)
    totals = json.loads(subprocess.run([report, "--json", offline], stdout=subprocess.PIPE, check=True).stdout)
    summed = {}
    for (rank, name), figures in expected.items():
        summed[name] = tuple(a + b for a, b in zip(summed.get(name, (0, 0, 0)), figures))
    reported = {f["name"]: (f["calls"], f["bytes_sent"], f["bytes_received"]) for f in totals["mpi_functions"]}
    if summed != reported:
        fail(f"the archive's calls per rank {summed} do not add up to adaptrace-report's {reported}")
    archive = os.path.join(run_dir, "archive")
    run(traced(mpiexec, launcher, archive, arguments), run_dir, dict(small, ADAPTRACE_ONLINE_OUTPUT="profile"))
    summary = json.load(open(os.path.join(archive, "summary.json")))
    if summary["flushes"] != 0 or summary["halvings"] != summary["overload_halvings"]:
        fail(f"with the analyzer: {summary['flushes']} flushes, "
             f"{summary['halvings'] - summary['overload_halvings']} halvings of the buffer")
    if summary["mpi_events"] != 2 * 2:
        fail(f"{summary['mpi_events']} MPI events in the buffers, expected MPI_Init's Enter and Leave on each rank")
    final = json.load(open(os.path.join(archive, "report.json")))
    if not final["final"] or final["finished_ranks"] != [0, 1]:
        fail(f"report.json is not the final report of both ranks: {final}")
    found = {(rank["rank"], f["name"]): (f["calls"], f["bytes_sent"], f["bytes_received"])
             for rank in final["per_rank"] for f in rank["mpi_functions"]}
    if found != expected:
        fail(f"report.json per rank {found} != the offline archive's {expected}")
    check_calls_reached(summary, found)
    behind = summary["online_calls_not_streamed_by_cause"]["analyzer_behind"]
    print(f"offline {filled['flushes']} flushes; profile: 0 flushes, {summary['mpi_events']} MPI events in the "
          f"buffers; report.json = the offline archive for {len(found)} functions and ranks "
          f"({summary['online_calls_sent_as_totals']} of {behind} calls behind sent as totals)")


def check_behind(run_dir, mpiexec, launcher, program, report, otf2_print):
    """Every chunk in flight: the calls and sent messages that find none
    reach the final report as totals at the end (per function, per
    receiver)."""
    archive = os.path.join(run_dir, "archive")
    # 16 KiB socket buffers to the analyzer (the kernel doubles them): a
    # held analyzer takes less than one 64 KiB chunk, so sends stay in
    # flight; the ranks talk to each other over shared memory.
    environment = dict(ENVIRONMENT, OMPI_MCA_btl_tcp_sndbuf="16384", OMPI_MCA_btl_tcp_rcvbuf="16384")
    command = traced(mpiexec, launcher, archive, ["--live-interval", "1", program, "0", "3000", "signalled"])
    held = None
    with open(os.path.join(run_dir, "stderr.txt"), "w") as stderr:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                   env=environment, text=True)
        try:
            held = analyzer_held_through_rounds(process, archive)
            os.kill(held, signal.SIGCONT)
            held = None
            status = process.wait(timeout=RUN_LIMIT_S)
        finally:
            if held is not None:
                os.kill(held, signal.SIGCONT)
            if process.poll() is None:
                process.kill()
    sys.stderr.write(open(os.path.join(run_dir, "stderr.txt")).read())
    if status != 0:
        fail(f"the run exited with {status}")
    check_archive(archive, otf2_print)
    summary = json.load(open(os.path.join(archive, "summary.json")))
    behind = summary["online_calls_not_streamed_by_cause"]["analyzer_behind"]
    if behind == 0 or summary["online_calls_sent_as_totals"] != behind:
        fail(f"{behind} calls found every chunk in flight, {summary['online_calls_sent_as_totals']} were sent as "
             f"totals: expected some, all of them")
    live = read_live(archive)
    if live is None or not live["final"] or live["finished_ranks"] != [0, 1]:
        fail(f"no final live report of both ranks: {live}")
    found = {(rank["rank"], f["name"]): (f["calls"], f["bytes_sent"], f["bytes_received"])
             for rank in live["per_rank"] for f in rank["mpi_functions"]}
    expected = archive_calls_per_rank(archive)
    if found != expected:
        fail(f"live report per rank {found} != the archive's {expected}")
    check_calls_reached(summary, found)
    print(f"{behind} calls behind sent as totals; live report = the archive for {len(found)} functions and ranks")
    # The sends that found every chunk in flight reach the matrix as
    # per-receiver totals at the end.
    as_totals = summary["online_messages_sent_as_totals"]
    if as_totals == 0:
        fail("no message was sent as totals: the matrix's totals records are not exercised")
    offline = json.loads(subprocess.run([report, "--json", archive], stdout=subprocess.PIPE, check=True).stdout)
    check_matrix(live, offline)
    print(f"{as_totals} messages behind sent as totals per receiver")
    # The time steps around the calls that went to the totals are not
    # known (the call after them says so): every outermost call but each
    # rank's first ends a step offline; live, each streamed one ends a
    # step known or unknown, and the calls behind (all outermost here)
    # end none.
    unknown = live["time_steps_unknown"]
    if offline["segment_count"] == len(offline["segments"]) and live["segment_count"] == len(live["segments"]):
        known = sum(step["count"] for step in live["segments"])
        steps = sum(step["count"] for step in offline["segments"])
        if known + unknown + behind != steps:
            fail(f"{known} time steps known and {unknown} unknown live, {behind} calls behind; "
                 f"{steps} steps in adaptrace-report")
    print(f"{unknown} time steps unknown after calls behind (none where no call was streamed after them)")


def check_sampled(live, offline, summary):
    """The live report's sampled profile is adaptrace-report's: per
    function, the exclusive and inclusive seconds and, where nothing
    halved, samples (the offline seconds over the period); the per-rank
    profiles add up to the totals, and summary.json counts every sample
    streamed. A halving that removed no sample (the overload protection's,
    where every sample is in the event chains, which ASan's slower handler
    makes on 2 cores) leaves the seconds comparable: each sample weighs
    the periods of its own shift on both sides."""
    if summary["samples_removed"] != 0 or summary["samples_dropped"] != 0:
        fail(f"the run removed or dropped samples ({summary['halvings']} halvings, {summary['samples_removed']} "
             f"removed, {summary['samples_dropped']} dropped): not comparable")
    if any(live["samples_not_streamed_by_cause"].values()):
        fail(f"samples not streamed: {live['samples_not_streamed_by_cause']}")
    period = 1.0 / summary["initial_rate_hz"]
    expected = {f["name"]: (round(f["exclusive_seconds"] / period), round(f["inclusive_seconds"] / period))
                for f in offline["sampled_functions"]}
    found = {f["name"]: (f["exclusive_samples"], f["inclusive_samples"]) for f in live["sampled_functions"]}
    if summary["halvings"] == 0 and found != expected:
        fail(f"live sampled profile {found} != adaptrace-report {expected}")
    if set(found) != set(expected):
        fail(f"live sampled functions {sorted(found)} != adaptrace-report's {sorted(expected)}")
    seconds = {f["name"]: (f["exclusive_seconds"], f["inclusive_seconds"]) for f in live["sampled_functions"]}
    for f in offline["sampled_functions"]:
        for online, archive in zip(seconds[f["name"]], (f["exclusive_seconds"], f["inclusive_seconds"])):
            if abs(online - archive) > 1e-6 * max(1.0, archive):
                fail(f"{f['name']}: {online} s live, {archive} s in adaptrace-report")
    summed = {}
    for rank in live["per_rank"]:
        for f in rank["sampled_functions"]:
            previous = summed.get(f["name"], (0, 0))
            summed[f["name"]] = (previous[0] + f["exclusive_samples"], previous[1] + f["inclusive_samples"])
    if summed != found:
        fail(f"the ranks' sampled profiles {summed} do not add up to the totals {found}")
    if live["samples"] != offline["samples"] or summary["online_samples_streamed"] != offline["samples"]:
        fail(f"{live['samples']} samples live, {summary['online_samples_streamed']} streamed, "
             f"{offline['samples']} in adaptrace-report")
    print(f"live sampled profile = adaptrace-report for {len(found)} functions, {live['samples']} samples")


def check_families(run_dir, mpiexec, launcher, program, report, otf2_print):
    """The C families program (its expectations go to run_dir/expect,
    unread here): point-to-point, persistent, nonblocking and neighbourhood
    collectives, communicators, topologies and the rest, each function's
    calls and bytes equal."""
    expect = os.path.join(run_dir, "expect")
    os.makedirs(expect, exist_ok=True)
    check_equal(run_dir, mpiexec, launcher, program, report, otf2_print, arguments=(expect,),
                expected_functions=("MPI_Iallreduce", "MPI_Waitall", "MPI_Testsome", "MPI_Ineighbor_alltoall",
                                    "MPI_Sendrecv", "MPI_Cart_get"))


def archive_nested_mpi_seconds(archive):
    """{function: (calls with MPI calls nested in them, the nested calls'
    seconds)} of the archive, read with python3-otf2."""
    import otf2
    nested, stacks = {}, {}
    with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
        resolution = trace.definitions.clock_properties.timer_resolution
        for location, event in trace.events:
            stack = stacks.setdefault(location, [])
            if isinstance(event, (otf2.events.Enter, otf2.events.CallingContextEnter)):
                region = event.region if isinstance(event, otf2.events.Enter) else event.calling_context.region
                stack.append([region.name, event.time, 0])
            elif isinstance(event, (otf2.events.Leave, otf2.events.CallingContextLeave)) and stack:
                name, enter, inner = stack.pop()
                if name.startswith("MPI_") and stack and stack[-1][0].startswith("MPI_"):
                    stack[-1][2] += event.time - enter
                if inner > 0:
                    calls, seconds = nested.get(name, (0, 0))
                    nested[name] = (calls + 1, seconds + inner / resolution)
    return nested


def check_nested(run_dir, mpiexec, launcher, program, report, otf2_print):
    """MPI calls nested in MPI calls (the regions program's generalized
    request): the live report's seconds per function are exclusive, as
    adaptrace-report's. The archive must nest them, by more than the
    comparison's bound (a nanosecond a call), or the comparison would not tell
    inclusive from exclusive seconds."""
    expect = os.path.join(run_dir, "expect")
    os.makedirs(expect, exist_ok=True)
    check_equal(run_dir, mpiexec, launcher, program, report, otf2_print, arguments=(expect,),
                expected_functions=("MPI_Wait", "MPI_Request_get_status", "MPI_Status_set_elements"))
    nested = archive_nested_mpi_seconds(os.path.join(run_dir, "archive"))
    live = read_live(os.path.join(run_dir, "archive"))
    calls = {f["name"]: f["calls"] for f in live["mpi_functions"]}
    if "MPI_Wait" not in nested:
        fail(f"no MPI call nested in MPI_Wait in the archive: {nested}")
    for name, (_, seconds) in nested.items():
        if seconds <= 1e-9 * calls[name]:
            fail(f"{name}: {seconds} s nested, not above the comparison's bound of {1e-9 * calls[name]} s")
    print(f"nested MPI calls in {sorted(nested)}: their ticks left out of the live seconds")


def check_samples(run_dir, mpiexec, launcher, program, report, otf2_print):
    """A second of computing between MPI_Allreduce calls: samples in the
    program's own function and those it calls, not only in MPI."""
    check_equal(run_dir, mpiexec, launcher, program, report, otf2_print, arguments=("1",))


def check_two(run_dir, mpiexec, launcher, program, report, otf2_print):
    """4 ranks and 2 analyzers: analyzer 0 sums the other's calls and
    gathers its ranks' sampled profiles. Then the demo on 4 ranks and 2
    analyzers (its calls are the same in every run, unlike this program's
    timed loop): each analyzer writes its own ranks' parts of the archive
    (its stderr line says which), and the archive has the records, per
    location, of the archive an offline run of the demo writes."""
    check_equal(run_dir, mpiexec, launcher, program, report, otf2_print, ranks=4, arguments=("1",), analyzers=2)
    demo_dir = os.path.join(run_dir, "demo")
    os.makedirs(demo_dir)
    check_demo(demo_dir, mpiexec, launcher, program, report, otf2_print, analyzers=2)
    text = open(os.path.join(demo_dir, "stderr.txt")).read()
    wrote = sorted(line for line in text.splitlines() if "wrote the archive's parts of" in line)
    expected = [f"adaptrace-analyzer {index}: wrote the archive's parts of ranks {ranks}, one thread per rank "
                "(each analyzer its own ranks)" for index, ranks in ((0, "0-1"), (1, "2-3"))]
    if wrote != expected:
        fail(f"expected each analyzer to say that it wrote its own ranks' parts: {expected}, found {wrote}")
    print("\n".join(wrote))


# The run of samples of profile and samples-streamed (few MPI events; 4 s
# of each process's CPU time, so that a loaded machine does not make
# fewer) on 64 KiB buffers at 10 kHz: streamed.c's arguments after the
# program, and the environment.
HALVED_ARGUMENTS = ["4", "0", "cpu"]
HALVED_ENVIRONMENT = dict(ENVIRONMENT, ADAPTRACE_BUFFER_SIZE="64K", ADAPTRACE_SAMPLING_RATE="10kHz")


def run_halved_offline(run_dir, mpiexec, launcher, arguments, environment):
    """The offline run of arguments into run_dir/offline/archive, whose
    buffers must halve 4 times or more (halvings for overload, a handler
    that cannot keep up on a loaded machine, are not the buffer's: left
    out): its summary.json."""
    offline_dir = os.path.join(run_dir, "offline")
    os.makedirs(offline_dir)
    offline = os.path.join(offline_dir, "archive")
    run([WATCHDOG, str(WATCHDOG_S), mpiexec, "--oversubscribe", "-np", "2", launcher, "--output", offline,
         *arguments], offline_dir, environment)
    halved = json.load(open(os.path.join(offline, "summary.json")))
    if halved["most_halvings_per_location"] < 4 or halved["halvings"] - halved["overload_halvings"] < 4:
        fail(f"the offline run halved {halved['most_halvings_per_location']} times on a location, "
             f"{halved['overload_halvings']} of {halved['halvings']} for overload: the test needs 4 or more")
    return halved


def check_halved_offline(run_dir, mpiexec, launcher, program, report, otf2_print):
    """The offline run of HALVED_ARGUMENTS (run_halved_offline): the
    fixture of profile and samples-streamed, run once for both
    (halved_offline reads it)."""
    halved = run_halved_offline(run_dir, mpiexec, launcher, [program, *HALVED_ARGUMENTS], HALVED_ENVIRONMENT)
    print(f"offline {halved['halvings'] - halved['overload_halvings']} halvings of the buffer, "
          f"{halved['samples_kept']} samples kept")


def halved_offline(run_dir):
    """The summary.json of halved-offline's run (the fixture, beside
    run_dir)."""
    return json.load(open(os.path.join(os.path.dirname(run_dir), "halved-offline", "offline", "archive",
                                       "summary.json")))


def check_profile(run_dir, mpiexec, launcher, program, report, otf2_print):
    """The run of samples of HALVED_ARGUMENTS, which halves its rate 4
    times or more offline (halved-offline); with ADAPTRACE_ONLINE_OUTPUT=profile
    and 1 analyzer the streamed samples are not kept in the buffer: no
    halving, the initial rate to the end, no trace files, and the
    analyzers' final report.json has the samples."""
    halved = halved_offline(run_dir)
    archive = os.path.join(run_dir, "archive")
    stderr = run(traced(mpiexec, launcher, archive, [program, *HALVED_ARGUMENTS]), run_dir,
                 dict(HALVED_ENVIRONMENT, ADAPTRACE_ONLINE_OUTPUT="profile"))
    summary = json.load(open(os.path.join(archive, "summary.json")))
    check_not_halved(summary, halved)
    if summary["online_profile_only"] != 1:
        fail("summary.json does not say that the analyzers' report is the output")
    left = sorted(name for name in os.listdir(archive) if name not in ("summary.json", "report.json", "live"))
    if left or os.path.exists(os.path.join(archive, "traces.otf2")):
        fail(f"trace files with ADAPTRACE_ONLINE_OUTPUT=profile: {left}")
    if "no trace (ADAPTRACE_ONLINE_OUTPUT=profile)" not in stderr:
        fail("the summary does not say that no trace was written")
    final = json.load(open(os.path.join(archive, "report.json")))
    if not final["final"] or final["finished_ranks"] != [0, 1]:
        fail(f"report.json is not the final report of both ranks: {final}")
    if final["samples"] != summary["online_samples_streamed"] or final["samples"] < 1000:
        fail(f"report.json has {final['samples']} samples, {summary['online_samples_streamed']} were streamed")
    if any(final["samples_not_streamed_by_cause"].values()) or any(final["calls_not_streamed_by_cause"].values()):
        fail(f"not streamed: {final['samples_not_streamed_by_cause']}, {final['calls_not_streamed_by_cause']}")
    if summary["samples_kept"] != 0:
        fail(f"{summary['samples_kept']} samples kept in the buffers as well")
    print(f"offline {halved['halvings'] - halved['overload_halvings']} halvings of the buffer; profile: 0 "
          f"({summary['overload_halvings']} for overload), "
          f"{final['samples']} samples in report.json, no trace files")


def archive_samples(archive):
    """{(rank group, location): (samples, the seconds they stand for)} of
    the archive (python3-otf2): each sample weighs its interrupt
    generator's period."""
    import otf2
    found = {}
    with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
        for location, event in trace.events:
            if isinstance(event, otf2.events.CallingContextSample):
                generator = event.interrupt_generator
                count, seconds = found.get((location.group.name, location.name), (0, 0.0))
                found[(location.group.name, location.name)] = (
                    count + 1, seconds + generator.period * 10.0 ** generator.exponent)
    return found


def run_written_by_analyzers(command, run_dir, environment, archive, otf2_print):
    """Runs command (trace output), whose archive otf2-print must read and
    the analyzers must have written (check_written_by_analyzers): its
    stderr and summary.json."""
    stderr = run(command, run_dir, environment)
    check_archive(archive, otf2_print)
    check_written_by_analyzers(archive, stderr)
    return stderr, json.load(open(os.path.join(archive, "summary.json")))


def check_not_halved(summary, halved):
    """No halving of the buffer with the analyzer (halvings for overload,
    a handler that cannot keep up, left out) where the offline run
    (halved, its summary) had some."""
    if summary["halvings"] != summary["overload_halvings"]:
        fail(f"{summary['halvings'] - summary['overload_halvings']} halvings of the buffer with the analyzer "
             f"(offline: {halved['halvings'] - halved['overload_halvings']})")


def check_samples_kept(archive, summary, ranks):
    """Per rank, the main thread's samples in the archive (python3-otf2)
    are those summary.json keeps, and weighed by their generators' periods
    they stand for its sampled seconds: none of those kept in the event
    chunks is missing. Returns the main threads' lines."""
    found = archive_samples(archive)
    main_threads = [line for line in summary["per_location"] if line["thread"] == 0]
    if len(main_threads) != ranks:
        fail(f"expected the main threads of {ranks} ranks in summary.json, found {main_threads}")
    for line in main_threads:
        samples, seconds = next((v for (group, name), v in found.items() if group == f"MPI Rank {line['rank']}"),
                                (0, 0.0))
        if samples != line["samples_kept"] or abs(seconds - line["sampled_s"]) > 1.5e-6:
            fail(f"rank {line['rank']}: {samples} samples ({seconds:.6f} s) in the archive, summary.json keeps "
                 f"{line['samples_kept']} ({line['sampled_s']} s)")
    return main_threads


def check_samples_streamed(run_dir, mpiexec, launcher, program, report, otf2_print):
    """The run of online.profile (computing with an MPI_Allreduce every 20
    ms, 64 KiB buffers at 10 kHz), whose buffers halve 4 times or more
    offline (halved-offline), with 1 analyzer and ADAPTRACE_ONLINE_OUTPUT=trace (the
    default): the main threads' samples are kept in their event chains,
    whose full chunks are streamed, so the buffers never halve; every
    sample taken is in the analyzer's archive at the initial rate's weight
    (summary.json's samples kept and sampled seconds per location are the
    archive's), none is lost uncounted, and the live report has them all."""
    halved = halved_offline(run_dir)
    archive = os.path.join(run_dir, "archive")
    _, summary = run_written_by_analyzers(
        traced(mpiexec, launcher, archive, [program, *HALVED_ARGUMENTS]), run_dir, HALVED_ENVIRONMENT, archive,
        otf2_print)
    check_not_halved(summary, halved)
    if summary["samples_taken"] != (summary["samples_kept"] + summary["samples_removed"] + summary["skipped_samples"]
                                    + summary["samples_dropped"]):
        fail(f"samples taken {summary['samples_taken']} are not kept {summary['samples_kept']} + removed "
             f"{summary['samples_removed']} + skipped {summary['skipped_samples']} + dropped "
             f"{summary['samples_dropped']}")
    if any(summary["online_samples_not_streamed_by_cause"].values()):
        fail(f"samples not streamed: {summary['online_samples_not_streamed_by_cause']}")
    rate = summary["initial_rate_hz"]
    main_threads = check_samples_kept(archive, summary, 2)
    for line in main_threads:
        # Each sample weighs one initial period: the full rate, unless the
        # handler's overload protection halved it.
        if line["overload_halvings"] == 0 and abs(line["samples_kept"] / rate - line["sampled_s"]) > 1.5e-6:
            fail(f"rank {line['rank']}: {line['samples_kept']} samples stand for {line['sampled_s']} s: "
                 f"not at {rate} Hz")
    kept = sum(line["samples_kept"] for line in main_threads)
    if kept < 4 * halved["samples_kept"]:
        fail(f"{kept} samples in the analyzer's archive, {halved['samples_kept']} offline: expected many more")
    live = read_live(archive)
    if live is None or not live["final"] or live["samples"] != summary["online_samples_streamed"] or \
            live["samples"] != kept:
        fail(f"the final live report has {live and live['samples']} samples, {summary['online_samples_streamed']} "
             f"were streamed, {kept} are in the archive")
    if os.path.exists(archive + ".events"):
        fail(f"{archive}.events stayed after the archive was written")
    print(f"offline {halved['halvings'] - halved['overload_halvings']} halvings of the buffer, "
          f"{halved['samples_kept']} samples kept; trace with 1 analyzer: 0 "
          f"({summary['overload_halvings']} for overload), {kept} samples in the archive, "
          f"{summary['online_event_chunks_streamed']} event chunks streamed")


def archive_counters(archive, counter):
    """{(rank group, location): (samples, samples with a Metric record of
    counter at their time, whether its values never fall, its last value)}
    of the archive's locations with samples (python3-otf2)."""
    import otf2
    found = {}
    with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
        last = {}
        for location, event in trace.events:
            key = (location.group.name, location.name)
            if isinstance(event, otf2.events.Metric):
                members = [member.name for member in getattr(event.metric, "members", [])]
                if counter in members:
                    last[key] = (event.time, event.values[members.index(counter)])
            elif isinstance(event, otf2.events.CallingContextSample):
                samples, counted, rising, value = found.get(key, (0, 0, True, 0))
                metric_time, metric_value = last.get(key, (None, None))
                if metric_time == event.time:
                    counted += 1
                    rising = rising and metric_value >= value
                    value = metric_value
                found[key] = (samples + 1, counted, rising, value)
    return found


def check_counted_samples(archive, counter, what):
    """Every sample of the archive has its counter's Metric record at its
    time, the values rising per location: the records an offline run
    writes. Returns {(rank group, location): its last value}."""
    found = archive_counters(archive, counter)
    if not found:
        fail(f"{what}: no sample in the archive")
    for (group, name), (samples, counted, rising, _) in found.items():
        if counted != samples or not rising:
            fail(f"{what}: {group} {name}: {counted} of {samples} samples have a {counter} record "
                 f"at their time{'' if rising else ', its values fall'}")
    return {key: value for key, (_, _, _, value) in found.items()}


def check_metrics(run_dir, mpiexec, launcher, program, report, otf2_print):
    """The run of samples-streamed with a PAPI counter
    (ADAPTRACE_METRICS=perf::TASK-CLOCK), whose buffers halve 4 times or
    more offline: with 1 analyzer (trace output) the main threads'
    samples, their counter values with them, are kept in the streamed
    event chunks: no halving of the buffer, every sample in the analyzer's
    archive with its Metric record as in the offline archive (python3-otf2
    reads both the same way), and adaptrace-report's task clock of the
    sampled functions adds up to the counter's last values, which the
    final live report has per rank (its counter_totals), and the live
    report's counts per sampled function are adaptrace-report's. Exits 77 where
    PAPI cannot add the event (the offline archive records no counter)."""
    counter = "perf::TASK-CLOCK"
    small = dict(HALVED_ENVIRONMENT, ADAPTRACE_METRICS=counter)
    arguments = [program, *HALVED_ARGUMENTS]
    halved = run_halved_offline(run_dir, mpiexec, launcher, arguments, small)
    offline = os.path.join(run_dir, "offline", "archive")
    recorded = json.loads(subprocess.run([report, "--json", offline], check=True, capture_output=True,
                                         text=True).stdout)["counters"]
    if recorded != [counter]:
        print(f"skipped: PAPI records no {counter} here (counters {recorded})")
        sys.exit(77)
    check_counted_samples(offline, counter, "offline")
    archive = os.path.join(run_dir, "archive")
    _, summary = run_written_by_analyzers(
        traced(mpiexec, launcher, archive, arguments), run_dir, small, archive, otf2_print)
    check_not_halved(summary, halved)
    if any(summary["online_samples_not_streamed_by_cause"].values()):
        fail(f"samples not streamed: {summary['online_samples_not_streamed_by_cause']}")
    main_threads = check_samples_kept(archive, summary, 2)
    kept = sum(line["samples_kept"] for line in main_threads)
    if kept < 4 * halved["samples_kept"]:
        fail(f"{kept} samples in the analyzer's archive, {halved['samples_kept']} offline: expected many more")
    last_values = check_counted_samples(archive, counter, "with the analyzer")
    profile = json.loads(subprocess.run([report, "--json", archive], check=True, capture_output=True,
                                        text=True).stdout)
    if profile["counters"] != [counter]:
        fail(f"adaptrace-report finds the counters {profile['counters']} in the analyzer's archive")
    counted = sum(f["exclusive_counts"][counter] for f in profile["sampled_functions"])
    if abs(counted - sum(last_values.values())) > 1e-9 * counted or counted < 1e9:
        fail(f"adaptrace-report counts {counted:.0f} ns of {counter} in the sampled functions, the archive's "
             f"locations end at {last_values}")
    # The live report: each rank's counter total is its main thread's last
    # value in the archive (the samples streamed are the samples kept).
    live = read_live(archive)
    if live is None or not live["final"] or live["counters"] != [counter]:
        fail(f"the final live report's counters: {live and live.get('counters')}")
    for line in live["per_rank"]:
        in_archive = [value for (group, _), value in last_values.items() if group == f"MPI Rank {line['rank']}"]
        if in_archive != [line["counter_totals"][counter]]:
            fail(f"rank {line['rank']}: the live report's {counter} total is {line['counter_totals']}, the "
                 f"archive's sampled locations of the rank end at {in_archive}")
    if live["counter_totals"][counter] != sum(last_values.values()):
        fail(f"the live report's {counter} total {live['counter_totals']} is not the ranks' sum "
             f"{sum(last_values.values())}")
    # Per sampled function, the live counts are adaptrace-report's.
    live_counts = {f["name"]: (f.get("exclusive_counts", {}).get(counter), f.get("inclusive_counts", {}).get(counter))
                   for f in live["sampled_functions"]}
    for function in profile["sampled_functions"]:
        offline_counts = (function["exclusive_counts"][counter], function["inclusive_counts"][counter])
        if live_counts.get(function["name"]) != offline_counts:
            fail(f"{function['name']}: the live report counts {live_counts.get(function['name'])} of {counter} "
                 f"(exclusive, inclusive), adaptrace-report {offline_counts}")
    print(f"offline {halved['halvings'] - halved['overload_halvings']} halvings of the buffer, "
          f"{halved['samples_kept']} samples kept; trace with 1 analyzer: 0 "
          f"({summary['overload_halvings']} for overload), {kept} samples in the archive, each with its "
          f"{counter} record; {counted / 1e9:.3f} s of task clock in the sampled functions, as the live report's "
          f"per-rank totals say; the live counts of the {len(profile['sampled_functions'])} sampled functions are "
          f"adaptrace-report's")


# The ring's minimum (runtime.h, ADT_RUNTIME_RING_MIN_SAMPLES): all the
# ring held before its share of the budget.
RING_MIN_SAMPLES = 32768


def check_ring(run_dir, mpiexec, launcher, program, report, otf2_print):
    """12 s of CPU time without an MPI call at 5 kHz on 1 rank (about
    60,000 samples, more than the ring's minimum of 32,768, which held the
    samples of 6.6 s, even after a halving for overload past the first
    1.1 s; at 10 kHz a loaded machine's overload protection halved the
    rate too often for the test; one rank, since a second shows the ring
    no better and took the other core for 12 s) on the
    default 64 MiB buffer with 1 analyzer: the
    ring takes its share of the budget (8 MiB) and holds the whole stretch
    until MPI_Finalize takes it: no sample finds it full (ring_full), none
    goes to the buffer's levels, no halving of the buffer, and every
    sample is in the analyzer's archive and the final live report. Exits
    77 where the sampler's overload protection (a loaded machine) left the
    rank no more samples than the minimum ring holds: then the run shows
    nothing about the ring's share (none is lost either way)."""
    fast = dict(ENVIRONMENT, ADAPTRACE_SAMPLING_RATE="5kHz")
    archive = os.path.join(run_dir, "archive")
    _, summary = run_written_by_analyzers(
        traced(mpiexec, launcher, archive, [program, "12", "0", "alone"], ranks=1), run_dir, fast, archive, otf2_print)
    main_threads = check_samples_kept(archive, summary, 1)
    if any(summary["online_samples_not_streamed_by_cause"].values()):
        fail(f"samples not streamed: {summary['online_samples_not_streamed_by_cause']}")
    if summary["halvings"] != summary["overload_halvings"]:
        fail(f"{summary['halvings'] - summary['overload_halvings']} halvings of the buffer with the analyzer")
    kept = sum(line["samples_kept"] for line in main_threads)
    live = read_live(archive)
    if live is None or not live["final"] or live["samples"] != summary["online_samples_streamed"] or \
            live["samples"] != kept:
        fail(f"the final live report has {live and live['samples']} samples, {summary['online_samples_streamed']} "
             f"were streamed, {kept} are in the archive")
    fewest = min(line["samples_kept"] for line in main_threads)
    if fewest <= RING_MIN_SAMPLES:
        print(f"skipped: a rank kept {fewest} samples, no more than the ring's minimum of {RING_MIN_SAMPLES} "
              f"({summary['overload_halvings']} halvings for overload on a loaded machine)")
        sys.exit(77)
    print(f"12 s without an MPI call at 5 kHz: {kept} samples in the archive and the live report, "
          f"none found the ring full; {summary['overload_halvings']} halvings for "
          f"overload, none of the buffer")


def check_demo(run_dir, mpiexec, launcher, program, report, otf2_print, analyzers=1):
    """The demo's live report equals adaptrace-report of the archive the
    analyzers wrote, and that archive has the records, per location, of
    the archive an offline run of the demo writes (times and samples
    aside)."""
    demo = os.path.join(os.path.dirname(launcher), "adaptrace-demo")
    arguments = ("200", "64")
    check_equal(run_dir, mpiexec, launcher, demo, report, otf2_print, ranks=4, arguments=arguments, analyzers=analyzers,
                expected_functions=("MPI_Isend", "MPI_Irecv", "MPI_Waitall", "MPI_Allreduce", "MPI_Comm_split",
                                    "MPI_Reduce", "MPI_Gather", "MPI_Bcast"))
    check_offline_records(run_dir, mpiexec, launcher, [demo, *arguments], 4, ENVIRONMENT)


def check_thread_waves(run_dir, mpiexec, launcher, program, report, otf2_print):
    """40 threads per rank one after another (tests/online/thread_waves.c),
    more than the 32 rings of message ends a rank has: each exiting
    thread gives its ring back, so every thread's message and collective
    ends reach the live late sender and collective waiting, equal to
    adaptrace-report's; before, the threads after the 32nd found no ring
    and their ends were counted other_thread."""
    waves = os.path.join(os.path.dirname(launcher), "online-thread-waves")
    archive = os.path.join(run_dir, "archive")
    _, summary = run_written_by_analyzers(traced(mpiexec, launcher, archive, [waves, "40", "20"]), run_dir,
                                          ENVIRONMENT, archive, otf2_print)
    threads = {(line["rank"], line["thread"]) for line in summary["per_location"]}
    if len(threads) != 2 * 41:
        fail(f"{len(threads)} locations, expected the main thread and 40 others on each of 2 ranks")
    found = check_threads_report(archive, report, summary, sendrecv_calls=2 * 40 * 20)
    print(f"final live report = adaptrace-report for {len(found)} functions, every thread's ends of "
          f"{len(threads)} locations matched")


def check_user_regions(run_dir, mpiexec, launcher, program, report, otf2_print):
    """The user API's program (tests/user, its balanced regions): the live
    report equals adaptrace-report, its sampled functions included, where
    the samples inside the user regions are named by the regions' names,
    which the ranks stream (before, by their numbers: '[region 3]')."""
    user_regions = os.path.join(os.path.dirname(launcher), "user-regions")
    check_equal(run_dir, mpiexec, launcher, user_regions, report, otf2_print, arguments=("balanced",),
                expected_functions=("MPI_Allreduce", "MPI_Barrier"), point_to_point=False)
    live = read_live(os.path.join(run_dir, "archive"))
    names = {f["name"] for f in live["sampled_functions"]}
    numbered = sorted(name for name in names if name.startswith("[region "))
    if numbered or not {"kernel", "solver"} <= names:
        fail(f"the live sampled functions {sorted(names)} do not name the regions kernel and solver "
             f"(named by number: {numbered})")
    print(f"the user regions named in the live sampled profile: {sorted(names & {'setup', 'iterate', 'solver', 'kernel', 'tiny'})}")


def check_full_tree(run_dir, mpiexec, launcher, program, report, otf2_print):
    """MPI_Allreduce called from 1,024 call paths (tests/online/paths.c) on
    64 KiB buffers, whose calling-context tree (8 KiB) cannot hold them:
    adaptrace-report counts each rank's 1,024 calls, as the live report
    does. A call whose region's leaf did not fit got the deepest frame of
    its path that did as its calling context, and its Enter read as that
    frame's: adaptrace-report counted 52 of the 2,048 MPI_Allreduce calls
    and no MPI_Finalize, and Vampir showed the calls as frames."""
    paths = os.path.join(os.path.dirname(launcher), "online-paths")
    small = dict(ENVIRONMENT, ADAPTRACE_BUFFER_SIZE="64K")
    check_equal(run_dir, mpiexec, launcher, paths, report, otf2_print, arguments=("10", "1"),
                expected_functions=("MPI_Allreduce", "MPI_Init", "MPI_Finalize"), point_to_point=False,
                environment=small)
    found = archive_calls_per_rank(os.path.join(run_dir, "archive"))
    for rank in (0, 1):
        if found.get((rank, "MPI_Allreduce"), (0,))[0] != 1024:
            fail(f"rank {rank}: {found.get((rank, 'MPI_Allreduce'), (0,))[0]} MPI_Allreduce calls in the archive, "
                 f"1024 were made")
    print("every MPI_Allreduce of the 1,024 paths in the archive on both ranks")


def check_loaded(run_dir, mpiexec, launcher, program, report, otf2_print):
    """Ranks that call MPI_Initialized and MPI_Get_version before MPI_Init
    (before their stream opens) and load an object after it (dlopen of
    tests/runtime/loader_plugin.c, after they introduced their modules to
    the analyzer) and compute in it: the live report equals
    adaptrace-report, the calls before MPI_Init and the sampled functions
    included, where the object's
    frames are named by their functions (plugin_work), not by address or
    as the objects Open MPI unloaded from the same addresses."""
    loaded = os.path.join(os.path.dirname(launcher), "online-loaded")
    plugin = os.path.join(os.path.dirname(launcher), "..", "lib", "libloader_plugin.so")
    check_equal(run_dir, mpiexec, launcher, loaded, report, otf2_print, arguments=(plugin, "20"),
                expected_functions=("MPI_Allreduce", "MPI_Initialized", "MPI_Get_version"), point_to_point=False)
    live = read_live(os.path.join(run_dir, "archive"))
    names = {f["name"] for f in live["sampled_functions"]}
    by_address = sorted(name for name in names if "loader_plugin" in name)
    if by_address or "plugin_work" not in names:
        fail(f"the live sampled functions {sorted(names)} do not name the loaded object's function plugin_work "
             f"(by address: {by_address})")
    print("the loaded object's frames named in the live sampled profile: plugin_work")


def check_demo_two(run_dir, mpiexec, launcher, program, report, otf2_print):
    """The demo on 4 ranks and 2 analyzers: its halo exchange on a 2 x 2
    grid sends between ranks of both analyzers, whose messages analyzer 0
    matches from the other's round reports (check_waiting), and so the
    collectives on its world and grid; those on its rows (two ranks of one
    analyzer) each analyzer matches itself."""
    demo = os.path.join(os.path.dirname(launcher), "adaptrace-demo")
    check_equal(run_dir, mpiexec, launcher, demo, report, otf2_print, ranks=4, arguments=("200", "64"),
                expected_functions=("MPI_Isend", "MPI_Irecv", "MPI_Waitall", "MPI_Allreduce", "MPI_Comm_split"),
                analyzers=2)


def check_offline_records(run_dir, mpiexec, launcher, arguments, ranks, environment, left_out=(), stdin_text=""):
    """The program run offline (stdin_text on its standard input) writes
    the records, per location, that the archive in run_dir/archive has
    (the analyzers' or, their analyzer lost, the ranks'; times, samples
    and the classes left_out aside)."""
    offline_dir = os.path.join(run_dir, "offline")
    os.makedirs(offline_dir)
    offline = os.path.join(offline_dir, "archive")
    run([WATCHDOG, str(WATCHDOG_S), mpiexec, "--oversubscribe", "-np", str(ranks), launcher, "--output", offline,
         *arguments], offline_dir, environment, stdin_text=stdin_text)
    online = records_per_location(os.path.join(run_dir, "archive"), left_out)
    ranks_wrote = records_per_location(offline, left_out)
    if sorted(online) != sorted(ranks_wrote):
        fail(f"locations {sorted(online)} in the archive, {sorted(ranks_wrote)} offline")
    for location, records in ranks_wrote.items():
        if online[location] != records:
            # Where one is a beginning of the other, the first record
            # past the shorter one.
            first = next((i for i, pair in enumerate(zip(online[location], records)) if pair[0] != pair[1]),
                         min(len(online[location]), len(records)))
            fail(f"{location}: {len(online[location])} records in the archive, {len(records)} offline; "
                 f"record {first} differs: {online[location][first:first + 1]} != {records[first:first + 1]}")
    print(f"the archive in {run_dir} = the offline archive in {sum(map(len, online.values()))} records "
          f"on {len(online)} locations")
    summary = json.load(open(os.path.join(offline, "summary.json")))
    check_bytes_written(offline, summary)
    return summary


def check_events_streamed(run_dir, mpiexec, launcher, program, report, otf2_print):
    """MPI events that fill a 512 KiB buffer again and again (3,000 rounds of
    streamed.c's calls): offline the ranks flush them to their spill files
    (6 times);
    with 1 analyzer (trace output) each rank's full event chunks leave its
    buffer during the run, written by the analyzer into the rank's file of
    streamed events: no flush, no fold, no halving, chunks streamed and
    none left behind, the directory of those files gone at the end, and the
    analyzer's archive has the records of the offline run, per location
    (the offline run's BufferFlush records aside; sampling off: the
    halvings of the samples' levels, and the rate and buffer use Metric
    records they write, depend on timing.) Not 64 KiB, as the other
    tests of this program: a chunk stays the rank's until the analyzer
    confirms it, and the events this program makes without pause while
    the analyzer writes a live report or waits for a core filled 64 KiB
    40 to 46 times in 4 runs, 256 KiB twice in 2 of 8 (the analyzer
    shares the two cores); on 512 KiB at most 0.1 MiB was in use."""
    small = dict(ENVIRONMENT, ADAPTRACE_BUFFER_SIZE="512K", ADAPTRACE_SAMPLING="off")
    arguments = [program, "0", "3000"]
    archive = os.path.join(run_dir, "archive")
    stderr, summary = run_written_by_analyzers(
        traced(mpiexec, launcher, archive, arguments), run_dir, small, archive, otf2_print)
    offline = check_offline_records(run_dir, mpiexec, launcher, arguments, 2, small, left_out=("BufferFlush",))
    if offline["flushes"] == 0:
        fail("0 flushes offline: the test needs a buffer that events fill")
    if (summary["flushes"] != 0 or summary["halvings"] != 0 or summary["events_dropped"] != 0
            or summary["events_folded"] != 0):
        fail(f"online: {summary['flushes']} flushes, {summary['halvings']} halvings, "
             f"{summary['events_dropped']} events dropped, {summary['events_folded']} folded; expected none")
    if summary["online_event_chunks_streamed"] == 0 or summary["online_event_bytes_streamed"] == 0:
        fail(f"no event chunk streamed: {summary['online_event_chunks_streamed']}")
    if any(summary["online_event_chunks_not_streamed_by_cause"].values()):
        fail(f"event chunks not streamed: {summary['online_event_chunks_not_streamed_by_cause']}")
    if "chunks of the buffers' events streamed to the analyzers" not in stderr:
        fail(f"the stderr summary does not say that event chunks were streamed:\n{stderr}")
    if os.path.exists(archive + ".events"):
        fail(f"{archive}.events stayed after the archive was written: {os.listdir(archive + '.events')}")
    print(f"{summary['online_event_chunks_streamed']} event chunks streamed "
          f"({summary['online_event_bytes_streamed']} bytes), 0 flushes (offline {offline['flushes']})")


def check_threads(run_dir, mpiexec, launcher, program, report, otf2_print):
    """A hybrid program (tests/online/threads.c, PROGRAM: the main thread
    and 2 threads of each of 2 ranks exchanging messages under
    MPI_THREAD_MULTIPLE) whose MPI events fill a 512 KiB buffer again and
    again: offline the ranks flush them; with 1 analyzer (trace output)
    the other threads hand their full event chunks to the main thread,
    which streams them with its own: no flush, no fold, no halving, chunks
    of other threads streamed, no chunk left behind by any cause, and the
    analyzer's archive has the records of the offline run on every
    location, the threads' included (the offline run's BufferFlush
    records aside; sampling off, as in events-streamed); and the final
    live report has every thread's calls, bytes and seconds per MPI
    function and the matrix of adaptrace-report (the other threads' sent
    as totals at MPI_Finalize), and its late sender and collective
    waiting, every thread's ends included. 512 KiB (2 flushes offline), not 64, for
    the reason of events-streamed: on 64 KiB the chunks awaiting the
    analyzer's confirmation made the buffer flush twice in 1 of 2 runs."""
    small = dict(ENVIRONMENT, ADAPTRACE_BUFFER_SIZE="512K", ADAPTRACE_SAMPLING="off")
    arguments = [program, "1200"]
    archive = os.path.join(run_dir, "archive")
    _, summary = run_written_by_analyzers(
        traced(mpiexec, launcher, archive, arguments), run_dir, small, archive, otf2_print)
    offline = check_offline_records(run_dir, mpiexec, launcher, arguments, 2, small, left_out=("BufferFlush",))
    threads = {(line["rank"], line["thread"]) for line in summary["per_location"]}
    if threads != {(rank, thread) for rank in (0, 1) for thread in (0, 1, 2)}:
        fail(f"expected 3 threads on each of 2 ranks, found {sorted(threads)}")
    if offline["flushes"] == 0:
        fail("0 flushes offline: the test needs a buffer that events fill")
    if (summary["flushes"] != 0 or summary["halvings"] != 0 or summary["events_dropped"] != 0
            or summary["events_folded"] != 0):
        fail(f"online: {summary['flushes']} flushes, {summary['halvings']} halvings, "
             f"{summary['events_dropped']} events dropped, {summary['events_folded']} folded; expected none")
    if summary["online_thread_event_chunks_streamed"] == 0 or \
            summary["online_thread_event_chunks_streamed"] >= summary["online_event_chunks_streamed"]:
        fail(f"{summary['online_thread_event_chunks_streamed']} of {summary['online_event_chunks_streamed']} event "
             "chunks streamed were other threads': expected some, and some of the main threads'")
    if any(summary["online_event_chunks_not_streamed_by_cause"].values()):
        fail(f"event chunks not streamed: {summary['online_event_chunks_not_streamed_by_cause']}")
    if os.path.exists(archive + ".events"):
        fail(f"{archive}.events stayed after the archive was written: {os.listdir(archive + '.events')}")
    # The final live report has every thread's calls and sends (the other
    # threads' sent as totals at the end): per MPI function the calls,
    # bytes and seconds of adaptrace-report, and its matrix.
    found = check_threads_report(archive, report, summary, sendrecv_calls=2 * 3 * 1200)
    print(f"final live report = adaptrace-report for {len(found)} functions, every thread's calls")
    print(f"{summary['online_event_chunks_streamed']} event chunks streamed, "
          f"{summary['online_thread_event_chunks_streamed']} of them other threads', 0 flushes "
          f"(offline {offline['flushes']})")


def written_back_by_ranks(command, program, run_dir, act, environment, otf2_print, **streams):
    """Runs command (of program) under act (run_acting; streams: its stdout
    and stdin), which ends the run's analyzer: the run exits 0, its archive
    passes otf2-print, the ranks wrote it themselves, read their files of
    streamed events back (none left) and none says that events are
    missing. Returns its summary.json."""
    status, text = run_acting(command, run_dir, act, environment, **streams)
    # Open MPI 4.1 may end a rank without a word when its TCP connection
    # to the killed analyzer fails (seen 3 times in about 15 runs of
    # online.threads-killed beside other tests, never alone;
    # docs/online.md, "What it cannot do"): the other rank then waits for
    # it until the watchdog shows it alone.
    left = re.findall(r"^=== pid \d+: " + re.escape(program) + " ", text, re.MULTILINE)
    if status == 124 and len(left) == 1 and re.search(r"failed to TCP connect|unexpectedly disconnected", text):
        print("skipped: Open MPI ended a rank after its analyzer was killed (its TCP connection to it failed); the "
              "other rank waited for it")
        sys.exit(77)
    if status != 0:
        fail(f"the run exited with {status} after its analyzer was ended")
    archive = os.path.join(run_dir, "archive")
    check_archive(archive, otf2_print)
    summary = json.load(open(os.path.join(archive, "summary.json")))
    if summary["online_archive_written_by_analyzers"] != 0:
        fail("the analyzers wrote the archive: the analyzer was not ended in time")
    if os.path.exists(archive + ".events"):
        fail(f"{archive}.events stayed after the ranks read their files back")
    if "are missing from the archive" in text:
        fail("a rank says that events streamed to its analyzer are missing from the archive")
    return summary


def check_threads_report(archive, report, summary, sendrecv_calls):
    """The final live report of a run whose threads call MPI against
    adaptrace-report on its archive: per MPI function the calls, bytes
    and seconds (the other threads' sent as totals at MPI_Finalize; so
    many MPI_Sendrecv calls), the matrix, and the late sender and
    collective waiting, every thread's message and collective ends
    included. Returns the live figures per function."""
    live = read_live(archive)
    if live is None or not live["final"]:
        fail(f"no final live report in {archive}/live")
    offline_report = json.loads(subprocess.run([report, "--json", archive], stdout=subprocess.PIPE,
                                               check=True).stdout)
    fields = ("calls", "bytes_sent", "bytes_received")
    expected = {f["name"]: tuple(f[k] for k in fields) for f in offline_report["mpi_functions"]}
    found = {f["name"]: tuple(f[k] for k in fields) for f in live["mpi_functions"]}
    if found != expected or found.get("MPI_Sendrecv", (0,))[0] != sendrecv_calls:
        fail(f"live report {found} != adaptrace-report {expected}")
    offline_seconds = {f["name"]: f["seconds"] for f in offline_report["mpi_functions"]}
    for f in live["mpi_functions"]:
        if abs(f["seconds"] - offline_seconds[f["name"]]) > 1e-9 * f["calls"]:
            fail(f"{f['name']}: {f['seconds']} s live, {offline_seconds[f['name']]} s in adaptrace-report")
    check_matrix(live, offline_report)
    if summary["online_messages_not_streamed_by_cause"]["other_thread"] != 0:
        fail(f"sends of other threads not in the matrix: {summary['online_messages_not_streamed_by_cause']}")
    check_waiting(live, offline_report, summary, 2, 1)
    return found


def check_threads_live(run_dir, mpiexec, launcher, program, report, otf2_print):
    """The hybrid program of online.threads slowed down (30 ms pauses every
    8 rounds, ~5 s), its live report read every 0.1 s during the run: the
    other threads' calls reach the live reports before the final one (the
    streaming thread sends what their totals grew by every half interval),
    so a report before the end counts more MPI_Sendrecv calls than the
    main threads make in the whole run (2 ranks x 1,200; the threads keep
    pace with the main thread, meeting every 8 rounds), and the final one
    has all of them."""
    rounds = 1200
    archive = os.path.join(run_dir, "archive")
    command = traced(mpiexec, launcher, archive, ["--live-interval", "1", program, str(rounds), "30"])
    before_end = []

    def watch(process):
        while process.poll() is None:
            live = read_live(archive)
            if live is not None and not live["final"]:
                before_end.append(sum(f["calls"] for f in live["mpi_functions"] if f["name"] == "MPI_Sendrecv"))
            time.sleep(0.1)

    status, _ = run_acting(command, run_dir, watch, dict(ENVIRONMENT, ADAPTRACE_SAMPLING="off"))
    if status != 0:
        fail(f"the run exited with {status}")
    main_threads = 2 * rounds
    if not before_end or max(before_end) <= main_threads:
        fail(f"the live reports before the end count at most {max(before_end, default=0)} MPI_Sendrecv calls "
             f"({len(before_end)} reads), no more than the main threads' {main_threads}: the other threads' "
             "calls are missing")
    live = read_live(archive)
    final = sum(f["calls"] for f in live["mpi_functions"] if f["name"] == "MPI_Sendrecv") if live else None
    if live is None or not live["final"] or final != 3 * main_threads:
        fail(f"the final live report counts {final} MPI_Sendrecv calls, not {3 * main_threads}")
    print(f"{max(before_end)} MPI_Sendrecv calls in a live report before the end (the main threads make "
          f"{main_threads} in all), {final} in the final one")


def check_threads_killed(run_dir, mpiexec, launcher, program, report, otf2_print):
    """The hybrid program of online.threads, slowed down (30 ms pauses),
    its analyzer killed (SIGKILL) once the live report exists: the run
    exits 0, the ranks write the archive themselves, every location's
    event chunks streamed before (the other threads' handed over to the
    main thread included) read back from the analyzer's files and those
    the analyzer had not confirmed (in flight, or sent and not confirmed)
    written back: no rank says that events are missing, and the archive
    has the records of the offline run on all 6 locations (the
    BufferFlush records aside: with the analyzer dead the chunks that
    find every slot taken are spilled)."""
    small = dict(ENVIRONMENT, ADAPTRACE_BUFFER_SIZE="64K", ADAPTRACE_SAMPLING="off")
    arguments = [program, "1200", "30"]
    archive = os.path.join(run_dir, "archive")
    command = traced(mpiexec, launcher, archive, ["--live-interval", "1", *arguments], ["--enable-recovery"])
    summary = written_back_by_ranks(
        command, program, run_dir, lambda process: os.kill(analyzer_once_live(process, archive), signal.SIGKILL), small,
        otf2_print)
    if summary["online_thread_event_chunks_streamed"] == 0:
        fail("no chunk of another thread was streamed before the analyzer was lost: the test needs some")
    check_offline_records(run_dir, mpiexec, launcher, arguments, 2, small, left_out=("BufferFlush",))
    lost = summary["online_event_chunks_not_streamed_by_cause"]
    print(f"analyzer killed: {summary['online_event_chunks_streamed']} event chunks streamed before "
          f"({summary['online_thread_event_chunks_streamed']} other threads'), {lost['analyzer_lost']} in flight "
          f"and {lost['unconfirmed']} sent and not confirmed written back")


def check_stopped_killed(run_dir, mpiexec, launcher, program, report, otf2_print):
    """The events-streamed run (64 KiB buffers, 3,000 rounds, sampling
    off), its analyzer stopped (SIGSTOP) before the rounds and killed
    (SIGKILL) once they are done: meanwhile the ranks' event chunks sends
    complete into the socket (a small message completes once the socket
    took it) but the analyzer writes none of them. Each rank keeps every
    chunk its analyzer has not confirmed and writes it back itself: the
    run exits 0, no rank says that events are missing, and the archive the
    ranks write has the offline run's records on every location (the
    BufferFlush records aside: with every send slot held, the buffer
    spills); some chunks were written back because unconfirmed (sent,
    never confirmed), so the test is not passed by a run that sent none
    after the stop."""
    small = dict(ENVIRONMENT, ADAPTRACE_BUFFER_SIZE="64K", ADAPTRACE_SAMPLING="off")
    arguments = [program, "0", "3000", "signalled"]
    archive = os.path.join(run_dir, "archive")
    command = traced(mpiexec, launcher, archive, ["--live-interval", "1", *arguments], ["--enable-recovery"])
    # The analyzer stopped before the rounds: no chunk was confirmed, so
    # none counts as streamed; every one sent comes back from the rank.
    summary = written_back_by_ranks(
        command, program, run_dir, lambda process: os.kill(analyzer_held_through_rounds(process, archive), signal.SIGKILL),
        small, otf2_print, stdout=subprocess.PIPE, stdin=subprocess.PIPE)
    check_offline_records(run_dir, mpiexec, launcher, arguments, 2, small, left_out=("BufferFlush",),
                          stdin_text="go\n")
    unconfirmed = summary["online_event_chunks_not_streamed_by_cause"]["unconfirmed"]
    if unconfirmed == 0:
        fail("no event chunk was written back because unconfirmed: no send completed after the analyzer stopped")
    text = open(os.path.join(run_dir, "stderr.txt")).read()
    if f"{unconfirmed} event chunks sent whose place the analyzer never confirmed" not in text:
        fail(f"the stderr summary does not say that {unconfirmed} event chunks were unconfirmed")
    print(f"analyzer stopped, then killed: {unconfirmed} event chunks sent and never confirmed written back, "
          f"every location's records in the archive")


def check_threads_recovered(run_dir, mpiexec, launcher, program, report, otf2_print):
    """The hybrid program of online.threads, its ranks ended by SIGTERM
    (as a batch system ends a job) while the main thread sleeps after the
    rounds: adaptrace-recover reads the analyzer's file of streamed events
    as each rank's spill file, and every location's list of chunks that
    left the arena leads through it, the chunks other threads handed to
    the main thread included: each of the 6 locations has its 1,200
    MPI_Sendrecv calls, except on a rank that says how many events are
    missing (a chunk that never reached the analyzer's file), as
    summary.json counts them. On 256 KiB, which the rounds' calls still
    overfill without the stream: on 64 KiB the analyzer once fell behind
    in the first 0.6 s, the buffers flushed and the main thread's events
    stopped (544 of its 1,200 calls in the archive, in CI here)."""
    small = dict(ENVIRONMENT, ADAPTRACE_BUFFER_SIZE="256K", ADAPTRACE_SAMPLING="off")
    rounds = 1200
    archive = os.path.join(run_dir, "archive")
    command = traced(mpiexec, launcher, archive, ["--live-interval", "1", program, str(rounds), "0", "60"])

    def end_after_rounds(process):
        # Each rank says when its rounds are done; then its main thread
        # sleeps for 60 s (the analyzer writes what reached it meanwhile).
        said = os.path.join(run_dir, "stderr.txt")
        while process.poll() is None and open(said).read().count("online-threads: rank") < 2:
            time.sleep(0.1)
        # Until the analyzer's files stop growing for a second (at most
        # 20 s): it has written what reached it.
        sizes, stable_since, waited = None, time.monotonic(), time.monotonic()
        while time.monotonic() - stable_since < 1 and time.monotonic() - waited < 20:
            now = [os.path.getsize(os.path.join(archive + ".events", name))
                   for name in sorted(os.listdir(archive + ".events"))] if os.path.isdir(archive + ".events") else []
            if now != sizes:
                sizes, stable_since = now, time.monotonic()
            time.sleep(0.1)
        for rank in two_ranks(process, program):
            os.kill(rank, signal.SIGTERM)

    status, text = run_acting(command, run_dir, end_after_rounds, small)
    if status == 0:
        fail("the run exited with 0 after SIGTERM")
    streamed = sorted(os.listdir(archive + ".events")) if os.path.isdir(archive + ".events") else []
    if streamed != ["rank-0", "rank-1"]:
        fail(f"expected the analyzer's files of streamed events of ranks 0 and 1, found {streamed}")
    # The main threads begin with MPI_Init_thread, the others with their
    # first MPI_Sendrecv.
    recovered = recover_balanced(launcher, archive, small, otf2_print, first=("MPI_Init_thread", "MPI_Sendrecv"))
    # A chunk handed over after the main thread's last MPI call, or one
    # the analyzer had not taken when the job ended, never reached the
    # file (docs/online.md): its rank says how many events it cut off, as
    # summary.json counts them, and that rank's locations may hold fewer
    # calls; every other rank's hold them all.
    said = {int(rank): int(events) for rank, events in
            re.findall(r"rank (\d+): (\d+) events are missing from the archive", recovered.stderr)}
    ending = json.load(open(os.path.join(archive, "summary.json")))["ending"]
    if ending["streamed_events_missing"] != sum(said.values()):
        fail(f"summary.json counts {ending['streamed_events_missing']} streamed events missing, the recovery said "
             f"{said}")
    found = records_per_location(archive)
    if len(found) != 6:
        fail(f"expected 6 locations in the recovered archive, found {sorted(found)}")
    for location, records in found.items():
        calls = sum(1 for record in records if record[:2] == ("Enter", "MPI_Sendrecv"))
        rank = int(location[0].split()[-1])
        if calls != rounds and not (rank in said and calls < rounds):
            fail(f"{location}: {calls} MPI_Sendrecv calls in the recovered archive, {rounds} made")
    print(f"recovered: {rounds} MPI_Sendrecv calls on each location of the ranks that miss nothing; "
          f"events missing {said}; {ending['records_cut']} records cut")


def wait_for_growth(archive, process):
    """Two reads of live/report.json during the run, the second with more
    calls; (first, second) reports."""
    first = None
    while process.poll() is None:
        live = read_live(archive)
        if live is not None and not live["final"]:
            if first is None:
                first = live
            elif total_calls(live) > total_calls(first):
                return first, live
        time.sleep(0.1)
    fail(f"the run ended before two live reports with growing call counts (first: {first})")


def check_live(run_dir, mpiexec, launcher, program, report, otf2_print):
    archive = os.path.join(run_dir, "archive")
    command = traced(mpiexec, launcher, archive, ["--live-interval", "1", program, "6"])
    started = time.monotonic()
    seen = {}

    def watch(process):
        seen["reports"] = wait_for_growth(archive, process)
        seen["appeared"] = time.monotonic() - started

    status, _ = run_acting(command, run_dir, watch)
    (first, second), appeared = seen["reports"], seen["appeared"]
    if status != 0:
        fail(f"the run exited with {status}")
    check_archive(archive, otf2_print)
    print(f"live reports with {total_calls(first)} then {total_calls(second)} calls, "
          f"{appeared:.1f} s after mpirun started")


def check_refused(run_dir, mpiexec, launcher, program, report, otf2_print):
    archive = os.path.join(run_dir, "archive")
    environment = dict(ENVIRONMENT, OMPI_MCA_ess_singleton_isolated="1")
    stderr = run([launcher, "--analyzers", "1", "--output", archive, program], run_dir, environment)
    lines = [line for line in stderr.splitlines() if "analyzer" in line]
    if len(lines) != 1 or "no analyzer started" not in lines[0] or "measured offline" not in lines[0]:
        fail(f"expected one line saying no analyzer started, found {lines}")
    check_archive(archive, otf2_print)
    if os.path.exists(os.path.join(archive, "live")):
        fail("a live directory without analyzers")
    print(lines[0])


def check_preloaded(run_dir, mpiexec, launcher, program, report, otf2_print):
    archive = os.path.join(run_dir, "archive")
    library = os.path.join(os.path.dirname(launcher), "..", "lib", "libadaptrace.so")
    environment = dict(ENVIRONMENT, ADAPTRACE_ANALYZERS="1", ADAPTRACE_OUTPUT=archive)
    stderr = run([mpiexec, "--oversubscribe", "-np", "2", "-x", f"LD_PRELOAD={library}", program], run_dir,
                 environment)
    # The summary's lines on what was streamed and who wrote the archive
    # aside.
    started = [line for line in stderr.splitlines()
               if "analyzer" in line and not line.startswith(("adaptrace: online:", "adaptrace: trace:"))]
    if len(started) != 1 or "1 analyzer started" not in started[0]:
        fail(f"expected one line on the analyzers, rank 0's on 1 analyzer started, found {started}")
    spawned = [name for name in os.listdir(run_dir) if "-spawned-" in name]
    if spawned:
        fail(f"the analyzer was measured: {spawned}")
    check_archive(archive, otf2_print)
    live = read_live(archive)
    if live is None or not live["final"] or live["finished_ranks"] != [0, 1]:
        fail(f"no final live report of both ranks: {live}")
    print(started[0])


def check_killed(run_dir, mpiexec, launcher, program, report, otf2_print):
    archive = os.path.join(run_dir, "archive")
    command = traced(mpiexec, launcher, archive, ["--live-interval", "1", program, "6"], ["--enable-recovery"])
    status, text = run_acting(command, run_dir,
                              lambda process: os.kill(analyzer_once_live(process, archive), signal.SIGKILL))
    if status != 0:
        fail(f"the run exited with {status} after its analyzer was killed")
    check_archive(archive, otf2_print)
    if "its analyzer did not confirm the final live report" not in text:
        fail("no rank said that its analyzer did not confirm the final live report")
    summary = json.load(open(os.path.join(archive, "summary.json")))
    if summary["online_calls_not_streamed_by_cause"]["analyzer_lost"] == 0:
        fail("summary.json counts no call lost with the analyzer")
    if summary["online_archive_written_by_analyzers"] != 0 or \
            "the analyzers do not write the archive" not in text or \
            summary["online_archive_not_written_by_analyzers_because"] != \
            "not every rank's analyzer took its stream to the end":
        fail("summary.json or stderr does not say that the ranks wrote the archive themselves, and why")
    check_ranks_without_analyzer(summary, text, [0, 1])
    live = read_live(archive)
    if live is None or live["final"]:
        fail(f"expected the analyzer's last periodic live report, found {live}")
    check_streamed_events_back(archive, summary, text)
    print("analyzer killed: exit 0, archive complete, ranks 0 and 1 named without analyzer")


def check_streamed_events_back(archive, summary, text):
    """The ranks' event chunks streamed before the analyzer was lost came
    back into the archive the ranks wrote (read from the analyzer's file,
    those still in flight written there by the rank): every location runs
    from MPI_Init's Enter to MPI_Finalize's Leave, its Enters and Leaves
    balanced, no rank says that events are missing, and each rank's
    samples are those summary.json keeps."""
    if summary["online_event_chunks_streamed"] == 0:
        fail("no event chunk was streamed before the analyzer was lost: the test needs some")
    if "are missing from the archive" in text:
        fail("a rank says that events streamed to its analyzer are missing from the archive")
    for location, records in records_per_location(archive).items():
        regions = [record for record in records if record[0].endswith(("Enter", "Leave"))]
        enters = sum(record[0].endswith("Enter") for record in regions)
        if (not regions or regions[0][1:2] != ("MPI_Init",) or regions[-1][1:2] != ("MPI_Finalize",)
                or enters * 2 != len(regions)):
            fail(f"{location}: the events do not run from MPI_Init to MPI_Finalize balanced: "
                 f"{regions[:2]} ... {regions[-2:]}, {enters} Enters of {len(regions)}")
    if os.path.exists(archive + ".events"):
        fail(f"{archive}.events stayed after the ranks read their files back")
    # The samples too: those kept in the event chunks came back with them.
    check_samples_kept(archive, summary, len(summary["per_location"]))
    print(f"{summary['online_event_chunks_streamed']} event chunks streamed before the analyzer was lost "
          f"({summary['online_event_chunks_not_streamed_by_cause']['analyzer_lost']} in flight) are in the archive")


def check_ranks_without_analyzer(summary, text, lost):
    """summary.json names the ranks lost (and only those) as without
    analyzer, each with when it lost it (seconds after its start, within
    the run), the others null; the stderr summary says so in one line."""
    if summary.get("online_ranks_without_analyzer") != lost:
        fail(f"summary.json's online_ranks_without_analyzer is {summary.get('online_ranks_without_analyzer')}, "
             f"expected {lost}")
    at = summary["online_analyzer_lost_at_s_per_rank"]
    if len(at) != summary["ranks"]:
        fail(f"online_analyzer_lost_at_s_per_rank has {len(at)} entries for {summary['ranks']} ranks")
    for rank, seconds in enumerate(at):
        if (seconds is None) == (rank in lost) or (seconds is not None and not 0 < seconds < RUN_LIMIT_S):
            fail(f"rank {rank} lost its analyzer at {seconds} s in summary.json, expected "
                 f"{'a time' if rank in lost else 'null'}")
    said = [line for line in text.splitlines() if re.search(r"online: \d+ ranks? lost (its|their) analyzer", line)]
    named = [int(rank) for rank in re.findall(r"(\d+) \(at [\d.]+ s\)", said[0])] if len(said) == 1 else None
    if named != lost:
        fail(f"expected one stderr line naming ranks {lost} as without analyzer, found {said}")


def kill_an_analyzer(run_dir, mpiexec, launcher, program, otf2_print, ranks, analyzers, index):
    """ranks ranks, analyzers analyzers, analyzer index killed (SIGKILL)
    once the live report exists: no report round waits for it forever
    (the watchdog ends a hung run, which fails here), the analyzer that
    finds it lost says so (analyzer 0, or where analyzer 0 was killed each
    other analyzer), and the application exits 0 with its archive
    complete. Returns the run's stderr, its last live report and its
    summary."""
    archive = os.path.join(run_dir, "archive")
    command = traced(mpiexec, launcher, archive, ["--live-interval", "1", program, "6"], ["--enable-recovery"],
                     ranks=ranks, analyzers=analyzers)
    status, text = run_acting(
        command, run_dir,
        lambda process: os.kill(analyzer_once_live(process, archive, analyzers=analyzers, index=index),
                                signal.SIGKILL))
    if status != 0:
        fail(f"the run exited with {status} after analyzer {index} was killed (the watchdog ends a hung run)")
    check_archive(archive, otf2_print)
    said = [f"adaptrace-analyzer {other}: analyzer 0 did not take this analyzer's report or answer it within"
            for other in range(1, analyzers)] if index == 0 else \
        [f"adaptrace-analyzer 0: analyzer {index} of {analyzers} did not report within"]
    for line in said:
        if line not in text:
            fail(f"nobody said: {line}")
    # The other analyzers' ranks heard at once that no final report
    # comes: none waited for it in vain, none counts as without analyzer.
    if "did not confirm the final live report within" in text:
        fail("a rank waited in vain for the final report of an analyzer that went on without another")
    return text, read_live(archive), json.load(open(os.path.join(archive, "summary.json")))


def check_killed_second(run_dir, mpiexec, launcher, program, report, otf2_print, page_mode):
    """Analyzer 1 of 2 killed: analyzer 0's last live report names the
    ranks that lost their analyzer (2 and 3) and when, and so do the
    summary and the page."""
    text, live, summary = kill_an_analyzer(run_dir, mpiexec, launcher, program, otf2_print, 4, 2, 1)
    if live is None or live["final"] or live["analyzers_reported"] != 1:
        fail(f"expected analyzer 0's own last live report, not final, found {live}")
    if live["ranks_without_analyzer"] != [2, 3] or not live["analyzers_lost_at_s"] > 0:
        fail(f"the live report does not name ranks 2 and 3 as without analyzer, and since when: {live}")
    if live["finished_ranks"] != [0, 1]:
        fail(f"analyzer 0's ranks 0 and 1 did not all finish in its last live report: {live['finished_ranks']}")
    check_ranks_without_analyzer(summary, text, [2, 3])
    check_lost_ranks_drawn(os.path.join(run_dir, "archive"), page_mode, live)
    print("analyzer 1 killed: exit 0, archive complete, ranks 2 and 3 named without analyzer")


def check_killed_middle(run_dir, mpiexec, launcher, program, report, otf2_print):
    """3 ranks, 3 analyzers (one rank each), analyzer 1 killed: analyzer 0
    goes on with analyzer 2, so only rank 1 is without analyzer, in the
    live report (2 analyzers reported, ranks 0 and 2 finished) and in the
    summary."""
    text, live, summary = kill_an_analyzer(run_dir, mpiexec, launcher, program, otf2_print, 3, 3, 1)
    if live is None or live["final"] or live["analyzers_reported"] != 2:
        fail(f"expected a live report of analyzers 0 and 2, not final, found {live}")
    if live["ranks_without_analyzer"] != [1] or not live["analyzers_lost_at_s"] > 0:
        fail(f"the live report does not name rank 1 alone as without analyzer, and since when: {live}")
    if live["finished_ranks"] != [0, 2]:
        fail(f"ranks 0 and 2 did not both finish in the last live report: {live['finished_ranks']}")
    check_ranks_without_analyzer(summary, text, [1])
    print("analyzer 1 of 3 killed: exit 0, archive complete, rank 1 alone named without analyzer, "
          "ranks 0 and 2 finished in the live report")


def check_killed_first(run_dir, mpiexec, launcher, program, report, otf2_print):
    """Analyzer 0 of 2 killed, the one that writes the live report and
    would write the archive: analyzer 1 goes on alone and tells its ranks
    at once that no final report comes; the summary names ranks 0 and 1
    as without analyzer; the live report stays analyzer 0's last periodic
    one (both analyzers' ranks, not final)."""
    text, live, summary = kill_an_analyzer(run_dir, mpiexec, launcher, program, otf2_print, 4, 2, 0)
    if live is None or live["final"] or live["analyzers_reported"] != 2 or live["ranks_without_analyzer"]:
        fail(f"expected analyzer 0's last periodic live report of both analyzers, found {live}")
    if summary["online_archive_written_by_analyzers"] != 0:
        fail("summary.json says that the analyzers wrote the archive")
    check_ranks_without_analyzer(summary, text, [0, 1])
    print("analyzer 0 killed: exit 0, archive complete, ranks 0 and 1 named without analyzer")


def check_lost_ranks_drawn(archive, page_mode, live):
    """live/report.html says that ranks 2 and 3 went on without their
    analyzer, and since when, in its state line, its connection table and
    the ranks' states (drawn by chromium where there is one)."""
    if page_mode == "not-built":
        return
    page = os.path.join(archive, "live", "report.html")
    embedded = re.search(r'<script type="application/json" id="live-data">(.*?)</script>',
                         open(page, encoding="utf-8").read(), re.DOTALL)
    if embedded is None or json.loads(embedded.group(1)) != live:
        fail(f"{page} does not embed the last live/report.json")
    if page_mode == "no-chromium":
        return
    dom = draw_live_page(page_mode, page, ["state", "mpi", "steps", "rates", "samples"]).stdout
    lost = re.search(r'id="analyzers-lost"[^>]*>([^<]*)<', dom)
    if lost is None or "ranks 2, 3 went on without it" not in lost.group(1):
        fail(f"the page's state does not name ranks 2 and 3 as without analyzer: {lost.group(1) if lost else None}")
    row = re.search(r'<tr class="row"><td>ranks without analyzer</td><td>([^<]*)</td>', dom)
    if row is None or not row.group(1).startswith("2 of 4: 2, 3 (lost"):
        fail(f"the page's connection table: ranks without analyzer {row.group(1) if row else None}")
    ranks_table = re.search(r'id="ranks"[^>]*>(.*?)</div>', dom, re.DOTALL)
    states = dict(re.findall(r'<tr class="row"><td>(\d+)</td><td>([^<]*)</td>', ranks_table.group(1) if ranks_table else ""))
    if [states.get(str(r)) for r in range(4)] != ["finished", "finished", "without analyzer", "without analyzer"]:
        fail(f"the page's rank states: {states}")
    print(f"live/report.html names ranks 2 and 3 without analyzer:{lost.group(1)}")


def check_unwritten(run_dir, mpiexec, launcher, program, report, otf2_print, analyzers=1, limited=0):
    """Analyzer `limited` cannot write the archive (its address space
    limited, once it runs, to less than its ranks' rebuilt buffers need):
    it says why, so does each other analyzer (which agreed not to write
    its own ranks' parts) naming analyzer `limited`'s reason, every rank
    gets its answer at once, and the ranks write the archive themselves,
    complete, as summary.json and stderr say, rank 0's line naming that
    reason."""
    import resource
    archive = os.path.join(run_dir, "archive")
    command = traced(mpiexec, launcher, archive, ["--live-interval", "1", program, "3"], analyzers=analyzers)
    # 128 MiB buffers: the analyzer rebuilds each rank's whole arena.
    environment = dict(ENVIRONMENT, ADAPTRACE_BUFFER_SIZE="128M")

    def limit_analyzer(process):
        analyzer = analyzer_once_live(process, archive, analyzers, limited)
        with open(f"/proc/{analyzer}/status") as status:
            size_kib = int(re.search(r"^VmSize:\s+(\d+) kB", status.read(), re.MULTILINE).group(1))
        limit = (size_kib << 10) + (64 << 20)
        resource.prlimit(analyzer, resource.RLIMIT_AS, (limit, limit))

    status, text = run_acting(command, run_dir, limit_analyzer, environment)
    if status != 0:
        fail(f"the run exited with {status}")
    check_archive(archive, otf2_print)
    said = sorted(line for line in text.splitlines()
                  if line.startswith("adaptrace-analyzer: the archive is not written here"))
    ranks_wrote = [line for line in text.splitlines() if "the analyzers did not write the archive" in line]
    # The limited analyzer's own reason is the cause: the others name it
    # (it travels in the analyzers' agreement), and so does rank 0's line,
    # whose answer comes from analyzer 0 whichever analyzer failed.
    limited_said = [line.split(f"(analyzer {limited}): ", 1)[1] for line in said if f"(analyzer {limited}): " in line]
    cause = limited_said[0] if len(limited_said) == 1 else None
    others = [f"(analyzer {index}): another analyzer did not rebuild its ranks' parts: analyzer {limited}: {cause}"
              for index in range(analyzers) if index != limited]
    if (len(said) != analyzers or cause is None or
            any(other not in said for other in (f"adaptrace-analyzer: the archive is not written here {o}"
                                                for o in others)) or len(ranks_wrote) != 1 or
            "write it themselves" not in ranks_wrote[0]):
        fail(f"expected the analyzer to say why it wrote no archive, the others to name its reason, and rank 0 "
             f"that the ranks wrote it: {said}, {ranks_wrote}")
    if cause not in ranks_wrote[0]:
        fail(f"rank 0's line does not name the cause that stopped the write ({cause}): {ranks_wrote[0]}")
    summary = json.load(open(os.path.join(archive, "summary.json")))
    if summary["online_archive_written_by_analyzers"] != 0:
        fail("summary.json says that the analyzers wrote the archive")
    because = summary.get("online_archive_not_written_by_analyzers_because")
    if because is None or cause not in because:
        fail(f"summary.json's online_archive_not_written_by_analyzers_because {because!r} does not name {cause!r}")
    live = read_live(archive)
    if live is None or not live["final"]:
        fail(f"no final live report: {live}")
    if total_calls(live) != sum(c for c, _, _ in archive_calls_per_rank(archive).values()):
        fail(f"{total_calls(live)} calls in the live report, another count in the ranks' archive")
    print("\n".join(said))
    print(ranks_wrote[0])


def check_unwritten_second(run_dir, mpiexec, launcher, program, report, otf2_print):
    check_unwritten(run_dir, mpiexec, launcher, program, report, otf2_print, analyzers=2, limited=1)


def descendants(pid):
    """The pids of the processes below pid, with their command lines."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parents[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    below, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        children = [child for child, its_parent in parents.items() if its_parent == parent]
        below += children
        frontier += children
    found = {}
    for child in below:
        try:
            with open(f"/proc/{child}/cmdline", "rb") as cmdline:
                found[child] = cmdline.read().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
    return found



def two_ranks(process, program):
    """The pids of the 2 ranks (processes running program) below process;
    the test fails where there are not 2."""
    ranks = [pid for pid, name in descendants(process.pid).items() if name == program]
    if len(ranks) != 2:
        fail(f"expected the 2 ranks of {program} below the run, found {ranks}")
    return ranks

def check_rank_killed(run_dir, mpiexec, launcher, program, report, otf2_print):
    archive = os.path.join(run_dir, "archive")
    command = traced(mpiexec, launcher, archive, ["--live-interval", "1", program, "30"])

    def kill_a_rank(process):
        live = None
        while process.poll() is None and (live is None or live["connected_ranks"] != [0, 1]):
            time.sleep(0.1)
            live = read_live(archive)
        os.kill(max(two_ranks(process, program)), signal.SIGKILL)

    status, text = run_acting(command, run_dir, kill_a_rank)
    if status == 0:
        fail("the run exited with 0 after a rank was killed")
    said = [line for line in text.splitlines() if line.startswith("adaptrace-analyzer: the job was ended (SIGTERM)")]
    if len(said) != 1:
        fail(f"expected one line of the analyzer saying the job was ended, found {said}")
    live = read_live(archive)
    if live is None or live["final"] or live["ended_by"] != "SIGTERM" or live["finished_ranks"] != []:
        fail(f"expected a last live report ended by SIGTERM with no rank finished, found {live}")
    if live["connected_ranks"] != [0, 1] or total_calls(live) == 0:
        fail(f"expected the calls both ranks streamed before the end: {live}")
    page = os.path.join(archive, "live", "report.html")
    if os.path.exists(page):
        embedded = re.search(r'<script type="application/json" id="live-data">(.*?)</script>',
                             open(page, encoding="utf-8").read(), re.DOTALL)
        if embedded is None or json.loads(embedded.group(1)) != live:
            fail(f"{page} does not embed the last live/report.json")
    print(said[0])


def check_recovered_events(run_dir, mpiexec, launcher, program, report, otf2_print):
    """A rank's full event chunks streamed to its analyzer during the run
    are in the archive adaptrace-recover writes after the job was ended
    (SIGTERM to the ranks): the rounds' calls left the 64 KiB buffers for the
    analyzer's file of streamed events long before the end, and the
    recovery reads that file as each rank's spill file."""
    small = dict(ENVIRONMENT, ADAPTRACE_BUFFER_SIZE="64K", ADAPTRACE_SAMPLING="off")
    rounds = 3000
    archive = os.path.join(run_dir, "archive")
    command = traced(mpiexec, launcher, archive, ["--live-interval", "1", program, "60", str(rounds)])
    def end_after_rounds(process):
        # Rank 0 says when the rounds and the MPI_Bcast after them are
        # done; then the ranks compute for 60 s. (Waiting for both ranks'
        # MPI_Bcast in the live report failed in CI: with the analyzer
        # behind, the calls went as totals, seen only at the end.)
        line = process.stdout.readline()
        if line.strip() != "rounds done":
            fail(f"the program said {line!r}, expected 'rounds done'")
        time.sleep(2)
        # SIGTERM to each rank, as a batch system ends a job: through
        # mpirun, the analyzer may end first, and mpirun then kills the
        # ranks (SIGKILL) before a rank that had not yet begun its save
        # could save (1 run in 5 here).
        for rank in two_ranks(process, program):
            os.kill(rank, signal.SIGTERM)

    status, text = run_acting(command, run_dir, end_after_rounds, small, stdout=subprocess.PIPE)
    if status == 0:
        fail("the run exited with 0 after SIGTERM")
    rescue = archive + ".rescue"
    saved = sorted(os.listdir(rescue)) if os.path.isdir(rescue) else []
    if saved != ["rank-0.adtr", "rank-1.adtr"]:
        fail(f"expected the rescue files of ranks 0 and 1, found {saved}")
    streamed = sorted(os.listdir(archive + ".events")) if os.path.isdir(archive + ".events") else []
    if streamed != ["rank-0", "rank-1"]:
        fail(f"expected the analyzer's files of streamed events of ranks 0 and 1, found {streamed}")
    # A copy whose rank 0 file lost its second half: a chunk that never
    # reached the analyzer's file.
    cut = os.path.join(run_dir, "cut", "archive")
    os.makedirs(os.path.dirname(cut))
    shutil.copytree(archive + ".rescue", cut + ".rescue")
    shutil.copytree(archive + ".events", cut + ".events")
    kept = os.path.getsize(os.path.join(cut + ".events", "rank-0")) // 2
    os.truncate(os.path.join(cut + ".events", "rank-0"), kept)
    recovered = recover_balanced(launcher, archive, small, otf2_print)
    if "missing from the archive" in recovered.stderr:
        fail("adaptrace-recover says that events are missing though the analyzer wrote every chunk")
    ending = check_rounds_recovered(archive, rounds)
    print(f"recovered: every call of the {rounds} rounds on both ranks; {ending['records_cut']} records cut")
    recovered = recover_balanced(launcher, cut, small, otf2_print)
    said = re.findall(r"rank 0: (\d+) events are missing from the archive", recovered.stderr)
    ending = json.load(open(os.path.join(cut, "summary.json")))["ending"]
    if len(said) != 1 or int(said[0]) != ending["streamed_events_missing"] or int(said[0]) == 0:
        fail(f"rank 0's file cut: expected one line saying how many of its events are missing, as summary.json "
             f"({ending['streamed_events_missing']}), found {said}")
    left = archive_calls_per_rank(cut)
    if not 0 < left.get((0, "MPI_Send"), (0,))[0] < rounds or left.get((1, "MPI_Send"), (0,))[0] != rounds:
        fail(f"rank 0's file cut: {left.get((0, 'MPI_Send'))} MPI_Send calls of rank 0, "
             f"{left.get((1, 'MPI_Send'))} of rank 1; expected some of {rounds} and all")
    print(f"rank 0's file cut at {kept} bytes: {said[0]} events missing, as summary.json says")


def check_rounds_recovered(archive, rounds):
    """The archive adaptrace-recover wrote of a streamed.c run of rounds
    rounds holds every call of them on both ranks, the files of streamed
    events are gone and summary.json counts no streamed event missing.
    Returns summary.json's ending."""
    # Per rank, the rounds' calls: MPI_Send, MPI_Recv, MPI_Irecv, MPI_Isend
    # and MPI_Waitall once a round, MPI_Allreduce once a round and then
    # while computing.
    found = archive_calls_per_rank(archive)
    for rank in (0, 1):
        for name in ("MPI_Send", "MPI_Recv", "MPI_Irecv", "MPI_Isend", "MPI_Waitall"):
            if found.get((rank, name), (0,))[0] != rounds:
                fail(f"rank {rank}: {found.get((rank, name), (0,))[0]} {name} calls in the recovered archive, "
                     f"{rounds} were made")
        if found.get((rank, "MPI_Allreduce"), (0,))[0] < rounds:
            fail(f"rank {rank}: {found.get((rank, 'MPI_Allreduce'), (0,))[0]} MPI_Allreduce calls in the "
                 f"recovered archive, at least {rounds} were made")
    if os.path.exists(archive + ".events"):
        fail(f"{archive}.events stayed after the recovery: {os.listdir(archive + '.events')}")
    ending = json.load(open(os.path.join(archive, "summary.json")))["ending"]
    if ending["streamed_events_missing"] != 0:
        fail(f"summary.json counts {ending['streamed_events_missing']} streamed events missing, expected 0")
    return ending


def check_recovered_in_flight(run_dir, mpiexec, launcher, program, report, otf2_print):
    """The events-streamed run (64 KiB buffers, 3,000 rounds), its analyzer
    stopped (SIGSTOP) before the rounds, then computing; once the rounds
    are done, the ranks are ended by SIGTERM and the analyzer killed
    (SIGKILL) at once, before it could go on: the event chunks each rank
    sent after the stop were never written by the analyzer, and its rescue
    file keeps them (in flight, or awaiting the confirmation), so
    adaptrace-recover writes them in at their places: nothing is missing,
    every call of the rounds is in the archive, and one line and
    summary.json say how many chunks came from the rescue files. Without
    them the list of each rank's streamed chunks was cut at the first one
    in flight, with the events after it."""
    small = dict(ENVIRONMENT, ADAPTRACE_BUFFER_SIZE="64K", ADAPTRACE_SAMPLING="off")
    rounds = 3000
    archive = os.path.join(run_dir, "archive")
    # --enable-recovery: mpirun does not end the ranks at the analyzer's
    # death, so they end by the test's SIGTERM alone (mpirun's own SIGKILL
    # could cut a save short).
    command = traced(mpiexec, launcher, archive, ["--live-interval", "1", program, "60", str(rounds), "signalled"],
                     ["--enable-recovery"])

    def end_with_analyzer_held(process):
        held = analyzer_held_through_rounds(process, archive)
        # The ranks first: the stopped analyzer is killed before any of
        # them has saved, so it never writes what waits in its sockets.
        for rank in two_ranks(process, program):
            os.kill(rank, signal.SIGTERM)
        os.kill(held, signal.SIGKILL)

    # Its status is mpirun's with --enable-recovery (0 here: every process
    # ended, none by an error of its own); the rescue files tell the end.
    run_acting(command, run_dir, end_with_analyzer_held, small, stdout=subprocess.PIPE, stdin=subprocess.PIPE)
    rescue = archive + ".rescue"
    saved = sorted(os.listdir(rescue)) if os.path.isdir(rescue) else []
    if saved != ["rank-0.adtr", "rank-1.adtr"]:
        fail(f"expected the rescue files of ranks 0 and 1, found {saved}")
    recovered = recover_balanced(launcher, archive, small, otf2_print)
    if "missing from the archive" in recovered.stderr:
        fail("adaptrace-recover says that events are missing though the rescue files hold the chunks in flight")
    ending = check_rounds_recovered(archive, rounds)
    rescued = ending["streamed_chunks_rescued"]
    if rescued == 0:
        fail("no event chunk was taken from the rescue files: none was in flight at the ending")
    said = re.findall(r"recovered: (\d+) event chunks? streamed to an analyzer that had not written", recovered.stderr)
    if said != [str(rescued)]:
        fail(f"expected one line saying that {rescued} chunks were taken from the rescue files, found {said}")
    print(f"recovered: every call of the {rounds} rounds on both ranks, {rescued} event chunks the stopped analyzer "
          f"never wrote taken from the rescue files")


def recover_archive(launcher, archive, environment, otf2_print):
    """adaptrace-recover run on archive (0 expected); its archive passes
    otf2-print. Returns the recovery's completed process."""
    recover = os.path.join(os.path.dirname(launcher), "adaptrace-recover")
    recovered = subprocess.run([recover, archive], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               env=environment, timeout=RUN_LIMIT_S)
    sys.stderr.write(recovered.stderr)
    if recovered.returncode != 0:
        fail(f"adaptrace-recover {archive} exited with {recovered.returncode}")
    check_archive(archive, otf2_print)
    return recovered


def recover_balanced(launcher, archive, environment, otf2_print, first=("MPI_Init",)):
    """recover_archive, and each location of the archive runs from the
    Enter of a region of first (MPI_Init's), its Enters and Leaves
    balanced. Returns the recovery's completed process."""
    recovered = recover_archive(launcher, archive, environment, otf2_print)
    for location, records in records_per_location(archive).items():
        regions = [record for record in records if record[0].endswith(("Enter", "Leave"))]
        enters = sum(record[0].endswith("Enter") for record in regions)
        if not regions or regions[0][1] not in first or enters * 2 != len(regions):
            fail(f"{location} of {archive}: the events do not run from an Enter of {first}, balanced: {regions[:2]} "
                 f"... {regions[-2:]}, {enters} Enters of {len(regions)}")
    return recovered


HEADLESS = ["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--window-size=1300,2400"]


def table_rows(dom, section):
    """The first cell of each row of the tables in the page's element of id
    section, as text."""
    element = re.search(rf'id="{section}"[^>]*>(.*?)</div>', dom, re.DOTALL)
    if element is None:
        fail(f"no #{section} on the drawn page")
    return [html.unescape(cell) for cell in re.findall(r'<tr class="row"><td>([^<]*)</td>', element.group(1))]


def draw_live_page(chromium, page, sections):
    """The page drawn by a headless chromium (its --dump-dom output, and
    its stderr), which must have drawn sections without a console
    message."""
    drawn = subprocess.run([chromium] + HEADLESS + ["--dump-dom", f"file://{page}"], capture_output=True, text=True,
                           timeout=120)
    marker = re.search(r'id="drawn"[^>]*>([^<]*)<', drawn.stdout)
    if marker is None or marker.group(1).split() != sections:
        fail(f"sections drawn: {marker.group(1) if marker else drawn.stderr[-2000:]}")
    errors = [line for line in drawn.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    if errors:
        fail(f"console messages: {errors[:5]}")
    return drawn


def check_page(run_dir, mpiexec, launcher, program, report, otf2_print, page_mode):
    archive = os.path.join(run_dir, "archive")
    stderr = run(traced(mpiexec, launcher, archive, [program, "1"]), run_dir)
    check_archive(archive, otf2_print)
    live = read_live(archive)
    if live is None or not live["final"]:
        fail(f"no final live report in {archive}/live: {live}")
    page = os.path.join(archive, "live", "report.html")
    started = [line for line in stderr.splitlines() if "analyzer started" in line]
    said = [line for line in stderr.splitlines() if "report.html" in line and line not in started]
    if len(started) != 1 or ("and report.html beside it" in started[0]) != (page_mode != "not-built"):
        fail(f"expected rank 0's start-up line to name live/report.html exactly where the page is built: {started}")
    if page_mode == "not-built":
        if os.path.exists(page):
            fail(f"{page} written by a build without the report page")
        if len(said) != 1 or "ADAPTRACE_REPORT_HTML=OFF" not in said[0]:
            fail(f"expected one line saying live/report.html is not written, found {said}")
        print(said[0])
        return
    if said:
        fail(f"lines about the page: {said}")
    text = open(page, encoding="utf-8").read()
    references = re.findall(r"<(?:script|link|img|iframe)\b[^>]*(?:src|href)\s*=", text, re.IGNORECASE)
    if references or re.search(r"https?://[^\s\"']*\.(?:js|css)", text):
        fail(f"{page} loads files: {references[:3]}")
    embedded = re.search(r'<script type="application/json" id="live-data">(.*?)</script>', text, re.DOTALL)
    if embedded is None or json.loads(embedded.group(1)) != live:
        fail(f"{page} does not embed live/report.json")
    if not live["mpi_functions"] or not live["sampled_functions"]:
        fail(f"nothing to draw: {live}")
    if page_mode == "no-chromium":
        print(f"{page} embeds live/report.json (no chromium: not drawn)")
        return
    drawn = draw_live_page(page_mode, page, ["state", "mpi", "steps", "rates", "samples"])
    functions = [f["name"] for f in live["mpi_functions"]]
    if table_rows(drawn.stdout, "mpi-functions") != functions:
        fail(f"MPI function rows {table_rows(drawn.stdout, 'mpi-functions')}, expected {functions}")
    if table_rows(drawn.stdout, "ranks") != [str(r["rank"]) for r in live["per_rank"]]:
        fail(f"rank rows {table_rows(drawn.stdout, 'ranks')}")
    sampled = [f["name"] for f in live["sampled_functions"][:30]]
    if table_rows(drawn.stdout, "hot-functions") != sampled:
        fail(f"sampled function rows {table_rows(drawn.stdout, 'hot-functions')}, expected {sampled}")
    by_inclusive = [f["name"] for f in sorted(live["sampled_functions"], key=lambda f: -f["inclusive_seconds"])][:15]
    if table_rows(drawn.stdout, "hot-inclusive") != by_inclusive:
        fail(f"rows by inclusive time {table_rows(drawn.stdout, 'hot-inclusive')}, expected {by_inclusive}")
    imbalance = re.search(r'id="imbalance"[^>]*>([^<]*)<', drawn.stdout)
    expected_imbalance = f"imbalance (max/mean) {live['rank_spread']['mpi_seconds']['imbalance']:.3f}."
    if imbalance is None or not imbalance.group(1).endswith(expected_imbalance):
        fail(f"the page's imbalance line {imbalance.group(1) if imbalance else None}, expected ...{expected_imbalance}")
    steps = [f"{s['from']} \u2192 {s['to']}" for s in live["segments"]]
    if not steps or table_rows(drawn.stdout, "time-steps") != steps:
        fail(f"time step rows {table_rows(drawn.stdout, 'time-steps')}, expected {steps}")
    rated = [str(rates["rank"]) for rates in live["sampling_rates"]]
    if not rated or table_rows(drawn.stdout, "sampling-rates") != rated:
        fail(f"sampling rate rows {table_rows(drawn.stdout, 'sampling-rates')}, expected {rated}")
    computation = re.search(r'id="computation"[^>]*>([^<]*)<', drawn.stdout)
    expected_computation = f"imbalance (max/mean) {live['rank_spread']['computation_seconds']['imbalance']:.3f}."
    if computation is None or not computation.group(1).endswith(expected_computation):
        fail(f"the page's computation line {computation.group(1) if computation else None}, "
             f"expected ...{expected_computation}")
    ranks_table = re.search(r'id="ranks"[^>]*>(.*?)</div>', drawn.stdout, re.DOTALL)
    headers = re.findall(r"<th[^>]*>([^<]*)</th>", ranks_table.group(1)) if ranks_table else []
    for column in ("span seconds", "computation seconds", "late sender seconds", "collective wait seconds"):
        if column not in headers:
            fail(f"the ranks' table has no {column} column: {headers}")
    waiting_most = re.search(r'id="waiting-most"[^>]*>([^<]*)<', drawn.stdout)
    expected_ranks = [f"rank {rank} (" for rank in live["ranks_waiting_most"][:5]]
    if waiting_most is None or re.findall(r"rank \d+ \(", waiting_most.group(1)) != expected_ranks:
        fail(f"the page's ranks waiting most {waiting_most.group(1) if waiting_most else None}, expected "
             f"{live['ranks_waiting_most'][:5]}")
    state = re.search(r'id="state"[^>]*>([^<]*)<', drawn.stdout)
    if state is None or not state.group(1).startswith("Final"):
        fail(f"the page does not say the report is final: {state.group(1) if state else None}")
    print(f"live/report.html embeds live/report.json and draws {len(functions)} MPI functions, "
          f"{len(sampled)} sampled functions")


WORKER_FUNCTION = "adt_online_worker_compute"


def worker_samples(report):
    """The exclusive samples of the workers' function in a live report's
    sampled profile (0 where it is absent)."""
    return next((f["exclusive_samples"] for f in report["sampled_functions"] if f["name"] == WORKER_FUNCTION), 0)


def check_workers(run_dir, mpiexec, launcher, program, report, otf2_print):
    """A hybrid program (tests/online/workers.c, PROGRAM: 2 ranks whose main
    thread makes the MPI calls while 2 worker threads only compute) at
    1 kHz. Trace output, in a 128 KiB buffer whose levels the workers'
    samples halve 13 times offline: the main thread's event chain keeps
    every sample, the workers' too, so that none halves; the final live
    report's sampled profile is adaptrace-report's on the archive the
    analyzers wrote, the workers' function included (check_sampled: every
    function's samples and seconds, nothing not streamed). Profile output, in a 64 KiB buffer
    that the workers' samples would fill: the final report has the
    workers' function, every sample taken streamed, none kept in the
    buffers, no halving but for overload."""
    arguments = [program, "3000"]
    environment = dict(ENVIRONMENT, ADAPTRACE_SAMPLING_RATE="1kHz")
    archive = os.path.join(run_dir, "archive")
    _, summary = run_written_by_analyzers(
        traced(mpiexec, launcher, archive, arguments), run_dir, dict(environment, ADAPTRACE_BUFFER_SIZE="128K"),
        archive, otf2_print)
    if summary["halvings"] != summary["overload_halvings"] or summary["samples_in_event_chains"] != summary["samples_kept"]:
        fail(f"trace: {summary['halvings'] - summary['overload_halvings']} halvings of the buffer, "
             f"{summary['samples_in_event_chains']} of {summary['samples_kept']} samples kept in the event chains")
    live = read_live(archive)
    if live is None or not live["final"]:
        fail(f"no final live report in {archive}/live")
    offline = json.loads(subprocess.run([report, "--json", archive], stdout=subprocess.PIPE, check=True).stdout)
    if not any(f["name"] == WORKER_FUNCTION for f in offline["sampled_functions"]):
        fail(f"no sample of {WORKER_FUNCTION} in the archive: the workers were not sampled")
    check_sampled(live, offline, summary)
    traced_samples = worker_samples(live)
    profile_archive = os.path.join(run_dir, "profile")
    run(traced(mpiexec, launcher, profile_archive, arguments), run_dir,
        dict(environment, ADAPTRACE_ONLINE_OUTPUT="profile", ADAPTRACE_BUFFER_SIZE="64K"))
    summary = json.load(open(os.path.join(profile_archive, "summary.json")))
    final = json.load(open(os.path.join(profile_archive, "report.json")))
    if not final["final"] or worker_samples(final) == 0:
        fail(f"report.json: final {final['final']}, {worker_samples(final)} samples of {WORKER_FUNCTION}")
    if any(final["samples_not_streamed_by_cause"].values()):
        fail(f"samples not streamed: {final['samples_not_streamed_by_cause']}")
    if final["samples"] != summary["online_samples_streamed"] or summary["samples_kept"] != 0:
        fail(f"report.json has {final['samples']} samples, {summary['online_samples_streamed']} were streamed, "
             f"{summary['samples_kept']} kept in the buffers")
    if summary["halvings"] != summary["overload_halvings"]:
        fail(f"{summary['halvings'] - summary['overload_halvings']} halvings of the buffer with profile")
    print(f"trace (128 KiB): {traced_samples} samples of {WORKER_FUNCTION} live = adaptrace-report, "
          f"{live['samples']} samples in all, all in the event chains, 0 halvings; profile (64 KiB): {worker_samples(final)} of "
          f"{final['samples']} samples, 0 kept, {summary['halvings']} halvings")


def archive_samples_per_location(archive):
    """{(rank group, location): samples} of the archive (python3-otf2)."""
    import otf2
    found = {}
    with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
        for location, event in trace.events:
            if isinstance(event, otf2.events.CallingContextSample):
                key = (location.group.name, location.name)
                found[key] = found.get(key, 0) + 1
    return found


def check_workers_recovered(run_dir, mpiexec, launcher, program, report, otf2_print):
    """The hybrid program of online.workers (trace output, 128 KiB), its
    ranks ended by SIGTERM while the workers compute: adaptrace-recover
    finds the workers' samples in the main thread's streamed event chunks
    (the analyzer's file of streamed events), and each location's samples
    in the archive are the ones summary.json says it kept, the main
    thread's too (before, the recovery counted only the samples of the
    buffers' levels as kept: 0 of 5,791 here, and the samples in the event
    chains as MPI events)."""
    small = dict(ENVIRONMENT, ADAPTRACE_BUFFER_SIZE="128K", ADAPTRACE_SAMPLING_RATE="1kHz")
    archive = os.path.join(run_dir, "archive")
    command = traced(mpiexec, launcher, archive, ["--live-interval", "1", program, "100000"])

    def end_while_computing(process):
        # Until a live report has the workers' samples (at most 30 s).
        waited = time.monotonic()
        while process.poll() is None and time.monotonic() - waited < 30:
            live = read_live(archive)
            if live is not None and worker_samples(live) >= 500:
                break
            time.sleep(0.2)
        for rank in two_ranks(process, program):
            os.kill(rank, signal.SIGTERM)

    status, text = run_acting(command, run_dir, end_while_computing, small)
    if status == 0:
        fail("the run exited with 0 after SIGTERM")
    recover_archive(launcher, archive, small, otf2_print)
    summary = json.load(open(os.path.join(archive, "summary.json")))
    found = archive_samples_per_location(archive)
    if len(found) != 6:
        fail(f"expected the samples of 6 locations in the recovered archive, found {found}")
    workers = sum(samples for (_, name), samples in found.items() if name != "Master thread")
    if workers < 500:
        fail(f"{workers} samples of the worker threads in the recovered archive")
    kept = {(f"MPI Rank {line['rank']}", "Master thread" if line["thread"] == 0 else f"Thread {line['thread']}"):
            line["samples_kept"] for line in summary["per_location"]}
    if kept != found:
        fail(f"summary.json's samples kept per location {kept} != the archive's {found}")
    if summary["samples_kept"] != sum(found.values()):
        fail(f"summary.json: {summary['samples_kept']} samples kept, the archive has {sum(found.values())}")
    print(f"recovered: {sum(found.values())} samples in the archive, {workers} of them the workers', "
          f"as summary.json keeps them per location")


CASES = {"halved-offline": check_halved_offline, "samples-streamed": check_samples_streamed, "metrics": check_metrics, "ring": check_ring, "equal": check_equal, "rates": check_rates_halved, "families": check_families, "nested": check_nested, "samples": check_samples, "two": check_two,
         "profile": check_profile, "profile_calls": check_profile_calls, "behind": check_behind, "demo": check_demo, "demo-two": check_demo_two,
         "live": check_live, "refused": check_refused, "preloaded": check_preloaded, "killed": check_killed,
         "killed-second": check_killed_second, "killed-first": check_killed_first,
         "killed-middle": check_killed_middle,
         "unwritten": check_unwritten, "unwritten-second": check_unwritten_second, "events-streamed": check_events_streamed,
         "threads": check_threads, "threads-live": check_threads_live, "workers": check_workers,
         "workers-recovered": check_workers_recovered,
         "threads-killed": check_threads_killed, "stopped-killed": check_stopped_killed,
         "threads-recovered": check_threads_recovered,
         "rank-killed": check_rank_killed, "recovered-events": check_recovered_events,
         "recovered-in-flight": check_recovered_in_flight, "user-regions": check_user_regions,
         "thread-waves": check_thread_waves,
         "loaded": check_loaded, "full-tree": check_full_tree, "page": check_page}

if __name__ == "__main__":
    if len(sys.argv) != (9 if sys.argv[1:2] in (["page"], ["killed-second"]) else 8) or sys.argv[1] not in CASES:
        sys.exit(__doc__)
    case, run_dir = sys.argv[1], sys.argv[2]
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    CASES[case](run_dir, *sys.argv[3:])
