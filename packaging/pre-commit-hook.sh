#!/usr/bin/env bash
# pre-commit-hook.sh: what the hooks of .pre-commit-hooks.yaml run (pre-commit's `language: script`): the `xpuify`
# installed on PATH (`make install`, or `apt install ./xpuify_*.deb`), with the files pre-commit passes.
#   pre-commit-hook.sh check ARGS... FILES...   xpuify check
#   pre-commit-hook.sh fix ARGS... FILES...     xpuify fix, then fails when it created a file (the device helper
#                                               xpuify_device.py, the layers xpuify_gpu.h / xpuify_ccl.h) that
#                                               is not staged: the fixed files would import it, uncommitted
set -uo pipefail
verb=${1:?usage: pre-commit-hook.sh check|fix ARGS...}
shift
if ! command -v xpuify >/dev/null 2>&1; then
  echo "xpuify-$verb: \`xpuify\` is not on PATH. Install it first: \`make install\` in a clone of xpuify, or" >&2
  echo "  \`make deb && apt install ./build/xpuify_*.deb\` (docs/ci.md, section pre-commit)." >&2
  exit 1
fi
[ "$verb" = check ] && exec xpuify check "$@"
[ "$verb" = fix ] || { echo "pre-commit-hook.sh: unknown verb \`$verb\` (check or fix)" >&2; exit 2; }

untracked() { git ls-files -z --others --exclude-standard | tr '\0' '\n' | sort; }
before=$(untracked)
xpuify fix "$@"
rc=$?
# new untracked files, and xpuify's own files left untracked by an earlier run that failed here
unstaged=$(comm -13 <(printf '%s\n' "$before") <(untracked) | sed '/^$/d'
           untracked | grep -E '(^|/)xpuify_(device\.py|gpu\.h|ccl\.h)$')
unstaged=$(printf '%s\n' "$unstaged" | sed '/^$/d' | sort -u)
if [ -n "$unstaged" ]; then
  echo "xpuify-fix: the fixed files need these new files, which are not staged:" >&2
  printf '  %s\n' $unstaged >&2
  echo "  Stage them (git add $(printf '%s ' $unstaged| sed 's/ $//')) with the fixed files and commit again." >&2
  exit 1
fi
exit $rc
