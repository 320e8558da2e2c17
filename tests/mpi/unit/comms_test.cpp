#include <gtest/gtest.h>

#include <mpi.h>

#include "comms.h"

namespace {

adt_defs *defs;

/* The id adt_defs_comm gives the key (it returns the existing id for a key
 * already defined, so this tells which key a communicator was defined with). */
uint32_t id_of_key(uint32_t creator, uint32_t sequence)
{
    const uint32_t member = 0;
    adt_comm_desc desc = {};
    desc.creator_world_rank = creator;
    desc.sequence = sequence;
    desc.members = &member;
    desc.size = 1;
    desc.parent = ADT_UNDEFINED_ID;
    return adt_defs_comm(defs, &desc);
}

/* MPI_Comm_free as the wrapper passes it on: out of the table before,
 * back in when it failed. Returns MPI's result. */
int free_comm(MPI_Comm *comm)
{
    const adt_mpi_freed_comm freed = adt_mpi_comm_free_begin(*comm);
    int result = MPI_Comm_free(comm);
    adt_mpi_comm_free_end(&freed, result == MPI_SUCCESS);
    return result;
}

class Comms : public ::testing::Test {
protected:
    static void SetUpTestSuite()
    {
        int initialized = 0;
        MPI_Initialized(&initialized);
        if (!initialized)
            MPI_Init(nullptr, nullptr);
        defs = adt_defs_create();
        ASSERT_NE(defs, nullptr);
        ASSERT_EQ(adt_mpi_comms_init(defs), 0);
    }
    static void TearDownTestSuite()
    {
        adt_mpi_comms_fini();
        adt_defs_destroy(defs);
    }
};

TEST_F(Comms, WorldAndSelfAreDefinedWithTheirKeys)
{
    const adt_mpi_comm_info *world = adt_mpi_comm_lookup(MPI_COMM_WORLD);
    const adt_mpi_comm_info *self = adt_mpi_comm_lookup(MPI_COMM_SELF);
    ASSERT_NE(world, nullptr);
    ASSERT_NE(self, nullptr);
    EXPECT_NE(world->id, self->id);
    EXPECT_EQ(world->rank, 0);
    EXPECT_EQ(world->size, 1);
    EXPECT_EQ(world->remote_size, 0);
    EXPECT_EQ(id_of_key(0, 0), world->id);
    EXPECT_EQ(id_of_key(0, 1), self->id);
}

TEST_F(Comms, KeysAreHandedOutInSequenceByRankZero)
{
    adt_mpi_comm_key first = adt_mpi_comm_agree_key(MPI_COMM_WORLD);
    adt_mpi_comm_key second = adt_mpi_comm_agree_key(MPI_COMM_WORLD);
    EXPECT_EQ(first.creator_world_rank, 0u);
    EXPECT_GE(first.sequence, 2u) << "0 and 1 belong to MPI_COMM_WORLD and MPI_COMM_SELF";
    EXPECT_EQ(second.sequence, first.sequence + 1);
}

TEST_F(Comms, CreatedCommunicatorGetsItsOwnIdUntilFreed)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    adt_mpi_comm_created(MPI_COMM_WORLD, dup);
    const adt_mpi_comm_info *info = adt_mpi_comm_lookup(dup);
    ASSERT_NE(info, nullptr);
    EXPECT_NE(info->id, adt_mpi_comm_lookup(MPI_COMM_WORLD)->id);
    EXPECT_EQ(info->size, 1);
    free_comm(&dup);
    MPI_Comm other;
    MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &other);
    adt_mpi_comm_created(MPI_COMM_WORLD, other);
    const adt_mpi_comm_info *second = adt_mpi_comm_lookup(other);
    ASSERT_NE(second, nullptr);
    MPI_Comm freed = other;
    EXPECT_EQ(free_comm(&other), MPI_SUCCESS);
    EXPECT_EQ(adt_mpi_comm_lookup(freed), nullptr);
}

// Freeing a predefined communicator is an error the application may handle
// and go on (mpi4py's test_exceptions does, issue #31): still followed.
TEST_F(Comms, CommunicatorWhoseFreeFailsIsFollowedStill)
{
    for (MPI_Comm predefined : {MPI_COMM_SELF, MPI_COMM_WORLD}) {
        const uint32_t id = adt_mpi_comm_lookup_slow(predefined)->id;
        MPI_Comm_set_errhandler(predefined, MPI_ERRORS_RETURN);
        MPI_Comm comm = predefined;
        EXPECT_NE(free_comm(&comm), MPI_SUCCESS);
        MPI_Comm_set_errhandler(predefined, MPI_ERRORS_ARE_FATAL);
        const adt_mpi_comm_info *info = adt_mpi_comm_lookup_slow(predefined);
        ASSERT_NE(info, nullptr);
        EXPECT_EQ(info->id, id);
    }
}

