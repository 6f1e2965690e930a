#!/usr/bin/env bash
# bench/dense_bench.sh: `xpuify check` on files dense with findings, where cost per finding must stay constant.
#
# Generates, in a temporary directory, three Python files of about SIZE bytes each (default 1 MB):
#   lines     one `.cuda()` finding on every line, each its own statement       (issue 19: 10,000 lines took 22 s)
#   one-line  every finding on one line, in one statement                       (40,000 on one line took 209 s)
#   class     every finding in a method of one class                             (statements below the top level)
# and times `check --no-cache --format json` on each (wall seconds, median of RUNS, with GNU time's peak RSS).
# The goal (docs/performance.md): each under GOAL seconds (default 1) on one core; the script prints the verdict
# per case and exits 1 when one misses it, so a regression shows; it is a benchmark, not a test (timings depend on
# the machine and its load).
#
# usage: bench/dense_bench.sh
# env:   XPUIFY (default build/xpuify), SIZE (bytes, default 1000000), RUNS (default 3), GOAL (seconds, default 1)
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
source bench/stats.sh
XPUIFY=$(realpath "${XPUIFY:-build/xpuify}")
SIZE=${SIZE:-1000000}
RUNS=${RUNS:-3}
GOAL=${GOAL:-1}
[[ -x $XPUIFY ]] || { echo "dense_bench: no xpuify binary at $XPUIFY (run make)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "dense_bench: needs GNU time (/usr/bin/time)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 - "$tmp" "$SIZE" <<'EOF'
import os, sys
out, size = sys.argv[1], int(sys.argv[2])
def write(name, head, item, sep, tail):
    d = os.path.join(out, name)
    os.mkdir(d)
    parts, n, i = [head], len(head) + len(tail), 0
    while n < size:
        s = item % i + sep
        parts.append(s)
        n += len(s)
        i += 1
    parts.append(tail)
    with open(os.path.join(d, "dense.py"), "w") as f:
        f.write("".join(parts))
write("lines", "import torch\n", "x%d = x.cuda()", "\n", "")
write("one-line", "import torch\ny = [", "x%d.cuda()", ", ", "]\n")
write("class", "import torch\n\n\nclass M:\n", "    def f%d(self, x):\n        return x.cuda()\n", "\n", "")
EOF

fail=0
printf '| case | bytes | findings | wall s (median of %s) | peak RSS MB | goal < %s s |\n|---|---|---|---|---|---|\n' \
    "$RUNS" "$GOAL"
for c in lines one-line class; do
    f=$tmp/$c/dense.py
    walls='' rss=0
    for _ in $(seq "$RUNS"); do
        /usr/bin/time -f '%e %M' -o "$tmp/time" "$XPUIFY" check --no-cache --threads 1 --format json "$tmp/$c" \
            >"$tmp/out.json" || [[ $? == 1 ]] || { echo "dense_bench: check failed on $c" >&2; exit 2; }
        read -r w m < <(tail -1 "$tmp/time") # GNU time puts "Command exited with non-zero status 1" first
        walls+=" $w"
        (( m > rss )) && rss=$m
    done
    findings=$(grep -c '"code":' "$tmp/out.json" || true)
    med=$(echo "$walls" | median)
    ok=$(awk -v m="$med" -v g="$GOAL" 'BEGIN { print (m < g) ? "yes" : "NO" }')
    [[ $ok == yes ]] || fail=1
    printf '| %s | %s | %s | %s | %s | %s |\n' "$c" "$(stat -c %s "$f")" "$findings" "$med" "$((rss / 1024))" "$ok"
done
exit "$fail"
