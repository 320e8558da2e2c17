/*
 * plan.c: a rank's skeleton turned into the calls replay issues (a tool,
 * before any communication: malloc and stdio are fine). Every distinct
 * call is decoded from its key (mpi-events/fold.c's fields) once; the
 * calls in order are the grammar expanded; an MPI_Irecv learns its
 * message (bytes, peer, tag: recorded at its completion), and a
 * nonblocking collective its part and root, by a backward pass. Anything replay cannot issue is refused here, naming the call.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "format/format.h"
#include "replay.h"

static void say(char *error, size_t error_size, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(error, error_size, format, args);
    va_end(args);
}

static bool named(const char *function, const char *const *names)
{
    for (; *names; ++names)
        if (strcmp(function, *names) == 0)
            return true;
    return false;
}

static const char *const blocking_sends[] = { "MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend", "MPI_Sendrecv",
                                              "MPI_Sendrecv_replace", NULL };
static const char *const blocking_receives[] = { "MPI_Recv", "MPI_Sendrecv", "MPI_Sendrecv_replace", NULL };
static const char *const nonblocking_sends[] = { "MPI_Isend", "MPI_Issend", "MPI_Ibsend", "MPI_Irsend", NULL };

typedef struct collective_name {
    const char *name;
    adt_replay_collective kind;
} collective_name;

static const collective_name collectives[] = {
    { "MPI_Barrier", ADT_REPLAY_BARRIER },     { "MPI_Bcast", ADT_REPLAY_BCAST },
    { "MPI_Reduce", ADT_REPLAY_REDUCE },       { "MPI_Allreduce", ADT_REPLAY_ALLREDUCE },
    { "MPI_Gather", ADT_REPLAY_GATHER },       { "MPI_Scatter", ADT_REPLAY_SCATTER },
    { "MPI_Allgather", ADT_REPLAY_ALLGATHER }, { "MPI_Alltoall", ADT_REPLAY_ALLTOALL },
    { "MPI_Reduce_scatter_block", ADT_REPLAY_REDUCE_SCATTER_BLOCK },
    { "MPI_Scan", ADT_REPLAY_SCAN },           { "MPI_Exscan", ADT_REPLAY_EXSCAN },
    { "MPI_Gatherv", ADT_REPLAY_GATHERV },     { "MPI_Scatterv", ADT_REPLAY_SCATTERV },
    { "MPI_Allgatherv", ADT_REPLAY_ALLGATHERV }, { "MPI_Reduce_scatter", ADT_REPLAY_REDUCE_SCATTER },
    { "MPI_Alltoallv", ADT_REPLAY_ALLTOALLV },
};

/* A key read field by field; ok turns false past its end. */
typedef struct key_reader {
    const uint8_t *key;
    uint32_t length;
    uint32_t offset;
    bool ok;
} key_reader;

static uint64_t next(key_reader *r)
{
    uint64_t value = 0;
    if (r->ok && !adt_skeleton_key_next(r->key, r->length, &r->offset, &value))
        r->ok = false;
    return value;
}

static int64_t next_signed(key_reader *r)
{
    uint64_t value = next(r);
    return (int64_t)(value >> 1) ^ -(int64_t)(value & 1);
}

/* A receive's wildcards: MPI_ANY_SOURCE is the peer -2^31 from the own
 * rank, MPI_ANY_TAG the tag -1 (mpi-events/fold.h). */
static adt_replay_message p2p(key_reader *r)
{
    adt_replay_message m;
    m.bytes = next(r);
    m.request = (uint32_t)next(r);
    next(r); /* the communicator: every one is replayed as MPI_COMM_WORLD */
    m.peer = next_signed(r);
    m.tag = next_signed(r);
    m.any_source = m.peer == INT32_MIN;
    m.any_tag = m.tag == -1;
    return m;
}

/* Room for one more item in an array that doubles as it grows; false
 * when out of memory (the array is then as it was). */
