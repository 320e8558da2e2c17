#!/usr/bin/env python3
"""The skeleton's size and cost (issue #25), measured side by side in one
invocation.

1. Bytes: adaptrace-demo on 4 ranks (16x16 per rank, sampling off) for
   250, 1000 and 4000 iterations, and on 4, 9 and 16 ranks (oversubscribed)
   for RANK_ITERATIONS: skeleton.adts against the OTF2 archive
   (traces.otf2, traces.def, traces/) and against the archive compressed
   with xz -9, and the skeleton's classes of equal ranks.
2. Cost: the 0-byte ping-pong (adaptrace-bench-pingpong, 2 ranks, sampling
   off) with ADAPTRACE_SKELETON=on and =off, alternating case by case for
   ROUNDS rounds; the median half round trip of each, and the difference
   in ns. Each half round trip has one MPI call returning on its critical
   path (the receive that ends it; the send that starts the next one has
   its fold after the message left), so the difference is what folding
   adds to one call. On a shared machine the ping-pong's wall time mostly
   measures the scheduler, so:
3. Cost in CPU time: adaptrace-bench-self-calls (1 rank: MPI_Irecv,
   MPI_Send, MPI_Wait to itself, and MPI_Comm_rank alone), folding on and
   off, alternating, medians: ns per call and the difference.

Prints one JSON object.

usage: skeleton.py BUILD_DIR [--rounds N] [--iterations N] [--rank-iterations N]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ITERATIONS = (250, 1000, 4000)
RANKS = (4, 9, 16)


def environment(output, skeleton):
    return dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                ADAPTRACE_SAMPLING="off", ADAPTRACE_OUTPUT=output, ADAPTRACE_QUIET="on",
                ADAPTRACE_SKELETON=skeleton)


def run(command, env):
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"skeleton.py: {' '.join(command)} failed with status {done.returncode}:\n{done.stderr}")
    return done.stdout


def archive_bytes(archive):
    total = 0
    for name in ("traces.otf2", "traces.def"):
        total += os.path.getsize(os.path.join(archive, name))
    for root, _, files in os.walk(os.path.join(archive, "traces")):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


def xz_bytes(archive):
    tar = subprocess.run(["tar", "-C", archive, "-cf", "-", "traces.otf2", "traces.def", "traces"],
                         capture_output=True, check=True).stdout
    return len(subprocess.run(["xz", "-9", "-T1", "-c"], input=tar, capture_output=True, check=True).stdout)


def demo_sizes(build, scratch, ranks, iterations):
    output = os.path.join(scratch, f"demo-{ranks}-{iterations}")
    run(["mpirun", "--oversubscribe", "-np", str(ranks), os.path.join(build, "bin", "adaptrace"),
         os.path.join(build, "bin", "adaptrace-demo"), str(iterations), "16"], environment(output, "on"))
    with open(os.path.join(output, "summary.json")) as file:
        summary = json.load(file)
    listing = run([os.path.join(build, "bin", "adaptrace-report"), "--skeleton", output], os.environ)
    result = {
        "mpi_events": summary["mpi_events"],
        "calls_folded": summary["skeleton_calls"],
        "skeleton_classes": sum(1 for line in listing.splitlines() if line.startswith("rank")),
        "skeleton_bytes": os.path.getsize(os.path.join(output, "skeleton.adts")),
        "otf2_bytes": archive_bytes(output),
        "otf2_xz9_bytes": xz_bytes(output),
    }
    shutil.rmtree(output, ignore_errors=True)
    return result


def pingpong(build, scratch, rounds, iterations):
    results = {"on": [], "off": []}
    for round_index in range(rounds):
        for skeleton in results:
            output = os.path.join(scratch, f"pingpong-{skeleton}-{round_index}")
            out = run(["mpirun", "--oversubscribe", "-np", "2", os.path.join(build, "bin", "adaptrace"),
                       os.path.join(build, "bin", "adaptrace-bench-pingpong"), str(iterations)],
                      environment(output, skeleton))
            results[skeleton].append(json.loads(out.strip().splitlines()[-1])["half_rtt_us"]["0"])
            shutil.rmtree(output, ignore_errors=True)
    return {skeleton: statistics.median(values) for skeleton, values in results.items()}


def self_calls(build, scratch, rounds, iterations):
    results = {"on": [], "off": []}
    for round_index in range(rounds):
        for skeleton in results:
            output = os.path.join(scratch, f"self-{skeleton}-{round_index}")
            out = run(["mpirun", "--oversubscribe", "-np", "1", os.path.join(build, "bin", "adaptrace"),
                       os.path.join(build, "bin", "adaptrace-bench-self-calls"), str(iterations)],
                      environment(output, skeleton))
            results[skeleton].append(json.loads(out.strip().splitlines()[-1])["ns_per_call"])
            shutil.rmtree(output, ignore_errors=True)
    medians = {skeleton: {loop: statistics.median(r[loop] for r in values) for loop in values[0]}
               for skeleton, values in results.items()}
    return {"ns_per_call": medians,
            "added_ns_per_call": {loop: medians["on"][loop] - medians["off"][loop] for loop in medians["on"]}}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", help="build directory (bin/adaptrace, bin/adaptrace-demo, "
                                      "bin/adaptrace-bench-pingpong, lib/libadaptrace.so)")
    parser.add_argument("--rounds", type=int, default=5, help="ping-pong rounds per case (5)")
    parser.add_argument("--iterations", type=int, default=20000, help="round trips per ping-pong run (20000)")
    parser.add_argument("--rank-iterations", type=int, default=250,
                        help="the demo's iterations at 4, 9 and 16 ranks (250)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="adaptrace-bench-skeleton-") as scratch:
        by_iterations = {str(n): demo_sizes(args.build, scratch, 4, n) for n in ITERATIONS}
        by_ranks = {str(p): demo_sizes(args.build, scratch, p, args.rank_iterations) for p in RANKS}
        half_rtt = pingpong(args.build, scratch, args.rounds, args.iterations)
        cpu = self_calls(args.build, scratch, args.rounds, 50000)
    first, last = by_iterations[str(ITERATIONS[0])], by_iterations[str(ITERATIONS[-1])]
    print(json.dumps({
        "demo": {
            "ranks": 4,
            "by_iterations": by_iterations,
            "skeleton_growth": last["skeleton_bytes"] / first["skeleton_bytes"],
            "otf2_growth": last["otf2_bytes"] / first["otf2_bytes"],
            "iterations_by_ranks": args.rank_iterations,
            "by_ranks": by_ranks,
            "skeleton_growth_9_to_16_ranks": by_ranks["16"]["skeleton_bytes"] / by_ranks["9"]["skeleton_bytes"],
        },
        "pingpong": {
            "ranks": 2,
            "rounds": args.rounds,
            "iterations": args.iterations,
            "half_rtt_us": half_rtt,
            "added_ns_per_call": (half_rtt["on"] - half_rtt["off"]) * 1000.0,
        },
        "self_calls": dict(cpu, iterations=50000, rounds=args.rounds),
        "targets": ["demo.skeleton_growth <= 1.5 (16x the iterations)",
                    "demo.skeleton_growth_9_to_16_ranks <= 2 (the issue asks 9 to 25)", "pingpong.added_ns_per_call <= 20",
                    "self_calls.added_ns_per_call <= 20"],
    }, indent=2))


if __name__ == "__main__":
    main()
