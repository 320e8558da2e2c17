#!/usr/bin/env bash
# The test command of README.md: installs dependencies, then five stages,
# each a build of its own:
# 1. Release: every test (the benchmarks' smoke tests too: they check that
#    each benchmark script runs and prints its JSON).
# 2. ASan + UBSan: every test but those labelled release-only
#    (tests/CMakeLists.txt says which and why, and each label why that
#    test): every unit test, and each distinct path of the library, the
#    analyzer and the commands once; a second rank count, sampling setting
#    or language of one program, the checks of the documentation and
#    timing checks run in Release only.
# 3. The reduced configuration (no Fortran, PAPI or report page): the tests
#    of what changes without them.
# 4. ThreadSanitizer: the threaded tests.
# 5. The readers' fuzz targets, 20 s each (tests/fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"
# ADAPTRACE_BENCHMARKS=OFF: the benchmarks' smoke tests are Release's (see
# above), so the sanitizer build makes only the benchmark programs that
# tests run (benchmarks/CMakeLists.txt), ~18 files fewer to compile.
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DADAPTRACE_SANITIZE=ON -DADAPTRACE_BENCHMARKS=OFF
cmake --build build-sanitize -j "$jobs"
ctest --test-dir build-sanitize --output-on-failure -j "$jobs" --no-tests=error -LE release-only
# The reduced configuration (docs/install.md): Fortran, PAPI and the report
# page off, as a site without them builds adaptrace. The library and the
# commands it installs, the sampler's tests of ADAPTRACE_METRICS, a C
# program traced on 2 ranks and its archive checked, a program calling MPI
# through the Fortran entry points told why it is not traced (and a tool
# ahead of adaptrace told as such), the refusal of --html, the man pages (man.installed installs
# every installed target, hence all of them in the build), the Spack
# recipe and the options' outcomes; everything else is the same code the
# Release build tested above. So are core, buffer and flush: no source or
# flag of theirs depends on the three options, and their unit tests
# (test_core, test_buffer, test_flush; 55 tests) ran in Release and under
# the sanitizers; compiled here again they took 27 s of this build's 79 s.
cmake -S . -B build-reduced -DCMAKE_BUILD_TYPE=Release \
      -DADAPTRACE_FORTRAN=OFF -DADAPTRACE_PAPI=OFF -DADAPTRACE_REPORT_HTML=OFF -DADAPTRACE_BENCHMARKS=OFF
cmake --build build-reduced -j "$jobs" --target adaptrace adaptrace_lib adaptrace-report adaptrace-recover adaptrace-replay \
      adaptrace-demo adaptrace-analyzer adaptrace_user adaptrace_man_pages \
      test_sampler mpi-families-c adaptrace-mpi-trace-check mpi-fortran-entry-points adt_test_counting_tool mpi-families-c-linked
ctest --test-dir build-reduced --output-on-failure -j "$jobs" --no-tests=error \
      -R '^(Sampler\.(Metrics|Values|TaskClock)|mpi\.c\.np2\.sampling-off\.(run|check|otf2-print)$|mpi\.without-fortran|mpi\.stack-wrong-order|report\.html\.not-built|man\.|spack\.|options\.)'
# ThreadSanitizer: the tests that share adaptrace's structures between
# threads (the buffer under timer signals, the definitions registry, the
# collectives among threads of adaptrace-recover, the MPI handle table,
# the calling-context tree, the skeletons' shared memory). Left out: the
# other sampler tests, the runtime and MPI whole-run tests (TSan holds asynchronous signals back
# until the thread's next intercepted call, so compute loops are hardly
# sampled; libunwind frees its per-thread cache after TSan has let the
# thread go, a SIGSEGV; a sanitized library preloaded into an
# uninstrumented program crashes it); the buffer's image taken while
# another thread appends (BufferImage), which copies memory being written
# by design (a snapshot from a signal handler, which may not wait) and
# relies on its reader's validation, so TSan reports the copy itself; and
# serial tests, which TSan only slows down.
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DADAPTRACE_TSAN=ON
cmake --build build-tsan -j "$jobs" --target test_buffer_signals test_format test_mpi_tables test_sampler \
      test_skeleton test_online_handover
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir build-tsan --output-on-failure -j "$jobs" --no-tests=error \
        -R '^(BufferSignals|FormatDefs|FormatThreadCollectives|HandleTable|OnlineHandover|SamplerContextTree|SamplerThreadRings|SkeletonShare)\.'
# The readers' fuzz targets (tests/fuzz/CMakeLists.txt): clang's libFuzzer
# with ASan and UBSan, the kept regression inputs, then 20 s each.
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DADAPTRACE_FUZZ=ON
cmake --build build-fuzz -j "$jobs" --target fuzz_targets
ctest --test-dir build-fuzz --output-on-failure -j "$jobs" --no-tests=error -L fuzz
