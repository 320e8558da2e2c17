// A C++ MPI program for the whole-run tests: the MPI C API used the way
// C++ codes use it (Open MPI has no C++ bindings any more) — a RAII
// communicator, a halo-exchange class with lambdas, std::vector buffers —
// over point-to-point, nonblocking and collective calls. Every MPI call
// goes through CALL() (expect_notes.h); before MPI_Finalize each rank
// writes EXPECT_DIR/rank.<r>.txt for the checker. Any number of ranks from 2.
//
// usage: mpi-cxx [--late-partner] EXPECT_DIR
//   --late-partner: rank 0 starts its pair exchange 300 ms late, the
//   schedule of an oversubscribed node under which rank 1 used to take its
//   right neighbour's first halo message for its partner's.

// The C API only: without this, Open MPI's mpi.h declares its deprecated C++
// bindings, whose library (libmpi_cxx) the program does not link.
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <vector>

#include <unistd.h>

#include "expect_notes.h"

namespace {

[[noreturn]] void fail(const char *what, int rank)
{
    std::fprintf(stderr, "mpi-cxx: rank %d: %s\n", rank, what);
    std::abort();
}

// Owns a communicator split from a parent; frees it when it goes out of scope.
class Communicator {
public:
    Communicator(MPI_Comm parent, int color, int key)
    {
        CALL(MPI_Comm_split, parent, color, key, &comm_);
        CALL(MPI_Comm_rank, comm_, &rank_);
        CALL(MPI_Comm_size, comm_, &size_);
    }
    Communicator(const Communicator &) = delete;
    Communicator &operator=(const Communicator &) = delete;
    ~Communicator() { CALL(MPI_Comm_free, &comm_); }

    MPI_Comm get() const { return comm_; }
    int rank() const { return rank_; }
    int size() const { return size_; }

private:
    MPI_Comm comm_ = MPI_COMM_NULL;
    int rank_ = 0, size_ = 0;
};

// A periodic 1-D field with one ghost cell on each side, exchanged with the
// ring neighbours of a communicator.
class HaloField {
public:
    HaloField(MPI_Comm comm, int rank, int size, int cells)
        : comm_(comm), left_((rank + size - 1) % size), right_((rank + 1) % size),
          values_(static_cast<size_t>(cells) + 2, static_cast<double>(rank))
    {
    }

    // Nonblocking exchange; `complete` finishes the four requests.
    void exchange(const std::function<void(std::vector<MPI_Request> &)> &complete)
    {
        enum { to_right = 80, to_left = 81 };
        std::vector<MPI_Request> requests(4);
        auto post = [&](double *cell, int peer, int tag, MPI_Request *request, bool send) {
            if (send)
                CALL(MPI_Isend, cell, 1, MPI_DOUBLE, peer, tag, comm_, request);
            else
                CALL(MPI_Irecv, cell, 1, MPI_DOUBLE, peer, tag, comm_, request);
        };
        post(&values_.front(), left_, to_right, &requests[0], false);
        post(&values_.back(), right_, to_left, &requests[1], false);
        post(&values_[values_.size() - 2], right_, to_right, &requests[2], true);
        post(&values_[1], left_, to_left, &requests[3], true);
        complete(requests);
    }

