#!/usr/bin/env bash
# bench/bench.sh: speed of `xpuify check` on a large corpus of real PyTorch code, against ripgrep (a lower
# bound: a regex scan for the same trigger words) and ast-grep (a tree-sitter based linter running an
# equivalent rule set, bench/astgrep/). Prints a markdown report and keeps it under bench/results/.
#
# usage: bench/bench.sh [CORPUS_DIR]          (default bench/corpus; see bench/fetch_corpus.md)
# env:   RUNS=5            timed runs per command (the median is reported; one untimed warm-up run first)
#        RG_RUNS=20        timed runs for ripgrep (it takes well under a second)
#        SCALE_RUNS=3      timed runs per point of the scaling series
#        XPUIFY=...        the binary (default build/bench/xpuify, else build/xpuify)
#        ASTGREP=...       the ast-grep binary (default bench/node_modules/.bin/ast-grep)
#        XPUIFY_ARGS=...   extra options for the timed xpuify runs, e.g. "--threads 2" (by default xpuify, like
#                          ripgrep and ast-grep, starts one thread per CPU of its affinity mask, which taskset sets)
#        SKIP_ASTGREP=1    leave ast-grep out
#        QUIET_LOAD=0.3    before timing, wait (up to 30 min) until the 1-minute load average is below this
#                          (other jobs on the machine distort wall times; the report records the load)
#
# Needs: bash 5, coreutils, awk (mawk or gawk), /usr/bin/time (GNU time), ripgrep (`apt-get install -y ripgrep`),
# ast-grep (`npm install --prefix bench @ast-grep/cli`); hyperfine, when installed, adds a cross-check table.
# Every tool runs with its default thread count (= number of cores) and sees the same .py files: the corpus
# holds no symlinks, and hidden directories and ignore files are not skipped by any of the three.
set -euo pipefail
export LC_ALL=C

cd "$(dirname "$0")/.."
CORPUS=${1:-bench/corpus}
RUNS=${RUNS:-5}
RG_RUNS=${RG_RUNS:-20}
SCALE_RUNS=${SCALE_RUNS:-3}
if [[ -z ${XPUIFY:-} ]]; then
    if [[ -x build/bench/xpuify ]]; then XPUIFY=build/bench/xpuify; else XPUIFY=build/xpuify; fi
fi
ASTGREP=${ASTGREP:-bench/node_modules/.bin/ast-grep}
TIME=/usr/bin/time
OUTDIR=bench/results
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUTDIR"
REPORT=$OUTDIR/bench-$STAMP.md

die() { echo "bench.sh: $*" >&2; exit 2; }
[[ -d $CORPUS ]] || die "no corpus at $CORPUS (see bench/fetch_corpus.md)"
[[ -x $XPUIFY ]] || die "no xpuify binary at $XPUIFY (run: make B=build/bench)"
[[ -x $TIME ]] || die "GNU time is needed at /usr/bin/time (apt-get install -y time)"
command -v rg >/dev/null || die "ripgrep is needed (apt-get install -y ripgrep)"
if [[ -z ${SKIP_ASTGREP:-} && ! -x $ASTGREP ]]; then
    die "ast-grep not found at $ASTGREP (npm install --prefix bench @ast-grep/cli, or SKIP_ASTGREP=1)"
fi

