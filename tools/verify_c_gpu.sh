#!/usr/bin/env bash
# verify_c_gpu.sh: the GPU tier of the C codemod's verification, through `xpuify verify` itself. For every
# program of fixtures/programs, `xpuify verify` copies the directory twice, runs `xpuify fix` (libclang) on one
# copy -- which writes the portable layer, whose CUDA backend nvcc selects --, builds the program in both copies
# with nvcc and compares their output on the CUDA tier. The CPU tier is left out: a CUDA program and its patched
# form through the CUDA backend both need a GPU; the Level Zero backend needs an Intel GPU (none here).
# Then the PyTorch extension of fixtures/ext_runtime (setup.py + a .cu), built and run the same way.
# Writes OUTDIR/<program>.json|.log|.rc and OUTDIR/summary.md; exit 0 only when every program matches.
# Usage: tools/verify_c_gpu.sh OUTDIR [XPUIFY]   (run from the repository root; needs nvcc, an NVIDIA GPU and a
# libclang 14-19 for `xpuify fix`; XPUIFY_LIBCLANG names one explicitly)
set -u
out=${1:?usage: tools/verify_c_gpu.sh OUTDIR [XPUIFY]}
xp=${2:-build/xpuify}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$NVCC" ] || { echo "verify_c_gpu: no nvcc at $NVCC" >&2; exit 2; }
nvidia-smi -L >/dev/null 2>&1 || { echo "verify_c_gpu: no NVIDIA GPU (nvidia-smi -L failed)" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
# summary_row REPORT NAME BUILD RC: one row of summary.md from an `xpuify verify --format json` report
summary_row() {
  python3 - "$@" >>"$out/summary.md" <<'PY'
import json, sys
path, name, build, rc = sys.argv[1:]
try:
    r = json.load(open(path))
except Exception as e:
    print(f"| {name} | `{build}` | | no report ({e.__class__.__name__}) | | exit {rc} |")
    sys.exit(0)
runs = {(x.get("variant"), x.get("tier")): x for x in r.get("runs", [])}
def cell(v):
    x = runs.get((v, "cuda"))
    if not x:
        return "not run"
    return f"exit {x.get('exit')} ({x.get('verdict', '')})"
fx = r.get("fix") or {}
fixes = f"{fx.get('fixed')} in {fx.get('files_changed')} files" + (" (errors)" if fx.get("errors") else "")
print(f"| {name} | `{build}` | {fixes} | {cell('original')} | {cell('patched')} | {'match' if rc == '0' else 'FAIL (exit ' + rc + ')'} |")
PY
}
fail=0
{
  echo "| program | build | fixes applied | original (CUDA) | patched (CUDA) | verdict |"
  echo "|---|---|---|---|---|---|"
} > "$out/summary.md"
for p in "$here"/fixtures/programs/*.cu "$here"/fixtures/programs/*.c; do  # launcher.cpp has no main (its kernels live elsewhere)
  [ -f "$p" ] || continue
  name=$(basename "$p")
  bin=${name%.*}
  case $name in
    nccl_*) extra=" -lnccl" ;;
    *) extra="" ;;
  esac
  case $name in
    *.cu) build="$NVCC -O2 -o $bin $name$extra" ;;
    *) build="$NVCC -O2 -x cu -o $bin $name$extra" ;;
  esac
  "$xp" verify "$here/fixtures/programs" --build "$build" --run "./$bin" --devices cuda --timeout 300 \
    --format json -q >"$out/$bin.json" 2>"$out/$bin.log"
  rc=$?
  echo "$rc" >"$out/$bin.rc"
  [ "$rc" -eq 0 ] || fail=1
  summary_row "$out/$bin.json" "$name" "$build" "$rc"
done
# the PyTorch extension (fixtures/ext_runtime): built by its setup.py with nvcc against the installed torch, run by
# run.py on the GPU; the patched copy has the device-generic host code (and whatever setup.py fix applies)
"$xp" verify "$here/fixtures/ext_runtime" --build "${PYTHON:-python3} setup.py -q build_ext --inplace" \
  --run "${PYTHON:-python3} run.py" --devices cuda --timeout 600 --format json -q \
  >"$out/ext_runtime.json" 2>"$out/ext_runtime.log"
rc=$?
echo "$rc" >"$out/ext_runtime.rc"
[ "$rc" -eq 0 ] || fail=1
summary_row "$out/ext_runtime.json" "add_ext (fixtures/ext_runtime)" "setup.py build_ext --inplace" "$rc"
cat "$out/summary.md"
exit $fail
