/*
 * A deterministic MPI program of the functions that adaptrace records as
 * regions only (issue #12): datatypes, attributes, info objects, error
 * handlers, generalized requests, reduction operations, MPI_Pcontrol and
 * local queries. Every MPI call goes through CALL(); the checker compares
 * the calls each rank noted (format in expect_notes.h) with the Enter/Leave
 * regions of the trace. The program checks the results itself, so a
 * wrapper that passed an argument on wrongly fails the run.
 *
 * usage: mpi-regions EXPECT_DIR
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "expect_notes.h"

static int rank, size;

static void check(int condition, const char *what)
{
    if (!condition) {
        fprintf(stderr, "mpi-regions: rank %d: %s\n", rank, what);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

/* Derived datatypes, built, queried, used in a message and freed. */
static void datatypes(void)
{
    MPI_Datatype pair, strided, resized, copy;
    CALL(MPI_Type_contiguous, 2, MPI_INT, &pair);
    CALL(MPI_Type_commit, &pair);
    CALL(MPI_Type_vector, 3, 1, 2, MPI_INT, &strided);
    CALL(MPI_Type_create_resized, strided, 0, (MPI_Aint)(6 * sizeof(int)), &resized);
    CALL(MPI_Type_commit, &resized);
    CALL(MPI_Type_dup, pair, &copy);
    CALL(MPI_Type_set_name, copy, "pair copy");
    char name[MPI_MAX_OBJECT_NAME];
    int length = 0;
    CALL(MPI_Type_get_name, copy, name, &length);
    check(strcmp(name, "pair copy") == 0, "MPI_Type_get_name");
    int type_size = 0;
    CALL(MPI_Type_size, resized, &type_size);
    check(type_size == 3 * (int)sizeof(int), "MPI_Type_size");
    MPI_Aint lb, extent;
    CALL(MPI_Type_get_extent, resized, &lb, &extent);
    check(lb == 0 && extent == (MPI_Aint)(6 * sizeof(int)), "MPI_Type_get_extent");
    int integers, addresses, types, combiner;
    CALL(MPI_Type_get_envelope, pair, &integers, &addresses, &types, &combiner);
    check(combiner == MPI_COMBINER_CONTIGUOUS, "MPI_Type_get_envelope");

    int values[6] = { rank, rank + 1, rank + 2, rank + 3, rank + 4, rank + 5 }, got[6] = { 0 };
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Status status;
    CALL(MPI_Sendrecv, values, 1, resized, right, 1, got, 3, MPI_INT, left, 1, MPI_COMM_WORLD, &status);
    int elements = 0;
    CALL(MPI_Get_elements, &status, MPI_INT, &elements);
    check(elements == 3 && got[1] == left + 2, "strided message");

    char packed[64];
    int position = 0, unpacked[2] = { 0 };
    CALL(MPI_Pack, values, 1, pair, packed, (int)sizeof packed, &position, MPI_COMM_WORLD);
    position = 0;
    CALL(MPI_Unpack, packed, (int)sizeof packed, &position, unpacked, 1, pair, MPI_COMM_WORLD);
    check(unpacked[1] == rank + 1, "MPI_Pack/MPI_Unpack");
    MPI_Aint address;
    CALL(MPI_Get_address, values, &address);

    CALL(MPI_Type_free, &copy);
    CALL(MPI_Type_free, &resized);
    CALL(MPI_Type_free, &strided);
    CALL(MPI_Type_free, &pair);
}

