#!/usr/bin/python3
"""Whole-run tests of the MPMD launch of analyzers (issue #28): the
application and adaptrace-analyzer started by one mpirun, sharing
MPI_COMM_WORLD, which adaptrace narrows to the application's processes.

usage: check_mpmd.py CASE RUN_DIR MPIEXEC LAUNCHER PROGRAM REPORT OTF2_PRINT

CASE:
  world  PROGRAM (tests/online/world.c: MPI_COMM_WORLD's size and rank,
         collectives and point-to-point on it, MPI_Comm_dup, split,
         compare and group of it, its name, Fortran handle, attributes
         and error handler) on 2 ranks beside 1 analyzer writes what it
         found exactly as untraced; rank 0 says in one line that the job
         holds 1 analyzer; the archive holds 2 ranks' locations and a
         2-member MPI_COMM_WORLD and passes otf2-print --silent -Werror;
         the final live report equals adaptrace-report on the archive
         (check_online.py's comparison: calls, bytes, times, samples);
  fortran  the same for PROGRAM tests/online/world_fortran.F90, the
         Fortran twin of world.c, through use mpi (the mpif.h entry points);
  f08    the same for that program through the mpi_f08 module;
  idle   1 rank beside 2 analyzers: one of them serves no rank, the line
         says so, and the live report of the one rank is final;
  unmeasured  libadaptrace.so preloaded into the application with a bad
         ADAPTRACE_* value: adaptrace does not measure it, its world is
         narrowed all the same (the files equal the untraced run's), and
         the analyzer is let go (one line);
  preloaded  libadaptrace.so preloaded into the analyzer too: it stays
         inert there, the application sees its 2 processes and the live
         report of both ranks is final;
  alone  adaptrace-analyzer started without application processes: it
         says so in one line and exits with status 2.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_online  # noqa: E402
from check_online import ENVIRONMENT, WATCHDOG, WATCHDOG_S, fail, read_live, run  # noqa: E402


def analyzer_of(launcher):
    return os.path.join(os.path.dirname(launcher), "adaptrace-analyzer")


def mpmd(mpiexec, launcher, archive, arguments, ranks, analyzers):
    """mpirun -np RANKS adaptrace PROGRAM : -np ANALYZERS adaptrace-analyzer"""
    return [WATCHDOG, str(WATCHDOG_S), mpiexec, "--oversubscribe", "-np", str(ranks), launcher, "--output", archive,
            *arguments, ":", "-np", str(analyzers), analyzer_of(launcher)]


def rank_files(directory):
    return {name: open(os.path.join(directory, name)).read() for name in sorted(os.listdir(directory))}


def archive_world(archive):
    """The ranks of the archive's locations and the members of its
    MPI_COMM_WORLD, read with python3-otf2."""
    import otf2
    with otf2.reader.open(os.path.join(archive, "traces.otf2")) as trace:
        ranks = sorted({int(location.group.name.rsplit(" ", 1)[-1]) for location in trace.definitions.locations})
        worlds = [comm for comm in trace.definitions.comms if comm.name == "MPI_COMM_WORLD"]
        if len(worlds) != 1:
            fail(f"{len(worlds)} MPI_COMM_WORLD definitions in the archive")
        return ranks, len(worlds[0].group.members)


def run_untraced(run_dir, mpiexec, program):
    """Runs program untraced on 2 ranks, writing what it notes into
    run_dir/untraced; returns that folder and run_dir/traced, made for the
    traced run to note into, which is compared with it."""
    untraced, traced = os.path.join(run_dir, "untraced"), os.path.join(run_dir, "traced")
    os.makedirs(untraced)
    os.makedirs(traced)
    subprocess.run([WATCHDOG, str(WATCHDOG_S), mpiexec, "--oversubscribe", "-np", "2", program, untraced],
                   env=ENVIRONMENT, check=True, timeout=check_online.RUN_LIMIT_S)
    return untraced, traced


def check_world(run_dir, mpiexec, launcher, program, report, otf2_print,
                functions=("MPI_Allreduce", "MPI_Bcast", "MPI_Sendrecv", "MPI_Comm_dup", "MPI_Comm_split",
                           "MPI_Comm_group", "MPI_Comm_compare")):
    untraced, traced = run_untraced(run_dir, mpiexec, program)
    archive = os.path.join(run_dir, "archive")
    check_online.check_equal(run_dir, mpiexec, launcher, program, report, otf2_print,
                             expected_functions=functions,
                             command=mpmd(mpiexec, launcher, archive, [program, traced], ranks=2, analyzers=1),
                             # each rank's send to rank `size` (no rank: MPI_ERR_RANK)
                             receivers_unknown=2)
    stderr = open(os.path.join(run_dir, "stderr.txt")).read()
    lines = [line for line in stderr.splitlines() if "analyzer" in line and "MPMD" in line]
    if len(lines) != 1 or "1 analyzer in this job's MPI_COMM_WORLD" not in lines[0] or "its 2 processes" not in lines[0]:
        fail(f"expected one line on the MPMD launch's 1 analyzer and 2 processes, found {lines}")
    expected, found = rank_files(untraced), rank_files(traced)
    if found != expected:
        fail(f"the application found {found} in the MPMD launch, {expected} untraced")
    ranks, members = archive_world(archive)
    if ranks != [0, 1] or members != 2:
        fail(f"the archive's locations are of ranks {ranks}, its MPI_COMM_WORLD has {members} members")
    print(f"{lines[0]}\nthe application saw what it sees untraced: {len(expected)} ranks, "
          f"{expected['rank0.txt'].count(chr(10))} lines each; archive of ranks {ranks}")


def check_fortran(run_dir, mpiexec, launcher, program, report, otf2_print):
    """world with the Fortran twin of world.c through use mpi: its calls reach
    adaptrace's Fortran entry points with Fortran handles."""
    check_world(run_dir, mpiexec, launcher, program, report, otf2_print,
                functions=("MPI_Allreduce", "MPI_Bcast", "MPI_Sendrecv", "MPI_Comm_dup", "MPI_Comm_split",
                           "MPI_Comm_group", "MPI_Cart_create", "MPI_Comm_set_errhandler"))


