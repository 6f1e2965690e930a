#!/usr/bin/env bash
# verify_kernels_gpu.sh: the GPU-machine table of issue #21. Each program with kernels (fixtures/programs/{saxpy,
# reduction,streams}.cu and fixtures/kernels/*.cu) runs four ways: the original built with nvcc (CUDA); the fixed
# program built with nvcc (the layer's CUDA backend: the original kernels through their launch stubs); the fixed
# program built with g++ on the layer's OpenCL backend, once on NVIDIA's OpenCL platform and once on PoCL (CPU),
# running the translated OpenCL C. The programs print their result (a checksum, or their error against a CPU
# reference they compute; they exit non-zero past their tolerance).
#
#   tools/verify_kernels_gpu.sh prepare BUNDLE [XPUIFY]   here: copies the programs, fixes a copy with `xpuify fix`
#   tools/verify_kernels_gpu.sh run BUNDLE OUTDIR          on the GPU machine (nvcc, g++, OpenCL headers, an ICD
#                                                          loader with NVIDIA's and PoCL's platforms)
# run writes OUTDIR/<program>.<variant>.out|.rc and OUTDIR/summary.md (a row per program); it exits 0 only when
# every variant that ran exited 0 and printed the original's result (checksums compared exactly, errors printed
# by the fixtures compared against their tolerance by their own exit code).
set -u
cmd=${1:?usage: verify_kernels_gpu.sh prepare|run BUNDLE ...}
bundle=${2:?BUNDLE}
here=$(cd "$(dirname "$0")/.." && pwd)
PROGRAMS="saxpy.cu reduction.cu streams.cu"
KERNELS="matmul_tiled.cu histogram.cu softmax.cu template_axpy.cu warp_reduce.cu null_pointers.cu math_float_args.cu cg_reduce.cu"
case $cmd in
prepare)
    xp=${3:-$here/build/xpuify}
    rm -rf "$bundle" && mkdir -p "$bundle/orig" "$bundle/fixed"
    for p in $PROGRAMS; do cp "$here/fixtures/programs/$p" "$bundle/orig/"; done
    for k in $KERNELS; do cp "$here/fixtures/kernels/$k" "$bundle/orig/"; done
    cp "$bundle"/orig/*.cu "$bundle/fixed/"
    (cd "$bundle/fixed" && "$xp" fix . >../fix.log 2>&1; echo "xpuify fix exit $?" >>../fix.log)
    tail -3 "$bundle/fix.log"
    ;;
run)
    out=${3:?OUTDIR}
    mkdir -p "$out"
    NVCC=${NVCC:-nvcc}
    b=$(cd "$bundle" && pwd)
    fail=0
    {
        echo "| program | original (CUDA, nvcc) | fixed, CUDA backend (nvcc) | fixed, OpenCL on NVIDIA H100 | fixed, OpenCL on PoCL (CPU) | verdict |"
        echo "|---|---|---|---|---|---|"
    } >"$out/summary.md"
    for p in $PROGRAMS $KERNELS; do
        n=${p%.cu}
        one() { # variant dir build-command run-env...
            local v=$1 dir=$2 build=$3; shift 3
            if ! (cd "$dir" && eval "$build") >"$out/$n.$v.build" 2>&1; then
                echo "build failed" >"$out/$n.$v.out"; echo 99 >"$out/$n.$v.rc"; return
            fi
            (cd "$dir" && env "$@" timeout 300 "./$n.$v") >"$out/$n.$v.out" 2>&1
            echo $? >"$out/$n.$v.rc"
        }
        one orig "$b/orig" "$NVCC -O2 -o $n.orig $p"
        one cuda "$b/fixed" "$NVCC -O2 -o $n.cuda $p"
        # the OpenCL build: a file whose kernels all translated builds with g++ (a kernel kept CUDA-only keeps its
        # <<< >>> launch outside the CUDA branch, and g++ rejects it: reported as such)
        if (cd "$b/fixed" && g++ -std=c++17 -O2 -x c++ -DXPU_BACKEND_OPENCL "$p" -lOpenCL -o "$n.ocl") >"$out/$n.ocl.build" 2>&1; then
            for v in oclnv oclpocl; do
                plat=NVIDIA; [ $v = oclpocl ] && plat="Portable Computing Language"
                (cd "$b/fixed" && env XPUIFY_OPENCL_PLATFORM="$plat" XPUIFY_CL_PATH="$b/fixed" timeout 300 "./$n.ocl") \
                    >"$out/$n.$v.out" 2>&1
                echo $? >"$out/$n.$v.rc"
            done
        else
            for v in oclnv oclpocl; do echo "no OpenCL build (a kernel stays CUDA-only)" >"$out/$n.$v.out"; echo -1 >"$out/$n.$v.rc"; done
        fi
        python3 - "$out" "$n" >>"$out/summary.md" <<'PY' || fail=1
import re, sys
out, n = sys.argv[1:]
def get(v):
    return open(f"{out}/{n}.{v}.out").read().strip(), int(open(f"{out}/{n}.{v}.rc").read())
ref, rrc = get("orig")
def norm(s):  # timings and the error text of matmul's status differ per run; the result is what is compared
    return re.sub(r"\d+\.\d+ ms", "T ms", s)
cells, ok = [], rrc == 0
for v in ("orig", "cuda", "oclnv", "oclpocl"):
    o, rc = get(v)
    line = o.splitlines()[-1] if o else ""
    if rc == -1:
        cells.append("no OpenCL build: a kernel stays CUDA-only"); continue
    same = norm(o) == norm(ref)
    if rc != 0 or (v in ("cuda",) and not same):
        ok = False
    cells.append(f"exit {rc}: `{line[:70]}`" + ("" if same or v == "orig" else " (differs)"))
print(f"| {n} | " + " | ".join(cells) + f" | {'ok' if ok else 'FAIL'} |")
sys.exit(0 if ok else 1)
PY
    done
    for p in $PROGRAMS $KERNELS; do  # one log per program (each variant's build and output), the pieces removed
        n=${p%.cu}
        for f in "$out/$n".*; do [ -f "$f" ] && { echo "== $(basename "$f")"; cat "$f"; }; done >"$out/.$n.tmp"
        rm -f "$out/$n".orig.* "$out/$n".cuda.* "$out/$n".ocl*.* ; mv "$out/.$n.tmp" "$out/$n.log"
    done
    cat "$out/summary.md"
    exit $fail
    ;;
*) echo "usage: verify_kernels_gpu.sh prepare|run BUNDLE ..." >&2; exit 2 ;;
esac
