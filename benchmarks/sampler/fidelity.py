#!/usr/bin/env python3
"""How right the sampled profile of a periodic program is, per initial rate
and number of halvings (issue #13), in one invocation.

The program is the tests' three_functions in its periodic form: rounds of
ROUND_MS ms of CPU time spend 50 % in kernel_half, 30 % in
kernel_three_tenths and 20 % in kernel_fifth, and the program writes the
CPU time it really spent in each (the truth). Each case traces it through
the launcher on the default cpu clock with a fixed buffer, so that the
halvings come from memory alone, and from an initial rate chosen so that
the rates after the halvings meet the round: f0 / 2^k = 1 / round (every
retained sample one round apart), 2 / round (half a round apart, the case
that hid kernel_three_tenths completely before dithering) and ratios that
are not powers of two.

Prints one JSON object: per case the halvings the thread went through,
the samples of the three functions kept, each function's share of them
(weighted by the period each sample stands for, as adaptrace-report
computes it) against the truth, the largest error in percentage points and
that error in units of the standard error of independent samples,
sqrt(p (1 - p) / n). The default cases keep 5,000-10,000 samples each,
enough for the 2-point target (about 1.5 standard errors at n = 10^4 for
the 50 % share); they take ~3 minutes of CPU time in all.

usage: fidelity.py BUILD_DIR [--smoke] [--case NAME ...]
  --smoke: one short case with a small buffer, to check that the
  benchmark runs (the suite's benchmark.fidelity.smoke).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

ROUND_MS = 10
FUNCTIONS = ("kernel_half", "kernel_three_tenths", "kernel_fifth")

# name: (initial rate in Hz, buffer, CPU seconds, threads). The buffer and
# the CPU time set the halvings (each needs about buffer-capacity x 2^(k-1)
# / f0 seconds); the comment says where the survivors' spacing lands.
CASES = {
    # f0 / 2^3 = 200 Hz: survivors half a round apart (the case).
    "1600Hz-half-round": (1600, "512K", 40, 1),
    # f0 / 2^3 = 100 Hz: survivors one round apart.
    "800Hz-round": (800, "256K", 40, 1),
    # f0 / 2^5 = 100 Hz after five halvings.
    "3200Hz-round-after-5": (3200, "256K", 40, 1),
    # f0 / 2^3 = 150 Hz: survivors 2/3 of a round apart; two threads.
    "1200Hz-two-thirds-round": (1200, "512K", 40, 2),
}
SMOKE = {"smoke-1600Hz": (1600, "64K", 2, 1)}


def run_case(build, scratch, name, rate, buffer, seconds, threads):
    archive = os.path.join(scratch, name)
    truth_file = os.path.join(scratch, name + ".truth")
    command = [os.path.join(build, "bin", "adaptrace"), "--buffer-size", buffer,
               "--sampling-rate", str(rate), "--output", archive,
               os.path.join(build, "bin", "three_functions"), str(threads), str(seconds),
               truth_file, str(ROUND_MS)]
    env = dict(os.environ, ADAPTRACE_QUIET="on")
    env.pop("ADAPTRACE_SAMPLING_CLOCK", None)
    subprocess.run(command, env=env, check=True)

    truth = [0, 0, 0]
    with open(truth_file) as lines:
        for line in lines:
            for i, ns in enumerate(line.split()[1:4]):
                truth[i] += int(ns)
    report = json.loads(subprocess.run(
        [os.path.join(build, "bin", "adaptrace-report"), "--json", archive],
        check=True, capture_output=True, text=True).stdout)
    sampled = {f["name"]: f["inclusive_seconds"] for f in report["sampled_functions"]}
    with open(os.path.join(archive, "summary.json")) as f:
        summary = json.load(f)

    # Samples in the three functions: the kept samples in the proportion
    # of the sampled time the three functions hold.
    in_functions = sum(sampled.get(name, 0.0) for name in FUNCTIONS)
    kept_in_all = sum(location["samples_kept"] for location in summary["per_location"])
    kept = round(kept_in_all * in_functions / report["sampled_seconds"]) if report["sampled_seconds"] else 0
    shares, errors = {}, []
    for i, name in enumerate(FUNCTIONS):
        true_share = truth[i] / sum(truth)
        share = sampled.get(name, 0.0) / in_functions if in_functions else 0.0
        standard_error = math.sqrt(true_share * (1 - true_share) / kept) if kept else math.inf
        shares[name] = {"truth_pct": round(100 * true_share, 2), "sampled_pct": round(100 * share, 2)}
        errors.append((abs(share - true_share), standard_error))
    worst = max(errors)
    return {
        "initial_rate_hz": rate,
        "buffer": buffer,
        "threads": threads,
        "halvings_per_location": [loc["halvings"] for loc in summary["per_location"]],
        "overload_halvings": summary["overload_halvings"],
        "final_rate_hz": summary["final_rate_hz"],
        "survivor_spacing_ms": round(1000 / summary["final_rate_hz"], 3),
        "samples_in_functions": kept,
        "shares": shares,
        "max_error_pp": round(100 * worst[0], 2),
        "max_error_in_standard_errors": round(worst[0] / worst[1], 2),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--case", action="append", choices=sorted(CASES))
    args = parser.parse_args()
    cases = SMOKE if args.smoke else {name: CASES[name] for name in (args.case or CASES)}
    results = {}
    with tempfile.TemporaryDirectory(prefix="adt-fidelity-") as scratch:
        for name, (rate, buffer, seconds, threads) in cases.items():
            results[name] = run_case(args.build, scratch, name, rate, buffer, seconds, threads)
    json.dump({"round_ms": ROUND_MS, "cases": results}, sys.stdout, indent=1)
    print()
    broken = [name for name, r in results.items() if r["samples_in_functions"] == 0]
    if broken:
        print(f"fidelity.py: no samples in the three functions: {', '.join(broken)}", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
