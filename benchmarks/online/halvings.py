#!/usr/bin/python3
"""Halvings with and without an analyzer (issue #28), side by side in one
invocation: two MPI-event-heavy programs on 2 ranks, each run offline,
with ADAPTRACE_ONLINE_OUTPUT=profile and 1 analyzer, and with
ADAPTRACE_ONLINE_OUTPUT=trace (the default) and 1 analyzer (the ranks'
full event chunks streamed during the run, their main threads' samples
in them, the archive written by the analyzer), on a buffer small enough that the offline run halves its
sampling rate 4 times or more:

  sendrecv  mpi-fold-sendrecv ITERATIONS (tests/mpi/fold_sendrecv.c, the
            program of benchmarks/mpi/fold.py: rank 0 sends rank 1
            ITERATIONS 8-byte messages, 10^6 by default);
  demo      adaptrace-demo DEMO_ITERATIONS 256 (Jacobi halo exchange and
            reductions) at 10 kHz;
  threads   online-threads THREAD_ROUNDS (tests/online/threads.c: under
            MPI_THREAD_MULTIPLE the main thread and 2 threads of each rank
            exchange THREAD_ROUNDS messages with the other rank, 3000 by
            default): other threads' full event chunks handed to the main
            thread, which streams them (issue #28, other threads stream
            too); their samples still go to their levels.

Per program and case, from summary.json and the run: the buffer's halvings
(over both ranks, and the most on one location), the halvings for overload
(a handler that could not keep up: the machine's load, not the buffer's),
the final sampling rate (the mean over locations, and the lowest), the
flushes, the MPI events the buffers held, the samples kept (in the
archive where one is written) and the time they stand for, the calls
streamed and sent as totals, the samples streamed (and not, by cause),
the buffers' event chunks streamed (and not, by cause; those of other
threads than the main one apart), and the
wall time of the whole mpirun; and each online case's wall time over the
offline one's. The cases of a program run one after the
other, once each.

Prints one JSON object.

usage: halvings.py BUILD_DIR [--iterations N] [--demo-iterations N] [--thread-rounds N] [--buffer SIZE]
                   [--rate RATE]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CASES = ("offline", "profile", "trace")


def run_once(build, case, program, arguments, buffer, rate, archive):
    # OMPI_MCA_btl_tcp_if_include: see tests/online/check_online.py.
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_tcp_if_include="lo", ADAPTRACE_QUIET="on", ADAPTRACE_BUFFER_SIZE=buffer,
               ADAPTRACE_SAMPLING_RATE=rate)
    launcher = [os.path.join(build, "bin", "adaptrace"), "--output", archive]
    if case != "offline":
        launcher += ["--analyzers", "1", "--online-output", case]
    command = ["mpirun", "--oversubscribe", "-np", "2"] + launcher + [os.path.join(build, "bin", program)] + arguments
    started = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"halvings.py: {' '.join(command)} failed with status {done.returncode}:\n{done.stderr}")
    return seconds


def describe(archive, seconds):
    summary = json.load(open(os.path.join(archive, "summary.json")))
    rates = [location["rate_hz"] for location in summary["per_location"]]
    return {
        "buffer_halvings": summary["halvings"] - summary["overload_halvings"],
        "overload_halvings": summary["overload_halvings"],
        "most_halvings_per_location": summary["most_halvings_per_location"],
        "initial_rate_hz": summary["initial_rate_hz"],
        "final_rate_hz": summary["final_rate_hz"],
        "lowest_final_rate_hz": min(rates),
        "flushes": summary["flushes"],
        "mpi_events_in_buffers": summary["mpi_events"],
        "calls_streamed": summary["online_calls_streamed"],
        "calls_sent_as_totals": summary["online_calls_sent_as_totals"],
        "calls_not_streamed_by_cause": summary["online_calls_not_streamed_by_cause"],
        "samples_kept": summary["samples_kept"],
        "sampled_seconds": round(sum(location["sampled_s"] for location in summary["per_location"]), 3),
        "samples_streamed": summary["online_samples_streamed"],
        "samples_not_streamed_by_cause": summary["online_samples_not_streamed_by_cause"],
        "event_chunks_streamed": summary["online_event_chunks_streamed"],
        "thread_event_chunks_streamed": summary["online_thread_event_chunks_streamed"],
        "event_mib_streamed": round(summary["online_event_bytes_streamed"] / 2**20, 1),
        "event_chunks_not_streamed_by_cause": summary["online_event_chunks_not_streamed_by_cause"],
        "events_folded": summary["events_folded"],
        "trace_written": os.path.exists(os.path.join(archive, "traces.otf2")),
        "wall_seconds": round(seconds, 3),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build")
    parser.add_argument("--iterations", type=int, default=1000000)
    parser.add_argument("--demo-iterations", type=int, default=3000)
    parser.add_argument("--thread-rounds", type=int, default=3000)
    parser.add_argument("--buffer", default="64K")
    parser.add_argument("--rate", default="10kHz")
    options = parser.parse_args()
    build = os.path.abspath(options.build)
    programs = {
        "sendrecv": ("mpi-fold-sendrecv", [str(options.iterations)]),
        "demo": ("adaptrace-demo", [str(options.demo_iterations), "256"]),
        "threads": ("online-threads", [str(options.thread_rounds)]),
    }
    result = {"ranks": 2, "analyzers": 1, "buffer": options.buffer, "rate": options.rate,
              "iterations": options.iterations, "demo_iterations": options.demo_iterations,
              "thread_rounds": options.thread_rounds}
    with tempfile.TemporaryDirectory(prefix="adt-online-halvings-") as scratch:
        for name, (program, arguments) in programs.items():
            figures = {}
            for case in CASES:
                archive = os.path.join(scratch, f"{name}-{case}")
                seconds = run_once(build, case, program, arguments, options.buffer, options.rate, archive)
                figures[case] = describe(archive, seconds)
            for case in CASES[1:]:
                figures[f"{case}_over_offline_wall"] = round(
                    figures[case]["wall_seconds"] / figures["offline"]["wall_seconds"], 3)
            result[name] = figures
    json.dump(result, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