# ---------------------------------------------------------------------------------------------------------
# The trigger regex: the same alternation xpuify builds for its Python prefilter (analyzer/core/an_catalog.c, as of
# this script): every rule's `triggers:` patterns, plus, for table rules, one component of each qualified name
# (the first CUDA-ish component after the root, i.e. one containing cuda/nccl/cudnn/nvml/CUDA/NCCL/nvidia,
# else the last one), as a whole word. Only used for the ripgrep baseline: the number of files xpuify parses
# is read from `xpuify check -v` when that option exists.
trigger_regex() {
    local prog
    prog=$(cat <<'AWK'
function add(t) { if (!(t in seen)) { seen[t] = 1; alts[n++] = t } }
function cudaish(s) { return s ~ /cuda|nccl|cudnn|nvml|CUDA|NCCL|nvidia/ }
function qual(name,   k, parts, i, best) {
    sub(/\.\*$/, "", name)
    k = split(name, parts, ".")
    if (k == 1) best = name
    else {
        best = ""
        for (i = 2; i <= k; i++) if (best == "" || !cudaish(best)) best = parts[i]
    }
    gsub(/[^A-Za-z0-9_]/, "\\\\&", best)
    return "\\b" best "\\b"
}
# A whole-file trigger `(?s)\A(?=.*?X)(?=.*?Y)` (X and Y both somewhere in the file) becomes the alternatives
# X and Y: ripgrep matches line by line, so it searches for a superset of what xpuify parses.
function anchored(x,   i, c, d, start, body) {
    sub(/^(\(\?s\))?\\A/, "", x)
    d = 0
    for (i = 1; i <= length(x); i++) {
        c = substr(x, i, 1)
        if (c == "\\") { i++; continue }
        if (c == "(") { if (d == 0) start = i; d++ }
        else if (c == ")") {
            d--
            if (d == 0) { body = substr(x, start, i - start + 1); sub(/^\(\?=\.\*\??/, "", body); sub(/\)$/, "", body); add(body) }
        }
    }
}
function flush(   j) { if (code != "" && !builtin && !ntrig) for (j = 0; j < nq; j++) add(q[j]) }
/^ *- code:/ { flush(); code = $3; ntrig = 0; nq = 0; builtin = 0 }
/^ *builtin:/ { builtin = 1 }
/^ *triggers: *\[/ {
    s = $0; sub(/^ *triggers: *\[ */, "", s); sub(/ *\] *$/, "", s)
    # a group `[[X, Y]]` (X and Y both somewhere in the file) becomes the alternatives X and Y, as above
    if (s ~ /^\[/) { sub(/^\[ */, "", s); sub(/ *\]$/, "", s) }
    m = split(s, t, SQ " *, *" SQ)
    for (i = 1; i <= m; i++) {
        x = t[i]; sub("^" SQ, "", x); sub(SQ "$", "", x); gsub(SQ SQ, SQ, x)   # YAML single-quoted scalar
        if (x ~ /^(\(\?s\))?\\A/) anchored(x); else add(x)
        ntrig++
    }
}
/^ *- *\{ *name:/ || /^ *- name:/ { s = $0; sub(/^ *- *\{? *name: */, "", s); sub(/[ ,}].*$/, "", s); q[nq++] = qual(s) }
END {
    flush()
    for (i = 0; i < n; i++) printf "%s(?:%s)", (i ? "|" : ""), alts[i]
    printf "\n"
}
AWK
)
    awk -v SQ="'" "$prog" rules/python/*.yml
}
TRIGGERS=$(trigger_regex)

# ---------------------------------------------------------------------------------------------------------
# The file set: every regular *.py file under the corpus, outside the directories xpuify always skips.
find "$CORPUS" \( -type d \( -name .git -o -name .hg -o -name .svn -o -name .venv -o -name venv -o -name .tox \
    -o -name .nox -o -name node_modules -o -name __pycache__ -o -name '.*_cache' -o -name site-packages \
    -o -name .eggs -o -name '*.egg-info' -o -name build -o -name dist -o -name _build -o -name buck-out \
    -o -name .ipynb_checkpoints \) -prune \) -o \( -type f -name '*.py' -print \) | sort > "$WORK/all.txt"
NFILES=$(wc -l < "$WORK/all.txt")
(( NFILES > 0 )) || die "no .py files under $CORPUS"
NLINES=$(tr '\n' '\0' < "$WORK/all.txt" | xargs -0 cat | wc -l)
NBYTES=$(tr '\n' '\0' < "$WORK/all.txt" | xargs -0 cat | wc -c)
NSYMLINKS=$(find "$CORPUS" -type l | wc -l)

# ---------------------------------------------------------------------------------------------------------
clear_result_cache() { rm -rf .xpuify_cache "$CORPUS/.xpuify_cache"; }

time_once() { # LABEL CMD...: one timed run, appended to $WORK/times
    local label=$1; shift
    local t0=$EPOCHREALTIME
    $TIME -f "%U %S %M" -o "$WORK/t" "$@" > "$WORK/out" 2> "$WORK/err" || {
        echo "bench.sh: $label failed:" >&2; tail -5 "$WORK/err" >&2; exit 1; }
    local t1=$EPOCHREALTIME
    echo "$label $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') $(cat "$WORK/t")" >> "$WORK/times"
}
# run_timed LABEL N CMD...: N timed runs after one untimed warm-up (page cache warm); every xpuify run starts
# without a result cache. Appends "label wall user sys maxrss_kb" per run to $WORK/times (wall: seconds
# from bash's EPOCHREALTIME, millisecond resolution; user/sys/RSS from GNU time).
run_timed() {
    local label=$1 n=$2; shift 2
    clear_result_cache
    "$@" > /dev/null 2>&1 || true
    for ((i = 0; i < n; i++)); do
        clear_result_cache
        time_once "$label" "$@"
    done
}
# run_warm LABEL N CMD...: the same with the results cache filled by one untimed run first and kept (an unchanged
# tree: the second run of a CI job or an editor's save hook). The cache trusts the stamps of files changed at least
# 3 s before a run, hence the pause after a fresh extraction.
run_warm() {
    local label=$1 n=$2; shift 2
    clear_result_cache
    sleep 3
    "$@" > /dev/null 2>&1 || true
    for ((i = 0; i < n; i++)); do time_once "$label" "$@"; done
    clear_result_cache
}
median() { # median of column $2 for label $1
    awk -v l="$1" -v c="$2" '$1 == l { print $c }' "$WORK/times" | sort -g |
        awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
mincol() { awk -v l="$1" -v c="$2" '$1 == l && (m == "" || $c < m) { m = $c } END { print m + 0 }' "$WORK/times"; }
maxcol() { awk -v l="$1" -v c="$2" '$1 == l && $c > m { m = $c } END { print m + 0 }' "$WORK/times"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "n/a" }'; }
: > "$WORK/times"

read -r -a XARGS <<< "${XPUIFY_ARGS:-}"
XPUIFY_CMD=("$XPUIFY" check --format json --no-ignore --exit-zero "${XARGS[@]}" "$CORPUS")
# xpuify's triggers are PCRE2 patterns compiled without PCRE2_UCP, so `\b`, `\w`, `\s` and `(?i)` are ASCII-only
# there: --no-unicode gives ripgrep the same meaning (and keeps its fast DFA: with Unicode `\b` ripgrep 13 is
# ~40x slower on this corpus). Its default engine takes the patterns unless one needs look-around (then -P).
RG_MODE=(--no-unicode)
rg -q -e "$TRIGGERS" /dev/null 2>/dev/null || [[ $? == 1 ]] || RG_MODE+=(-P)
RG_CMD=(rg -c "${RG_MODE[@]}" --no-ignore --hidden -t py -e "$TRIGGERS" "$CORPUS")
AG_CMD=("$ASTGREP" scan -c bench/astgrep/sgconfig.yml --json=stream
        --no-ignore hidden --no-ignore dot --no-ignore vcs --no-ignore parent --no-ignore exclude --no-ignore global
        "$CORPUS")

# Same file set check: how many .py files each tool visits.
FINDINGS=$("$XPUIFY" check --format concise --no-ignore --exit-zero "$CORPUS" 2>/dev/null | tail -1)
XP_CHECKED=$(sed -n 's/.*(\([0-9]*\) files\{0,1\} checked).*/\1/p' <<< "$FINDINGS")
RG_FILES=$(rg --files --no-ignore --hidden -t py "$CORPUS" | wc -l)
AG_FILES=n/a
if [[ -z ${SKIP_ASTGREP:-} ]]; then
    AG_FILES=$("${AG_CMD[@]}" --inspect summary 2>&1 >/dev/null | sed -n 's/.*scannedFileCount=\([0-9]*\).*/\1/p')
fi
# Prefilter: how many files contain at least one trigger (and so are parsed by xpuify).
PASS_RG=$(rg -l "${RG_MODE[@]}" --no-ignore --hidden -t py -e "$TRIGGERS" "$CORPUS" | wc -l)
PASS=$("$XPUIFY" check --format json --no-ignore --exit-zero -v "$CORPUS" 2>&1 >/dev/null |
    sed -n 's/.* \([0-9]*\) parsed after the prefilter.*/\1/p' | tail -1 || true)
PASS_SRC="xpuify -v"
[[ -n $PASS ]] || { PASS=$PASS_RG; PASS_SRC="estimated with rg -l"; }

if [[ -n ${QUIET_LOAD:-} ]]; then
    for ((w = 0; w < 360; w++)); do
        awk -v q="$QUIET_LOAD" '{ exit !($1 < q) }' /proc/loadavg && break
        (( w % 12 == 0 )) && echo "bench.sh: waiting for load < $QUIET_LOAD (now $(cut -d' ' -f1 /proc/loadavg))" >&2
        sleep 5
    done
fi
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
echo "bench.sh: $NFILES files, $NLINES lines; timing ($RUNS runs each)..." >&2
run_timed xpuify "$RUNS" "${XPUIFY_CMD[@]}"
run_warm xpuify-warm "$RUNS" "${XPUIFY_CMD[@]}"
run_timed rg "$RG_RUNS" "${RG_CMD[@]}"
if [[ -z ${SKIP_ASTGREP:-} ]]; then
    run_timed astgrep "$RUNS" "${AG_CMD[@]}"
    AG_MATCHES=$("${AG_CMD[@]}" 2>/dev/null | wc -l)
fi
# File-list mode (pre-commit and most CI recipes): every .py file named on the command line, for xpuify cold and
# with its results cache warm, and for ripgrep with the same regex over the same files.
mapfile -t ALL_FILES < "$WORK/all.txt"
echo "bench.sh: file-list mode (${#ALL_FILES[@]} files named)..." >&2
LIST_CMD=("$XPUIFY" check --format json --no-ignore --exit-zero "${XARGS[@]}" "${ALL_FILES[@]}")
run_timed xpuify-list "$RUNS" "${LIST_CMD[@]}"
run_warm xpuify-list-warm "$RUNS" "${LIST_CMD[@]}"
run_timed rg-list "$RG_RUNS" rg -c "${RG_MODE[@]}" --no-ignore --hidden -e "$TRIGGERS" "${ALL_FILES[@]}"
LIST_FILES_MS=$("${LIST_CMD[@]}" --no-cache -v 2>&1 >/dev/null | sed -n 's/.*files and configurations \([0-9.]*\) ms.*/\1/p')
WALK_FILES_MS=$("${XPUIFY_CMD[@]}" --no-cache -v 2>&1 >/dev/null | sed -n 's/.*files and configurations \([0-9.]*\) ms.*/\1/p')
run_timed xpuify-1thread "$SCALE_RUNS" "$XPUIFY" check --format json --no-ignore --exit-zero --threads 1 "$CORPUS"

# Scaling: every 10th, 4th, 2nd file of the sorted list and all of them, named on the command line.
SCALE_ROWS=()
for pct in 10 25 50 100; do
    case $pct in 10) k=10 ;; 25) k=4 ;; 50) k=2 ;; 100) k=1 ;; esac
    awk -v k=$k '(NR - 1) % k == 0' "$WORK/all.txt" > "$WORK/s$pct.txt"
    mapfile -t files < "$WORK/s$pct.txt"
    lines=$(tr '\n' '\0' < "$WORK/s$pct.txt" | xargs -0 cat | wc -l)
    echo "bench.sh: scaling $pct% (${#files[@]} files)..." >&2
    run_timed "scale$pct" "$SCALE_RUNS" "$XPUIFY" check --format json --no-ignore --exit-zero "${XARGS[@]}" "${files[@]}"
    SCALE_ROWS+=("$pct ${#files[@]} $lines")
