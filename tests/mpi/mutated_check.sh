#!/usr/bin/env bash
# Shows that the trace checker can fail: it must reject the same archive
# when the expectations are altered (one call removed; one communicator's
# members reversed).
#
# usage: mutated_check.sh CHECKER ARCHIVE EXPECT_DIR API_FILE WORK_DIR
set -uo pipefail
if [ $# -ne 5 ]; then
    echo "usage: $0 CHECKER ARCHIVE EXPECT_DIR API_FILE WORK_DIR" >&2
    exit 2
fi
checker=$1 archive=$2 expect=$3 api=$4 work=$5

# mutate NAME SED_SCRIPT GTEST_FILTER: the checker must fail on rank 1's altered file.
mutate() {
    local name=$1 script=$2 filter=$3
    rm -rf "$work/$name"
    cp -r "$expect" "$work/$name"
    sed -i "$script" "$work/$name/rank.1.txt"
    if cmp -s "$expect/rank.1.txt" "$work/$name/rank.1.txt"; then
        echo "FAIL: the mutation '$name' changed nothing in $expect/rank.1.txt"
        exit 1
    fi
    if "$checker" --archive "$archive" --expect "$work/$name" --api "$api" \
        --gtest_filter="$filter" >"$work/$name.log" 2>&1; then
        echo "FAIL: the checker accepted expectations with $name"
        exit 1
    fi
    echo "ok: the checker rejects $name"
}

mkdir -p "$work"
mutate missing-call '0,/^call MPI_Isend$/{/^call MPI_Isend$/d}' '*EveryCallOnItsRankInOrder*'
mutate reversed-members '0,/^members [0-9]* [0-9]*/{s/^members \([0-9]*\) \([0-9]*\)/members \2 \1/}' \
    '*CommunicatorsHaveTheMembersTheProgramBuilt*'
