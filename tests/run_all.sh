#!/usr/bin/env bash
# run_all.sh: runs every test suite (cmocka unit binaries, CLI end-to-end tests, fixture checks) and closes with
# one line "N passed, N failed". Every suite speaks TAP ("ok N - name" / "not ok N - name").
# Environment: XPUIFY (binary), UNIT_DIR (unit test binaries). Extra arguments filter suites by name.
# With SAN_XPUIFY and SAN_UNIT_DIR (set by `make test` under CI=true) every suite runs a second time against the
# ASan+UBSan build, with SAN_ASAN_OPTIONS/SAN_UBSAN_OPTIONS/SAN_LSAN_OPTIONS, its suites named "san:..."; the
# summary line counts both passes.
set -u
cd "$(dirname "$0")/.."
: "${XPUIFY:=$PWD/build/xpuify}"
: "${UNIT_DIR:=$PWD/build/tests}"
export XPUIFY
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
passed=0 failed=0 skipped=0 suites_failed=() skips=()

run_suite() { # name, command...
  local name=$1; shift
  if [ $# -gt 0 ] && [ -n "${FILTER:-}" ] && [[ "$name" != *"$FILTER"* ]]; then return; fi
  local out="$log/$(echo "$name" | tr '/ ' '__').tap"
  "$@" >"$out" 2>"$out.err"
  local rc=$?
  local p f s
  # a TAP skip directive (`ok N # SKIP why`; cmocka writes `not ok N # SKIP`) is neither a pass nor a failure
  s=$(grep -cE '^(not )?ok [0-9]* ?-? ?.*# ?SKIP' "$out")
  p=$(grep -E '^ok ' "$out" | grep -cvE '# ?SKIP')
  f=$(grep -E '^not ok ' "$out" | grep -cvE '# ?SKIP')
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; echo "not ok - $name exited $rc without a failing test" >>"$out"; fi
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
  if [ "$s" -ne 0 ]; then
    printf '%-40s %4d passed, %d failed, %d skipped\n' "$name" "$p" "$f" "$s"
    while IFS= read -r line; do skips+=("$name: ${line#*# }"); done < <(grep -E '^(not )?ok .*# ?SKIP' "$out")
  else
    printf '%-40s %4d passed, %d failed\n' "$name" "$p" "$f"
  fi
  if [ "$f" -ne 0 ]; then
    suites_failed+=("$name")
    # each failing test with the diagnostics the harness prints under it (`# ...` lines, TAP's convention: why it
    # failed, expected and got), then what the suite wrote outside TAP; at most 60 lines of each per test
    awk '/^not ok / && !/# ?SKIP/ { print "    " $0; n = 0; on = 1; next }
         /^(ok |1\.\.)/ { on = 0; next }
         on && /^#/ { if (++n <= 60) print "    " $0; else if (n == 61) print "    # ..."; next }
         !/^#/ { if (++m <= 40) print "    | " $0 }' "$out"
    head -40 "$out.err" | sed 's/^/    ! /'
  fi
}

run_pass() { # suite-name prefix, unit binary directory
  local t
  for t in "$2"/test_*; do
    [ -x "$t" ] || continue
    CMOCKA_MESSAGE_OUTPUT=TAP run_suite "$1unit/$(basename "$t")" "$t"
  done
  for t in tests/cli/test_*.py tests/lsp/test_*.py tests/fix/test_*.py tests/runtime/test_*.py tests/hardening/test_*.py; do
    [ -f "$t" ] || continue
    run_suite "$1${t#tests/}" "$PY" "$t"
  done
}

FILTER=${1:-${FILTER:-}}  # a suite filter: the first argument, else $FILTER (`FILTER=cli/test_x make test`)
run_pass "" "$UNIT_DIR"
if [ -n "${SAN_XPUIFY:-}" ]; then
  echo
  echo "== the same suites under AddressSanitizer + UndefinedBehaviorSanitizer ($SAN_XPUIFY)"
  export XPUIFY=$SAN_XPUIFY ASAN_OPTIONS=$SAN_ASAN_OPTIONS UBSAN_OPTIONS=$SAN_UBSAN_OPTIONS LSAN_OPTIONS=$SAN_LSAN_OPTIONS
  run_pass "san:" "$SAN_UNIT_DIR"
fi
echo
if ((${#suites_failed[@]})); then echo "failing suites: ${suites_failed[*]}"; fi
if ((skipped)); then
  echo "$skipped skipped (not counted as passed):"
  printf '    %s\n' "${skips[@]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
