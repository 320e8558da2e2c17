#!/usr/bin/env python3
"""adaptrace-replay's fidelity (issue #25): the original run's span against
its replay's, side by side in one run.

For each case, RUNS times: the program traced (ADAPTRACE_SKELETON on,
sampling off), then adaptrace-replay of its archive (untraced), once
spending the histograms' means and once drawing from their bins. The span
is the longest rank's, from the end of MPI_Init to the start of
MPI_Finalize (the original's from skeleton.adts, the replay's measured the
same way). Prints one JSON object: per case the spans of every run, their
medians, the ratio replay / original of the medians, each replay's ratio
to its own original and their median, and the load average at the end.

Cases: the demo on 4 ranks (250 iterations), a 2-rank send/recv loop
with computation between the messages (tests/mpi/replay_world.c,
sendrecv mode, 20,000 round trips), the issue's 2 ranks x 10^6 send/recv
with a 16 MiB buffer (tests/mpi/fold_sendrecv.c: most events folded, every
call in the skeleton) and LAMMPS's melt on 4 ranks
(benchmarks/mpi/in.melt: 4,000 atoms, 250 steps; `lmp`, Debian's lammps,
left out with that reason where it is not installed).

usage: replay.py BUILD_DIR [--runs 3]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile


def run(command, env):
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"replay.py: {' '.join(command)} failed with status {done.returncode}:\n{done.stderr}")
    return done.stdout


def case(build, scratch, name, ranks, program, runs, buffer=None):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               ADAPTRACE_SAMPLING="off", ADAPTRACE_QUIET="on", ADAPTRACE_SKELETON="on")
    if buffer:
        env["ADAPTRACE_BUFFER_SIZE"] = buffer
    mpirun = ["mpirun", "--oversubscribe", "-np", str(ranks)]
    spans = {"original_s": [], "replay_mean_s": [], "replay_bins_s": []}
    for index in range(runs):
        archive = os.path.join(scratch, f"{name}-{index}")
        run(mpirun + [os.path.join(build, "bin", "adaptrace")] + program, dict(env, ADAPTRACE_OUTPUT=archive))
        for compute in ("mean", "bins"):
            out = run(mpirun + [os.path.join(build, "bin", "adaptrace-replay"), f"--compute={compute}", archive], env)
            result = json.loads(out.strip().splitlines()[-1])
            if compute == "mean":
                spans["original_s"].append(result["original_span_s"])
            spans[f"replay_{compute}_s"].append(result["replay_span_s"])
        shutil.rmtree(archive, ignore_errors=True)
    medians = {key: statistics.median(values) for key, values in spans.items()}
    # Each replay against its own original too: the runs of a loaded
    # machine vary more than a replay differs from its original.
    paired = {compute: [replayed / original for replayed, original in zip(spans[f"replay_{compute}_s"],
                                                                         spans["original_s"])]
              for compute in ("mean", "bins")}
    return {"ranks": ranks, "command": " ".join(program), "runs": spans, "medians": medians,
            "ratio_mean": medians["replay_mean_s"] / medians["original_s"],
            "ratio_bins": medians["replay_bins_s"] / medians["original_s"],
            "paired_ratios": paired,
            "median_paired_ratio": {compute: statistics.median(values) for compute, values in paired.items()},
            "load_average": os.getloadavg()[0]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", help="build directory (bin/adaptrace, bin/adaptrace-replay, bin/adaptrace-demo, "
                                      "bin/mpi-replay-world, bin/mpi-fold-sendrecv)")
    parser.add_argument("--runs", type=int, default=3, help="runs per case (3)")
    args = parser.parse_args()
    bin_dir = os.path.join(args.build, "bin")
    with tempfile.TemporaryDirectory(prefix="adaptrace-bench-replay-") as scratch:
        results = {
            "demo": case(args.build, scratch, "demo", 4, [os.path.join(bin_dir, "adaptrace-demo"), "250"], args.runs),
            "sendrecv": case(args.build, scratch, "sendrecv", 2,
                             [os.path.join(bin_dir, "mpi-replay-world"), "sendrecv", "20000"], args.runs),
        }
        results["sendrecv_folded"] = case(args.build, scratch, "folded", 2,
                                          [os.path.join(bin_dir, "mpi-fold-sendrecv"), "1000000"], args.runs,
                                          buffer="16M")
        lmp = shutil.which("lmp")
        melt = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpi", "in.melt")
        results["lammps_melt"] = (case(args.build, scratch, "lammps", 4,
                                       [lmp, "-in", os.path.abspath(melt), "-log", "none", "-screen", "none"],
                                       args.runs)
                                  if lmp else {"left_out": "lmp (Debian's lammps) is not installed"})
    print(json.dumps(results, indent=2))


main()
