/*
 * The communication matrix of the event feed (feed.h): per sending and
 * receiving rank, the messages sent and their bytes. Normal context
 * (adaptrace-report, the analysis process): malloc allowed.
 */
#include <stdlib.h>

#include "feed/feed.h"

int adt_feed_matrix_create(adt_feed_matrix *matrix, uint32_t ranks)
{
    size_t cells = (size_t)ranks * ranks;
    *matrix = (adt_feed_matrix){ .ranks = ranks,
                                 .bytes = calloc(cells ? cells : 1, sizeof *matrix->bytes),
                                 .messages = calloc(cells ? cells : 1, sizeof *matrix->messages) };
    if (matrix->bytes == NULL || matrix->messages == NULL) {
        adt_feed_matrix_free(matrix);
        return -1;
    }
    return 0;
}

void adt_feed_matrix_free(adt_feed_matrix *matrix)
{
    free(matrix->bytes);
    free(matrix->messages);
    *matrix = (adt_feed_matrix){ 0 };
}

int adt_feed_message(adt_feed_matrix *matrix, uint32_t sender, uint32_t receiver, uint64_t bytes)
{
    return adt_feed_messages(matrix, sender, receiver, 1, bytes);
}

int adt_feed_messages(adt_feed_matrix *matrix, uint32_t sender, uint32_t receiver, uint64_t count, uint64_t bytes)
{
    if (sender >= matrix->ranks || receiver >= matrix->ranks)
        return -1;
    size_t cell = (size_t)sender * matrix->ranks + receiver;
    matrix->bytes[cell] += bytes;
    matrix->messages[cell] += count;
    return 0;
}
