#!/usr/bin/env bash
# The end of scripts/demo.sh: says where a traced run's archive is and shows
# the first lines of otf2-print's listing of it.
#
# usage: show_trace.sh ARCHIVE_DIR
#
# The whole listing goes to ARCHIVE_DIR.listing.txt first and its head is
# shown from there: piping otf2-print straight into `head` ends otf2-print
# with SIGPIPE as soon as head has its lines, which under pipefail made the
# README's first command exit 141 after a successful run. With the file,
# otf2-print's own exit status decides (an archive it cannot read still
# fails the script, with otf2-print's message on stderr).
set -euo pipefail
if [ $# -ne 1 ]; then
    echo "usage: $0 ARCHIVE_DIR" >&2
    exit 2
fi
archive=$1
listing="$archive.listing.txt"
echo
echo "trace: $archive/traces.otf2   (summary: $archive/summary.json)"
otf2-print -A "$archive/traces.otf2" >"$listing"
head -n 20 "$listing"
echo "... (otf2-print's whole listing: $listing)"
