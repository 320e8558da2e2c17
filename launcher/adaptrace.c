/*
 * adaptrace [options] PROGRAM [ARGS...]
 *
 * Sets the ADAPTRACE_* variables from the options (one per row of
 * adt_config_vars), checks every value with the library's own parsers,
 * preloads libadaptrace.so (and right behind it the tools of --stack) and
 * replaces itself with the program.
 */
#include "core/core.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXIT_USAGE 2
#define EXIT_NOT_MEASURABLE 126
#define EXIT_CANNOT_EXECUTE 127
#define LIBRARY_NAME "libadaptrace.so"

static void print_usage(FILE *stream)
{
    fprintf(stream,
            "usage: adaptrace [options] PROGRAM [ARGS...]\n"
            "       mpirun -np N adaptrace [options] PROGRAM [ARGS...]\n"
            "\n"
            "Runs PROGRAM with the adaptrace measurement library preloaded: every MPI call\n"
            "is traced and timer samples are taken in between; the OTF2 archive is\n"
            "written at the end of the run.\n"
            "\n"
            "Every option takes a value (--option VALUE or --option=VALUE) and sets the\n"
            "environment variable named with it; variables already set are used as well.\n"
            "  --help             print this help and exit\n"
            "  --version          print the version and exit\n"
            "  --                 end of options, the next argument is PROGRAM\n"
            "\n");
}

static void print_help(void)
{
    print_usage(stdout);
    for (size_t i = 0; i < adt_config_var_count; i++) {
        const adt_config_var *var = &adt_config_vars[i];
        printf("  --%s VALUE\n", var->option);
        printf("      %s (default: %s)\n", var->name, var->default_value[0] != '\0' ? var->default_value : "\"\"");
        printf("      %s\n", var->help);
        printf("      accepted: %s\n", var->accepted);
    }
}

static int usage_error(const char *format, const char *argument) __attribute__((format(printf, 1, 0)));

static int usage_error(const char *format, const char *argument)
{
    fprintf(stderr, "adaptrace: ");
    fprintf(stderr, format, argument);
    fprintf(stderr, " (see adaptrace --help)\n");
    return EXIT_USAGE;
}

/* prefix/lib/libadaptrace.so for a launcher at prefix/bin/adaptrace. */
static int find_library(char *path, size_t path_size)
{
    char self[PATH_MAX];
    ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    if (length < 0) {
        fprintf(stderr, "adaptrace: cannot read /proc/self/exe: %s\n", strerror(errno));
        return -1;
    }
    self[length] = '\0';
    char *slash = strrchr(self, '/');
    if (slash != NULL)
        *slash = '\0';
    int written = snprintf(path, path_size, "%s/../lib/%s", self, LIBRARY_NAME);
    if (written < 0 || (size_t)written >= path_size) {
        fprintf(stderr, "adaptrace: path of %s beside %s is too long\n", LIBRARY_NAME, self);
        return -1;
    }
    char resolved[PATH_MAX];
    if (realpath(path, resolved) == NULL) {
        fprintf(stderr, "adaptrace: cannot find the measurement library %s: %s\n", path, strerror(errno));
        return -1;
    }
    snprintf(path, path_size, "%s", resolved);
    return 0;
}

static bool preload_contains(const char *preload, const char *library)
{
    size_t length = strlen(library);
    for (const char *entry = preload; *entry != '\0';) {
        size_t entry_length = strcspn(entry, ": ");
        if (entry_length == length && strncmp(entry, library, length) == 0)
            return true;
        entry += entry_length;
        entry += strspn(entry, ": ");
    }
    return false;
}

/* library first, the stacked tools (ADAPTRACE_STACK, "" for none) right
 * behind it, then what LD_PRELOAD held: each wrapper passes its call on to
 * the next definition in that order (mpi-events/next.h). A tool that the
 * inherited LD_PRELOAD names as well is loaded once, at its first place. A
 * preload that already holds the library (a launcher started by a traced
 * process) is left as it is. */
static int set_preload(const char *library, const char *stack)
{
    const char *existing = getenv("LD_PRELOAD");
    if (existing == NULL)
        existing = "";
    if (preload_contains(existing, library))
        return 0;
    size_t size = strlen(library) + 1 + strlen(stack) + 1 + strlen(existing) + 1;
    char *value = malloc(size);
    if (value == NULL)
        return -1;
    snprintf(value, size, "%s%s%s%s%s", library, stack[0] != '\0' ? ":" : "", stack,
             existing[0] != '\0' ? ":" : "", existing);
    int result = setenv("LD_PRELOAD", value, 1);
    free(value);
    return result;
}

/* Where execvp will find name: name itself when it holds a slash, else
 * the first executable file of that name on PATH (execvp's default when
 * PATH is unset). False when there is none: execvp then says why. */
static bool locate_program(const char *name, char *path, size_t size)
{
    if (strchr(name, '/') != NULL) {
        snprintf(path, size, "%s", name);
        return true;
    }
    const char *search = getenv("PATH");
    if (search == NULL)
        search = "/bin:/usr/bin";
    while (*search != '\0') {
        size_t length = strcspn(search, ":");
        if (length == 0)
            snprintf(path, size, "./%s", name);
        else
            snprintf(path, size, "%.*s/%s", (int)length, search, name);
        if (access(path, X_OK) == 0)
            return true;
        search += length + (search[length] == ':');
    }
    return false;
}

