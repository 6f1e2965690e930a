#!/bin/bash
# bench/host_run.sh NAME...: bench/bench.sh on the GPU machine's host (the `device` tool: `run` with
# carry [".benchhost"]), pinned to two cores (taskset -c 0,1, --threads 2, RUNS=3, ripgrep 10 runs, one scaling run),
# for each binary .benchhost/xpuify-NAME; the reports go to $OUT/NAME.md (stderr to NAME.err).
# .benchhost/ (git-ignored, carried to the machine, which has no network) holds what the host lacks:
#   xpuify-NAME        stripped binaries to compare (`strip -o .benchhost/xpuify-NAME build/xpuify`)
#   lib/               their shared libraries from this machine (tree-sitter, pcre2, cjson, yaml, git2 and theirs)
#   corpus_py.tar.xz   the Python files of bench/corpus (corpus/...): the benchmark corpus of docs/performance.md
#   rg.xz, ast-grep.xz ripgrep 13 and ast-grep 0.51 binaries;  gnutime: GNU time (bench.sh wants /usr/bin/time)
# env: SKIP_ASTGREP=1 leaves ast-grep out; RUNS overrides 3.
set -e
H=$PWD/.benchhost
W=/tmp/bh
mkdir -p $W/bin
[ -d $W/corpus ] || tar xJf $H/corpus_py.tar.xz -C $W
xz -dc $H/rg.xz > $W/bin/rg; xz -dc $H/ast-grep.xz > $W/bin/ast-grep; chmod +x $W/bin/*
[ -x /usr/bin/time ] || cp $H/gnutime /usr/bin/time
export LD_LIBRARY_PATH=$H/lib PATH=$W/bin:$PATH
for n in "$@"; do
  XPUIFY=$H/xpuify-$n ASTGREP=$W/bin/ast-grep XPUIFY_ARGS="--threads 2" RUNS=${RUNS:-3} RG_RUNS=10 SCALE_RUNS=1 \
    taskset -c 0,1 bash bench/bench.sh $W/corpus > $OUT/$n.md 2> $OUT/$n.err || echo "bench $n failed: $?"
done
