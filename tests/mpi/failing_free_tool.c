/*
 * A PMPI tool stacked behind adaptrace (--stack) whose MPI_Win_free fails
 * the first time it is asked to free each window, returning MPI_ERR_WIN and
 * leaving the window as it was: the failure an application may handle and
 * go on from, which Open MPI gives no way to cause on a valid window
 * (issue #31; for communicators, freeing MPI_COMM_SELF is such a failure).
 * The second call frees it.
 */
#include <mpi.h>
#include <stddef.h>

/* The windows whose free failed once, alive at a time (a program that
 * keeps more alive fails the later frees for good; mpi-objects keeps one). */
enum { REMEMBERED = 64 };
static MPI_Win failed_once[REMEMBERED];
static size_t remembered;

int MPI_Win_free(MPI_Win *win)
{
    for (size_t i = 0; i < remembered; i++) {
        if (failed_once[i] == *win) {
            failed_once[i] = failed_once[--remembered];
            return PMPI_Win_free(win);
        }
    }
    if (remembered < REMEMBERED)
        failed_once[remembered++] = *win;
    return MPI_ERR_WIN;
}
