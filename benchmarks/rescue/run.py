#!/usr/bin/env python3
"""The rescue of a run that does not end cleanly (issue #10), against the
normal end-of-run write of the same data, in one invocation.

For each buffer size (16 MiB and 64 MiB per process by default), ROUNDS
times: adaptrace-bench-rescue on RANKS ranks fills every buffer to
FRACTION with MPI events (sampling off, so the whole buffer is events),
saves it from the snapshot signal's handler (timed inside the handler's
caller: the slowest rank), then ends normally (the runtime times its
write: summary.json's write_seconds). Then adaptrace-recover makes an
archive of the saved files (timed as a whole command). Medians per size.

Prints one JSON object: per size the median save, final write and
recovery times, the rescue file size, and the ratios save / final write
and recovery / final write.

usage: run.py BUILD_DIR [--ranks N] [--rounds N] [--fraction F] [--sizes 16M,64M]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def run_round(build, scratch, ranks, size, fraction, index):
    output = os.path.join(scratch, f"run-{size}-{index}")
    keep = os.path.join(scratch, f"kept-{size}-{index}")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               ADAPTRACE_OUTPUT=output, ADAPTRACE_BUFFER_SIZE=size, ADAPTRACE_SAMPLING="off",
               ADAPTRACE_SNAPSHOT_SIGNAL="USR2", ADAPTRACE_QUIET="on")
    command = ["mpirun", "--oversubscribe", "-np", str(ranks), os.path.join(build, "bin", "adaptrace"),
               os.path.join(build, "bin", "adaptrace-bench-rescue"), str(fraction), keep]
    run = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if run.returncode != 0:
        sys.exit(f"run.py: the traced run failed ({run.returncode}):\n{run.stderr}")
    measured = json.loads(run.stdout.strip().splitlines()[-1])
    summary = json.load(open(os.path.join(output, "summary.json")))
    if summary["flushes"] != 0 or summary["events_dropped"] != 0:
        sys.exit(f"run.py: the buffer of {size} overflowed (flushes or drops); lower --fraction")
    recovered = os.path.join(scratch, f"recovered-{size}-{index}")
    os.rename(keep, recovered + ".rescue")
    start = time.monotonic()
    recover = subprocess.run([os.path.join(build, "bin", "adaptrace-recover"), "--quiet", recovered],
                             capture_output=True, text=True, check=False)
    recover_seconds = time.monotonic() - start
    if recover.returncode != 0:
        sys.exit(f"run.py: adaptrace-recover failed:\n{recover.stderr}")
    recovered_summary = json.load(open(os.path.join(recovered, "summary.json")))
    # The clean run goes on after the snapshot: two MPI_Reduce and
    # MPI_Finalize, 10 event records per rank.
    after_snapshot = 10 * ranks
    if recovered_summary["mpi_events"] != summary["mpi_events"] - after_snapshot:
        sys.exit(f"run.py: recovered {recovered_summary['mpi_events']} MPI events, expected "
                 f"{summary['mpi_events']} - {after_snapshot}")
    for path in (output, recovered):
        shutil.rmtree(path)
    return {
        "save_seconds": measured["save_seconds_max"],
        "rescue_file_bytes": measured["rescue_file_bytes_max"],
        "final_write_seconds": summary["write_seconds"],
        "recover_seconds": recover_seconds,
        "mpi_events": summary["mpi_events"],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build")
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fraction", type=float, default=0.9)
    parser.add_argument("--sizes", default="16M,64M")
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="adaptrace-bench-rescue-") as scratch:
        for size in args.sizes.split(","):
            rounds = [run_round(args.build, scratch, args.ranks, size, args.fraction, i) for i in range(args.rounds)]
            median = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
            median["save_to_final_write"] = median["save_seconds"] / median["final_write_seconds"]
            median["recover_to_final_write"] = median["recover_seconds"] / median["final_write_seconds"]
            results[size] = median
    print(json.dumps({"ranks": args.ranks, "rounds": args.rounds, "fraction": args.fraction,
                      "per_buffer_size": results}, indent=2))


if __name__ == "__main__":
    main()
