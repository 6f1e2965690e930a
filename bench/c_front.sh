#!/usr/bin/env bash
# c_front.sh: speed of the C/C++/CUDA front end on a corpus of CUDA sources.
#   1. fast mode (`xpuify check`, one process over every .cu file, one thread and all threads) against
#      `hipify-perl -quiet-warnings -examine` on the same files (when --hipify PATH is given);
#   2. precise mode cost per file (real CUDA headers, one process per file) on a sample;
#   3. what each tool found, as a check that both did real work.
# Numbers go to stdout as markdown and to bench/results/c_front-<date>.md. Nothing here is a pass/fail test.
# usage: bench/c_front.sh [--corpus DIR] [--hipify PATH/hipify-perl] [--precise-sample N] [--runs N]
#   corpus default: bench/corpus/cuda-samples (bench/extract_corpus.sh fetches it from a mirror)
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=bench/corpus/cuda-samples hipify= sample=20 runs=3
while (($#)); do
  case $1 in
    --corpus) corpus=$2; shift 2 ;;
    --hipify) hipify=$2; shift 2 ;;
    --precise-sample) sample=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "usage: $0 [--corpus DIR] [--hipify hipify-perl] [--precise-sample N] [--runs N]" >&2; exit 2 ;;
  esac
done
xp=$PWD/build/xpuify
[ -x "$xp" ] || { echo "build xpuify first (make)" >&2; exit 2; }
[ -d "$corpus" ] || { echo "$corpus: no corpus (see bench/extract_corpus.sh)" >&2; exit 2; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
find "$corpus" -name '*.cu' | LC_ALL=C sort > "$work/files"
n=$(wc -l < "$work/files")
lines=$(xargs cat < "$work/files" | wc -l)
mkdir -p bench/results
out=bench/results/c_front-$(date +%Y%m%d-%H%M%S).md

# mean wall seconds of a command over $runs runs (hyperfine when present)
measure() {
  if command -v hyperfine >/dev/null 2>&1; then
    hyperfine -N -i -w 1 -r "$runs" --export-json "$work/h.json" "$1" >/dev/null 2>&1
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%.3f %.3f %.3f" % (r["mean"], r["stddev"] or 0, r["user"]))' "$work/h.json"
  else
    local best=999999 s e
    for _ in $(seq "$runs"); do
      s=$(date +%s.%N); bash -c "$1" >/dev/null 2>&1 || true; e=$(date +%s.%N)
      best=$(python3 -c "print(min($best, $e - $s))")
    done
    echo "$best 0 0"
  fi
}

{
echo "## C front end: $n CUDA files, $lines lines ($corpus)"
echo
echo "Machine: $(nproc) cores, $(uname -sr); $(date -u +%Y-%m-%d). Mean wall time of $runs runs (hyperfine -N, one warm-up)."
echo
echo "| Tool | Mode | Wall (s) | ± | User CPU (s) | Per file (ms) | Speed-up |"
echo "|---|---|---|---|---|---|---|"
read -r f1 s1 u1 < <(measure "$xp check --exit-zero --threads 1 --format concise $(tr '\n' ' ' < "$work/files")")
read -r fa sa ua < <(measure "$xp check --exit-zero --format concise $(tr '\n' ' ' < "$work/files")")
if [ -n "$hipify" ]; then
  read -r h sh uh < <(measure "perl $hipify -quiet-warnings -examine $(tr '\n' ' ' < "$work/files")")
  printf '| hipify-perl | -quiet-warnings -examine | %.2f | %.2f | %.2f | %.1f | 1.0x |\n' "$h" "$sh" "$uh" "$(python3 -c "print($h * 1000 / $n)")"
fi
for row in "1 thread:$f1:$s1:$u1" "$(nproc) threads:$fa:$sa:$ua"; do
  IFS=: read -r label w s u <<<"$row"
  sp=""; [ -n "$hipify" ] && sp=$(python3 -c "print('%.1fx' % ($h / $w))")
  printf '| xpuify check | fast, %s | %.2f | %.2f | %.2f | %.1f | %s |\n' "$label" "$w" "$s" "$u" "$(python3 -c "print($w * 1000 / $n)")" "$sp"
done
echo
# what each found
"$xp" check --exit-zero --threads 1 --format json $(tr '\n' ' ' < "$work/files") > "$work/x.json" 2>/dev/null
python3 - "$work/x.json" <<'EOF'
import json, sys, collections
d = json.load(open(sys.argv[1]))
by = collections.Counter(f["code"] for f in d)
files = len({f["path"] for f in d})
print("xpuify fast mode: %d findings in %d files; by rule: %s" % (len(d), files, ", ".join("%s %d" % kv for kv in sorted(by.items()))))
EOF
if [ -n "$hipify" ]; then
  perl "$hipify" -quiet-warnings -examine $(tr '\n' ' ' < "$work/files") > "$work/h.txt" 2>&1 || true
  python3 - "$work/h.txt" <<'EOF'
import re, sys
t = open(sys.argv[1], errors="replace").read()
refs = sum(int(x) for x in re.findall(r"CONVERTED refs count: (\d+)", t))
files = len(re.findall(r"statistics:", t)) - ("TOTAL statistics" in t)
print("\nhipify-perl: %d converted references reported over %d file reports (its counts include names in comments and strings)" % (refs, files))
EOF
fi
echo
# precise mode, one process per file, on an evenly spread sample
cuda=${CUDA_PATH:-/usr/local/cuda}
if [ -f "$cuda/include/cuda_runtime_api.h" ]; then
  awk -v n="$n" -v k="$sample" 'BEGIN { step = n / k; if (step < 1) step = 1 } { if (NR - 1 >= next_at) { print; next_at += step } }' "$work/files" > "$work/sample"
  : > "$work/precise"
  while read -r f; do
    s=$(date +%s.%N)
    "$xp" check --exit-zero --precise --cuda-path "$cuda" --format json "$f" > "$work/p.json" 2>/dev/null || true
    e=$(date +%s.%N)
    errs=$(python3 -c 'import json,sys; print(sum(1 for f in json.load(open(sys.argv[1])) if f["code"] == "XPC001"))' "$work/p.json")
    fast=$("$xp" check --exit-zero --format json "$f" 2>/dev/null | python3 -c 'import json,sys; print(len([f for f in json.load(sys.stdin) if f["code"] != "XPC001"]))')
    prec=$(python3 -c 'import json,sys; print(len([f for f in json.load(open(sys.argv[1])) if f["code"] != "XPC001"]))' "$work/p.json")
    echo "$(python3 -c "print($e - $s)") $errs $fast $prec $f" >> "$work/precise"
  done < "$work/sample"
  python3 - "$work/precise" "$cuda" <<'EOF'
import sys, statistics
rows = [l.split(None, 4) for l in open(sys.argv[1])]
t = sorted(float(r[0]) for r in rows)
clean = sum(1 for r in rows if r[1] == "0")
same = sum(1 for r in rows if r[2] == r[3])
print("Precise mode (--precise, CUDA headers of %s, one process per file) on %d sampled files:" % (sys.argv[2], len(rows)))
print("mean %.2f s, median %.2f s, max %.2f s per file; %d of %d parse without errors; %d of %d report the same"
      " findings as fast mode." % (statistics.mean(t), statistics.median(t), max(t), clean, len(rows), same, len(rows)))
EOF
else
  echo "Precise mode: no CUDA headers at $cuda; skipped."
fi
} | tee "$out"
echo "(written to $out)" >&2
