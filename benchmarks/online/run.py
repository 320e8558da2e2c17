#!/usr/bin/python3
"""What online analysis (issue #28) costs, measured side by side in one
invocation, alternating the cases round by round:

  untraced   the program alone;
  offline    traced, sampling off (the ranks' archive only);
  online     the same with 1 analyzer (--analyzers 1), streaming every
             MPI call;
  online_tcp_thread  the same with Open MPI's TCP transport progressed by
             its own thread (OMPI_MCA_btl_tcp_progress_thread=1): without
             it, once the ranks hold a TCP connection to the analyzer,
             every MPI call of the application polls it (docs/online.md);
  online_mpmd  the analyzer started beside the ranks in one MPMD launch
             (mpirun ... adaptrace PROGRAM : -np 1 adaptrace-analyzer):
             the application's calls on its narrowed world, and the
             analyzer in the ranks' own job (Open MPI may reach it by
             shared memory rather than TCP).

1. adaptrace-bench-pingpong on 2 ranks: the median half round trip (0
   and 1024 bytes) per case: each traced call appends one 40-byte record
   to the stream, and the chunks' sends are progressed from the calls.
2. adaptrace-demo (Jacobi) and LAMMPS's Lennard-Jones melt (`lmp`,
   Debian's lammps; left out with the reason where it is not installed)
   on --ranks ranks (4: one analyzer per 4 ranks, as the issue asks): the
   median wall time and CPU time of all processes per case, and in the
   online cases the calls and bytes streamed, the stream's bytes per
   second and the analyzer's CPU seconds (live/report.json's
   analyzers_cpu_s).

With --baseline OTHER_BUILD (another build of adaptrace, e.g. main's
before a change to the stream), the ping-pong also runs the online cases
with that build's adaptrace, in the same rounds ("baseline_" + case), and
their ratios of this build to the baseline are printed: what a change on
the ranks' hot path costs, side by side.

Prints one JSON object with the medians and their ratios to untraced.

usage: run.py BUILD_DIR [--rounds N] [--iterations N] [--ranks N] [--demo-iterations N] [--lammps-steps N]
              [--baseline OTHER_BUILD]
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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpi"))
from skeleton import LAMMPS_MELT  # noqa: E402

CASES = ("untraced", "offline", "online", "online_tcp_thread", "online_mpmd")


def environment(case):
    # OMPI_MCA_btl_tcp_if_include: see tests/online/check_online.py.
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_tcp_if_include="lo", ADAPTRACE_QUIET="on", ADAPTRACE_SAMPLING="off")
    if case == "online_tcp_thread":
        env["OMPI_MCA_btl_tcp_progress_thread"] = "1"
    return env


def command(build, case, program, output, ranks):
    launcher = [] if case == "untraced" else [os.path.join(build, "bin", "adaptrace"), "--output", output]
    if case == "online_mpmd":
        return (["mpirun", "--oversubscribe", "-np", str(ranks)] + launcher + program +
                [":", "-np", "1", os.path.join(build, "bin", "adaptrace-analyzer")])
    if case.startswith("online"):
        launcher += ["--analyzers", "1"]
    return ["mpirun", "--oversubscribe", "-np", str(ranks)] + launcher + program


def run(build, case, program, output, ranks=2):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(command(build, case, program, output, ranks), env=environment(case),
                          capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"run.py: {program[0]} ({case}) failed with status {done.returncode}:\n{done.stderr}")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return done.stdout, seconds, cpu


def applications(build, scratch, options):
    """{name: command}: the demo, and LAMMPS's melt where lmp is; the
    reason LAMMPS is left out, or None."""
    programs = {"demo": [os.path.join(build, "bin", "adaptrace-demo"), str(options.demo_iterations)]}
    lmp = shutil.which("lmp")
    if not lmp:
        return programs, "lmp (Debian's lammps) is not installed"
    script = os.path.join(scratch, "in.melt")
    with open(script, "w") as file:
        file.write(LAMMPS_MELT.format(steps=options.lammps_steps))
    programs["lammps_melt"] = [lmp, "-in", script, "-log", "none", "-screen", "none"]
    return programs, None


def median_of(values):
    return statistics.median(values) if values else None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=20000)
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--demo-iterations", type=int, default=3000)
    parser.add_argument("--lammps-steps", type=int, default=500)
    parser.add_argument("--baseline")
    options = parser.parse_args()
    options.build = os.path.abspath(options.build)
    online_cases = [case for case in CASES if case.startswith("online")]
    baseline_cases = [f"baseline_{case}" for case in online_cases] if options.baseline else []
    scratch = tempfile.mkdtemp(prefix="adaptrace-bench-online-")
    programs, lammps_left_out = applications(options.build, scratch, options)
    pingpong = {case: {"0": [], "1024": []} for case in (*CASES, *baseline_cases)}
    wall = {name: {case: [] for case in CASES} for name in programs}
    cpu = {name: {case: [] for case in CASES} for name in programs}
    streamed = {name: {"calls": [], "bytes": [], "bytes_per_second": [], "analyzer_cpu_s": []} for name in programs}
    try:
        for round_index in range(options.rounds):
            for case in CASES:
                output = os.path.join(scratch, f"pingpong-{case}-{round_index}")
                stdout, _, _ = run(options.build, case, [os.path.join(options.build, "bin", "adaptrace-bench-pingpong"),
                                                         str(options.iterations)], output)
                measured = json.loads(stdout.strip().splitlines()[-1])["half_rtt_us"]
                for size in pingpong[case]:
                    pingpong[case][size].append(measured[size])
                shutil.rmtree(output, ignore_errors=True)
                for name, program in programs.items():
                    output = os.path.join(scratch, f"{name}-{case}-{round_index}")
                    _, seconds, used = run(options.build, case, program, output, options.ranks)
                    wall[name][case].append(seconds)
                    cpu[name][case].append(used)
                    if case == "online":
                        summary = json.load(open(os.path.join(output, "summary.json")))
                        live = json.load(open(os.path.join(output, "live", "report.json")))
                        streamed[name]["calls"].append(summary["online_calls_streamed"])
                        streamed[name]["bytes"].append(summary["online_bytes_streamed"])
                        streamed[name]["bytes_per_second"].append(summary["online_bytes_streamed"] / seconds)
                        streamed[name]["analyzer_cpu_s"].append(live["analyzers_cpu_s"])
                    shutil.rmtree(output, ignore_errors=True)
            for case in baseline_cases:
                output = os.path.join(scratch, f"pingpong-{case}-{round_index}")
                baseline = os.path.abspath(options.baseline)
                stdout, _, _ = run(baseline, case[len("baseline_"):],
                                   [os.path.join(baseline, "bin", "adaptrace-bench-pingpong"), str(options.iterations)],
                                   output)
                measured = json.loads(stdout.strip().splitlines()[-1])["half_rtt_us"]
                for size in pingpong[case]:
                    pingpong[case][size].append(measured[size])
                shutil.rmtree(output, ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    half_rtt = {case: {size: statistics.median(values) for size, values in sizes.items()}
                for case, sizes in pingpong.items()}
    result = {
        "rounds": options.rounds,
        "pingpong_half_rtt_us": half_rtt,
        "pingpong_ratio_to_untraced": {case: {size: half_rtt[case][size] / half_rtt["untraced"][size]
                                              for size in half_rtt[case]} for case in CASES},
        "ranks": options.ranks,
        "demo_iterations": options.demo_iterations,
        "lammps_steps": options.lammps_steps,
    }
    if baseline_cases:
        result["pingpong_ratio_to_baseline"] = {case: {size: half_rtt[case][size] / half_rtt[f"baseline_{case}"][size]
                                                       for size in half_rtt[case]} for case in online_cases}
    if lammps_left_out:
        result["lammps_melt_left_out"] = lammps_left_out
    for name in programs:
        seconds = {case: statistics.median(values) for case, values in wall[name].items()}
        result[name] = {
            "seconds": seconds,
            "ratio_to_untraced": {case: seconds[case] / seconds["untraced"] for case in CASES},
            "cpu_seconds_all_processes": {case: statistics.median(values) for case, values in cpu[name].items()},
            "online_calls_streamed": median_of(streamed[name]["calls"]),
            "online_bytes_streamed": median_of(streamed[name]["bytes"]),
            "online_stream_bytes_per_second": median_of(streamed[name]["bytes_per_second"]),
            "online_analyzer_cpu_seconds": median_of(streamed[name]["analyzer_cpu_s"]),
        }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
