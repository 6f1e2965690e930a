#!/usr/bin/env bash
# demo.sh: what `make demo` shows: xpuify on the bundled CUDA-only project (examples/train_cuda). It never writes
# into examples/: it fixes a copy under build/demo and runs it on this machine's CPU. Usage: tools/demo.sh XPUIFY
# Steps 1-3 are expected to report findings or fail (that is what is shown); the demo fails only when the fixed
# copy does not run, or when xpuify itself errs (exit 2).
set -uo pipefail
cd "$(dirname "$0")/.."
xp=${1:-build/xpuify}
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
src=examples/train_cuda work=build/demo/train_cuda
step() { printf '\n== %s\n' "$*"; }
xpuify_ok() { # exit status of xpuify: 0 or 1 are results, anything else is an error of the demo
  [ "$1" -le 1 ] || { echo "demo: xpuify exited $1: that is an error, not a finding" >&2; exit 1; }
}

step "1. xpuify check $src (a small CUDA-only PyTorch project)"
"$xp" check "$src"; rc=$?; xpuify_ok $rc
[ $rc -eq 1 ] && echo "(exit 1: findings, as expected for a CUDA-only project)"

rm -rf build/demo && mkdir -p build/demo && cp -r "$src" build/demo/
step "2. the original on this machine's CPU (it needs an NVIDIA GPU)"
if (cd "$work" && CUDA_VISIBLE_DEVICES= "$PY" train.py --epochs 2) >build/demo/original.log 2>&1; then
  cat build/demo/original.log
  echo "(the original ran: this machine has a CUDA GPU)"
else
  tail -n 3 build/demo/original.log
  echo "(the original fails without an NVIDIA GPU, as expected; full output in build/demo/original.log)"
fi

step "3. xpuify fix --unsafe-fixes $work (a copy), and the diff it applied"
"$xp" fix --unsafe-fixes "$work"; rc=$?; xpuify_ok $rc
echo
# the device helper is a new 400-line module: named, not printed
diff -ruN -x xpuify_device.py -x __pycache__ "$src" "$work"
helpers=$(cd "$work" && find . -name xpuify_device.py | sed 's|^\./||' | sort | tr '\n' ' ')
[ -n "$helpers" ] && echo "(new files: ${helpers% }: the device helper, $(wc -l <"$(find "$work" -name xpuify_device.py | head -1)") lines)"

step "4. the fixed copy on the CPU (CUDA and Intel XPU machines pick their GPU at run time)"
(cd "$work" && "$PY" train.py --epochs 2) || { echo "demo: the fixed copy failed to run" >&2; exit 1; }

echo
echo "Shown: xpuify found the CUDA-only code in $src, the original cannot run on this CPU, \`xpuify fix\`" \
     "rewrote a copy ($work, diff above) and the copy trained here. The findings fix leaves need a human:" \
     "\`xpuify rule CODE\` explains each."