static bool make_room(void **items, uint32_t count, uint32_t *capacity, size_t item_bytes)
{
    if (count < *capacity)
        return true;
    uint32_t larger = *capacity ? 2 * *capacity : 64;
    void *grown = realloc(*items, item_bytes * larger);
    if (!grown)
        return false;
    *items = grown;
    *capacity = larger;
    return true;
}

/* The requests of the plan's wait and test lists. */
typedef struct request_list {
    uint32_t *items;
    uint32_t count;
    uint32_t capacity;
} request_list;

static bool list_add(request_list *list, uint32_t request)
{
    void *items = list->items;
    if (!make_room(&items, list->count, &list->capacity, sizeof *list->items))
        return false;
    list->items = items;
    list->items[list->count++] = request;
    return true;
}

/* The completed receives' messages. */
typedef struct message_list {
    adt_replay_message *items;
    uint32_t count;
    uint32_t capacity;
} message_list;

static bool message_add(message_list *list, adt_replay_message m)
{
    void *items = list->items;
    if (!make_room(&items, list->count, &list->capacity, sizeof *list->items))
        return false;
    list->items = items;
    list->items[list->count++] = m;
    return true;
}

/* The completed nonblocking collectives. */
typedef struct collective_list {
    adt_replay_collective_done *items;
    uint32_t count;
    uint32_t capacity;
} collective_list;

static bool collective_add(collective_list *list, adt_replay_collective_done c)
{
    void *items = list->items;
    if (!make_room(&items, list->count, &list->capacity, sizeof *list->items))
        return false;
    list->items = items;
    list->items[list->count++] = c;
    return true;
}

/* Calls without a record that communicate in ways replay cannot redo. */
static const char *const refused_prefixes[] = { "MPI_Comm_spawn", "MPI_Comm_connect", "MPI_Comm_accept", "MPI_Start",
                                                "MPI_Neighbor_",  "MPI_Ineighbor_",   "MPI_Win_",        "MPI_File_",
                                                NULL };

static bool peer_in_range(const adt_replay_message *m, uint32_t rank, uint32_t ranks)
{
    int64_t target = (int64_t)rank + m->peer;
    return target >= 0 && target < (int64_t)ranks;
}

/* A receive's source: MPI_ANY_SOURCE, or a rank of the run. */
static bool source_in_range(const adt_replay_message *m, uint32_t rank, uint32_t ranks)
{
    return m->any_source || peer_in_range(m, rank, ranks);
}

/* A send's destination: a rank of the run, said why not in why; a
 * wildcard only a receive's key holds (a send's: a damaged key). */
static bool destination_ok(const adt_replay_message *m, uint32_t rank, uint32_t ranks, char *why, size_t why_size)
{
    if (m->any_source || m->any_tag)
        say(why, why_size, "its destination or tag is a wildcard");
    else if (!peer_in_range(m, rank, ranks))
        say(why, why_size, "its destination is outside MPI_COMM_WORLD here");
    else
        return true;
    return false;
}

/* A collective's per-rank part in bytes from its recorded totals
 * (mpi-events/mpi.api: N is the communicator's size, taken as the run's
 * ranks, and me its rank, taken as the world's: every communicator is
 * replayed as MPI_COMM_WORLD). */
static bool collective_part(adt_replay_collective kind, uint64_t sent, uint64_t received, uint32_t rank,
                            uint32_t ranks, uint64_t *part, char *why, size_t why_size)
{
    uint64_t total = 0, shares = ranks;
    switch (kind) {
    case ADT_REPLAY_BARRIER:
    case ADT_REPLAY_NO_COLLECTIVE:
        *part = 0;
        return true;
    case ADT_REPLAY_BCAST:
    case ADT_REPLAY_SCATTER:
    case ADT_REPLAY_SCATTERV:
        *part = received;
        return true;
    case ADT_REPLAY_REDUCE:
    case ADT_REPLAY_GATHER:
    case ADT_REPLAY_GATHERV:
    case ADT_REPLAY_ALLTOALLV:
        *part = sent;
        return true;
    case ADT_REPLAY_ALLGATHERV:
    case ADT_REPLAY_ALLREDUCE:
        total = sent; /* N times the own part */
        break;
    case ADT_REPLAY_SCAN: /* received (me + 1) parts */
        total = received;
        shares = rank + 1;
        break;
    case ADT_REPLAY_EXSCAN: /* received me parts, sent N - me - 1: one of them is not 0 unless N is 1 */
        total = rank > 0 ? received : sent;
        shares = rank > 0 ? rank : ranks - 1;
        if (shares == 0) {
            *part = 0;
            return true;
        }
        break;
    default:
        total = received;
        break;
    }
    if (total % shares != 0) {
        say(why, why_size, "its %llu bytes do not divide into %llu parts (a communicator smaller than the run's?)",
            (unsigned long long)total, (unsigned long long)shares);
        return false;
    }
    *part = total / shares;
    return true;
}

