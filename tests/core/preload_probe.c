/* Stands in for libadaptrace.so in the launcher tests: proves that the
 * preloaded library is loaded into the program by appending one line to
 * the file named by ADT_TEST_PROBE_FILE. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void report_loaded(void)
{
    const char *path = getenv("ADT_TEST_PROBE_FILE");
    if (path == NULL)
        return;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0)
        return;
    if (write(fd, "loaded\n", 7) != 7)
        _exit(99);
    close(fd);
}
