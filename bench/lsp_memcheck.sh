#!/usr/bin/env bash
# lsp_memcheck.sh: runs the language server's transcript tests (tests/lsp: protocol, diagnostics, actions) with
# every server process under valgrind (memcheck: invalid reads and writes, uninitialised values, definite leaks).
# Prints each valgrind report and exits 1 when there is any. Slow (minutes); not part of `make test`.
# Usage: bench/lsp_memcheck.sh [test name filter]
set -u
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "lsp_memcheck: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
make -s build/xpuify >/dev/null || exit 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/xpuify" <<WRAP
#!/bin/sh
exec valgrind -q --leak-check=full --errors-for-leak-kinds=definite --log-file=$dir/vg.%p.log $PWD/build/xpuify "\$@"
WRAP
chmod +x "$dir/xpuify"
status=0
for t in tests/lsp/test_protocol.py tests/lsp/test_diagnostics.py tests/lsp/test_actions.py; do
  XPUIFY="$dir/xpuify" TEST_ONLY="${1:-}" /usr/bin/python3 "$t" | grep -E '^(not ok|1\.\.)' | sed "s|^|$t: |"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done
n=$(ls "$dir"/vg.*.log 2>/dev/null | wc -l)
reports=0
for f in "$dir"/vg.*.log; do
  [ -s "$f" ] || continue
  reports=$((reports + 1))
  echo "--- $(basename "$f")"; cat "$f"
done
echo "lsp_memcheck: $n server processes under valgrind, $reports with a report"
[ "$reports" -eq 0 ] && [ "$status" -eq 0 ]