done

# hyperfine cross-check of the three main commands (optional).
HF=""
if command -v hyperfine >/dev/null; then
    echo "bench.sh: hyperfine cross-check..." >&2
    q() { printf '%q ' "$@"; }
    hf_cmds=("$(q "${XPUIFY_CMD[@]}")" "$(q "${RG_CMD[@]}")")
    [[ -z ${SKIP_ASTGREP:-} ]] && hf_cmds+=("$(q "${AG_CMD[@]}")")
    hf_names=(-n xpuify -n ripgrep)
    [[ -z ${SKIP_ASTGREP:-} ]] && hf_names+=(-n ast-grep)
    hyperfine --shell=bash --style none --warmup 1 --runs "$RUNS" --prepare "rm -rf .xpuify_cache $CORPUS/.xpuify_cache" \
        --export-markdown "$WORK/hf.md" "${hf_names[@]}" "${hf_cmds[@]}" > /dev/null 2>&1 \
        && HF=$(cat "$WORK/hf.md") || HF="(hyperfine failed)"
fi

LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------------------------------------------------
cpu() { awk -v u="$(median "$1" 3)" -v s="$(median "$1" 4)" 'BEGIN { printf "%.2f", u + s }'; }
XW=$(median xpuify 2); RW=$(median rg 2)
X1=$(median xpuify-1thread 2)
AW=n/a
[[ -z ${SKIP_ASTGREP:-} ]] && AW=$(median astgrep 2)
kb2mb() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }
row() { # label cmd-description
    local l=$1 d=$2
    printf '| %s | %s | %s-%s | %s | %s | %s | %s |\n' "$d" "$(median "$l" 2)" "$(mincol "$l" 2)" "$(maxcol "$l" 2)" \
        "$(median "$l" 3)" "$(median "$l" 4)" \
        "$(kb2mb "$(maxcol "$l" 5)")" "$(awk -v n="$NLINES" -v w="$(median "$l" 2)" 'BEGIN { printf "%.0f", n / w / 1000 }')"
}

