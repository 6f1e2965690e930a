#!/usr/bin/env bash
# verify_gpu.sh: the GPU evidence run. On a machine with NVIDIA GPUs, runs `xpuify verify` over every runtime
# fixture (fixtures/runtime/fixtures.tsv) for both fix targets (compat, accelerator), every device tier
# present (auto: CUDA, and the CPU with CUDA hidden), each compared with the original on CUDA and, where the
# original fails (the CPU), with the fixture's hand-written CPU reference. Writes OUTDIR/env.txt (date, GPU,
# driver, torch), OUTDIR/<fixture>-<target>.json|.log|.rc and OUTDIR/summary.md (the table
# docs/verification.md records; tools/verification_table.py makes it); prints the summary.
# Usage: tools/verify_gpu.sh OUTDIR [XPUIFY [PYTHON]]     (run from the repository root; the ddp fixture needs
# 2 GPUs for its CUDA runs). VERIFY_TIMEOUT: seconds per run (default 300).
set -u
out=${1:?usage: tools/verify_gpu.sh OUTDIR [XPUIFY [PYTHON]]}
xp=${2:-build/xpuify}
py=${3:-python3}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "gpu: $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null | paste -sd';' -)"
  echo "driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
  "$py" -c 'import sys, torch, numpy; print("torch:", torch.__version__, "(CUDA %s)" % torch.version.cuda); print("python:", sys.version.split()[0]); print("numpy:", numpy.__version__); print("cuda_devices:", torch.cuda.device_count())'
  echo "nvcc: $(nvcc --version 2>/dev/null | tail -1)"
  echo "os: $(. /etc/os-release 2>/dev/null; echo "$PRETTY_NAME"), kernel $(uname -r)"
  echo "xpuify: $("$xp" version)"
} > "$out/env.txt" 2>&1
cat "$out/env.txt"

one() { # fixture entry compare target
  local name=$1 entry=$2 compare=$3 target=$4
  # shellcheck disable=SC2086
  "$xp" verify "$here/fixtures/runtime/$name" --run "$py $entry" --reference "$py reference_cpu.py" \
    --target "$target" --compare $compare --python "$py" --timeout "${VERIFY_TIMEOUT:-300}" --format json \
    -o "$out/$name-$target.json" 2>"$out/$name-$target.log"
  echo $? >"$out/$name-$target.rc"
}

# the two targets in parallel (independent copies; DDP ports are picked free)
for target in compat accelerator; do
  (
    while IFS=$'\t' read -r name entry compare; do
      [[ -z "$name" || "$name" == \#* ]] && continue
      one "$name" "$entry" "$compare" "$target"
    done <"$here/fixtures/runtime/fixtures.tsv"
  ) &
done
wait
"$py" "$here/tools/verification_table.py" "$out" | tee "$out/summary.md"