/* A 64-bit ELF executable without a program interpreter (PT_INTERP) is
 * statically linked (static-pie too): no dynamic loader runs in it, so
 * LD_PRELOAD cannot bring the library in. Anything else — a dynamic
 * executable, a script, a file that cannot be read — is not. */
static bool statically_linked(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    Elf64_Ehdr header;
    bool interpreter_missing = false;
    if (pread(fd, &header, sizeof header, 0) == (ssize_t)sizeof header &&
        memcmp(header.e_ident, ELFMAG, SELFMAG) == 0 && header.e_ident[EI_CLASS] == ELFCLASS64 &&
        (header.e_type == ET_EXEC || header.e_type == ET_DYN) && header.e_phentsize == sizeof(Elf64_Phdr)) {
        interpreter_missing = true;
        for (unsigned i = 0; i < header.e_phnum && interpreter_missing; i++) {
            Elf64_Phdr segment;
            off_t offset = (off_t)(header.e_phoff + (Elf64_Off)i * sizeof segment);
            if (pread(fd, &segment, sizeof segment, offset) != (ssize_t)sizeof segment || segment.p_type == PT_INTERP)
                interpreter_missing = false;
        }
    }
    close(fd);
    return interpreter_missing;
}

static const char *lookup_environment(const char *name)
{
    return getenv(name);
}

int main(int argc, char **argv)
{
    adt_config scratch;
    adt_config_defaults(&scratch);
    char error[1024];
    int index = 1;
    while (index < argc && argv[index][0] == '-') {
        if (argv[index][1] != '-')
            return usage_error("unknown option '%s'", argv[index]);
        const char *argument = argv[index] + 2;
        index++;
        if (argument[0] == '\0')
            break;
        if (strcmp(argument, "help") == 0) {
            print_help();
            return 0;
        }
        if (strcmp(argument, "version") == 0) {
            printf("adaptrace %s\n", ADAPTRACE_VERSION);
            return 0;
        }
        char option[64];
        const char *equals = strchr(argument, '=');
        size_t option_length = equals != NULL ? (size_t)(equals - argument) : strlen(argument);
        if (option_length >= sizeof option)
            return usage_error("unknown option '--%s'", argument);
        memcpy(option, argument, option_length);
        option[option_length] = '\0';
        const adt_config_var *var = adt_config_find_option(option);
        if (var == NULL)
            return usage_error("unknown option '--%s'", option);
        const char *value;
        if (equals != NULL) {
            value = equals + 1;
        } else if (index < argc) {
            value = argv[index++];
        } else {
            return usage_error("option '--%s' needs a value", option);
        }
        if (adt_config_set(&scratch, var, value, error, sizeof error) != 0) {
            fprintf(stderr, "adaptrace: --%s: %s\n", option, error);
            return EXIT_USAGE;
        }
        if (setenv(var->name, value, 1) != 0) {
            fprintf(stderr, "adaptrace: cannot set %s: %s\n", var->name, strerror(errno));
            return EXIT_USAGE;
        }
    }
    if (index >= argc)
        return usage_error("%s", "no program given");

    /* Inherited variables reach the library unchanged: check them now
     * rather than let the measurement switch itself off at start. */
    if (adt_config_load(&scratch, lookup_environment, error, sizeof error) != 0) {
        fprintf(stderr, "adaptrace: %s\n", error);
        return EXIT_USAGE;
    }

    for (const char *entry = scratch.stack; *entry != '\0';) {
        size_t length = strcspn(entry, ":");
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%.*s", (int)length, entry);
        /* A bare name is the loader's to find; a path must be there, or the
         * loader would only warn on every rank and run the tool without. */
        if (strchr(path, '/') != NULL && access(path, R_OK) != 0) {
            fprintf(stderr, "adaptrace: ADAPTRACE_STACK: cannot read the tool library %s: %s\n", path,
                    strerror(errno));
            return EXIT_USAGE;
        }
        entry += length + (entry[length] == ':');
    }

    char library[PATH_MAX];
    if (find_library(library, sizeof library) != 0)
        return EXIT_CANNOT_EXECUTE;
    if (set_preload(library, scratch.stack) != 0) {
        fprintf(stderr, "adaptrace: cannot set LD_PRELOAD: %s\n", strerror(errno));
        return EXIT_CANNOT_EXECUTE;
    }
    char program[PATH_MAX];
    if (locate_program(argv[index], program, sizeof program) && statically_linked(program)) {
        fprintf(stderr,
                "adaptrace: '%s' is statically linked: the measurement library cannot be preloaded into it, so "
                "nothing would be measured; build it as a dynamic executable (mpicc's default)\n",
                argv[index]);
        return EXIT_NOT_MEASURABLE;
    }
    execvp(argv[index], argv + index);
    fprintf(stderr, "adaptrace: cannot execute '%s': %s\n", argv[index], strerror(errno));
    return EXIT_CANNOT_EXECUTE;
}
