#!/usr/bin/env bash
# verify_c_gpu.sh: the GPU tier of the C codemod's verification, for a machine with an NVIDIA GPU and nvcc.
# Builds every program of fixtures/programs twice -- as written, and after `xpuify fix` through the portable
# layer's CUDA backend -- runs both and compares their output byte for byte. The PyTorch extension is not part of
# this script yet. Usage: tools/verify_c_gpu.sh [XPUIFY] (default build/xpuify); PATCHED=DIR takes
# the fixed programs from DIR instead of running `xpuify fix` here. Exit 0 only when every pair matches.
set -u
cd "$(dirname "$0")/.."
XPUIFY=${1:-$PWD/build/xpuify}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$NVCC" ] || { echo "verify_c_gpu: no nvcc at $NVCC" >&2; exit 2; }
nvidia-smi -L >/dev/null 2>&1 || { echo "verify_c_gpu: no NVIDIA GPU (nvidia-smi -L failed)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r fixtures/programs "$work/orig"
if [ -n "${PATCHED:-}" ]; then
  # fixed elsewhere (a GPU machine without libclang 14): PATCHED is fixtures/programs after `xpuify fix`
  cp -r "$PATCHED" "$work/patched"
else
  cp -r fixtures/programs "$work/patched"
  "$XPUIFY" fix -q "$work/patched" >/dev/null 2>&1
fi
[ -f "$work/patched/xpuify_gpu.h" ] || { echo "verify_c_gpu: xpuify fix wrote no portable layer" >&2; exit 2; }
fail=0
build() { # dir name -> binary
  local dir=$1 name=$2 extra=()
  case $name in nccl_allreduce.cu) extra=(-lnccl) ;; esac
  case $name in
    *.cu) "$NVCC" -O2 -o "$dir/${name%.*}" "$dir/$name" "${extra[@]}" ;;
    *.c) "$NVCC" -O2 -x cu -o "$dir/${name%.*}" "$dir/$name" ;;
    *) return 3 ;;
  esac
}
for p in fixtures/programs/*.cu fixtures/programs/*.c; do
  name=$(basename "$p")
  if ! build "$work/orig" "$name" || ! build "$work/patched" "$name"; then
    echo "FAIL $name: build"; fail=1; continue
  fi
  a=$("$work/orig/${name%.*}" 2>&1; echo "exit $?")
  b=$("$work/patched/${name%.*}" 2>&1; echo "exit $?")
  if [ "$a" = "$b" ]; then echo "SAME $name: $(echo "$a" | tr '\n' ' ')"
  else echo "DIFF $name"; echo "  original: $a"; echo "  patched:  $b"; fail=1; fi
done
exit $fail
