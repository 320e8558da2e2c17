// Stress for the sampler against the dynamic loader (issue #9): 4 threads
// for a given time, two of them in the loader as often as they can, two
// computing, all sampled. A sampler that takes the loader's lock (or a lock
// a loader-holding thread waits for) in its handler hangs here.
//
// usage: loader_stress MODE PLUGIN SECONDS
//   dlopen:  dlopen + call + dlclose of PLUGIN in a loop
//   iterate: dl_iterate_phdr over every object in a loop
//   throw:   C++ throw/catch through three frames in a loop (the C++
//            unwinder looks up the frames' tables the loader's way)
//   threads: start and join short threads that each load and unload PLUGIN
// Prints "done <loops>" and exits 0 when every thread finished.
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string mode, plugin;
double seconds;
std::atomic<long> loops{0};
volatile double sink;

double now()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

void load_and_unload()
{
    void *handle = dlopen(plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        std::fprintf(stderr, "loader_stress: dlopen %s: %s\n", plugin.c_str(), dlerror());
        std::exit(2);
    }
    auto work = reinterpret_cast<int (*)(int)>(dlsym(handle, "plugin_work"));
    if (work == nullptr || work(1000) != 1000) {
        std::fprintf(stderr, "loader_stress: plugin_work missing or wrong\n");
        std::exit(2);
    }
    dlclose(handle);
}

int count_object(struct dl_phdr_info *info, size_t, void *data)
{
    *static_cast<long *>(data) += info->dlpi_phnum > 0;
    return 0;
}

__attribute__((noinline)) void throw_deep(int depth)
{
    if (depth == 0)
        throw std::runtime_error("deep");
    throw_deep(depth - 1);
    sink += depth;  // keeps the recursion from becoming a loop
}

void loader_round()
{
    if (mode == "dlopen") {
        load_and_unload();
    } else if (mode == "iterate") {
        long objects = 0;
        dl_iterate_phdr(count_object, &objects);
        if (objects < 2) {
            std::fprintf(stderr, "loader_stress: dl_iterate_phdr saw %ld objects\n", objects);
            std::exit(2);
        }
    } else if (mode == "throw") {
        try {
            throw_deep(3);
        } catch (const std::runtime_error &) {
            sink += 1;
        }
    } else {
        std::thread child(load_and_unload);
        child.join();
    }
}

void loader_thread()
{
    const double end = now() + seconds;
    while (now() < end) {
        loader_round();
        loops++;
    }
}

void compute_thread()
{
    const double end = now() + seconds;
    while (now() < end)
        for (int i = 0; i < 100000; ++i)
            sink += i * 0.25;
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s dlopen|iterate|throw|threads PLUGIN SECONDS\n", argv[0]);
        return 2;
    }
    mode = argv[1];
    plugin = argv[2];
    seconds = std::atof(argv[3]);
    if (mode != "dlopen" && mode != "iterate" && mode != "throw" && mode != "threads") {
        std::fprintf(stderr, "loader_stress: unknown mode %s\n", argv[1]);
        return 2;
    }
    std::vector<std::thread> threads;
    threads.emplace_back(loader_thread);
    threads.emplace_back(loader_thread);
    threads.emplace_back(compute_thread);
    threads.emplace_back(compute_thread);
    for (auto &thread : threads)
        thread.join();
    std::printf("done %ld\n", loops.load());
    return 0;
}