/* An attribute cached on a communicator, read back and deleted. */
static void attributes(void)
{
    int keyval;
    static int cached = 42;
    CALL(MPI_Comm_create_keyval, MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &keyval, NULL);
    CALL(MPI_Comm_set_attr, MPI_COMM_WORLD, keyval, &cached);
    int *value = NULL, flag = 0;
    CALL(MPI_Comm_get_attr, MPI_COMM_WORLD, keyval, &value, &flag);
    check(flag && value == &cached, "MPI_Comm_get_attr");
    CALL(MPI_Comm_delete_attr, MPI_COMM_WORLD, keyval);
    CALL(MPI_Comm_get_attr, MPI_COMM_WORLD, keyval, &value, &flag);
    check(!flag, "MPI_Comm_delete_attr");
    CALL(MPI_Comm_free_keyval, &keyval);
    int *tag_ub = NULL;
    CALL(MPI_Comm_get_attr, MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    check(flag && *tag_ub >= 32767, "MPI_TAG_UB");
}

static void info_objects(void)
{
    MPI_Info info, copy;
    CALL(MPI_Info_create, &info);
    CALL(MPI_Info_set, info, "adaptrace_key", "value");
    char value[16] = "";
    int flag = 0, length = 0, keys = 0;
    CALL(MPI_Info_get, info, "adaptrace_key", (int)sizeof value - 1, value, &flag);
    check(flag && strcmp(value, "value") == 0, "MPI_Info_get");
    CALL(MPI_Info_get_valuelen, info, "adaptrace_key", &length, &flag);
    check(flag && length == 5, "MPI_Info_get_valuelen");
    CALL(MPI_Info_dup, info, &copy);
    CALL(MPI_Info_get_nkeys, copy, &keys);
    check(keys == 1, "MPI_Info_get_nkeys");
    char key[MPI_MAX_INFO_KEY];
    CALL(MPI_Info_get_nthkey, copy, 0, key);
    check(strcmp(key, "adaptrace_key") == 0, "MPI_Info_get_nthkey");
    CALL(MPI_Info_delete, copy, "adaptrace_key");
    CALL(MPI_Info_free, &copy);
    CALL(MPI_Info_free, &info);
}

static int handled_errors;

static void count_error(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
    handled_errors++;
}

/* An error handler of the application's, called once and replaced. */
static void error_handlers(void)
{
    MPI_Errhandler counting, previous;
    CALL(MPI_Comm_create_errhandler, count_error, &counting);
    CALL(MPI_Comm_get_errhandler, MPI_COMM_WORLD, &previous);
    CALL(MPI_Comm_set_errhandler, MPI_COMM_WORLD, counting);
    CALL(MPI_Comm_call_errhandler, MPI_COMM_WORLD, MPI_ERR_OTHER);
    check(handled_errors == 1, "MPI_Comm_call_errhandler");
    CALL(MPI_Comm_set_errhandler, MPI_COMM_WORLD, previous);
    CALL(MPI_Errhandler_free, &counting);
    CALL(MPI_Errhandler_free, &previous);
    char text[MPI_MAX_ERROR_STRING];
    int length = 0, class = 0;
    CALL(MPI_Error_string, MPI_ERR_TAG, text, &length);
    check(length > 0, "MPI_Error_string");
    CALL(MPI_Error_class, MPI_ERR_TAG, &class);
    check(class == MPI_ERR_TAG, "MPI_Error_class");
}

static int query_status(void *state, MPI_Status *status)
{
    (void)state;
    MPI_Status_set_elements(status, MPI_BYTE, 0);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int free_state(void *state)
{
    (void)state;
    return MPI_SUCCESS;
}

static int cancel_nothing(void *state, int complete)
{
    (void)state;
    (void)complete;
    return MPI_SUCCESS;
}

/* A generalized request, completed by the program before its wait. The
 * query callback's status calls run inside MPI_Wait: they are noted there,
 * as the trace nests them there. */
static void generalized_request(void)
{
    MPI_Request request;
    CALL(MPI_Grequest_start, query_status, free_state, cancel_nothing, NULL, &request);
    CALL(MPI_Grequest_complete, request);
    int flag = 0;
    MPI_Status status;
    CALL(MPI_Request_get_status, request, &flag, &status);
    expect_note_call("MPI_Status_set_elements");
    expect_note_call("MPI_Status_set_cancelled");
    check(flag, "MPI_Request_get_status");
    CALL(MPI_Wait, &request, &status);
    expect_note_call("MPI_Status_set_elements");
    expect_note_call("MPI_Status_set_cancelled");
}

static int magnitude(int value)
{
    return value < 0 ? -value : value;
}

static void maximum_of_magnitudes(void *in, void *inout, int *count, MPI_Datatype *type)
{
    (void)type;
    const int *a = in;
    int *b = inout;
    for (int i = 0; i < *count; i++)
        b[i] = magnitude(a[i]) > magnitude(b[i]) ? magnitude(a[i]) : magnitude(b[i]);
}

/* An operation of the application's, applied locally and in a collective. */
static void reduction_operations(void)
{
    MPI_Op op;
    CALL(MPI_Op_create, maximum_of_magnitudes, 1, &op);
    int commutes = 0;
    CALL(MPI_Op_commutative, op, &commutes);
    check(commutes, "MPI_Op_commutative");
    int in = -rank, inout = 0;
    CALL(MPI_Reduce_local, &in, &inout, 1, MPI_INT, op);
    check(inout == rank, "MPI_Reduce_local");
    int largest = 0, mine = rank % 2 ? -rank : rank;
    CALL(MPI_Allreduce, &mine, &largest, 1, MPI_INT, op, MPI_COMM_WORLD);
    check(largest == size - 1, "MPI_Allreduce with the operation");
    CALL(MPI_Op_free, &op);
}

/* Local queries, memory and the profiling control. */
static void environment(void)
{
    int version = 0, subversion = 0, length = 0, provided = 0, is_main = 0;
    CALL(MPI_Get_version, &version, &subversion);
    check(version >= 3, "MPI_Get_version");
    char processor[MPI_MAX_PROCESSOR_NAME];
    CALL(MPI_Get_processor_name, processor, &length);
    check(length > 0, "MPI_Get_processor_name");
    CALL(MPI_Query_thread, &provided);
    CALL(MPI_Is_thread_main, &is_main);
    check(is_main, "MPI_Is_thread_main");
    MPI_Comm parent;
    CALL(MPI_Comm_get_parent, &parent);
    check(parent == MPI_COMM_NULL, "MPI_Comm_get_parent");
    char name[MPI_MAX_OBJECT_NAME];
    CALL(MPI_Comm_get_name, MPI_COMM_WORLD, name, &length);
    check(strcmp(name, "MPI_COMM_WORLD") == 0, "MPI_Comm_get_name");
    double *memory = NULL;
    CALL(MPI_Alloc_mem, (MPI_Aint)(16 * sizeof(double)), MPI_INFO_NULL, &memory);
    memory[15] = 1.0;
    CALL(MPI_Free_mem, memory);
    CALL(MPI_Pcontrol, 1);
    CALL(MPI_Pcontrol, 0);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s EXPECT_DIR\n", argv[0]);
        return 2;
    }
    CALL(MPI_Init, &argc, &argv);
    CALL(MPI_Comm_rank, MPI_COMM_WORLD, &rank);
    CALL(MPI_Comm_size, MPI_COMM_WORLD, &size);
    datatypes();
    attributes();
    info_objects();
    error_handlers();
    generalized_request();
    reduction_operations();
    environment();
    expect_note("call MPI_Finalize");
    expect_write(argv[1], rank);
    MPI_Finalize();
    return 0;
}
