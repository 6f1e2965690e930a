#!/usr/bin/env bash
# run_all.sh: runs every test suite (cmocka unit binaries, CLI end-to-end tests, fixture checks) and closes with
# one line "N passed, N failed". Every suite speaks TAP ("ok N - name" / "not ok N - name").
# Environment: XPUIFY (binary), UNIT_DIR (unit test binaries). Extra arguments filter suites by name.
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
    grep -E '^not ok ' "$out" | sed 's/^/    /'
    grep -vE '^(ok |not ok |1\.\.|#)' "$out" | head -40 | sed 's/^/    | /'
    head -40 "$out.err" | sed 's/^/    ! /'
  fi
}

FILTER=${1:-}
for t in "$UNIT_DIR"/test_*; do
  [ -x "$t" ] || continue
  CMOCKA_MESSAGE_OUTPUT=TAP run_suite "unit/$(basename "$t")" "$t"
done
for t in tests/cli/test_*.py tests/lsp/test_*.py tests/fix/test_*.py tests/runtime/test_*.py tests/hardening/test_*.py; do
  [ -f "$t" ] || continue
  run_suite "${t#tests/}" "$PY" "$t"
done
echo
if ((${#suites_failed[@]})); then echo "failing suites: ${suites_failed[*]}"; fi
if ((skipped)); then
  echo "$skipped skipped (not counted as passed):"
  printf '    %s\n' "${skips[@]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