def check_f08(run_dir, mpiexec, launcher, program, report, otf2_print):
    """world with the same Fortran program through the mpi_f08 module."""
    check_fortran(run_dir, mpiexec, launcher, program, report, otf2_print)


def check_idle(run_dir, mpiexec, launcher, program, report, otf2_print):
    archive = os.path.join(run_dir, "archive")
    out = os.path.join(run_dir, "out")
    os.makedirs(out)
    stderr = run(mpmd(mpiexec, launcher, archive, [program, out], ranks=1, analyzers=2), run_dir)
    lines = [line for line in stderr.splitlines() if "MPMD" in line]
    if len(lines) != 1 or "2 analyzers" not in lines[0] or "1 of them serve no rank" not in lines[0]:
        fail(f"expected one line on 2 analyzers, 1 serving no rank, found {lines}")
    check_online.check_archive(archive, otf2_print)
    live = read_live(archive)
    if live is None or not live["final"] or live["finished_ranks"] != [0] or live["analyzers"] != 2:
        fail(f"no final live report of rank 0 from 2 analyzers: {live}")
    if "size 1 rank 0" not in open(os.path.join(out, "rank0.txt")).read():
        fail("the application did not see a world of 1 process")
    print(lines[0])


def check_unmeasured(run_dir, mpiexec, launcher, program, report, otf2_print):
    """libadaptrace.so preloaded into the application with a bad
    ADAPTRACE_* value (adaptrace does not measure it): its world is
    narrowed all the same, and the analyzer is let go."""
    untraced, traced = run_untraced(run_dir, mpiexec, program)
    library = os.path.join(os.path.dirname(launcher), "..", "lib", "libadaptrace.so")
    stderr = run([WATCHDOG, str(WATCHDOG_S), mpiexec, "--oversubscribe", "-np", "2", "env", f"LD_PRELOAD={library}",
                  "ADAPTRACE_SAMPLING_RATE=fast", program, traced, ":", "-np", "1", analyzer_of(launcher)], run_dir)
    lines = [line for line in stderr.splitlines() if "MPMD" in line]
    if len(lines) != 1 or "nothing to analyze" not in lines[0] or "its 2 processes" not in lines[0]:
        fail(f"expected one line saying the analyzer has nothing to analyze, found {lines}")
    expected, found = rank_files(untraced), rank_files(traced)
    if found != expected:
        fail(f"the application found {found} in the MPMD launch, {expected} untraced")
    print(lines[0])


def check_preloaded(run_dir, mpiexec, launcher, program, report, otf2_print):
    """libadaptrace.so preloaded into the analyzer too (a job script that
    exports LD_PRELOAD to every task): it stays inert there, and the
    analyzer joins the launch as an analyzer, not as an application
    process."""
    untraced, traced = run_untraced(run_dir, mpiexec, program)
    archive = os.path.join(run_dir, "archive")
    library = os.path.join(os.path.dirname(launcher), "..", "lib", "libadaptrace.so")
    command = mpmd(mpiexec, launcher, archive, [program, traced], ranks=2, analyzers=1)
    command[-1:-1] = ["env", f"LD_PRELOAD={library}"]
    stderr = run(command, run_dir)
    lines = [line for line in stderr.splitlines() if "MPMD" in line]
    if len(lines) != 1 or "1 analyzer in this job's MPI_COMM_WORLD" not in lines[0]:
        fail(f"expected rank 0's one line on 1 analyzer, found {lines}")
    if rank_files(traced) != rank_files(untraced):
        fail(f"the application found {rank_files(traced)} in the MPMD launch, {rank_files(untraced)} untraced")
    check_online.check_archive(archive, otf2_print)
    live = read_live(archive)
    if live is None or not live["final"] or live["finished_ranks"] != [0, 1]:
        fail(f"no final live report of both ranks: {live}")
    print(lines[0])


def check_alone(run_dir, mpiexec, launcher, program, report, otf2_print):
    stderr = run([WATCHDOG, str(WATCHDOG_S), mpiexec, "--oversubscribe", "-np", "2", analyzer_of(launcher)], run_dir,
                 expect_status=2)
    lines = [line for line in stderr.splitlines() if line.startswith("adaptrace-analyzer")]
    if len(lines) != 1 or "no application process" not in lines[0]:
        fail(f"expected one line saying the job holds no application process, found {lines}")
    print(lines[0])


CASES = {"world": check_world, "fortran": check_fortran, "f08": check_f08, "idle": check_idle, "unmeasured": check_unmeasured,
         "preloaded": check_preloaded,
         "alone": check_alone}

if __name__ == "__main__":
    if len(sys.argv) != 8 or sys.argv[1] not in CASES:
        sys.exit(__doc__)
    case, run_dir = sys.argv[1], sys.argv[2]
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    CASES[case](run_dir, *sys.argv[3:])