// A window's or file's key goes back to rank 0 of its communicator when it
// is freed, and only the next object of the same kind on the same
// communicator takes it again.
TEST_F(Comms, ObjectKeysAreRecycledPerKindAndCommunicator)
{
    const adt_mpi_comm_info *world = adt_mpi_comm_lookup(MPI_COMM_WORLD);
    const adt_mpi_comm_info *self = adt_mpi_comm_lookup(MPI_COMM_SELF);
    adt_mpi_comm_key window = adt_mpi_object_agree_key(MPI_COMM_WORLD, world, ADT_MPI_OBJECT_WINDOW);
    adt_mpi_comm_key other = adt_mpi_object_agree_key(MPI_COMM_WORLD, world, ADT_MPI_OBJECT_WINDOW);
    EXPECT_NE(other.sequence, window.sequence) << "both alive at once";
    adt_mpi_object_key_released(ADT_MPI_OBJECT_WINDOW, world->id, window);
    EXPECT_NE(adt_mpi_object_agree_key(MPI_COMM_SELF, self, ADT_MPI_OBJECT_WINDOW).sequence, window.sequence)
        << "another communicator";
    EXPECT_NE(adt_mpi_object_agree_key(MPI_COMM_WORLD, world, ADT_MPI_OBJECT_FILE).sequence, window.sequence)
        << "another kind";
    adt_mpi_comm_key again = adt_mpi_object_agree_key(MPI_COMM_WORLD, world, ADT_MPI_OBJECT_WINDOW);
    EXPECT_EQ(again.creator_world_rank, window.creator_world_rank);
    EXPECT_EQ(again.sequence, window.sequence);
    EXPECT_NE(adt_mpi_object_agree_key(MPI_COMM_WORLD, world, ADT_MPI_OBJECT_WINDOW).sequence, window.sequence)
        << "handed out once";
}

// The keys released on a communicator go when it is freed.
TEST_F(Comms, FreedCommunicatorForgetsItsReleasedKeys)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    adt_mpi_comm_created(MPI_COMM_WORLD, dup);
    const uint32_t dup_id = adt_mpi_comm_lookup(dup)->id;
    adt_mpi_comm_key file = adt_mpi_object_agree_key(dup, adt_mpi_comm_lookup(dup), ADT_MPI_OBJECT_FILE);
    adt_mpi_object_key_released(ADT_MPI_OBJECT_FILE, dup_id, file);
    EXPECT_EQ(free_comm(&dup), MPI_SUCCESS);
    /* Asked for the freed communicator's id (through a stand-in entry, on
     * MPI_COMM_WORLD for the agreement), rank 0 has no key left for it. */
    adt_mpi_comm_info same_id = {};
    same_id.id = dup_id;
    EXPECT_NE(adt_mpi_object_agree_key(MPI_COMM_WORLD, &same_id, ADT_MPI_OBJECT_FILE).sequence, file.sequence);
}

TEST_F(Comms, NullCommunicatorIsNeitherDefinedNorFound)
{
    adt_mpi_comm_created(MPI_COMM_WORLD, MPI_COMM_NULL);
    EXPECT_EQ(adt_mpi_comm_lookup(MPI_COMM_NULL), nullptr);
}

TEST_F(Comms, NonblockingDuplicateIsDefinedWithTheKeyAgreedOnItsParent)
{
    adt_mpi_comm_key key = adt_mpi_comm_agree_key(MPI_COMM_WORLD);
    MPI_Comm dup;
    MPI_Request request;
    MPI_Comm_idup(MPI_COMM_WORLD, &dup, &request);
    adt_mpi_comm_duplicated(MPI_COMM_WORLD, dup, key);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    const adt_mpi_comm_info *info = adt_mpi_comm_lookup(dup);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(id_of_key(key.creator_world_rank, key.sequence), info->id);
    free_comm(&dup);
}

// ... and the source and tag its probe asked for, wildcards kept (the
// key of its MPI_Mrecv holds them, docs/folding.md).
TEST_F(Comms, MatchedMessageCarriesItsCommunicatorAndProbeOnce)
{
    int value = 5, received = 0;
    MPI_Request send;
    MPI_Isend(&value, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &send);
    MPI_Message message;
    MPI_Status status;
    MPI_Mprobe(MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &message, &status);
    adt_mpi_message_probed(adt_mpi_comm_lookup(MPI_COMM_WORLD), MPI_ANY_SOURCE, 3, message);
    const adt_mpi_probed_message *taken = adt_mpi_message_take(message);
    ASSERT_NE(taken, nullptr);
    EXPECT_EQ(taken->comm.id, adt_mpi_comm_lookup(MPI_COMM_WORLD)->id);
    EXPECT_EQ(taken->source, MPI_ANY_SOURCE);
    EXPECT_EQ(taken->tag, 3);
    EXPECT_EQ(adt_mpi_message_take(message), nullptr);
    MPI_Mrecv(&received, 1, MPI_INT, &message, &status);
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    EXPECT_EQ(received, 5);
}

} // namespace

int main(int argc, char **argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    int result = RUN_ALL_TESTS();
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized)
        MPI_Finalize();
    return result;
}

/* Open MPI's own allocations (singleton start-up, unloaded components)
 * outlive MPI_Finalize; this binary holds only the MPI-using tests, the
 * table tests keep their leak check. */
extern "C" const char *__asan_default_options()
{
    return "detect_leaks=0";
}