/* Signature s of the thread decoded into call, its waits and tests
 * appended to requests; false with the reason in why (the caller names
 * the call). */
static bool decode(const adt_skeleton_file *file, const adt_skeleton_thread_view *thread, uint32_t s, uint32_t rank,
                   uint32_t ranks, adt_replay_call *call, request_list *requests, message_list *done,
                   collective_list *collectives_done, char *why, size_t why_size)
{
    key_reader r = { thread->keys[s], thread->key_lengths[s], 0, true };
    uint64_t function = next(&r);
    next(&r); /* the calling context */
    if (!r.ok || function >= file->function_count) {
        say(why, why_size, "its signature does not decode");
        return false;
    }
    *call = (adt_replay_call){ .function = file->function_names[function], .first_wait = requests->count,
                               .first_done = done->count, .first_collective_done = collectives_done->count };
    /* MPI_Iallreduce is MPI_Allreduce's nonblocking form: the same name
     * after "MPI_I", in another case. */
    bool nonblocking = strncmp(call->function, "MPI_I", 5) == 0;
    for (const collective_name *c = collectives; c < collectives + sizeof collectives / sizeof *collectives; ++c)
        if (nonblocking ? strcasecmp(call->function + 5, c->name + 4) == 0 : strcmp(call->function, c->name) == 0)
            call->collective = c->kind;
    request_list tests = { 0 };
    bool ok = true, records = false;
    while (ok && r.ok && r.offset < r.length) {
        uint64_t kind = next(&r);
        records = true;
        switch (kind) {
        case ADT_REC_MPI_SEND:
            call->send = p2p(&r);
            call->has_send = named(call->function, blocking_sends);
            call->synchronous = strcmp(call->function, "MPI_Ssend") == 0;
            ok = call->has_send || (say(why, why_size, "a send record in a call that is not a blocking send"), false);
            ok = ok && destination_ok(&call->send, rank, ranks, why, why_size);
            break;
        case ADT_REC_MPI_RECV:
            call->recv = p2p(&r);
            call->has_recv = named(call->function, blocking_receives);
            ok = call->has_recv || (say(why, why_size, "a receive record in a call that is not a blocking receive"), false);
            ok = ok && (source_in_range(&call->recv, rank, ranks) ||
                        (say(why, why_size, "its source is outside MPI_COMM_WORLD here"), false));
            break;
        case ADT_REC_MPI_ISEND:
            call->isend = p2p(&r);
            call->has_isend = named(call->function, nonblocking_sends) && call->isend.request != 0;
            ok = call->has_isend ||
                 (say(why, why_size, "a nonblocking send outside MPI_Isend and its kin (a persistent request?)"), false);
            ok = ok && destination_ok(&call->isend, rank, ranks, why, why_size);
            break;
        case ADT_REC_MPI_IRECV_REQUEST:
            call->irecv_request = (uint32_t)next(&r);
            ok = (strcmp(call->function, "MPI_Irecv") == 0 && call->irecv_request != 0) ||
                 (say(why, why_size, "a receive request outside MPI_Irecv (a persistent request?)"), false);
            break;
        case ADT_REC_MPI_IRECV: {
            adt_replay_message m = p2p(&r);
            ok = (m.request != 0 && source_in_range(&m, rank, ranks)) ||
                 (say(why, why_size, "a completed receive without a request or from outside MPI_COMM_WORLD here"), false);
            ok = ok && list_add(requests, m.request) && message_add(done, m);
            break;
        }
        case ADT_REC_MPI_ISEND_COMPLETE:
            ok = list_add(requests, (uint32_t)next(&r));
            break;
        case ADT_REC_MPI_REQUEST_TEST:
            ok = list_add(&tests, (uint32_t)next(&r));
            break;
        case ADT_REC_MPI_COLLECTIVE_BEGIN:
            break;
        case ADT_REC_MPI_COLLECTIVE_END: {
            uint64_t sent = next(&r), received = next(&r);
            next(&r); /* request */
            next(&r); /* operation: the replay reduces bytes with MPI_BOR */
            next(&r); /* communicator */
            uint64_t root = next(&r);
            ok = call->collective != ADT_REPLAY_NO_COLLECTIVE ||
                 (say(why, why_size, "this collective is not replayed yet"), false);
            ok = ok && collective_part(call->collective, sent, received, rank, ranks, &call->collective_bytes, why,
                                       why_size);
            call->collective_received = received;
            call->root = root == UINT32_MAX ? 0 : (uint32_t)root;
            ok = ok && (call->root < ranks || (say(why, why_size, "its root is outside MPI_COMM_WORLD here"), false));
            break;
        }
        case ADT_REC_MPI_REQUEST_CANCELLED:
            say(why, why_size, "a cancelled request");
            ok = false;
            break;
        case ADT_REC_NB_COLLECTIVE_REQUEST:
            call->icollective_request = (uint32_t)next(&r);
            ok = (nonblocking && call->collective != ADT_REPLAY_NO_COLLECTIVE && call->collective < ADT_REPLAY_GATHERV &&
                  call->icollective_request != 0) ||
                 (say(why, why_size, "this nonblocking collective is not replayed yet"), false);
            break;
        case ADT_REC_NB_COLLECTIVE_COMPLETE: {
            adt_replay_collective_done c = { .sent = next(&r), .received = next(&r) };
            c.request = (uint32_t)next(&r);
            next(&r); /* operation */
            next(&r); /* communicator */
            uint64_t root = next(&r);
            c.root = root == UINT32_MAX ? 0 : (uint32_t)root;
            ok = (c.request != 0 && c.root < ranks) ||
                 (say(why, why_size, "a completed collective without a request or rooted outside MPI_COMM_WORLD here"),
                  false);
            ok = ok && list_add(requests, c.request) && collective_add(collectives_done, c);
            break;
        }
        case ADT_REC_ENTER:
        case ADT_REC_LEAVE:
            say(why, why_size, "MPI calls nested in it (a stacked tool's) are not replayed");
            ok = false;
            break;
        default:
            say(why, why_size, "its %s records are not replayed (RMA and I/O are not)",
                kind >= ADT_REC_IO_CREATE_HANDLE && kind <= ADT_REC_IO_SEEK ? "I/O" : "one-sided or other");
            ok = false;
            break;
        }
    }
    if (ok && !r.ok) {
        say(why, why_size, "its signature does not decode");
        ok = false;
    }
    call->wait_count = requests->count - call->first_wait;
    static const char *const completions[] = { [ADT_REPLAY_WAIT] = "MPI_Wait",         [ADT_REPLAY_WAITANY] = "MPI_Waitany",
                                               [ADT_REPLAY_WAITSOME] = "MPI_Waitsome", [ADT_REPLAY_TEST] = "MPI_Test",
                                               [ADT_REPLAY_TESTANY] = "MPI_Testany",   [ADT_REPLAY_TESTALL] = "MPI_Testall",
                                               [ADT_REPLAY_TESTSOME] = "MPI_Testsome" };
    for (size_t f = 0; f < sizeof completions / sizeof *completions; ++f)
        if (completions[f] && strcmp(call->function, completions[f]) == 0)
            call->completion = (adt_replay_completion)f;
    call->first_test = requests->count;
    for (uint32_t i = 0; ok && i < tests.count; ++i)
        ok = list_add(requests, tests.items[i]);
    free(tests.items);
    for (const char *const *prefix = refused_prefixes; ok && !records && *prefix; ++prefix) {
        if (strncmp(call->function, *prefix, strlen(*prefix)) == 0) {
            say(why, why_size, "it communicates without records replay could follow");
            ok = false;
        }
    }
    call->test_count = tests.count;
    call->done_count = done->count - call->first_done;
    call->collective_done_count = collectives_done->count - call->first_collective_done;
    call->traffic = records;
    return ok;
}

