#!/usr/bin/env python3
"""What adaptrace-report --compensate removes of adaptrace's slowdown, by
call rate, side by side in one invocation (issue #26, docs/compensation.md).

adaptrace-bench-rates (2 ranks) exchanges an 8-byte MPI_Sendrecv per
iteration with a fixed amount of work between exchanges, sized once (an
untraced --calibrate run) for call rates from 100 Hz to 500 kHz; each band
runs SECONDS. Per band and round, alternating: the program untraced, and
traced (sampling off, and sampling on at RATE). The program times its loop
itself (untraced_s, traced_s: the mean of the ranks); the loop's time in
the report is MPI_Sendrecv's time plus the time between the calls around
and inside the loop (segments Barrier->Sendrecv, Sendrecv->Sendrecv,
Sendrecv->Barrier), per rank: measured, compensated by the model
(--compensate) and by one constant (--compensate=constant). Medians over
ROUNDS rounds.

removed_share = (measured - compensated) / (traced - untraced): the share
of the slowdown the compensation takes out (1: all of it; above 1: it took
out more than the slowdown). residual_share = (compensated - untraced) /
(traced - untraced). noise_s: the spread (max - min) of the untraced
rounds; a slowdown below it says nothing.

usage: compensation.py BUILD_DIR [--rounds N] [--seconds S] [--rate RATE]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

BANDS_HZ = [100, 1000, 10000, 100000, 500000]
RANKS = 2
# The exchange's own time untraced (MPI_Sendrecv of 8 bytes between two
# ranks of one node), taken out of each period for the work: ~0.4 us here.
EXCHANGE_US = 0.4
LOOP_SEGMENTS = {("MPI_Barrier", "MPI_Sendrecv"), ("MPI_Sendrecv", "MPI_Sendrecv"), ("MPI_Sendrecv", "MPI_Barrier")}


def environment(**settings):
    return dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **settings)


def run_program(build, iterations, work, traced, output=None, sampling="off", rate="1kHz"):
    command = ["mpirun", "--oversubscribe", "-np", str(RANKS)]
    env = environment()
    if traced:
        command.append(os.path.join(build, "bin", "adaptrace"))
        env = environment(ADAPTRACE_OUTPUT=output, ADAPTRACE_SAMPLING=sampling, ADAPTRACE_SAMPLING_RATE=rate,
                          ADAPTRACE_QUIET="on")
    command += [os.path.join(build, "bin", "adaptrace-bench-rates"), str(iterations), str(work)]
    run = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if run.returncode != 0:
        sys.exit(f"compensation.py: {' '.join(command)} failed ({run.returncode}):\n{run.stderr}")
    lines = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    return statistics.mean(line["seconds"] for line in lines)


def loop_seconds(build, archive, mode):
    """The loop's time per rank in the report of archive (mode: None,
    "model" or "constant")."""
    command = [os.path.join(build, "bin", "adaptrace-report"), "--json"]
    if mode is not None:
        command.append(f"--compensate={mode}")
    run = subprocess.run(command + [archive], capture_output=True, text=True, check=False)
    if run.returncode != 0:
        sys.exit(f"compensation.py: {' '.join(command)} {archive} failed:\n{run.stderr}")
    report = json.loads(run.stdout)
    seconds = sum(f["seconds"] for f in report["mpi_functions"] if f["name"] == "MPI_Sendrecv")
    seconds += sum(s["total_seconds"] for s in report["segments"] if (s["from"], s["to"]) in LOOP_SEGMENTS)
    return seconds / report["rank_count"], report["compensation"]


def band_summary(untraced, traced, figures):
    slowdown = traced - untraced
    summary = {"untraced_s": untraced, "traced_s": traced, "slowdown_s": slowdown}
    for name, value in figures.items():
        summary[name + "_s"] = value
    for name in ("model", "constant"):
        removed = figures["measured"] - figures[name]
        summary[name + "_removed_share"] = removed / slowdown if slowdown > 0 else None
        summary[name + "_residual_share"] = (figures[name] - untraced) / slowdown if slowdown > 0 else None
    return summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", help="build directory (bin/adaptrace, bin/adaptrace-report, bin/adaptrace-bench-rates)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per band and case (3)")
    parser.add_argument("--seconds", type=float, default=0.5, help="length of each band's loop (0.5 s)")
    parser.add_argument("--rate", default="1kHz", help="ADAPTRACE_SAMPLING_RATE of the sampled case (1kHz)")
    args = parser.parse_args()
    calibration = subprocess.run([os.path.join(args.build, "bin", "adaptrace-bench-rates"), "--calibrate"],
                                 capture_output=True, text=True, check=True)
    units_per_us = json.loads(calibration.stdout)["units_per_us"]
    cases = {"sampling_off": "off", "sampling_on": "on"}
    result = {"ranks": RANKS, "rounds": args.rounds, "band_seconds": args.seconds, "sampling_rate": args.rate,
              "units_per_us": units_per_us, "bands": {}}
    with tempfile.TemporaryDirectory(prefix="adaptrace-bench-compensation-") as scratch:
        for hz in BANDS_HZ:
            iterations = max(1, int(hz * args.seconds))
            work = int(units_per_us * max(0.0, 1e6 / hz - EXCHANGE_US))
            untraced = []
            traced = {case: [] for case in cases}
            figures = {case: {"measured": [], "model": [], "constant": []} for case in cases}
            counts = {}
            for round_index in range(args.rounds):
                untraced.append(run_program(args.build, iterations, work, False))
                for case, sampling in cases.items():
                    archive = os.path.join(scratch, f"{hz}-{case}-{round_index}")
                    traced[case].append(run_program(args.build, iterations, work, True, archive, sampling, args.rate))
                    for mode, key in ((None, "measured"), ("model", "model"), ("constant", "constant")):
                        seconds, compensation = loop_seconds(args.build, archive, mode)
                        figures[case][key].append(seconds)
                        if mode == "model":
                            counts[case] = {k: compensation[k] for k in ("over_compensated", "receive_floors",
                                                                         "waits_inherited", "causality_violations")}
                    shutil.rmtree(archive, ignore_errors=True)
            band = {"iterations": iterations, "work_units": work,
                    "untraced_noise_s": max(untraced) - min(untraced)}
            for case in cases:
                band[case] = band_summary(statistics.median(untraced), statistics.median(traced[case]),
                                          {k: statistics.median(v) for k, v in figures[case].items()})
                band[case]["model_counts_last_round"] = counts[case]
            result["bands"][f"{hz}_hz"] = band
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
