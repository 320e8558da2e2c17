#!/usr/bin/env python3
"""MPI overhead of adaptrace, measured side by side in one invocation.

1. Ping-pong (adaptrace-bench-pingpong, 2 ranks): untraced, traced with
   sampling off and traced with sampling on, and, sampling off, the
   program linked with libadaptrace instead of preloaded (linked) and a
   no-op PMPI tool stacked behind adaptrace (stacked_noop: --stack
   libadaptrace-bench-noop-tool.so, issue #24), alternating case by case for
   ROUNDS rounds; the median half round trip per case and size.
2. Whole run of adaptrace-demo on 4 ranks with hyperfine: untraced against
   traced (sampling off and on).

With --baseline OTHER_BUILD the ping-pong also runs OTHER_BUILD's adaptrace
with sampling off and on (baseline_sampling_off, baseline_sampling_on), in
the same alternation: what a change costs per call against the build
before it (issue #26 measured its in-run cost timing so). --pingpong-only
leaves the demo out.

Prints one JSON object: half_rtt_us per case, their ratios to untraced,
and the demo's mean times and ratios.

usage: run.py BUILD_DIR [--rounds N] [--iterations N] [--demo-runs N] [--rate RATE]
              [--baseline OTHER_BUILD] [--pingpong-only]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

CASES = {
    "untraced": None,
    "sampling_off": "off",
    "sampling_on": "on",
}


def mpirun(ranks):
    return ["mpirun", "--oversubscribe", "-np", str(ranks)]


def environment(sampling, output, rate):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    if sampling is not None:
        env.update(ADAPTRACE_SAMPLING=sampling, ADAPTRACE_OUTPUT=output,
                   ADAPTRACE_SAMPLING_RATE=rate, ADAPTRACE_QUIET="on")
    return env


def command(build, sampling, program, variant=None):
    """variant (ping-pong only): "linked" runs the program linked with
    libadaptrace, no launcher; "stacked_noop" stacks the no-op tool."""
    if variant == "linked":
        return [os.path.join(build, "bin", program + "-linked")]
    launcher = [] if sampling is None else [os.path.join(build, "bin", "adaptrace")]
    if variant == "stacked_noop":
        launcher += ["--stack", os.path.join(build, "lib", "libadaptrace-bench-noop-tool.so")]
    return launcher + [os.path.join(build, "bin", program)]


# The ping-pong's cases beyond CASES: (sampling, variant of command()).
PINGPONG_VARIANTS = {"linked": ("off", "linked"), "stacked_noop": ("off", "stacked_noop")}


def pingpong(build, scratch, rounds, iterations, rate, baseline=None):
    cases = {case: (sampling, None, build) for case, sampling in CASES.items()}
    cases.update({case: (sampling, variant, build) for case, (sampling, variant) in PINGPONG_VARIANTS.items()})
    if baseline is not None:
        cases.update({"baseline_" + case: (sampling, None, baseline)
                      for case, sampling in CASES.items() if sampling is not None})
    results = {case: {"0": [], "1024": []} for case in cases}
    for round_index in range(rounds):
        for case, (sampling, variant, case_build) in cases.items():
            output = os.path.join(scratch, f"pingpong-{case}-{round_index}")
            run = subprocess.run(
                mpirun(2) + command(case_build, sampling, "adaptrace-bench-pingpong", variant) + [str(iterations)],
                env=environment(sampling, output, rate), capture_output=True, text=True, check=False)
            if run.returncode != 0:
                sys.exit(f"run.py: ping-pong ({case}) failed with status {run.returncode}:\n{run.stderr}")
            measured = json.loads(run.stdout.strip().splitlines()[-1])["half_rtt_us"]
            for size in results[case]:
                results[case][size].append(measured[size])
            shutil.rmtree(output, ignore_errors=True)
    return {case: {size: statistics.median(values) for size, values in sizes.items()}
            for case, sizes in results.items()}


def demo(build, scratch, runs, rate):
    report = os.path.join(scratch, "hyperfine.json")
    output = os.path.join(scratch, "demo-trace")
    commands = []
    for case, sampling in CASES.items():
        env = "" if sampling is None else (
            f"ADAPTRACE_SAMPLING={sampling} ADAPTRACE_OUTPUT={output} "
            f"ADAPTRACE_SAMPLING_RATE={rate} ADAPTRACE_QUIET=on ")
        commands.append(env + " ".join(mpirun(4) + command(build, sampling, "adaptrace-demo")))
    subprocess.run(["hyperfine", "--style", "none", "--warmup", "1", "--runs", str(runs),
                    "--prepare", f"rm -rf {output}", "--export-json", report,
                    "--command-name", "untraced", "--command-name", "sampling_off",
                    "--command-name", "sampling_on"] + commands,
                   env=environment(None, None, rate), check=True, stdout=subprocess.DEVNULL)
    with open(report) as file:
        measured = {entry["command"]: entry for entry in json.load(file)["results"]}
    return {case: {"mean_s": measured[case]["mean"], "stddev_s": measured[case]["stddev"]}
            for case in CASES}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", help="build directory (with bin/adaptrace, bin/adaptrace-demo, "
                                      "bin/adaptrace-bench-pingpong, lib/libadaptrace.so)")
    parser.add_argument("--rounds", type=int, default=5, help="ping-pong rounds per case (5)")
    parser.add_argument("--iterations", type=int, default=5000,
                        help="round trips per repetition inside one ping-pong run (5000)")
    parser.add_argument("--demo-runs", type=int, default=5, help="hyperfine runs per demo case (5)")
    # At the product default (10 kHz) a sample costs more than its period on
    # an oversubscribed VM and the demo crawls; 1 kHz measures what tracing
    # costs per MPI call with sampling on rather than the timer's load.
    parser.add_argument("--rate", default="1kHz",
                        help="ADAPTRACE_SAMPLING_RATE of the sampling_on case (1kHz)")
    parser.add_argument("--baseline", help="another build directory whose adaptrace the ping-pong also runs")
    parser.add_argument("--pingpong-only", action="store_true", help="leave the demo out")
    args = parser.parse_args()
    if shutil.which("hyperfine") is None and not args.pingpong_only:
        sys.exit("run.py: hyperfine is not on PATH (Debian package hyperfine)")
    with tempfile.TemporaryDirectory(prefix="adaptrace-bench-mpi-") as scratch:
        half_rtt = pingpong(args.build, scratch, args.rounds, args.iterations, args.rate, args.baseline)
        whole_run = None if args.pingpong_only else demo(args.build, scratch, args.demo_runs, args.rate)
    result = {
        "pingpong": {
            "ranks": 2,
            "rounds": args.rounds,
            "iterations": args.iterations,
            "half_rtt_us": half_rtt,
            "ratio": {case: {size: half_rtt[case][size] / half_rtt["untraced"][size]
                             for size in half_rtt[case]}
                      for case in half_rtt if case != "untraced"},
        },
        "sampling_rate": args.rate,
        "target": "pingpong.ratio.sampling_off.0 <= 1.10",
    }
    if whole_run is not None:
        result["demo"] = {
            "ranks": 4,
            "runs": args.demo_runs,
            "time": whole_run,
            "ratio": {case: whole_run[case]["mean_s"] / whole_run["untraced"]["mean_s"]
                      for case in CASES if case != "untraced"},
        }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