/* The expansion of the grammar written into the sequence. */
typedef struct sequence_writer {
    uint32_t *at;
    uint64_t left;
} sequence_writer;

static bool write_terminal(uint32_t terminal, void *arg)
{
    sequence_writer *w = arg;
    if (w->left == 0)
        return false;
    *w->at++ = terminal;
    w->left--;
    return true;
}

static void note_untrafficked(adt_replay_plan *plan, const char *function)
{
    if (strcmp(function, "MPI_Init") == 0 || strcmp(function, "MPI_Init_thread") == 0 ||
        strcmp(function, "MPI_Finalize") == 0)
        return;
    size_t used = strlen(plan->untrafficked), length = strlen(function);
    char *found = strstr(plan->untrafficked, function);
    if (found && (found[length] == ',' || found[length] == '\0'))
        return;
    if (used + length + 6 < sizeof plan->untrafficked)
        snprintf(plan->untrafficked + used, sizeof plan->untrafficked - used, "%s%s", used ? ", " : "", function);
    else if (!strstr(plan->untrafficked, "..."))
        snprintf(plan->untrafficked + used, sizeof plan->untrafficked - used, ", ...");
}

/* Each MPI_Irecv's message, and each nonblocking collective's totals,
 * are at the completion of its request, later: walking backward, the
 * latest completion seen of each symbol is the one that ends the call
 * that started it, met next. */
