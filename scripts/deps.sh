#!/usr/bin/env bash
# Installs what building and testing adaptrace needs on Debian 12.
set -euo pipefail
packages=(build-essential cmake pkg-config gfortran python3
          libopenmpi-dev openmpi-bin libotf2-trace-dev otf2-tools python3-otf2
          libunwind-dev libpapi-dev papi-tools libdw-dev libelf-dev
          libgtest-dev googletest hyperfine python3-mpi4py
          clang libclang-rt-14-dev  # the readers' fuzz targets (tests/fuzz): clang's libFuzzer
          gdb  # gdb: the whole-run tests show a hung run's stacks (tests/run_with_watchdog.sh)
          man-db  # man -l renders the man pages in the man.* tests (tests/man)
          chromium)  # chromium: report.html.browser draws the report page headless
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm: the build installs the report page's libraries (report/package-lock.json).
# Debian's npm, unless an npm is there already (NodeSource's nodejs carries
# its own and conflicts with Debian's npm package).
command -v npm >/dev/null || missing+=(npm)
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
