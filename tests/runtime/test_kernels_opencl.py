"""CUDA kernels translated to OpenCL C and run on the CPU through PoCL: each program of fixtures/programs with
kernels and each of fixtures/kernels is fixed, built with plain g++ against the layer's OpenCL backend
(-DXPU_BACKEND_OPENCL -lOpenCL, no nvcc), run, and its output checked against a CPU reference (the kernel
fixtures compute theirs on the host and exit non-zero past their tolerance; the programs' sums are recomputed
here). Also: the CUDA branch of the fixed file keeps the original kernel and launch, warp code the emulation
cannot run exactly (divergent, partial mask) stays CUDA-only, fixing twice changes nothing, and the OpenCL C compiles to SPIR-V that spirv-val accepts."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from harness import check, eq, fixture, main, need_tool, read, run, skip  # noqa: E402

KERNELS = ["matmul_tiled.cu", "histogram.cu", "softmax.cu", "template_axpy.cu", "warp_reduce.cu", "null_pointers.cu",
           "math_float_args.cu", "cg_reduce.cu", "template_deduced.cu", "cg_block.cu"]
COUNT = {"warp_reduce.cu": 2, "cg_reduce.cu": 3, "template_deduced.cu": 2, "cg_block.cu": 3}  # kernels in a file (1 where not named)


def need_opencl():
    need_tool("g++", "g++")
    if not os.path.exists("/usr/include/CL/cl.h"):
        skip("the OpenCL headers are not installed (ocl-icd-opencl-dev, opencl-c-headers)")
    if not os.path.isdir("/etc/OpenCL/vendors") or not os.listdir("/etc/OpenCL/vendors"):
        skip("no OpenCL platform is installed (pocl-opencl-icd)")


def build_run(src, exe):
    b = subprocess.run(["g++", "-std=c++17", "-Wall", "-Werror", "-Wno-unused-function", "-x", "c++", "-DXPU_BACKEND_OPENCL",
                        src, "-lOpenCL", "-o", exe], capture_output=True, text=True)
    check(b.returncode == 0, src + " builds on the OpenCL backend", b.stdout + b.stderr)
    env = dict(os.environ, XPUIFY_OPENCL_PLATFORM="Portable Computing Language")
    p = subprocess.run(["./" + exe], capture_output=True, text=True, timeout=300, env=env)
    return p


def fix_here(files, group):
    for f in files:
        shutil.copy(fixture(group, f), f)
    return run("fix", ".")


def test_programs_run_on_pocl(d):
    need_opencl()
    fix_here(["saxpy.cu", "reduction.cu", "streams.cu"], "programs")
    for f in ("saxpy.cu.cl", "reduction.cu.cl", "streams.cu.cl"):
        check(os.path.exists(f), f + " written beside the layer", str(os.listdir(".")))
    n = 1 << 20
    p = build_run("saxpy.cu", "saxpy")
    eq(p.stdout.strip(), "saxpy checksum %.1f" % sum(2.0 * (i % 97) + (i % 13) for i in range(n)), p.stderr)
    p = build_run("reduction.cu", "reduction")
    eq((p.returncode, p.stdout.strip()), (0, "reduction sum 500000500000 (expected 500000500000)"), p.stderr)
    m = 1 << 18
    ref = sum((i % 100) * (2.0 if i < m // 2 else 3.0) for i in range(m))
    p = build_run("streams.cu", "streams")
    eq(p.stdout.strip(), "streams checksum %.1f timing ok" % ref, p.stderr)


def test_kernel_families_run_on_pocl(d):
    need_opencl()
    r = fix_here(KERNELS, "kernels")
    for k in KERNELS:
        c = COUNT.get(k, 1)
        check("wrote %d translated kernel%s to ./%s.cl" % (c, "s" if c > 1 else "", k) in r.err, k + " translated", r.err)
        p = build_run(k, k[:-3])
        eq(p.returncode, 0, k + ": " + p.stdout + p.stderr)
    # OpenCL C forbids variadic macros: NVIDIA's compiler rejected every program whose prelude defined
    # __launch_bounds__(...) (PoCL accepted it); softmax's __launch_bounds__(256) is dropped with its arguments
    for k in KERNELS:
        bad = [x for x in read(k + ".cl").splitlines() if x.startswith("#define") and "..." in x]
        eq(bad, [], k + ".cl: no variadic macro")
    check("__launch_bounds__" not in read("softmax.cu.cl"), "__launch_bounds__ dropped")
    # what each family's OpenCL C relies on
    eq(read("histogram.cu.cl").count("atomic_add(&local_xpu["), 1, "shared int atomics; `local` renamed")
    check("xpu_atomic_add_f32_g(total, 0.5f)" in read("histogram.cu.cl"), "float atomicAdd through CAS")
    check("__local float *scratch)" in read("softmax.cu.cl"), "extern __shared__ -> a __local parameter")
    check("block_reduce(__local float *s" in read("softmax.cu.cl"), "device function takes its caller's space")
    check("XPU_CL_SHARED(shmem)" in read("softmax.cu"), "the stub sizes the local memory at launch")
    # warps: the __local emulation (PoCL 3.1 has no sub-groups), the scratch declared by the kernel and passed to the
    # __device__ function that shuffles; the mask dropped, the width made explicit
    w = read("warp_reduce.cu.cl")
    check("__local ulong xpu_ws[1024];" in w, "the kernel declares the warp scratch", w[-1500:])
    check("float warp_sum(float v, __local ulong *xpu_ws)" in w and "warp_sum(x[i], xpu_ws)" in w, "passed to the device function", w[-1500:])
    for call in ("xpu_shfl_xor_f32(xpu_ws, v, o, 32)", "xpu_shfl_down_f32(xpu_ws, v, 3, 16)", "xpu_shfl_i32(xpu_ws, i * 3 - 7, ",
                 "xpu_shfl_up_f64(xpu_ws, (double)v * 0.5, 2, 32)", "xpu_ballot(xpu_ws, 0 != (v > 0.5f))"):
        check(call in w, call, w[-2500:])
    check("__syncwarp" not in w[w.index("void warp_ops("):], "__syncwarp became a barrier", w[-2500:])
    # cooperative groups: the tile's reductions on the same emulation, the block's sync a barrier, ranks from the
    # linear thread id; the headers only where CUDA builds the file
    g = read("cg_reduce.cu.cl")
    for call in ("xpu_reduce_max_f32(xpu_ws, maxval)", "xpu_reduce_add_f32(xpu_ws, sumval)", "xpu_reduce_min_f32(xpu_ws, v)",
                 "xpu_reduce_add_i32(xpu_ws, (int)(v * 1000.0f))", "xpu_shfl_down_f32(xpu_ws, v, 3, 32)",
                 "sums[(xpu_tid() >> 5)] = warp_sumval;"):
        check(call in g, call, g[-2500:])
    check("#if defined(__CUDACC__) || defined(XPU_BACKEND_CUDA)\n#include <cooperative_groups.h>\n#endif" in read("cg_reduce.cu"),
          "cooperative_groups.h only for CUDA", read("cg_reduce.cu")[:1500])
    # the thread block passed to __device__ functions (cuda-samples' forms): the parameter and the argument
    # dropped, the block's calls barriers, the linear thread id and the work-group's size
    b = read("cg_block.cu.cl")
    for x in ("void reduceBlock(__local float *sdata) {", "float loadPair(__global const float *x, unsigned int n) {",
              "scan1Inclusive(unsigned int idata, __local unsigned int *s_Data, unsigned int size) {",
              "sdata[xpu_tid()] = loadPair(x, n);", "reduceBlock(sdata);", "scan1Inclusive(in[i], s_Data, 128);",
              "for (unsigned int s = xpu_nthreads() / 2; s > 0; s >>= 1) {"):
        check(x in b, x, b[-3000:])
    check("cta" not in b and "this_thread_block" not in b, "no group left in the OpenCL C", b[-3000:])
    tpl = read("template_axpy.cu.cl")
    check("axpy__float(" in tpl and "axpy__double(" in tpl, "one kernel per instantiation", tpl[-800:])
    # template arguments deduced at the launch (clang's specialization of the callee): one kernel per deduced
    # instantiation (a typedef of float is float), a written first argument with a deduced second
    ded = read("template_deduced.cu.cl")
    for k in ("scale_add__float(", "scale_add__double(", "scale_add__int(", "block_sum__128_double("):
        check(k in ded, k, ded[-2000:])
    eq(ded.count("\n__global__ void "), 4, "four instantiations")
    t = read("template_deduced.cu")
    for call in ("xpu_launch_scale_add(nb, 128, 0, 0, fy, cfx, 1.5f, n);", "xpu_launch_block_sum<128>(nb, 128, 0, 0, dy, sums, n);"):
        check(call in t, call, t)


# Kernels from public projects (fixtures/kernels/public: the kernel lines verbatim, their licence and source URL at a
# pinned commit in each header, a CPU reference and a main that exits non-zero past its tolerance): kernel names
# each program must print, all translated and checked against the CPU on PoCL.
PUBLIC = {
    "llmc_elementwise.cu": ["gelu_forward_kernel1", "residual_forward_kernel1", "encoder_forward_kernel1",
                            "encoder_forward_kernel2", "crossentropy_forward_kernel1"],
    "llmc_softmax.cu": ["softmax_forward_kernel1", "softmax_forward_kernel2", "softmax_forward_kernel3", "softmax_forward_kernel4",
                        "softmax_forward_online_kernel1"],
    "llmc_layernorm.cu": ["layernorm_forward_kernel1", "mean_kernel", "rstd_kernel", "normalization_kernel"],
    "sgemm.cu": ["sgemm_naive", "sgemm_global_mem_coalesce<32>", "sgemm_shared_mem_block<32>"],
}


def test_public_kernels_run_on_pocl(d):
    need_opencl()
    for f in PUBLIC:
        shutil.copy(fixture("kernels", "public", f), f)
        check("Licence of those lines:" in read(f) and "/blob/" in read(f), f + " names its source and licence")
    r = run("fix", ".")
    total = 0
    for f, names in PUBLIC.items():
        check("wrote %d translated kernels to ./%s.cl" % (len(set(n.split("<")[0] for n in names)), f) in r.err, f + " all translated", r.err)
        check("kept CUDA-only" not in r.err, "none kept", r.err)
        p = build_run(f, f[:-3])
        eq(p.returncode, 0, f + ": " + p.stdout + p.stderr)
        for n in names:
            check(n + " " in p.stdout and " max abs error " in p.stdout, f + ": " + n + " ran and was checked", p.stdout)
        total += len(names)
    check(total >= 15, "at least 15 public kernels", total)


def test_cuda_branch_keeps_the_original(d):
    fix_here(["saxpy.cu"], "programs")
    t = read("saxpy.cu")
    orig = read(fixture("programs", "saxpy.cu"))
    kernel = orig[orig.index("__global__"):orig.index("}\n", orig.index("__global__")) + 2]
    check("#if defined(XPU_BACKEND_CUDA)\n" + kernel + "#endif\n" in t, "the kernel kept verbatim for CUDA", t)
    check("saxpy<<<grid, block, shmem, stream>>>(n, a, x, y);" in t, "the CUDA stub launches the original", t)
    check("xpu_launch_saxpy((n + 255) / 256, 256, 0, 0, n, 2.0f, x, y);" in t, "the launch calls the stub", t)


def test_untranslatable_kernel_stays_cuda(d):
    """Warp code the barrier emulation cannot run exactly stays CUDA-only, each with its reason and line."""
    r = fix_here(["warp_divergent.cu"], "kernels")
    t = read("warp_divergent.cu")
    for line, why in ((8, "`__shfl_down_sync` under control flow that can differ between the threads of a block"),
                      (14, "a return, break, continue or goto under control flow that can differ between threads"),
                      (19, "`__shfl_sync` with a mask that is not the constant full warp")):
        check("warp_divergent.cu:%d: kept CUDA-only: %s" % (line, why) in r.err, why, r.err)
    for k in ("first_warp_only<<<1, 64>>>(x);", "early_return<<<1, 64>>>(x, 50);", "half_mask<<<1, 32>>>(x);"):
        check(k in t, "its launch is left as it was: " + k, t)
    check("xpu_launch_scale(1, 64, 0, 0, x, 2.0f);" in t, "the other kernel of the file is translated", t)
    cl = read("warp_divergent.cu.cl")
    check("scale(" in cl and "first_warp_only" not in cl and "half_mask" not in cl, "only the translatable kernel", cl[-600:])


def test_fix_twice_changes_nothing(d):
    fix_here(KERNELS + ["warp_divergent.cu"], "kernels")
    before = {f: read(f) for f in os.listdir(".")}
    run("fix", ".")
    after = {f: read(f) for f in os.listdir(".")}
    eq(sorted(after), sorted(before))
    for f in before:
        eq(after[f], before[f], f)


def test_spirv(d):
    """The same OpenCL C compiled offline to SPIR-V (what the Level Zero backend would load), then validated. -O0:
    llvm-spirv 14 writes blocks of clang 14's -O2 loops before their dominators (spirv-val rejects matmul's)."""
    for tool in ("clang-14", "llvm-spirv-14", "spirv-val"):
        if not shutil.which(tool):
            skip(tool + " is not installed (clang-14, llvm-spirv-14, spirv-tools)")
    fix_here(KERNELS, "kernels")
    for k in KERNELS:
        cl = k + ".cl"
        c = subprocess.run(["clang-14", "-cc1", "-triple", "spir64-unknown-unknown", "-cl-std=CL1.2", "-finclude-default-header",
                            "-O0", "-emit-llvm-bc", cl, "-o", k + ".bc"], capture_output=True, text=True)
        eq(c.returncode, 0, cl + ": " + c.stderr)
        s = subprocess.run(["llvm-spirv-14", k + ".bc", "-o", k + ".spv"], capture_output=True, text=True)
        eq(s.returncode, 0, cl + ": " + s.stderr)
        v = subprocess.run(["spirv-val", k + ".spv"], capture_output=True, text=True)
        eq(v.returncode, 0, cl + ": " + v.stdout + v.stderr)


if __name__ == "__main__":
    main(globals())