typedef struct completion {
    bool known;
    adt_replay_message message;         /* a receive's */
    adt_replay_collective_done totals;  /* a collective's */
} completion;

static bool resolve_posted(adt_replay_plan *plan, char *error, size_t error_size)
{
    completion *pending = calloc((size_t)plan->request_symbols + 1, sizeof *pending);
    uint64_t posted = 0;
    for (uint64_t i = 0; i < plan->length; ++i) {
        const adt_replay_call *call = &plan->calls_by_signature[plan->sequence[i]];
        posted += call->irecv_request != 0 || call->icollective_request != 0;
    }
    plan->irecvs = malloc(sizeof *plan->irecvs * (posted ? posted : 1));
    plan->irecv_message = malloc(sizeof *plan->irecv_message * (plan->length ? plan->length : 1));
    if (!pending || !plan->irecvs || !plan->irecv_message) {
        free(pending);
        say(error, error_size, "out of memory for the plan of rank %u", plan->rank);
        return false;
    }
    uint64_t next_posted = posted;
    bool ok = true;
    for (uint64_t i = plan->length; ok && i-- > 0;) {
        const adt_replay_call *call = &plan->calls_by_signature[plan->sequence[i]];
        for (uint32_t d = 0; d < call->done_count; ++d) {
            const adt_replay_message *m = &plan->done[call->first_done + d];
            pending[m->request] = (completion){ .known = true, .message = *m };
        }
        for (uint32_t d = 0; d < call->collective_done_count; ++d) {
            const adt_replay_collective_done *c = &plan->collectives_done[call->first_collective_done + d];
            pending[c->request] = (completion){ .known = true, .totals = *c };
        }
        uint32_t symbol = call->irecv_request ? call->irecv_request : call->icollective_request;
        if (symbol == 0)
            continue;
        if (!pending[symbol].known) {
            say(error, error_size, "rank %u: the %s at call %llu never completes in the skeleton: cannot replay it",
                plan->rank, call->function, (unsigned long long)i);
            ok = false;
            break;
        }
        adt_replay_message m = pending[symbol].message;
        uint64_t buffer = adt_replay_receive_bytes(plan, &m);
        if (call->icollective_request) {
            const adt_replay_collective_done *c = &pending[symbol].totals;
            char why[200];
            m = (adt_replay_message){ .peer = c->root, .request = symbol };
            ok = collective_part(call->collective, c->sent, c->received, plan->rank, plan->ranks, &m.bytes, why,
                                 sizeof why);
            if (!ok) {
                say(error, error_size, "rank %u: cannot replay %s at call %llu: %s", plan->rank, call->function,
                    (unsigned long long)i, why);
                break;
            }
            buffer = m.bytes * plan->ranks;
            plan->largest_message = buffer > plan->largest_message ? buffer : plan->largest_message;
        }
        plan->irecvs[--next_posted] = m;
        plan->irecv_message[i] = (uint32_t)next_posted;
        pending[symbol].known = false;
        plan->request_bytes[symbol] = buffer > plan->request_bytes[symbol] ? buffer : plan->request_bytes[symbol];
    }
    free(pending);
    return ok;
}

