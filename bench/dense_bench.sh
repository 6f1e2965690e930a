#!/usr/bin/env bash
# bench/dense_bench.sh: `xpuify check` on files dense with findings, where cost per finding must stay constant.
#
# Generates, in a temporary directory, three Python files of about SIZE bytes each (default 1 MB):
#   lines     one `.cuda()` finding on every line, each its own statement       (issue 19: 10,000 lines took 22 s)
#   one-line  every finding on one line, in one statement                       (40,000 on one line took 209 s)
#   class     every finding in a method of one class                             (statements below the top level)
# and times `check --no-cache --threads 1 --format json` on each (wall and CPU seconds, CPU = user + system,
# medians of RUNS, with GNU time's peak RSS). The goal (docs/performance.md): each under GOAL seconds (default 1)
# on one core. The verdict is taken on the CPU time, which the load of a shared machine inflates far less than the
# wall time (on an idle machine the two agree: the run is single-threaded).
# Then the scaling check: each shape again with N and 2N findings (N = SCALE_N, default 10000; for the class shape
# a class of N and 2N methods). Cost linear in the findings doubles, quadratic cost quadruples: a CPU ratio of 3 or
# more fails. Four shapes run in the scaling check only: `def`, one function of N lines each with a finding,
# `classes`, N module classes each built and moved once, `one-line-utf8`, the one-line shape in a file with a
# non-ASCII character, and `guards`, N top-level CUDA availability tests each guarding a device string (each test
# judged by the guard analysis, its sibling ifs read); and three more rows time the text report of one-line and `fix --diff` of one-line and lines. The script exits 1 when a case misses either, so a
# regression shows; it is a benchmark, not a test (timings depend on the machine and its load).
#
# usage: bench/dense_bench.sh
# env:   XPUIFY (default build/xpuify), SIZE (bytes, default 1000000), RUNS (default 3), GOAL (seconds, default 1),
#        SCALE_N (default 10000; 0 skips the scaling check)
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
source bench/stats.sh
XPUIFY=$(realpath "${XPUIFY:-build/xpuify}")
SIZE=${SIZE:-1000000}
RUNS=${RUNS:-3}
GOAL=${GOAL:-1}
SCALE_N=${SCALE_N:-10000}
[[ -x $XPUIFY ]] || { echo "dense_bench: no xpuify binary at $XPUIFY (run make)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "dense_bench: needs GNU time (/usr/bin/time)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 - "$tmp" "$SIZE" "$SCALE_N" <<'EOF'
import os, sys
out, size, scale_n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
shapes = {
    "lines": ("import torch\n", "x%d = x.cuda()", "\n", ""),
    "one-line": ("import torch\ny = [", "x%d.cuda()", ", ", "]\n"),
    "class": ("import torch\n\n\nclass M:\n", "    def f%d(self, x):\n        return x.cuda()\n", "\n", ""),
}
# shapes for the scaling check only: a def of N lines, each with a finding (the enclosing def of each receiver),
# and N module classes each built once and moved (each called name looked up among the file's classes)
scale_only = {
    "def": ("import torch\n\n\ndef f(x):\n", "    x%d = x.cuda()", "\n", "\n"),
    "classes": ("import torch\n", "class C%d(torch.nn.Module):\n    pass\nm%d = C%d().cuda()", "\n", ""),
    # one non-ASCII character in the file: columns are counted in code points (18 s for 40,000 findings on a
    # line, when each column was counted from the line's start)
    "one-line-utf8": ("import torch\ns = 'é'\ny = [", "x%d.cuda()", ", ", "]\n"),
    # N CUDA availability tests at the top level, each guarding a device string: the guard judge asks, for each,
    # whether the findings it holds are ported, and reads the if chains around it (both scanned every finding or
    # every chain in reach for each test: 2.1x from 2,000 to 4,000)
    "guards": ("import torch\nx = torch.zeros(1)\n", "if torch.cuda.is_available():\n    y%d = x.to('cuda')\nz%d = %d",
               "\n", "\n"),
}
def write(name, head, item, sep, tail, count=None):
    d = os.path.join(out, name)
    os.mkdir(d)
    parts, n, i = [head], len(head) + len(tail), 0
    while (n < size) if count is None else (i < count):
        s = item.replace("%d", str(i)) + sep
        parts.append(s)
        n += len(s)
        i += 1
    parts.append(tail)
    with open(os.path.join(d, "dense.py"), "w") as f:
        f.write("".join(parts))
for name, shape in shapes.items():
    write(name, *shape)
    if scale_n:
        write("%s-%d" % (name, scale_n), *shape, count=scale_n)
        write("%s-%d" % (name, 2 * scale_n), *shape, count=2 * scale_n)
for name, shape in scale_only.items():
    if scale_n:
        write("%s-%d" % (name, scale_n), *shape, count=scale_n)
        write("%s-%d" % (name, 2 * scale_n), *shape, count=2 * scale_n)
EOF

# time_case DIR [MODE]: sets wall and cpu (medians of RUNS runs), rss (the largest, KB) and findings. MODE: json
# (default: check --format json), text (check's default report: a source window per finding) or fix (fix --diff)
time_case() {
    local walls='' cpus='' w u s m
    local -a cmd=(check --no-cache --threads 1 --format json)
    case ${2:-json} in
        text) cmd=(check --no-cache --threads 1) ;;
        fix) cmd=(fix --diff --no-cache --threads 1) ;;
    esac
    rss=0
    for _ in $(seq "$RUNS"); do
        /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$XPUIFY" "${cmd[@]}" "$1" \
            >"$tmp/out.json" 2>"$tmp/err" || [[ $? == 1 ]] ||
            { echo "dense_bench: ${cmd[0]} failed on $1" >&2; cat "$tmp/err" >&2; exit 2; }
        read -r w u s m < <(tail -1 "$tmp/time") # GNU time puts "Command exited with non-zero status 1" first
        walls+=" $w"
        cpus+=" $(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')"
        (( m > rss )) && rss=$m
    done
    wall=$(echo "$walls" | median)
    cpu=$(echo "$cpus" | median)
    findings=$(grep -c '"code":' "$tmp/out.json" || true)
    [[ ${2:-json} == json ]] || findings=-
}

