#!/usr/bin/env python3
"""What sampling does to a program that sleeps (issue #11), untraced and
traced on every sampling clock, in one invocation.

The program is the tests' sleeping_calls: 300 nanosleep(1 ms), 3
poll(100 ms), 3 usleep(100 ms) and one sleep(1 s) on the main thread while
a second thread computes, then its own SIGALRM cuts a sleep(5) and a
poll(-1) short. It prints how many of its sleeping calls returned early.
For each configuration, ROUNDS runs: untraced; traced on the default cpu
clock (perf cpu-clock events); on the cpu clock with perf events refused
(the CPU-time timer fallback, LD_PRELOAD deny_perf_events); on the wall
clock. RATE is the initial sampling rate.

Prints one JSON object: per configuration the calls cut short (summed
over the rounds; untraced and every clock should be 0), whether the
program's own signal still interrupted it every time, the median run
time and its ratio to the untraced one, and the main thread's samples per
second asleep (from summary.json's per_location: the wall clock samples a
sleeping thread at its rate, the cpu clocks not at all).

usage: sleeping_calls.py BUILD_DIR [--rounds N] [--rate 1kHz] [--program PATH]
  --program: another build's sleeping_calls (to trace the same program
  with an older adaptrace).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ASLEEP_SECONDS = 0.3 + 0.3 + 0.3 + 1.0 + 0.1 + 0.1
CUT_SHORT = ("nanosleep_eintr", "poll_eintr", "usleep_eintr", "sleep_left")
OWN_SIGNAL = ("own_signal_sleep_cut", "own_signal_poll_eintr")


def run_once(build, program, scratch, configuration, rate, index):
    env = dict(os.environ, ADAPTRACE_QUIET="on", ADAPTRACE_SAMPLING_RATE=rate)
    env.pop("ADAPTRACE_SAMPLING_CLOCK", None)
    command = [program]
    output = os.path.join(scratch, f"{configuration}-{index}")
    if configuration != "untraced":
        command = [os.path.join(build, "bin", "adaptrace"), program]
        env["ADAPTRACE_OUTPUT"] = output
    if configuration == "cpu-no-perf":
        env["LD_PRELOAD"] = os.path.join(build, "lib", "libdeny_perf_events.so")
    if configuration == "wall":
        env["ADAPTRACE_SAMPLING_CLOCK"] = "wall"
    start = time.monotonic()
    run = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - start
    if run.returncode != 0:
        sys.exit(f"sleeping_calls.py: {configuration} failed ({run.returncode}):\n{run.stderr}")
    words = run.stdout.split()
    counts = {words[i]: int(words[i + 1]) for i in range(0, len(words) - 1, 2)}
    main_samples = None
    if configuration != "untraced":
        with open(os.path.join(output, "summary.json")) as stream:
            locations = json.load(stream)["per_location"]
        main_samples = [entry for entry in locations if entry["thread"] == 0][0]["samples_taken"]
    return counts, seconds, main_samples


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rate", default="1kHz")
    parser.add_argument("--program")
    args = parser.parse_args()
    program = args.program or os.path.join(args.build, "bin", "sleeping_calls")
    configurations = ["untraced", "cpu", "cpu-no-perf", "wall"]
    results = {c: {"cut_short": 0, "own_signal_interrupted_every_time": True, "seconds": [], "main_samples": []}
               for c in configurations}
    with tempfile.TemporaryDirectory(prefix="adaptrace-sleeping-") as scratch:
        for index in range(args.rounds):
            for configuration in configurations:
                counts, seconds, main_samples = run_once(args.build, program, scratch, configuration, args.rate, index)
                result = results[configuration]
                result["cut_short"] += sum(counts[name] for name in CUT_SHORT)
                result["own_signal_interrupted_every_time"] &= all(counts[name] == 1 for name in OWN_SIGNAL)
                result["seconds"].append(seconds)
                if main_samples is not None:
                    result["main_samples"].append(main_samples)
    untraced = statistics.median(results["untraced"]["seconds"])
    report = {"rounds": args.rounds, "rate": args.rate, "asleep_seconds_per_run": ASLEEP_SECONDS}
    for configuration, result in results.items():
        median = statistics.median(result["seconds"])
        entry = {"cut_short": result["cut_short"],
                 "own_signal_interrupted_every_time": result["own_signal_interrupted_every_time"],
                 "median_seconds": round(median, 3), "time_ratio_to_untraced": round(median / untraced, 3)}
        if result["main_samples"]:
            entry["main_thread_samples_per_second_asleep"] = round(
                statistics.median(result["main_samples"]) / ASLEEP_SECONDS, 1)
        report[configuration] = entry
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
