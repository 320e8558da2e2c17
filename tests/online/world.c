/* A program that asks MPI_COMM_WORLD many things (issue #28, the MPMD
 * launch): run untraced and as the application of an MPMD launch beside
 * adaptrace-analyzer, each rank writes what it found to OUT_DIR/rank<N>.txt,
 * and check_mpmd.py compares the two runs' files: the application must see
 * its own processes only, exactly as untraced.
 *
 * usage: online-world OUT_DIR */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int copied_attribute = 0;

/* The attribute's copy callback: MPI_Comm_dup of the world copies it. */
static int copy_attribute(MPI_Comm comm, int keyval, void *state, void *value, void *copy, int *flag)
{
    (void)comm, (void)keyval, (void)state;
    copied_attribute++;
    *(void **)copy = value;
    *flag = 1;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 2) {
        fprintf(stderr, "usage: online-world OUT_DIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char path[4096];
    snprintf(path, sizeof path, "%s/rank%d.txt", argv[1], rank);
    FILE *out = fopen(path, "w");
    if (out == NULL)
        MPI_Abort(MPI_COMM_WORLD, 2);
    fprintf(out, "size %d rank %d\n", size, rank);

    /* Collectives and point-to-point on the world. */
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int last = rank == size - 1 ? 42 : -1;
    MPI_Bcast(&last, 1, MPI_INT, size - 1, MPI_COMM_WORLD);
    int *all = malloc((size_t)size * sizeof *all);
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    int gathered = 0;
    for (int i = 0; i < size; i++)
        gathered = gathered * 10 + all[i];
    int from_left = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 7, &from_left, 1, MPI_INT, (rank + size - 1) % size, 7,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    fprintf(out, "allreduce %d bcast %d allgather %d sendrecv %d\n", sum, last, gathered, from_left);

    /* Communicators made from the world. */
    MPI_Comm dup, half;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int same = -1, congruent = -1;
    MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &same);
    MPI_Comm_compare(MPI_COMM_WORLD, dup, &congruent);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int half_size = 0, dup_size = 0;
    MPI_Comm_size(half, &half_size);
    MPI_Comm_size(dup, &dup_size);
    fprintf(out, "compare world ident %d dup congruent %d dup size %d split size %d\n", same == MPI_IDENT,
            congruent == MPI_CONGRUENT, dup_size, half_size);

    /* Groups of the world. */
    MPI_Group world_group, dup_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Comm_group(dup, &dup_group);
    int group_size = 0, group_compare = -1, translated = -1, last_rank = size - 1;
    MPI_Group_size(world_group, &group_size);
    MPI_Group_compare(world_group, dup_group, &group_compare);
    MPI_Group_translate_ranks(world_group, 1, &last_rank, dup_group, &translated);
    fprintf(out, "group size %d ident %d translated %d\n", group_size, group_compare == MPI_IDENT, translated);

    /* The world's name, its Fortran handle, a topology on it. */
    char name[MPI_MAX_OBJECT_NAME];
    int length = 0;
    MPI_Comm_get_name(MPI_COMM_WORLD, name, &length);
    int through_fortran = 0;
    MPI_Comm_size(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)), &through_fortran);
    MPI_Comm cart;
    int dims[1] = { size }, periods[1] = { 1 }, cart_size = 0;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    MPI_Comm_size(cart, &cart_size);
    fprintf(out, "name %s fortran handle size %d cart size %d\n", name, through_fortran, cart_size);

    /* Attributes: those MPI caches on the world, and one of the program's
     * own that MPI_Comm_dup copies. */
    int *appnum = NULL, *tag_ub = NULL, has_appnum = 0, has_tag_ub = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &has_appnum);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &has_tag_ub);
    int keyval, own_value = 7, *read_back = NULL, has_own = 0;
    MPI_Comm_create_keyval(copy_attribute, MPI_COMM_NULL_DELETE_FN, &keyval, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, &own_value);
    MPI_Comm copy;
    MPI_Comm_dup(MPI_COMM_WORLD, &copy);
    MPI_Comm_get_attr(copy, keyval, &read_back, &has_own);
    fprintf(out, "appnum %d tag_ub set %d own attribute %d copied %d\n", has_appnum ? *appnum : -1,
            has_tag_ub && *tag_ub > 0, has_own ? *read_back : -1, copied_attribute);

    /* An error handler set on the world: a send to rank `size` (no such
     * rank in the world) returns MPI_ERR_RANK instead of ending the job. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Errhandler handler;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &handler);
    int error = MPI_Send(&rank, 1, MPI_INT, size, 0, MPI_COMM_WORLD), error_class = -1;
    MPI_Error_class(error, &error_class);
    fprintf(out, "errors return %d send to rank size: MPI_ERR_RANK %d\n", handler == MPI_ERRORS_RETURN,
            error_class == MPI_ERR_RANK);
    MPI_Errhandler_free(&handler);

    MPI_Comm_free(&copy);
    MPI_Comm_free_keyval(&keyval);
    MPI_Comm_free(&cart);
    MPI_Group_free(&dup_group);
    MPI_Group_free(&world_group);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    free(all);
    fclose(out);
    MPI_Finalize();
    return 0;
}