{
echo "# xpuify benchmark ($STAMP)"
echo
echo "- machine: $(nproc) usable of $(getconf _NPROCESSORS_ONLN) online cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) RAM, $(uname -sr)"
echo "- xpuify: $("$XPUIFY" version 2>&1 | head -1) ($XPUIFY, git $(git describe --always --dirty 2>/dev/null || echo '?'))"
echo "- ripgrep: $(rg --version 2>/dev/null | head -1); ast-grep: $([[ -z ${SKIP_ASTGREP:-} ]] && "$ASTGREP" --version || echo skipped); $(command -v hyperfine >/dev/null && hyperfine --version || echo 'hyperfine: not installed')"
echo "- corpus: $CORPUS: $NFILES .py files, $NLINES lines, $(awk -v b="$NBYTES" 'BEGIN { printf "%.1f MB", b / 1e6 }'), $NSYMLINKS symlinks"
echo "- files visited: xpuify $XP_CHECKED, ripgrep $RG_FILES, ast-grep $AG_FILES (expected $NFILES)"
echo "- xpuify prefilter: $PASS of $NFILES files ($(awk -v a="$PASS" -v b="$NFILES" 'BEGIN { printf "%.0f%%", 100 * a / b }')) pass and are parsed ($PASS_SRC; ripgrep -l with the trigger regex: $PASS_RG)"
echo "- xpuify result: $FINDINGS; ast-grep: ${AG_MATCHES:-n/a} matches"
echo "- load average (1/5/15 min) before timing: $LOAD_BEFORE; after: $LOAD_AFTER (the machine may be shared)"
echo "- xpuify extra options: ${XPUIFY_ARGS:-none}; CPUs usable by this process (nproc): $(nproc)"
echo "- runs: median of $RUNS (ripgrep: $RG_RUNS; scaling and 1-thread: $SCALE_RUNS) after one warm-up run; page cache warm, no xpuify result cache (except the row that says so); default thread counts"
echo
echo "| command | wall s (median) | wall s (min-max) | user s | sys s | peak RSS MB (max) | k lines/s |"
echo "|---|---:|---:|---:|---:|---:|---:|"
row xpuify "xpuify check --format json ${XPUIFY_ARGS:-(default threads)}"
row xpuify-1thread "xpuify check --format json --threads 1"
row xpuify-warm "xpuify check --format json, results cache warm (unchanged tree)"
row rg "ripgrep -c${RG_MODE[*]:+ ${RG_MODE[*]}}, trigger regex"
row xpuify-list "file list: xpuify check --format json FILE... (every .py file named)"
row xpuify-list-warm "file list: the same, results cache warm"
row rg-list "file list: ripgrep -c${RG_MODE[*]:+ ${RG_MODE[*]}} FILE..., trigger regex"
[[ -z ${SKIP_ASTGREP:-} ]] && row astgrep "ast-grep scan, $(grep -c '^id:' bench/astgrep/rules/*.yml | awk -F: '{ s += $2 } END { print s }') rules"
echo
echo "| ratio | value | goal |"
echo "|---|---:|---|"
echo "| xpuify / ripgrep (wall) | $(ratio "$XW" "$RW")x | <= 10x |"
echo "| xpuify / ripgrep (CPU time, user+sys) | $(ratio "$(cpu xpuify)" "$(cpu rg)")x | |"
echo "| xpuify with a warm results cache / ripgrep (wall) | $(ratio "$(median xpuify-warm 2)" "$RW")x | <= 2x |"
[[ -z ${SKIP_ASTGREP:-} ]] && echo "| ast-grep / xpuify (wall) | $(ratio "$AW" "$XW")x | >= 10x |"
[[ -z ${SKIP_ASTGREP:-} ]] && echo "| ast-grep / xpuify (CPU time, user+sys) | $(ratio "$(cpu astgrep)" "$(cpu xpuify)")x | |"
echo "| file list: xpuify / ripgrep on the same files (wall) | $(ratio "$(median xpuify-list 2)" "$(median rg-list 2)")x | <= 10x |"
echo "| file list: xpuify, results cache warm / ripgrep (wall) | $(ratio "$(median xpuify-list-warm 2)" "$(median rg-list 2)")x | <= 2x |"
echo "| xpuify 1 thread / ${XPUIFY_ARGS:-default threads} | $(ratio "$X1" "$XW")x | (parallel speed-up on $(nproc) cores) |"
echo "| xpuify peak RSS | $(kb2mb "$(maxcol xpuify 5)") MB | |"
echo "| files and configurations before analysis (xpuify -v): file list / walk | ${LIST_FILES_MS:-?} ms / ${WALK_FILES_MS:-?} ms | file list as cheap as the walk |"
echo
echo "Scaling (xpuify, files named on the command line: every 10th/4th/2nd/1st file of the sorted list):"
echo
echo "| share | files | lines | wall s (median) | user s | peak RSS MB | k lines/s |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for r in "${SCALE_ROWS[@]}"; do
    read -r pct f l <<< "$r"
    w=$(median "scale$pct" 2)
    printf '| %s%% | %s | %s | %s | %s | %s | %s |\n' "$pct" "$f" "$l" "$w" "$(median "scale$pct" 3)" \
        "$(kb2mb "$(maxcol "scale$pct" 5)")" "$(awk -v n="$l" -v w="$w" 'BEGIN { printf "%.0f", n / w / 1000 }')"
done
if [[ -n $HF ]]; then
    echo
    echo "hyperfine cross-check (wall time, $RUNS runs):"
    echo
    echo "$HF"
fi
echo
echo "Trigger regex (xpuify's prefilter, as used for ripgrep${RG_MODE[*]:+ with ${RG_MODE[*]}}):"
echo
echo '```'
echo "$TRIGGERS"
echo '```'
} | tee "$REPORT"
echo "bench.sh: report written to $REPORT" >&2
# the scaling series as a PNG (headless Chromium renders the plot)
if bench/plot_scaling.py "$REPORT" "${REPORT%.md}-scaling.png" >&2; then
    echo "bench.sh: scaling plot written to ${REPORT%.md}-scaling.png" >&2
fi
