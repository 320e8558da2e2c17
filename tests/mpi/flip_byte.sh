#!/usr/bin/env bash
# Inverts every bit of the byte at OFFSET of FILE, so that the byte always
# changes (writing a fixed value leaves a byte that already held it as it
# was, and a damaged-file test then passes a file that is not damaged).
#
# usage: flip_byte.sh FILE OFFSET
set -euo pipefail
if [ $# -ne 2 ]; then
    echo "usage: $0 FILE OFFSET" >&2
    exit 2
fi
file=$1 offset=$2
byte=$(od -An -tu1 -j "$offset" -N1 "$file" | tr -d ' ')
[ -n "$byte" ] || { echo "$0: $file has no byte at $offset" >&2; exit 1; }
# shellcheck disable=SC2059 # the format is the octal escape of the byte
printf "\\$(printf '%03o' $((255 - byte)))" | dd of="$file" bs=1 seek="$offset" conv=notrunc status=none
