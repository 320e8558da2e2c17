/* An MPI program whose time goes to one function of its own, hot_loop,
 * between barriers: the names test (tests/report/check_names.py) traces a
 * stripped copy of it and checks how its frames are named. */
#include <mpi.h>

static volatile double sink;

__attribute__((noinline)) static void hot_loop(int iterations)
{
    double sum = 0;
    for (int i = 0; i < iterations; i++) {
        sum += i * 0.5;
    }
    sink = sum;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    for (int step = 0; step < 40; step++) {
        hot_loop(2000000);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
