#!/usr/bin/env bash
# bench/fix_bench.sh: what `xpuify fix` costs against `xpuify check` on a corpus of real code.
#
# For RUNS rounds (default 3), each on a fresh copy of the corpus (the copy is not timed), it times with GNU time
# (wall seconds, CPU seconds, peak RSS):
#   check       check --no-cache --format json     (the findings and the fixes they carry)
#   fix-diff    fix --diff --no-cache              (fixes applied in memory to a fixpoint, re-parsed, diffed;
#                                                   nothing written)
#   fix         fix --no-cache                     (safe fixes written in place, atomically)
#   fix-unsafe  fix --unsafe-fixes --no-cache      (on another fresh copy)
# and prints a markdown report with medians and the fix/check ratios. After each in-place fix it runs
# `fix --diff` again on the fixed copy: it must change nothing (fix is idempotent), or the script fails.
#
# usage: bench/fix_bench.sh [CORPUS]      (default: bench/corpus; see bench/fetch_corpus.md)
# env:   XPUIFY (default build/xpuify), RUNS (3), THREADS (0 = all cores)
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
XPUIFY=$(realpath "${XPUIFY:-build/xpuify}")
RUNS=${RUNS:-3}
THREADS=${THREADS:-0}
CORPUS=$(realpath "${1:-bench/corpus}")
[[ -x $XPUIFY ]] || { echo "fix_bench: no xpuify binary at $XPUIFY (run make)" >&2; exit 2; }
[[ -d $CORPUS ]] || { echo "fix_bench: no corpus at $CORPUS (see bench/fetch_corpus.md)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "fix_bench: needs GNU time (/usr/bin/time)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common=(--no-ignore --no-cache -q --threads "$THREADS")
declare -A WALL CPU RSS
measure() { # label, directory, command...: appends "wall cpu rss_kb" of one run (exit 0 or 1 are both fine)
    local label=$1 dir=$2; shift 2
    local rc=0
    (cd "$dir" && /usr/bin/time -f "%e %U %S %M" -o "$tmp/t" "$@" >"$tmp/out.$label" 2>"$tmp/err.$label") || rc=$?
    (( rc <= 1 )) || { echo "fix_bench: $label failed ($rc):" >&2; tail -5 "$tmp/err.$label" >&2; exit 1; }
    read -r w u s m < <(tail -1 "$tmp/t") # GNU time puts "Command exited with non-zero status 1" first
    WALL[$label]+="$w "
    CPU[$label]+="$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }') "
    RSS[$label]+="$m "
}
source bench/stats.sh # median, maxof
fresh() { rm -rf "$tmp/c"; cp -r "$CORPUS" "$tmp/c"; find "$tmp/c" -name .xpuify_cache -prune -exec rm -rf {} +; }
idempotent() {
    (cd "$tmp/c" && "$XPUIFY" fix --diff "${common[@]}" "$@" . >"$tmp/again" 2>&1) || {
        echo "fix_bench: a second fix $* would still change something:" >&2; head -20 "$tmp/again" >&2; exit 1; }
}

fresh
"$XPUIFY" check --format json --exit-zero "${common[@]}" "$tmp/c" >/dev/null  # page cache warm-up, untimed
changed=""
for ((i = 1; i <= RUNS; i++)); do
    echo "fix_bench: round $i of $RUNS" >&2
    fresh
    measure check "$tmp/c" "$XPUIFY" check --format json --exit-zero "${common[@]}" .
    measure fix-diff "$tmp/c" "$XPUIFY" fix --diff "${common[@]}" .
    measure fix "$tmp/c" "$XPUIFY" fix "${common[@]}" .
    idempotent
    changed=$(cd "$tmp/c" && diff -rq "$CORPUS" . 2>/dev/null | grep -c '^Files' || true)
    fresh
    measure fix-unsafe "$tmp/c" "$XPUIFY" fix --unsafe-fixes "${common[@]}" .
    idempotent --unsafe-fixes
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "n/a" }'; }
echo "# xpuify fix vs check ($(date -u +%Y-%m-%dT%H:%MZ))"
echo
echo "- machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), $(uname -sr); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- xpuify: $("$XPUIFY" version 2>&1 | head -1) ($XPUIFY); threads: ${THREADS/#0/all cores}; $RUNS rounds, fresh copy each"
echo "- corpus: $CORPUS ($(find "$CORPUS" -name '*.py' | wc -l) .py files); files the safe fix changed: $changed"
echo
echo "| run | wall s (median) | CPU s (median) | peak RSS MB (max) | wall / check |"
echo "|---|---:|---:|---:|---:|"
cw=$(median <<<"${WALL[check]}")
for l in check fix-diff fix fix-unsafe; do
    w=$(median <<<"${WALL[$l]}")
    printf '| %s | %s | %s | %.0f | %sx |\n' "$l" "$w" "$(median <<<"${CPU[$l]}")" \
        "$(awk -v k="$(maxof <<<"${RSS[$l]}")" 'BEGIN { print k / 1024 }')" "$(ratio "$w" "$cw")"
done
