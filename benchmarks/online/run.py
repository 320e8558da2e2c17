#!/usr/bin/python3
"""What online analysis (issue #28) costs, measured side by side in one
invocation, alternating the cases round by round on 2 ranks:

  untraced   the program alone;
  offline    traced, sampling off (the ranks' archive only);
  online     the same with 1 analyzer (--analyzers 1), streaming every
             MPI call;
  online_tcp_thread  the same with Open MPI's TCP transport progressed by
             its own thread (OMPI_MCA_btl_tcp_progress_thread=1): without
             it, once the ranks hold a TCP connection to the analyzer,
             every MPI call of the application polls it (docs/online.md).

1. adaptrace-bench-pingpong: the median half round trip (0 and 1024
   bytes) per case: each traced call appends one 40-byte record to the
   stream, and the chunks' sends are progressed from the calls.
2. adaptrace-demo (Jacobi, 2 ranks): the median wall time per case, and
   in the online case the bytes streamed and the analyzer's CPU seconds
   (from the summary and from the analyzer's process accounting).

Prints one JSON object with the medians and their ratios to untraced.

usage: run.py BUILD_DIR [--rounds N] [--iterations N] [--demo-iterations N]
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

CASES = ("untraced", "offline", "online", "online_tcp_thread")


def environment(case):
    # OMPI_MCA_btl_tcp_if_include: see tests/online/check_online.py.
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_tcp_if_include="lo", ADAPTRACE_QUIET="on", ADAPTRACE_SAMPLING="off")
    if case == "online_tcp_thread":
        env["OMPI_MCA_btl_tcp_progress_thread"] = "1"
    return env


def command(build, case, program, output):
    launcher = [] if case == "untraced" else [os.path.join(build, "bin", "adaptrace"), "--output", output]
    if case.startswith("online"):
        launcher += ["--analyzers", "1"]
    return ["mpirun", "--oversubscribe", "-np", "2"] + launcher + [os.path.join(build, "bin", program)]


def run(build, case, program, arguments, output):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(command(build, case, program, output) + arguments, env=environment(case),
                          capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"run.py: {program} ({case}) failed with status {done.returncode}:\n{done.stderr}")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return done.stdout, seconds, cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=20000)
    parser.add_argument("--demo-iterations", type=int, default=3000)
    options = parser.parse_args()
    options.build = os.path.abspath(options.build)
    scratch = tempfile.mkdtemp(prefix="adaptrace-bench-online-")
    pingpong = {case: {"0": [], "1024": []} for case in CASES}
    demo = {case: [] for case in CASES}
    cpu = {case: [] for case in CASES}
    streamed_bytes, streamed_calls = [], []
    try:
        for round_index in range(options.rounds):
            for case in CASES:
                output = os.path.join(scratch, f"pingpong-{case}-{round_index}")
                stdout, _, _ = run(options.build, case, "adaptrace-bench-pingpong", [str(options.iterations)],
                                   output)
                measured = json.loads(stdout.strip().splitlines()[-1])["half_rtt_us"]
                for size in pingpong[case]:
                    pingpong[case][size].append(measured[size])
                shutil.rmtree(output, ignore_errors=True)
                output = os.path.join(scratch, f"demo-{case}-{round_index}")
                _, seconds, used = run(options.build, case, "adaptrace-demo", [str(options.demo_iterations)], output)
                demo[case].append(seconds)
                cpu[case].append(used)
                if case.startswith("online"):
                    summary = json.load(open(os.path.join(output, "summary.json")))
                    streamed_bytes.append(summary["online_bytes_streamed"])
                    streamed_calls.append(summary["online_calls_streamed"])
                shutil.rmtree(output, ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    half_rtt = {case: {size: statistics.median(values) for size, values in sizes.items()}
                for case, sizes in pingpong.items()}
    demo_seconds = {case: statistics.median(values) for case, values in demo.items()}
    demo_cpu = {case: statistics.median(values) for case, values in cpu.items()}
    print(json.dumps({
        "rounds": options.rounds,
        "pingpong_half_rtt_us": half_rtt,
        "pingpong_ratio_to_untraced": {case: {size: half_rtt[case][size] / half_rtt["untraced"][size]
                                              for size in half_rtt[case]} for case in CASES},
        "demo_iterations": options.demo_iterations,
        "demo_seconds": demo_seconds,
        "demo_ratio_to_untraced": {case: demo_seconds[case] / demo_seconds["untraced"] for case in CASES},
        "demo_cpu_seconds_all_processes": demo_cpu,
        "demo_online_calls_streamed": statistics.median(streamed_calls),
        "demo_online_bytes_streamed": statistics.median(streamed_bytes),
        "demo_online_stream_bytes_per_second": statistics.median(streamed_bytes) / demo_seconds["online"],
    }, indent=2))


if __name__ == "__main__":
    main()
