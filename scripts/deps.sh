#!/usr/bin/env bash
# Installs what building and testing adaptrace needs on Debian 12.
set -euo pipefail
packages=(build-essential cmake pkg-config gfortran python3
          libopenmpi-dev openmpi-bin libotf2-trace-dev otf2-tools python3-otf2
          libunwind-dev libpapi-dev papi-tools libdw-dev libelf-dev
          libgtest-dev googletest hyperfine python3-mpi4py
          gdb)  # gdb: the whole-run tests show a hung run's stacks (tests/run_with_watchdog.sh)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
