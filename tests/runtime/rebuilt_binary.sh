#!/usr/bin/env bash
# Samples of a program whose executable was replaced during the run still
# name its functions (issue #11).
#
# usage: rebuilt_binary.sh WORK_DIR LAUNCHER PROGRAM OTF2_PRINT
set -uo pipefail
work=$1 launcher=$2 program=$3 otf2_print=$4
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
fail() {
    echo "FAIL: $*"
    echo "--- stderr"; cat err.txt
    exit 1
}
cp "$program" app
ADAPTRACE_OUTPUT="$work/archive" "$launcher" ./app go >out.txt 2>err.txt &
run=$!
for _ in $(seq 600); do
    grep -q started out.txt && break
    sleep 0.1
done
# What a linker does: unlink the old file, write a new one at its path.
rm app
cp /bin/true app
touch go
wait "$run" || fail "exit status $?"
"$otf2_print" -G "$work/archive/traces.otf2" >definitions.txt 2>&1 || fail "otf2-print -G failed"
grep -q 'work_after_rebuild' definitions.txt || fail "no region named work_after_rebuild: $(grep -c '"0x' definitions.txt) regions named by address"
echo "ok"
