#!/usr/bin/env bash
# bench/cache_bench.sh: what the results cache buys, and peak memory, on a corpus of real code.
#
# For RUNS rounds (default 3) it times, each with /usr/bin/time (wall seconds, CPU seconds, peak RSS):
#   no-cache   check --no-cache                     (no cache read or written)
#   cold       check with an empty cache directory  (everything analyzed, the cache written)
#   warm       the same command again               (an unchanged tree: every file from the cache)
#   one-edit   after appending a line to one file    (one miss)
# and prints a markdown report with medians and the warm speed-up (goal: >= 5x) and the largest peak RSS
# (goal: <= 150 MB). Nothing is written into the corpus: the cache lives in a temporary directory; EDIT=1 copies
# the corpus into it and appends a comment line to one file per round (the one-edit row; n/a without EDIT=1).
# Every cold, warm and --no-cache report must be identical, or the script fails.
#
# usage: bench/cache_bench.sh [CORPUS]     (default: bench/corpus, else /work/main/bench/corpus)
# env:   XPUIFY (default build/xpuify), RUNS (3), THREADS (0 = all cores), EDIT (0/1)
set -euo pipefail
cd "$(dirname "$0")/.."
XPUIFY=${XPUIFY:-build/xpuify}
RUNS=${RUNS:-3}
THREADS=${THREADS:-0}
EDIT=${EDIT:-0}
CORPUS=${1:-}
if [[ -z $CORPUS ]]; then
  if [[ -d bench/corpus ]]; then CORPUS=bench/corpus; else CORPUS=/work/main/bench/corpus; fi
fi
[[ -x $XPUIFY ]] || { echo "cache_bench: no xpuify binary at $XPUIFY (run make)" >&2; exit 2; }
[[ -d $CORPUS ]] || { echo "cache_bench: no corpus at $CORPUS (see bench/fetch_corpus.md)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "cache_bench: needs GNU time (/usr/bin/time)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
target=$CORPUS
if [[ $EDIT = 1 ]]; then
  cp -r "$CORPUS" "$tmp/corpus"
  target=$tmp/corpus
fi
# --no-ignore: the corpus may sit in a git-ignored directory of this repository (as bench/corpus does)
base=("$XPUIFY" check --format json --exit-zero --no-ignore -q --threads "$THREADS")

declare -A WALL CPU RSS
measure() { # label, command...: appends "wall cpu rss_kb" of one run
  local label=$1; shift
  /usr/bin/time -f "%e %U %S %M" -o "$tmp/t" "$@" >"$tmp/out.$label" 2>"$tmp/err.$label" || {
    echo "cache_bench: $label run failed:" >&2; cat "$tmp/err.$label" >&2; exit 1; }
  read -r w u s m <"$tmp/t"
  WALL[$label]+="$w "
  CPU[$label]+="$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }') "
  RSS[$label]+="$m "
}
source bench/stats.sh # median, maxof

edited=""
if [[ $EDIT = 1 ]]; then edited=$(find "$target" -name '*.py' -size +2k | sort | awk 'NR == 1'); fi

"${base[@]}" --no-cache "$target" >/dev/null  # page cache warm-up, untimed
for ((i = 1; i <= RUNS; i++)); do
  rm -rf "$tmp/cache"
  measure no-cache "${base[@]}" --no-cache "$target"
  measure cold "${base[@]}" --cache-dir "$tmp/cache" "$target"
  measure warm "${base[@]}" --cache-dir "$tmp/cache" "$target"
  cmp -s "$tmp/out.cold" "$tmp/out.warm" || { echo "cache_bench: the cached report differs from the cold one" >&2; exit 1; }
  cmp -s "$tmp/out.cold" "$tmp/out.no-cache" || { echo "cache_bench: the cold report differs from --no-cache" >&2; exit 1; }
  if [[ -n $edited ]]; then
    printf '\n# cache_bench edit %s\n' "$i" >>"$edited"
    measure one-edit "${base[@]}" --cache-dir "$tmp/cache" "$target"
  fi
done

files=$(XPUIFY_CACHE_STATS=1 "${base[@]}" --cache-dir "$tmp/cache" "$target" 2>&1 >/dev/null | sed -n 's/.*cache: \([0-9]*\) hits, \([0-9]*\) misses.*/\1 \2/p')
findings=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$tmp/out.warm")
pyfiles=$(find "$CORPUS" -name '*.py' | wc -l)
pybytes=$(find "$CORPUS" -name '*.py' -print0 | du -cb --files0-from=- | tail -1 | cut -f1)

cold=$(echo "${WALL[cold]}" | median); warm=$(echo "${WALL[warm]}" | median)
coldc=$(echo "${CPU[cold]}" | median); warmc=$(echo "${CPU[warm]}" | median)
speedup=$(awk -v a="$cold" -v b="$warm" 'BEGIN { printf "%.1f", a / b }')
speedupc=$(awk -v a="$coldc" -v b="$warmc" 'BEGIN { printf "%.1f", a / b }')
peak=0
for l in "${!RSS[@]}"; do m=$(echo "${RSS[$l]}" | maxof); if ((m > peak)); then peak=$m; fi; done

echo "# xpuify results cache benchmark ($(date -u +%Y-%m-%dT%H:%MZ))"
echo
echo "- machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo), $(uname -sr)"
echo "- xpuify: $("$XPUIFY" version) ($XPUIFY, git $(git rev-parse --short HEAD 2>/dev/null || echo '?')), threads: $THREADS (0 = all cores)"
echo "- corpus: $CORPUS: $pyfiles .py files, $((pybytes / 1048576)) MB; $findings findings; cache entries (hits, misses on a warm run): ${files:-?}"
echo "- $RUNS runs each after one untimed warm-up; medians; wall and CPU (user + system) seconds; peak RSS from GNU time"
echo
echo "| run | wall s (median) | CPU s (median) | peak RSS MB (max) | all wall times |"
echo "|---|---:|---:|---:|---|"
for l in no-cache cold warm one-edit; do
  [[ -n ${WALL[$l]:-} ]] || { echo "| $l | n/a | n/a | n/a | (EDIT=1 to measure) |"; continue; }
  printf '| %s | %s | %s | %d | %s|\n' "$l" "$(echo "${WALL[$l]}" | median)" "$(echo "${CPU[$l]}" | median)" \
    "$(( $(echo "${RSS[$l]}" | maxof) / 1024 ))" "${WALL[$l]}"
done
echo
echo "- warm vs cold: **${speedup}x** faster wall, ${speedupc}x less CPU (goal: >= 5x)"
echo "- peak RSS over all runs: **$((peak / 1024)) MB** (goal: <= 150 MB)"
