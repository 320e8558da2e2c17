/* A program whose executable is replaced while it runs (issue #11: a user
 * rebuilds the application during a long job; the linker unlinks the old
 * file and writes a new one). It prints "started", spins until the file
 * GO exists (the test replaces the executable first), then computes in
 * work_after_rebuild, whose samples must still be named.
 *
 * usage: rebuilt_program GO */
#include <stdio.h>
#include <unistd.h>

static volatile double sink;

__attribute__((noinline)) static void work_after_rebuild(void)
{
    for (long i = 0; i < 300000000L; i++)
        sink += (double)i * 0.5;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    puts("started");
    fflush(stdout);
    while (access(argv[1], F_OK) != 0)
        sink += 1.0;
    work_after_rebuild();
    return 0;
}