    double left_ghost() const { return values_.front(); }
    double right_ghost() const { return values_.back(); }
    double interior_sum() const
    {
        return std::accumulate(values_.begin() + 1, values_.end() - 1, 0.0);
    }

private:
    MPI_Comm comm_;
    int left_, right_;
    std::vector<double> values_;
};

void blocking_point_to_point(int rank, int size, bool late_partner)
{
    std::vector<int> message(5, rank);
    const int partner = rank ^ 1;
    if (partner >= size)
        return;
    if (late_partner && rank == 0)
        usleep(300000);
    if (rank % 2 == 0) {
        CALL(MPI_Send, message.data(), static_cast<int>(message.size()), MPI_INT, partner, 1,
             MPI_COMM_WORLD);
        CALL(MPI_Recv, message.data(), 2, MPI_INT, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        // Any source, but only tag 1: the right neighbour may have finished
        // its own pair already, and its first halo message (tag 81) must not
        // match here. With MPI_ANY_TAG it did whenever the partner was slower
        // (an oversubscribed node): the partner's message then stayed
        // unmatched and this rank's third halo exchange waited forever for a
        // message its neighbour had sent into the first.
        MPI_Status status;
        CALL(MPI_Recv, message.data(), static_cast<int>(message.size()), MPI_INT, MPI_ANY_SOURCE, 1,
             MPI_COMM_WORLD, &status);
        CALL(MPI_Send, message.data(), 2, MPI_INT, partner, 2, MPI_COMM_WORLD);
    }
}

void halo_exchanges(int rank, int size)
{
    HaloField field(MPI_COMM_WORLD, rank, size, 4);
    field.exchange([](std::vector<MPI_Request> &requests) {
        CALL(MPI_Waitall, static_cast<int>(requests.size()), requests.data(),
             MPI_STATUSES_IGNORE);
    });
    field.exchange([](std::vector<MPI_Request> &requests) {
        for (size_t done = 0; done < requests.size(); done++) {
            int index;
            CALL(MPI_Waitany, static_cast<int>(requests.size()), requests.data(), &index,
                 MPI_STATUS_IGNORE);
        }
    });
    field.exchange([](std::vector<MPI_Request> &requests) {
        for (MPI_Request &request : requests)
            for (int flag = 0; !flag;)
                CALL(MPI_Test, &request, &flag, MPI_STATUS_IGNORE);
    });
    if (field.left_ghost() != (rank + size - 1) % size || field.right_ghost() != (rank + 1) % size)
        fail("wrong ghost cells after the halo exchange", rank);

    double sum = field.interior_sum(), total = 0;
    CALL(MPI_Allreduce, &sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    expect_note_members("members", 0, 1, size);
    if (total != 4.0 * size * (size - 1) / 2)
        fail("wrong allreduce total", rank);
}

void collectives(int rank, int size)
{
    std::vector<int> mine(2, rank), all(static_cast<size_t>(2 * size));
    const int root = size - 1;
    CALL(MPI_Bcast, mine.data(), 2, MPI_INT, root, MPI_COMM_WORLD);
    CALL(MPI_Gather, mine.data(), 2, MPI_INT, all.data(), 2, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<int> spread(static_cast<size_t>(2 * size), rank);
    CALL(MPI_Alltoall, spread.data(), 2, MPI_INT, all.data(), 2, MPI_INT, MPI_COMM_WORLD);
    int prefix = 0;
    CALL(MPI_Scan, &rank, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (prefix != rank * (rank + 1) / 2)
        fail("wrong scan prefix", rank);

    MPI_Request request;
    int maximum = -1;
    CALL(MPI_Iallreduce, &rank, &maximum, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &request);
    CALL(MPI_Wait, &request, MPI_STATUS_IGNORE);
    if (maximum != size - 1)
        fail("wrong iallreduce maximum", rank);
    CALL(MPI_Barrier, MPI_COMM_WORLD);
}

// The lower and upper halves of the world, each reducing to its first rank.
void sub_communicator(int rank, int size)
{
    const int half = size / 2, upper = rank >= half;
    Communicator part(MPI_COMM_WORLD, upper, rank);
    int sum = 0;
    CALL(MPI_Reduce, &rank, &sum, 1, MPI_INT, MPI_SUM, 0, part.get());
    const int first = upper ? half : 0, count = upper ? size - half : half;
    expect_note_members("members", first, 1, count);
    if (part.rank() == 0 && sum != count * first + count * (count - 1) / 2)
        fail("wrong reduction on the sub-communicator", rank);
}

}  // namespace

int main(int argc, char **argv)
{
    const bool late_partner = argc == 3 && std::strcmp(argv[1], "--late-partner") == 0;
    if (argc != 2 && !late_partner) {
        std::fprintf(stderr, "usage: %s [--late-partner] EXPECT_DIR\n", argv[0]);
        return 2;
    }
    const char *expect_dir = argv[argc - 1];
    CALL(MPI_Init, &argc, &argv);
    int rank, size;
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    blocking_point_to_point(rank, size, late_partner);
    halo_exchanges(rank, size);
    collectives(rank, size);
    sub_communicator(rank, size);
    expect_note_call("MPI_Finalize");
    expect_write(expect_dir, rank);
    MPI_Finalize();
    return 0;
}
