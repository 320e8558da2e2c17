/* A program that sleeps and polls while another thread computes (issue
 * #11): it counts the sleeping calls that returned early (EINTR, time
 * left) and prints the counts; untraced they are all 0, and traced they
 * must be too, with every sampling clock. Then its own SIGALRM (a handler
 * without SA_RESTART) must still cut a sleep and an endless poll short,
 * as untraced.
 *
 * usage: sleeping_calls
 * Prints "nanosleep_eintr N poll_eintr N usleep_eintr N sleep_left N
 * own_signal_sleep_cut N own_signal_poll_eintr N" (untraced: 0 0 0 0 1 1). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop;
static volatile double sink;

static void on_alarm(int signum)
{
    (void)signum;
}

static void *compute(void *unused)
{
    /* SIGALRM goes to the main thread, which sleeps. */
    sigset_t alarm_only;
    sigemptyset(&alarm_only);
    sigaddset(&alarm_only, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alarm_only, NULL);
    while (!atomic_load_explicit(&stop, memory_order_relaxed))
        sink += 1.0;
    return unused;
}

int main(void)
{
    pthread_t thread;
    if (pthread_create(&thread, NULL, compute, NULL) != 0)
        return 2;
    int nanosleep_eintr = 0, poll_eintr = 0, usleep_eintr = 0;
    for (int i = 0; i < 300; i++) {
        struct timespec millisecond = {0, 1000000};
        if (nanosleep(&millisecond, NULL) != 0 && errno == EINTR)
            nanosleep_eintr++;
    }
    for (int i = 0; i < 3; i++)
        if (poll(NULL, 0, 100) < 0 && errno == EINTR)
            poll_eintr++;
    for (int i = 0; i < 3; i++)
        if (usleep(100000) != 0 && errno == EINTR)
            usleep_eintr++;
    unsigned sleep_left = sleep(1);

    struct sigaction alarm_action = {.sa_handler = on_alarm};
    sigemptyset(&alarm_action.sa_mask);
    sigaction(SIGALRM, &alarm_action, NULL);
    ualarm(100000, 0);
    int own_signal_sleep_cut = sleep(5) > 0;
    ualarm(100000, 0);
    int own_signal_poll_eintr = poll(NULL, 0, -1) < 0 && errno == EINTR;

    atomic_store(&stop, 1);
    pthread_join(thread, NULL);
    printf("nanosleep_eintr %d poll_eintr %d usleep_eintr %d sleep_left %u own_signal_sleep_cut %d "
           "own_signal_poll_eintr %d\n",
           nanosleep_eintr, poll_eintr, usleep_eintr, sleep_left, own_signal_sleep_cut, own_signal_poll_eintr);
    return 0;
}
