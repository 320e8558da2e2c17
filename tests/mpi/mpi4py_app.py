"""The mpi4py test program for the whole-run tests, run with Debian's
/usr/bin/python3 (python3-mpi4py) under the adaptrace launcher.

mpi4py starts MPI with MPI_Init_thread when it is imported and finalizes
from atexit. Every MPI operation the program makes goes through call(),
which notes the MPI functions that mpi4py 3.1 (Debian 12) makes for it, read
from its sources and from traces; before exiting each rank writes
EXPECT_DIR/rank.<r>.txt in the format of expect_notes.h, for
adaptrace-mpi-trace-check. The pickled allreduce is left out: mpi4py 3.1
runs it as a rank-dependent tree of sends and receives on a private
duplicate of the communicator, so the buffer form (Allreduce) is used. Any
number of ranks from 2.

usage: python3 mpi4py_app.py EXPECT_DIR
"""
import array
import sys

from mpi4py import MPI

# What importing mpi4py.MPI calls (the error handlers: MPI_ERRORS_RETURN on
# MPI_COMM_SELF and MPI_COMM_WORLD), and what its atexit handler calls.
STARTUP = ["MPI_Initialized", "MPI_Init_thread", "MPI_Initialized", "MPI_Finalized",
           "MPI_Comm_set_errhandler", "MPI_Comm_set_errhandler"]
# What mpi4py asks of a buffer argument's datatype.
EXTENT = "MPI_Type_get_extent"
SHUTDOWN = ["MPI_Initialized", "MPI_Finalized", "MPI_Initialized", "MPI_Finalized",
            "MPI_Finalize"]

notes = ["call " + name for name in STARTUP]


def call(mpi_functions, operation, *args, **kwargs):
    """Notes the MPI functions one mpi4py operation makes, then makes it."""
    notes.extend("call " + name for name in mpi_functions)
    return operation(*args, **kwargs)


def note_members(first, step, count):
    notes.append("members " + " ".join(str(first + i * step) for i in range(count)))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: mpi4py_app.py EXPECT_DIR")
    expect_dir = sys.argv[1]
    world = MPI.COMM_WORLD
    rank = call(["MPI_Comm_rank"], world.Get_rank)
    size = call(["MPI_Comm_size"], world.Get_size)
    left, right = (rank + size - 1) % size, (rank + 1) % size

    # Pickled point-to-point: blocking, then nonblocking.
    call(["MPI_Send"], world.send, {"from": rank}, dest=right, tag=1)
    got = call(["MPI_Mprobe", "MPI_Get_count", "MPI_Mrecv"], world.recv, source=MPI.ANY_SOURCE, tag=1)
    assert got == {"from": left}, got
    receive = call(["MPI_Irecv"], world.irecv, source=left, tag=2)
    send = call(["MPI_Isend"], world.isend, [rank] * 3, dest=right, tag=2)
    call(["MPI_Wait"], send.wait)
    got = call(["MPI_Wait", "MPI_Get_count"], receive.wait)
    assert got == [left] * 3, got

    # Buffer point-to-point on typed arrays (no numpy needed).
    out = array.array("d", [float(rank)] * 4)
    into = array.array("d", [0.0] * 4)
    call([EXTENT, EXTENT, "MPI_Sendrecv"], world.Sendrecv, out, right, 3, into, left, 3)
    assert list(into) == [float(left)] * 4, into
    requests = [call([EXTENT, "MPI_Irecv"], world.Irecv, into, source=left, tag=4),
                call([EXTENT, "MPI_Isend"], world.Isend, out, dest=right, tag=4)]
    call(["MPI_Waitall"], MPI.Request.Waitall, requests)

    # Collectives.
    # The first pickled collective on a communicator caches a context in an
    # attribute of it.
    value = call(["MPI_Comm_test_inter", "MPI_Comm_rank", "MPI_Comm_create_keyval", "MPI_Comm_set_attr",
                  "MPI_Comm_get_attr", "MPI_Comm_set_attr", "MPI_Bcast", "MPI_Bcast"],
                 world.bcast, {"root": size - 1}, root=size - 1)
    assert value == {"root": size - 1}, value
    total = array.array("i", [0])
    call(["MPI_Comm_test_inter", EXTENT, EXTENT, "MPI_Allreduce"], world.Allreduce, array.array("i", [rank]), total,
         op=MPI.SUM)
    note_members(0, 1, size)
    assert total[0] == size * (size - 1) // 2, total
    call(["MPI_Barrier"], world.Barrier)

    # A sub-communicator of the ranks of equal parity.
    parity = rank % 2
    same_parity = call(["MPI_Comm_split", "MPI_Comm_set_errhandler"], world.Split, parity, rank)
    sub_total = array.array("i", [0])
    call(["MPI_Comm_test_inter", EXTENT, EXTENT, "MPI_Allreduce"], same_parity.Allreduce, array.array("i", [rank]),
         sub_total, op=MPI.SUM)
    members = (size - parity + 1) // 2
    note_members(parity, 2, members)
    assert sub_total[0] == sum(range(parity, size, 2)), sub_total
    call(["MPI_Comm_free"], same_parity.Free)

    notes.extend("call " + name for name in SHUTDOWN)
    with open(f"{expect_dir}/rank.{rank}.txt", "w") as file:
        file.write("\n".join(notes) + "\n")


main()
