#!/usr/bin/env bash
# bench/file_times.sh: where a cold run of `xpuify check` spends its time, file by file. Runs xpuify once on one
# thread without the results cache, with XPUIFY_FILE_TIMES=1 (each file's CPU time on its thread, from the engine),
# and prints the total, the files in four buckets of time (under 1 ms, 1-10 ms, 10-50 ms, 50 ms and more) and the
# slowest files. docs/performance.md (2026-12-08) quotes its output for bench/corpus.
#
# usage: bench/file_times.sh [PATH...]          (default bench/corpus)
#   env: XPUIFY=...   the binary (default build/xpuify)    TOP=N   how many of the slowest files (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
XPUIFY=${XPUIFY:-build/xpuify}
TOP=${TOP:-20}
(( $# )) || set -- bench/corpus
[[ -x $XPUIFY ]] || { echo "file_times: no xpuify binary at $XPUIFY" >&2; exit 2; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
XPUIFY_FILE_TIMES=1 "$XPUIFY" check --format json --no-ignore --exit-zero --threads 1 --no-cache "$@" 2>&1 >/dev/null |
    sed -n 's/^file-time //p' | sort -k1,1 -g -r > "$out"
awk '{ t = $1; s += t; n++
       if (t < 1) { a++; sa += t } else if (t < 10) { b++; sb += t } else if (t < 50) { c++; sc += t } else { d++; sd += t } }
     END { printf "%d files, %.2f s of CPU on their thread\n", n, s / 1000
           printf "  under 1 ms: %d files, %.2f s\n  1-10 ms: %d files, %.2f s\n  10-50 ms: %d files, %.2f s\n", a, sa / 1000, b, sb / 1000, c, sc / 1000
           printf "  50 ms or more: %d files, %.2f s\n", d, sd / 1000 }' "$out"
echo "slowest (ms, path):"
head -n "$TOP" "$out"
