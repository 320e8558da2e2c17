#!/usr/bin/env bash
# Builds the test programs of the user API outside adaptrace's tree against
# an installed adaptrace (PREFIX, from `cmake --install`), the way an
# application would:
#   cmake       tests/user/external (find_package(adaptrace), the targets
#               adaptrace::adaptrace and adaptrace::fortran);
#   pkg-config  MPICC user_regions.c $(pkg-config --cflags --libs adaptrace),
#               with the library directory as run path.
#
# usage: build_external.sh cmake|pkg-config PREFIX BUILD_DIR SOURCES MPICC
set -euo pipefail
if [ $# -ne 5 ]; then
    echo "usage: $0 cmake|pkg-config PREFIX BUILD_DIR SOURCES MPICC" >&2
    exit 2
fi
way=$1 prefix=$2 build_dir=$3 sources=$4 mpicc=$5
rm -rf "$build_dir"
mkdir -p "$build_dir"
case "$way" in
cmake)
    cmake -S "$sources/external" -B "$build_dir" -DCMAKE_PREFIX_PATH="$prefix" -DSOURCES="$sources"
    cmake --build "$build_dir"
    ;;
pkg-config)
    export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
    # shellcheck disable=SC2046 # the flags are words
    "$mpicc" -o "$build_dir/user-regions-c" "$sources/user_regions.c" $(pkg-config --cflags --libs adaptrace) \
        -Wl,-rpath,"$(pkg-config --variable=libdir adaptrace)" -lm
    ;;
*)
    echo "build_external.sh: unknown way '$way' (cmake or pkg-config)" >&2
    exit 2
    ;;
esac