static bool is_init(const char *function)
{
    return strcmp(function, "MPI_Init") == 0 || strcmp(function, "MPI_Init_thread") == 0;
}

adt_replay_plan *adt_replay_plan_build(const adt_skeleton_file *file, uint32_t rank, uint32_t ranks, char *error,
                                       size_t error_size)
{
    /* Every rank's plan refuses alike, before any communication: a
     * replay without some ranks' calls would wait for them forever. */
    if (file->missing_count > 0) {
        const adt_skeleton_missing_range *first = &file->missing_ranges[0];
        say(error, error_size,
            "%s lacks the skeletons of %u of its %u ranks (rank %u: %s%s): replay needs every rank's calls",
            ADT_SKELETON_FILE_NAME, file->missing_count, file->rank_count, first->first,
            first->cause[0] != '\0' ? first->cause : "cause unknown",
            file->missing_count > 1 ? "; adaptrace-report --skeleton names the others" : "");
        return NULL;
    }
    if (file->rank_count != ranks) {
        say(error, error_size, "the skeleton holds %u ranks, this run has %u: run it with mpirun -np %u",
            file->rank_count, ranks, file->rank_count);
        return NULL;
    }
    const adt_skeleton_rank_view *view = &file->ranks[rank];
    if (view->thread_count != 1) {
        say(error, error_size, "rank %u has %u threads that made MPI calls; replay follows exactly one", rank,
            view->thread_count);
        return NULL;
    }
    const adt_skeleton_thread_view *thread = &view->threads[0];
    if (thread->stop >= 0) {
        say(error, error_size, "rank %u's skeleton stopped early (%s): it does not hold the whole run", rank,
            adt_skeleton_stop_keys[thread->stop]);
        return NULL;
    }
    if (thread->calls < 2 || thread->calls > UINT32_MAX) {
        say(error, error_size, "rank %u's skeleton has %llu calls: replay needs 2 to 2^32", rank,
            (unsigned long long)thread->calls);
        return NULL;
    }
    adt_replay_plan *plan = calloc(1, sizeof *plan);
    if (!plan) {
        say(error, error_size, "out of memory for the plan of rank %u", rank);
        return NULL;
    }
    plan->rank = rank;
    plan->ranks = ranks;
    plan->thread = thread;
    plan->call_kinds = thread->signature_count;
    plan->calls_by_signature = calloc(thread->signature_count ? thread->signature_count : 1,
                                      sizeof *plan->calls_by_signature);
    plan->length = thread->calls;
    plan->sequence = malloc(sizeof *plan->sequence * plan->length);
    request_list requests = { 0 };
    message_list done = { 0 };
    collective_list collectives_done = { 0 };
    bool ok = plan->calls_by_signature && plan->sequence;
    if (!ok)
        say(error, error_size, "out of memory for the plan of rank %u", rank);
    for (uint32_t s = 0; ok && s < thread->signature_count; ++s) {
        adt_replay_call *call = &plan->calls_by_signature[s];
        char why[256];
        if (!decode(file, thread, s, rank, ranks, call, &requests, &done, &collectives_done, why, sizeof why)) {
            say(error, error_size, "rank %u: cannot replay %s: %s", rank, call->function ? call->function : "a call",
                why);
            ok = false;
            break;
        }
        if (!call->traffic)
            note_untrafficked(plan, call->function);
        plan->splits_equally |= call->collective == ADT_REPLAY_ALLTOALLV;
        uint64_t sizes[] = { call->send.bytes, call->recv.bytes, call->isend.bytes, call->collective_bytes * ranks,
                             call->collective_received };
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; ++i)
            plan->largest_message = sizes[i] > plan->largest_message ? sizes[i] : plan->largest_message;
        plan->largest_receive = call->recv.bytes > plan->largest_receive ? call->recv.bytes : plan->largest_receive;
    }
    for (uint32_t i = 0; ok && i < done.count; ++i)
        plan->largest_receive = done.items[i].bytes > plan->largest_receive ? done.items[i].bytes : plan->largest_receive;
    /* A blocking wildcard receive is posted into the receive buffer for
     * the largest message received. */
    plan->largest_message = plan->largest_receive > plan->largest_message ? plan->largest_receive : plan->largest_message;
    plan->requests = requests.items;
    plan->done = done.items;
    plan->collectives_done = collectives_done.items;
    for (uint32_t i = 0; ok && i < requests.count; ++i)
        plan->request_symbols = requests.items[i] > plan->request_symbols ? requests.items[i] : plan->request_symbols;
    for (uint32_t s = 0; ok && s < thread->signature_count; ++s) {
        const adt_replay_call *call = &plan->calls_by_signature[s];
        uint32_t symbols[] = { call->isend.request, call->irecv_request, call->icollective_request };
        for (size_t i = 0; i < sizeof symbols / sizeof *symbols; ++i)
            plan->request_symbols = symbols[i] > plan->request_symbols ? symbols[i] : plan->request_symbols;
    }
    if (ok) {
        sequence_writer writer = { plan->sequence, plan->length };
        adt_skeleton_rules_expand(&thread->rules, write_terminal, &writer);
        plan->request_bytes = calloc((size_t)plan->request_symbols + 1, sizeof *plan->request_bytes);
        ok = plan->request_bytes != NULL;
        if (!ok)
            say(error, error_size, "out of memory for the plan of rank %u", rank);
    }
    /* A run recovered after an ending without MPI_Finalize (adaptrace-recover)
     * has a skeleton that stops at its last call: the replay's own
     * MPI_Finalize ends it. */
    if (ok)
        plan->ends_in_finalize =
            strcmp(plan->calls_by_signature[plan->sequence[plan->length - 1]].function, "MPI_Finalize") == 0;
    if (ok && !is_init(plan->calls_by_signature[plan->sequence[0]].function)) {
        say(error, error_size, "rank %u's calls do not begin with MPI_Init (%s)", rank,
            plan->calls_by_signature[plan->sequence[0]].function);
        ok = false;
    }
    ok = ok && resolve_posted(plan, error, error_size);
    if (ok && plan->largest_message > INT_MAX) {
        say(error, error_size, "rank %u: a message of %llu bytes is beyond one MPI_BYTE count", rank,
            (unsigned long long)plan->largest_message);
        ok = false;
    }
    if (!ok) {
        adt_replay_plan_free(plan);
        return NULL;
    }
    return plan;
}

void adt_replay_plan_free(adt_replay_plan *plan)
{
    if (!plan)
        return;
    free(plan->calls_by_signature);
    free(plan->requests);
    free(plan->done);
    free(plan->collectives_done);
    free(plan->sequence);
    free(plan->irecv_message);
    free(plan->irecvs);
    free(plan->request_bytes);
    free(plan);
}