fail=0
printf '| case | bytes | findings | wall s | CPU s | peak RSS MB | goal: CPU < %s s |\n|---|---|---|---|---|---|---|\n' \
    "$GOAL"
for c in lines one-line class; do
    time_case "$tmp/$c"
    ok=$(awk -v m="$cpu" -v g="$GOAL" 'BEGIN { print (m < g) ? "yes" : "NO" }')
    [[ $ok == yes ]] || fail=1
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$c" "$(stat -c %s "$tmp/$c/dense.py")" "$findings" "$wall" \
        "$cpu" "$((rss / 1024))" "$ok"
done
echo "(medians of $RUNS runs; load average $(cut -d' ' -f1 /proc/loadavg) on $(nproc) cores)"
if (( SCALE_N > 0 )); then
    echo
    printf '| shape | findings | CPU s | findings | CPU s | ratio | linear (ratio < 3) |\n|---|---|---|---|---|---|---|\n'
    # the last rows: the default text report and `fix --diff` on the one-line shape (the text report printed the
    # whole line under each finding; fix compared each edit with every accepted one)
    for c in lines one-line class def classes one-line-utf8 guards one-line:text one-line:fix lines:fix; do
        mode=${c#*:}; [[ $mode == "$c" ]] && mode=json
        d=${c%%:*}
        time_case "$tmp/$d-$SCALE_N" "$mode"
        c1=$cpu f1=$findings
        time_case "$tmp/$d-$((2 * SCALE_N))" "$mode"
        c2=$cpu f2=$findings
        read -r ratio ok < <(awk -v a="$c1" -v b="$c2" \
            'BEGIN { if (a < 0.01) a = 0.01; r = b / a; printf "%.2f %s\n", r, (r < 3) ? "yes" : "NO" }')
        [[ $ok == yes ]] || fail=1
        printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$c" "$f1" "$c1" "$f2" "$c2" "$ratio" "$ok"
    done
fi
exit "$fail"
