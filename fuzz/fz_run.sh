#!/usr/bin/env bash
# fz_run.sh: runs the libFuzzer targets built into $FUZZ_DIR (make fuzz-build).
#   fz_run.sh seeds TARGET            build the seed corpus of TARGET from fixtures/ and rules/ (into $FUZZ_DIR/seeds)
#   fz_run.sh run SECONDS TARGET...   fuzz each TARGET for SECONDS; the growing corpus is kept in $FUZZ_DIR/corpus,
#                                     crashes are written to $FUZZ_DIR/crashes (copy them into fuzz/regress/TARGET/)
#   fz_run.sh replay TARGET           run every input of fuzz/regress/TARGET once (each must pass)
#   fz_run.sh smoke SECONDS TARGET    replay, then fuzz from the seeds for SECONDS in a throw-away corpus
# The seed corpora: fz_python and fz_output get every fixture with several option bytes (fz_common.h), fz_output
# also a file name line; fz_rules gets every rule file; fz_cache the entries of a cache of the fixtures (made with
# $XPUIFY, default build/xpuify); fz_c every C/C++/CUDA fixture three ways; fz_lsp the LSP tests' recorded client
# streams and a session per fixture (fuzz/fz_lsp_seeds.py). Dictionaries: fuzz/TARGET.dict when present.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${FUZZ_DIR:=$PWD/build/fuzz}"
# third-party leaks we cannot fix (each one explained in the file)
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

seeds() { # target -> prints the seed directory
  local t=$1 d=$FUZZ_DIR/seeds/$1
  rm -rf "$d"; mkdir -p "$d"
  case $t in
    fz_python|fz_output)
      local f b i=0
      for f in fixtures/python/*.py fixtures/python/*/*.py examples/*/*.py; do
        [ -f "$f" ] || continue
        for b in 00 01 03 0b 21 33; do # accelerator, compat, torch 2.0 / 2.6, helper import, unsafe
          i=$((i + 1))
          if [ "$t" = fz_python ]; then
            { printf "\\x$b"; cat "$f"; } >"$d/$i"
          else
            { printf "\\x$b"; printf '%s\n' "$f"; cat "$f"; } >"$d/$i"
          fi
        done
      done ;;
    fz_c)
      # each C/C++/CUDA fixture three times (libclang parses are slow): with its own extension (fz_c.c's table) and
      # fixes; findings only; relative layer includes and unsafe fixes
      local f e x i=0
      for f in fixtures/c/* fixtures/programs/* fixtures/ext_runtime/*.cu examples/*/*.cu examples/*/*.cpp; do
        [ -f "$f" ] || continue
        case ${f##*.} in c) e=0 ;; cpp) e=1 ;; cu) e=2 ;; h) e=3 ;; cuh) e=4 ;; hpp) e=5 ;; cc) e=6 ;; cxx) e=7 ;; *) continue ;; esac
        for x in 0:00 8:00 16:21; do
          i=$((i + 1))
          { printf "\\x$(printf %02x $((e + ${x%:*})))\\x${x#*:}"; cat "$f"; } >"$d/$i"
        done
      done ;;
    fz_lsp)
      # the LSP tests' client streams (fuzz/seeds/fz_lsp/) and a session per fixture: fuzz/fz_lsp_seeds.py
      /usr/bin/python3 fuzz/fz_lsp_seeds.py "$d" ;;
    fz_rules)
      cp rules/*/*.yml "$d/" ;;
    fz_cache)
      # real entries: check the fixtures into a scratch cache, then split its file into entry blobs
      local bin=${XPUIFY:-build/xpuify} c; c=$(mktemp -d)
      if [ -x "$bin" ]; then
        "$bin" check -q --exit-zero --no-ignore --cache-dir "$c" fixtures/python >/dev/null 2>&1 || true
        for t in accelerator compat; do
          "$bin" check -q --exit-zero --no-ignore --target "$t" --cache-dir "$c" fixtures/python >/dev/null 2>&1 || true
        done
        python3 - "$c" "$d" <<'PY'
import glob, struct, sys
c, d = sys.argv[1:]
n = 0
for f in glob.glob(c + "/v1/*.bin"):
    b = open(f, "rb").read()
    open(f"{d}/file-{n}", "wb").write(b)
    off = 44  # header; an entry: key[20] content[20] mac[32] u32 length, blob
    while off + 76 <= len(b):
        (ln,) = struct.unpack_from("<I", b, off + 72)
        open(f"{d}/entry-{n}", "wb").write(b[off + 76:off + 76 + ln])
        off += 76 + ln
        n += 1
PY
      fi
      rm -rf "$c" ;;
    *)
      # a target added later: fixtures of its language go in fuzz/seeds/TARGET
      [ -d "fuzz/seeds/$t" ] && cp -r "fuzz/seeds/$t/." "$d/" ;;
  esac
  echo "$d"
}

max_len() { case $1 in fz_rules) echo 65536 ;; *) echo 16384 ;; esac; }

# fz_rules compiles queries with tree-sitter, whose frames have no frame pointers: the slow unwinder is needed for
# a leak's stack to reach ts_query_new, which the suppression names
asan_for() { case $1 in fz_rules) echo "fast_unwind_on_malloc=0" ;; *) echo "" ;; esac; }

flags() { # target
  local t=$1
  echo "-max_len=$(max_len "$t") -timeout=20 -rss_limit_mb=2048 -print_final_stats=0"
  [ -f "fuzz/$t.dict" ] && echo "-dict=fuzz/$t.dict"
  return 0
}

replay() { # target
  local t=$1 bin=$FUZZ_DIR/$1 dir=fuzz/regress/$1
  [ -x "$bin" ] || { echo "fz_run: no $bin (make fuzz-build)" >&2; return 2; }
  [ -d "$dir" ] && [ -n "$(ls -A "$dir")" ] || return 0
  # libFuzzer runs each named file once and stops at the first failure
  ASAN_OPTIONS=$(asan_for "$t") "$bin" $(flags "$t") "$dir"/* 2>&1 | tail -n 60 >"$FUZZ_DIR/$t.replay.log" || {
    cat "$FUZZ_DIR/$t.replay.log" >&2; return 1; }
}

fuzz_for() { # seconds target corpus-dir
  local s=$1 t=$2 c=$3 bin=$FUZZ_DIR/$2
  mkdir -p "$c" "$FUZZ_DIR/crashes"
  local sd; sd=$(seeds "$t")
  local extra=(); [ -d "fuzz/regress/$t" ] && extra+=("fuzz/regress/$t")
  ASAN_OPTIONS=$(asan_for "$t") "$bin" $(flags "$t") -max_total_time="$s" -artifact_prefix="$FUZZ_DIR/crashes/$t-" "$c" "$sd" "${extra[@]}"
}

cmd=${1:-}; shift || true
case $cmd in
  seeds) seeds "$1" ;;
  replay) replay "$1" ;;
  run)
    secs=$1; shift
    status=0
    for t in "$@"; do
      echo "== $t: fuzzing for ${secs}s" >&2
      replay "$t" || { status=1; continue; }
      fuzz_for "$secs" "$t" "$FUZZ_DIR/corpus/$t" || status=1
    done
    ls "$FUZZ_DIR/crashes" 2>/dev/null | sed 's/^/crash: /' >&2 || true
    exit $status ;;
  smoke)
    secs=$1 t=$2
    replay "$t"
    tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
    fuzz_for "$secs" "$t" "$tmp" -seed=1 ;;
  *) sed -n '2,9p' "$0" >&2; exit 2 ;;
esac
