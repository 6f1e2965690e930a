#!/usr/bin/env bash
# bench/compare_builds.sh: whether two xpuify binaries report and fix the same, byte for byte, on the benchmark
# corpus, the fixtures and the dense benchmark's files: what a change meant to make xpuify faster, and nothing
# else, must keep. Compares `check -f json` of bench/corpus (the directory with one and two threads, every .py file
# named, and the first 150 .py files checked one at a time, as a pre-commit hook does), `fix --diff` plain and with
# `--unsafe-fixes`, the fixtures' JSON and unsafe fix diff, the dense `lines` and `one-line` files (1 MB) and their
# fix diff; stderr of the corpus and fix runs too. Prints `same` or `DIFF` per output; exits 1 when any differs.
#
# usage: bench/compare_builds.sh OLD_XPUIFY NEW_XPUIFY [OUT_DIR]
#        (OUT_DIR, default a temporary directory, keeps old/ and new/ for a look at the differences)
# The corpus is bench/corpus (bench/fetch_corpus.md); extracting bench/heldout changes what the project model sees
# from the repository root, so compare both binaries in the same tree state.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
(( $# >= 2 )) || { echo "usage: bench/compare_builds.sh OLD_XPUIFY NEW_XPUIFY [OUT_DIR]" >&2; exit 2; }
OLD=$(realpath "$1") NEW=$(realpath "$2")
[[ -x $OLD && -x $NEW ]] || { echo "compare_builds: both binaries must be executable" >&2; exit 2; }
[[ -d bench/corpus ]] || { echo "compare_builds: no bench/corpus (bench/fetch_corpus.md)" >&2; exit 2; }
OUT=${3:-$(mktemp -d)}
mkdir -p "$OUT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp" <<'EOF'
import os, sys
out = sys.argv[1]
shapes = {"lines": ("import torch\n", "x%d = x.cuda()", "\n", ""),
          "one-line": ("import torch\ny = [", "x%d.cuda()", ", ", "]\n")}
for name, (head, item, sep, tail) in shapes.items():
    parts, n, i = [head], len(head) + len(tail), 0
    while n < 1000000:
        s = item.replace("%d", str(i)) + sep
        parts.append(s)
        n += len(s)
        i += 1
    parts.append(tail)
    with open(os.path.join(out, name + ".py"), "w") as f:
        f.write("".join(parts))
EOF
find bench/corpus -name '*.py' | sort > "$tmp/list"
run() { # BIN DIR
    local b=$1 o=$2
    mkdir -p "$o"
    "$b" check --no-cache --threads 2 -f json bench/corpus > "$o/corpus.json" 2> "$o/corpus.err" || true
    "$b" check --no-cache --threads 1 -f json bench/corpus > "$o/corpus1.json" 2> /dev/null || true
    xargs -a "$tmp/list" -d '\n' "$b" check --no-cache --threads 2 -f json > "$o/list.json" 2> /dev/null || true
    "$b" fix --diff --no-cache bench/corpus > "$o/fix.diff" 2> "$o/fix.err" || true
    "$b" fix --diff --no-cache --unsafe-fixes bench/corpus > "$o/fixu.diff" 2> "$o/fixu.err" || true
    for f in lines one-line; do "$b" check --no-cache --threads 1 -f json "$tmp/$f.py" > "$o/dense-$f.json" 2> /dev/null || true; done
    "$b" fix --diff --no-cache "$tmp/lines.py" > "$o/dense-fix.diff" 2> /dev/null || true
    "$b" check --no-cache -f json fixtures > "$o/fixtures.json" 2> "$o/fixtures.err" || true
    "$b" fix --diff --no-cache --unsafe-fixes fixtures > "$o/fixtures.diff" 2> /dev/null || true
    head -150 "$tmp/list" | while read -r f; do "$b" check --no-cache -f json "$f" || true; done > "$o/single.json" 2> /dev/null
}
run "$OLD" "$OUT/old"
run "$NEW" "$OUT/new"
rc=0
for f in "$OUT"/old/*; do
    n=$(basename "$f")
    if cmp -s "$f" "$OUT/new/$n"; then echo "same $n"; else echo "DIFF $n"; rc=1; fi
done
echo "(outputs in $OUT)"
exit $rc
