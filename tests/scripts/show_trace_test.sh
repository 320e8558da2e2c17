#!/usr/bin/env bash
# scripts/show_trace.sh, the end of the README's first command
# (scripts/demo.sh), with a stand-in otf2-print first on PATH:
#  - a listing far longer than a pipe holds: the script shows its first
#    20 lines, keeps the whole listing in a file and exits 0 (a pipe into
#    head ended otf2-print with SIGPIPE: exit 141 under pipefail);
#  - otf2-print failing: the script fails too, and otf2-print's message
#    reaches the user.
#
# usage: show_trace_test.sh SCRIPT
set -uo pipefail
script=$1
work=$(mktemp -d /tmp/adt-show-trace-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/archive"

fail() {
    echo "FAIL: $*"
    echo "--- stdout"; head -n 40 "$work/out.txt"
    echo "--- stderr"; head -n 40 "$work/err.txt"
    exit 1
}

# 200000 lines (1.3 MB), 20 times what a pipe buffers.
cat >"$work/bin/otf2-print" <<'STUB'
#!/usr/bin/env bash
seq 1 200000
STUB
chmod +x "$work/bin/otf2-print"
PATH="$work/bin:$PATH" bash "$script" "$work/archive" >"$work/out.txt" 2>"$work/err.txt"
status=$?
[ "$status" -eq 0 ] || fail "long listing: exit status $status, expected 0"
grep -qx "trace: $work/archive/traces.otf2   (summary: $work/archive/summary.json)" "$work/out.txt" ||
    fail "long listing: the trace's path is not shown"
[ "$(grep -cx '[0-9][0-9]*' "$work/out.txt")" -eq 20 ] || fail "long listing: not 20 lines of it shown"
grep -qx 20 "$work/out.txt" && ! grep -qx 21 "$work/out.txt" || fail "long listing: not its first 20 lines"
[ "$(wc -l <"$work/archive.listing.txt")" -eq 200000 ] || fail "long listing: the listing file is incomplete"
[ ! -s "$work/err.txt" ] || fail "long listing: unexpected messages on stderr"

cat >"$work/bin/otf2-print" <<'STUB'
#!/usr/bin/env bash
echo "otf2-print: cannot open the archive" >&2
exit 1
STUB
PATH="$work/bin:$PATH" bash "$script" "$work/archive" >"$work/out.txt" 2>"$work/err.txt"
status=$?
[ "$status" -ne 0 ] || fail "failing otf2-print: exit status 0"
grep -q "otf2-print: cannot open the archive" "$work/err.txt" || fail "failing otf2-print: its message is lost"
echo "PASS"
