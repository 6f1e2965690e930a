"""The C/C++/CUDA codemod: golden before/after programs (C, C++, CUDA, NCCL), fix twice -> no change, --diff,
the portable layers written once, macros rewritten at their definition, and the patched code compiled against
Level Zero (gcc -std=c11 -Wall -Werror, libze-dev) and CUDA (nvcc, where it exists)."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from harness import ROOT, check, eq, fixture, main, need_tool, read, run, skip, write  # noqa: E402

PROGRAMS = ["host.c", "launcher.cpp", "saxpy.cu", "reduction.cu", "streams.cu", "nccl_allreduce.cu"]
NVCC = os.environ.get("NVCC", "/usr/local/cuda/bin/nvcc")
TEMPLATES = os.path.join(ROOT, "rewriters", "templates")


def fixed_programs(d):
    for p in PROGRAMS:
        shutil.copy(fixture("programs", p), p)
    r = run("fix", ".")
    eq(r.code, 0, r)  # the kernels are translated (tests/runtime/test_kernels_opencl.py runs them)
    return r


def test_golden_programs(d):
    r = fixed_programs(d)
    for p in PROGRAMS:
        eq(read(p), read(fixture("golden", "c", p)), p)
    eq(read("xpuify_gpu.h"), read(os.path.join(TEMPLATES, "xpuify_gpu.h")))
    eq(read("xpuify_ccl.h"), read(os.path.join(TEMPLATES, "xpuify_ccl.h")))
    check("kernels to port" not in r.out, "no kernel is left to port by hand", r.out)
    for k in ("reduction", "saxpy", "streams"):
        check("wrote 1 translated kernel to ./%s.cu.cl" % k in r.err, k + ": its kernel translated", r.err)
    check("wrote the portable layer ./xpuify_gpu.h" in r.err and r.err.count("xpuify_gpu.h") == 1, "written once", r.err)


def test_ccl_layer_compiles_where_nccl_is_missing(d):
    """A file that got NCCL through another header only under a build flag (llm.c's train_gpt2.cu, through
    llmc/zero.cuh under MULTI_GPU) gets the collectives layer's include of its own: a build without NCCL must still
    compile it, as it compiled the original; with NCCL the layer's names are NCCL's."""
    need_tool("cc", "gcc")
    shutil.copy(os.path.join(TEMPLATES, "xpuify_ccl.h"), "xpuify_ccl.h")
    write("plain.c", '#include "xpuify_ccl.h"\nint main(void) { return 0; }\n')
    write("uses.c", '#include "xpuify_ccl.h"\nxcclComm_t comm;\nint main(void) { return comm; }\n')
    os.mkdir("nccl")
    os.mkdir("empty")
    write("nccl/nccl.h", "typedef int ncclComm_t;\n")
    # -nostdinc: no system directory, so <nccl.h> is missing unless -Inccl gives one
    p = subprocess.run(["cc", "-nostdinc", "-Iempty", "-fsyntax-only", "plain.c"], capture_output=True, text=True)
    eq(p.returncode, 0, "without NCCL a file that uses none of it compiles: " + p.stderr)
    p = subprocess.run(["cc", "-nostdinc", "-Iempty", "-fsyntax-only", "uses.c"], capture_output=True, text=True)
    check(p.returncode != 0 and "ncclComm_t" in p.stderr, "a use of an NCCL name fails as it did", p.stderr)
    p = subprocess.run(["cc", "-nostdinc", "-Inccl", "-fsyntax-only", "uses.c"], capture_output=True, text=True)
    eq(p.returncode, 0, "with NCCL the layer's names are NCCL's: " + p.stderr)


def test_fix_twice_changes_nothing(d):
    fixed_programs(d)
    before = {p: read(p) for p in PROGRAMS + ["xpuify_gpu.h", "xpuify_ccl.h"]}
    r = run("fix", ".")
    check("Fixed 0 findings in 0 files" in r.out, "second run fixes nothing", r.out)
    for p, t in before.items():
        eq(read(p), t, p)
    r = run("fix", "--diff", ".")
    eq(r.code, 0, r)


def test_an_older_layer_is_kept_and_said(d):
    """A layer already in the project is the user's: never overwritten. One written by an older xpuify (a lower
    XPUIFY_GPU_LAYER revision, or none) lacks what newly translated kernels launch through on Level Zero: fix says
    so once, naming the file, and leaves it as it is; the current layer says nothing."""
    current = read(os.path.join(TEMPLATES, "xpuify_gpu.h"))
    old = current.replace("#define XPUIFY_GPU_LAYER 2\n", "")
    check(old != current, "the template names its revision")
    for p in PROGRAMS:
        shutil.copy(fixture("programs", p), p)
    write("xpuify_gpu.h", old)
    r = run("fix", ".")
    eq(read("xpuify_gpu.h"), old, "the older layer is kept")
    eq(r.err.count("is an older portable layer (revision 0; this xpuify writes 2)"), 1, r.err)
    check("xpuify_gpu.h" in r.err and "delete it and run `xpuify fix` again" in r.err, "the warning names the file", r.err)
    for p in PROGRAMS:
        shutil.copy(fixture("programs", p), p)
    write("xpuify_gpu.h", current)
    r = run("fix", ".")
    check("older portable layer" not in r.err, "the current layer: no warning", r.err)


def test_diff_writes_nothing(d):
    for p in PROGRAMS:
        shutil.copy(fixture("programs", p), p)
    r = run("fix", "--diff", ".")
    eq(r.code, 1, r)
    check("+++ b/./xpuify_gpu.h" in r.out or "xpuify_gpu.h" in r.out, "the layer is part of the diff", r.out[:2000])
    check("-    CHECK(cudaMalloc(&x, n * sizeof(float)));" in r.out and "+    CHECK(xpuMalloc(&x, n * sizeof(float)));" in r.out,
          "the rename is in the diff", r.out[:4000])
    check(not os.path.exists("xpuify_gpu.h"), "nothing written")
    for p in PROGRAMS:
        eq(read(p), read(fixture("programs", p)), p)


def test_layer_dir_and_relative_includes(d):
    write("src/gpu/a.cu", "#include <cuda_runtime.h>\nint f(float **p) { return cudaMalloc((void **)p, 4) != cudaSuccess; }\n")
    write("tools/b.c", "int g(void) { return (int)cudaDeviceSynchronize(); }\n")
    r = run("fix", ".", "--layer-dir", "include")
    eq(read("src/gpu/a.cu"), '#include "../../include/xpuify_gpu.h"\nint f(float **p) { return xpuMalloc((void **)p, 4) != xpuSuccess; }\n')
    eq(read("tools/b.c"), '#include "../include/xpuify_gpu.h"\nint g(void) { return (int)xpuDeviceSynchronize(); }\n')
    check(os.path.exists("include/xpuify_gpu.h") and not os.path.exists("xpuify_gpu.h"), "layer in --layer-dir", r.err)


def test_macro_rewritten_at_its_definition_once(d):
    # a project macro in a header shared by two translation units: renamed at the definition, uses untouched
    write("proj.h", "#pragma once\n#include <cuda_runtime.h>\n#define PROJ_ALLOC(p, n) cudaMalloc((void **)(p), (n))\n")
    use = '#include "proj.h"\nint a(float **p) { return PROJ_ALLOC(p, 64); }\n'
    write("a.cu", use)
    write("b.cu", use.replace("a(", "b("))
    run("fix", ".")
    eq(read("proj.h"), '#pragma once\n#include "xpuify_gpu.h"\n#define PROJ_ALLOC(p, n) xpuMalloc((void **)(p), (n))\n')
    eq(read("a.cu"), use)
    eq(read("b.cu"), use.replace("a(", "b("))


def test_comments_strings_and_own_names_are_kept(d):
    src = ('#include <cuda_runtime.h>\n/* cudaMalloc in a comment */\nstatic int cudaHelper(void) { return 0; }\n'
           'const char *msg = "cudaMalloc failed";\nint h(void **p) {\n  // allocate\n  return cudaMalloc(p, 8) + cudaHelper();\n}\n')
    write("k.c", src)
    run("fix", "k.c")
    eq(read("k.c"), src.replace("#include <cuda_runtime.h>", '#include "xpuify_gpu.h"').replace("return cudaMalloc(p", "return xpuMalloc(p"))


def test_inserted_lines_start_in_code(d):
    # an inserted line (the layer's #include, the CUDA-only guard) goes where a line starts in code: not after a
    # `// comment \` that continues onto the next line, not inside a block comment, and an `#include` inside a
    # comment is none (the include went into the comment and a fix broke the syntax: found by fuzz/fz_c)
    src = "//\\\n}\nncclUniqueId id;\n"
    write("a.cu", src)
    r = run("fix", "a.cu")
    check("a bug in xpuify" not in r.err, "the fix is accepted", r)
    eq(read("a.cu"), '//\\\n}\n#include "xpuify_ccl.h"\nxcclUniqueId id;\n')
    src = "/* old:\n#include <cuda_runtime.h>\n*/\n// a licence line \\\n   continued\nvoid f(float **p) { cudaMalloc(p, 4); }\n"
    write("b.cu", src)
    run("fix", "b.cu")
    eq(read("b.cu"), src.replace("void f", '#include "xpuify_gpu.h"\nvoid f').replace("cudaMalloc", "xpuMalloc"))
    src = ("#include <vector>\nvoid f() {\n  int a = 1; // x \\\n  at::cuda::device_synchronize();\n"
           "  at::cuda::device_synchronize(); /* y\n */\n  at::cuda::device_synchronize(); // ok\n}\n")
    write("g.cpp", src)
    run("fix", "--unsafe-fixes", "g.cpp")
    eq(read("g.cpp"), src.replace("  at::cuda::device_synchronize(); // ok\n",
                                  "#ifndef XPUIFY_NO_CUDA  // xpuify: CUDA-only (XPC704); builds without CUDA define "
                                  "XPUIFY_NO_CUDA\n  at::cuda::device_synchronize(); // ok\n#endif\n"))


def test_unsupported_call_is_reported_at_the_call_site(d):
    write("p.c", "#include <cuda_runtime.h>\nint pin(float *h) { return (int)cudaHostRegister(h, 64, 0); }\n")
    r = run("fix", "p.c")
    eq(read("p.c"), '#include "xpuify_gpu.h"\nint pin(float *h) { return (int)xpuHostRegister(h, 64, 0); }\n')
    check("p.c:2:33: XPC190 [portable-layer-unsupported] xpuHostRegister" in r.out, "reported where it is called", r.out)


def compile_ok(cmd, what):
    p = subprocess.run(cmd, capture_output=True, text=True)
    check(p.returncode == 0, what, " ".join(cmd) + "\n" + p.stdout + p.stderr)
    return p


def test_level_zero_backend_compiles_with_patched_host_code(d):
    if not os.path.exists("/usr/include/level_zero/ze_api.h"):
        skip("libze-dev is not installed (/usr/include/level_zero/ze_api.h)")
    need_tool("g++", "g++")
    fixed_programs(d)
    compile_ok(["gcc", "-std=c11", "-Wall", "-Werror", "-DXPU_BACKEND_LEVEL_ZERO", "host.c", "-lze_loader", "-o", "host_l0"],
               "host.c on the Level Zero backend (C11)")
    compile_ok(["g++", "-std=c++17", "-Wall", "-Werror", "-DXPU_BACKEND_LEVEL_ZERO", "-c", "launcher.cpp", "-o", "l.o"],
               "launcher.cpp on the Level Zero backend (C++)")
    # the programs with translated kernels: their launch stubs go to the Level Zero backend's xpu_cl_launch (the
    # .spv it loads, the launch it makes: tests/runtime/test_kernels_level_zero.py)
    for p in ("saxpy.cu", "reduction.cu", "streams.cu"):
        check("#elif defined(XPU_BACKEND_OPENCL) || defined(XPU_BACKEND_LEVEL_ZERO)\n" in read(p), p + ": a stub for Level Zero", read(p))
        compile_ok(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-x", "c++", "-DXPU_BACKEND_LEVEL_ZERO", p, "-lze_loader",
                    "-o", p[:-3] + "_l0"], p + " with its translated kernels on the Level Zero backend (C++, linked)")
        check("xpu_cl_launch" in subprocess.run(["nm", "-C", p[:-3] + "_l0"], capture_output=True, text=True).stdout,
              p + ": launches through the layer")
    # without an Intel GPU the program runs and reports that cleanly through the layer
    p = subprocess.run(["./host_l0"], capture_output=True, text=True, timeout=60)
    eq(p.returncode, 0, p.stdout + p.stderr)
    check("cudaGetDeviceCount: xpuErrorNoDevice" in p.stdout or "device 0:" in p.stdout, "layer reports the device state", p.stdout)


def test_level_zero_unsupported_calls_say_so(d):
    if not os.path.exists("/usr/include/level_zero/ze_api.h"):
        skip("libze-dev is not installed (/usr/include/level_zero/ze_api.h)")
    write("u.c", '#include "xpuify_gpu.h"\n#include <stdio.h>\nint main(void) {\n  int v = 0;\n'
                 '  xpuError_t e = xpuHostRegister(&v, sizeof v, 0);\n  printf("%s|%s\\n", xpuGetErrorName(e), xpuGetErrorString(e));\n'
                 '  return e == xpuErrorNotSupported ? 0 : 1;\n}\n')
    shutil.copy(os.path.join(TEMPLATES, "xpuify_gpu.h"), "xpuify_gpu.h")
    compile_ok(["gcc", "-std=c11", "-Wall", "-Werror", "-DXPU_BACKEND_LEVEL_ZERO", "u.c", "-lze_loader", "-o", "u"], "u.c")
    p = subprocess.run(["./u"], capture_output=True, text=True, timeout=60)
    eq(p.returncode, 0, p.stdout)
    check(p.stdout.startswith("xpuErrorNotSupported|xpuHostRegister: Level Zero cannot pin"), "a clear unsupported error", p.stdout)


def test_cuda_backend_compiles_with_nvcc(d):
    if not os.access(NVCC, os.X_OK):
        skip("no nvcc (" + NVCC + "): NVIDIA's CUDA toolkit (Debian non-free: nvidia-cuda-toolkit)")
    fixed_programs(d)
    for p in ("saxpy.cu", "reduction.cu", "streams.cu"):
        compile_ok([NVCC, "-Werror", "all-warnings", "-c", p, "-o", p + ".o"], p + " through the CUDA backend")
    compile_ok([NVCC, "-c", "nccl_allreduce.cu", "-o", "nccl.o"], "nccl_allreduce.cu through the NCCL backend")
    compile_ok([NVCC, "-x", "cu", "-c", "host.c", "-o", "host.o"], "host.c through the CUDA backend")


def test_cuda_backend_compiles_as_c(d):
    inc = "/usr/local/cuda/include"
    if not os.path.exists(os.path.join(inc, "cuda_runtime.h")):
        skip("no CUDA headers at " + inc + ": NVIDIA's CUDA toolkit")
    fixed_programs(d)
    compile_ok(["gcc", "-std=c11", "-Wall", "-Werror", "-I" + inc, "-c", "host.c", "-o", "host.o"],
               "host.c through the CUDA backend with gcc")



def test_golden_extension_fixes(d):
    # PyTorch extension host code: is_cuda -> !is_cpu, CUDA guards -> c10 guards, kCUDA -> the input's device;
    # what is not regular enough (a guard from an index, a comparison, no tensor parameter) stays a finding
    shutil.copy(fixture("golden", "ext", "cases.cpp"), "cases.cpp")
    shutil.copy(fixture("ext_runtime", "add_ext.cu"), "add_ext.cu")
    r = run("fix", "cases.cpp", "add_ext.cu")
    eq(r.code, 1, r)
    eq(read("cases.cpp"), read(fixture("golden", "ext", "cases.fixed.cpp")), "cases.cpp")
    eq(read("add_ext.cu"), read(fixture("golden", "ext", "add_ext.fixed.cu")), "add_ext.cu")
    r = run("check", "--select", "XPC701,XPC702,XPC703", "--format", "concise", "cases.cpp")
    left = sorted(line.split(": ", 1)[0] + " " + line.split(" ")[1] for line in r.out.splitlines() if "XPC7" in line)
    eq(left, ["cases.cpp:24:3 XPC703", "cases.cpp:31:34 XPC702", "cases.cpp:36:58 XPC702"], r.out)
    before = {p: read(p) for p in ("cases.cpp", "add_ext.cu")}
    r = run("fix", "cases.cpp", "add_ext.cu")
    check("Fixed 0 findings in 0 files" in r.out, "second run fixes nothing", r.out)
    for p, t in before.items():
        eq(read(p), t, p)




def test_golden_cuda_only_statements_kept_for_cuda_builds(d):
    # unsafe: a C++ source's CUDA-only call statements go under #ifndef XPUIFY_NO_CUDA (what setup.py's
    # xpuify_extension defines for builds without CUDA); safe fixes alone leave them
    shutil.copy(fixture("golden", "ext", "host.cpp"), "host.cpp")
    run("fix", "host.cpp")
    check("\n#ifndef XPUIFY_NO_CUDA" not in read("host.cpp"), "the guard is an unsafe fix", read("host.cpp"))
    eq(read(fixture("golden", "ext", "host.fixed.cpp")).count("\n#ifndef XPUIFY_NO_CUDA  // xpuify: CUDA-only"), 2)
    shutil.copy(fixture("golden", "ext", "host.cpp"), "host.cpp")
    r = run("fix", "--unsafe-fixes", "host.cpp")
    eq(read("host.cpp"), read(fixture("golden", "ext", "host.fixed.cpp")), "host.cpp")
    before = read("host.cpp")
    r = run("fix", "--unsafe-fixes", "host.cpp")
    check("Fixed 0 findings in 0 files" in r.out, "second run fixes nothing", r.out)
    eq(read("host.cpp"), before)
    # the guarded statements compile away without CUDA: preprocess with XPUIFY_NO_CUDA (no torch headers needed)
    body = before.split("torch::Tensor scale", 1)[1]
    write("pp.cpp", "#define XPUIFY_NO_CUDA\n" + body)
    need_tool("g++", "g++ (`cpp` preprocesses C++ with its cc1plus)")
    p = subprocess.run(["cpp", "-P", "pp.cpp"], capture_output=True, text=True)
    eq(p.returncode, 0, p.stderr)
    check("at::cuda::device_synchronize();  // guarded" not in p.stdout and "AT_CUDA_CHECK" not in p.stdout,
          "excluded without CUDA", p.stdout)
    check("getCurrentCUDAStream" in p.stdout, "the declaration stays", p.stdout)

BROKEN_RULE = """rules:
  - code: XPC901
    name: test-keyword-portable
    language: c
    library: CUDA Runtime
    severity: warning
    fix: safe
    kind: function
    summary: A user row whose portable name is a C keyword, so its rename breaks the syntax.
    message: "`{name}` test{mapping}"
    triggers: ['\\bcudaTestBreak\\b']
    api:
      - {name: cudaTestBreak, portable: return}
"""


def test_fix_that_breaks_the_syntax_is_refused(d):
    # libclang re-parses the fixed text; a pass that adds a syntax error leaves the file untouched and names the rule
    write("rules/bad.yml", BROKEN_RULE)
    src = "int f(void) {\n    int x = cudaTestBreak(1);\n    return x;\n}\n"
    write("a.c", src)
    r = run("fix", "--no-config", "--rules", "rules", "a.c")
    eq(r.code, 2, r)
    check("a.c: a fix introduced a syntax error (pass 1, rules XPC901 (test-keyword-portable)); file left untouched" in r.err,
          "the refusal names the file and the rule", r.err)
    eq(read("a.c"), src)
    check(not os.path.exists("xpuify_gpu.h"), "no layer written for a refused file")
    # renamed types in declarations (DeepSpeed's launchers take a `cudaStream_t stream` parameter) are not syntax
    # errors: the check reads the fixed file with its CUDA names back
    write("k.cu", "template <typename T>\nvoid launch(const T *x, int n, cudaStream_t stream);\n"
                  "void run(cudaStream_t s, cudaEvent_t e) { cudaEventRecord(e, s); }\n")
    r = run("fix", "--no-config", "k.cu")
    check("syntax error" not in r.err, "no false alarm", r.err)
    eq(read("k.cu").count("xpuStream_t"), 2, read("k.cu"))
    # a file that was already broken is still fixed where the fix adds no new syntax error
    write("b.c", "int g(void) {\n    cudaDeviceSynchronize();\n    int y = ;\n    return 0;\n}\n")
    r = run("fix", "--no-config", "b.c")
    check("xpuDeviceSynchronize();" in read("b.c"), "fixed despite the existing error", read("b.c"))
    # where a fix does add one to a broken file (libclang reads `d,n.is_cuda()` at file scope as declarators), the
    # refusal says the file was broken: not a bug in xpuify (found by fuzz/fz_c)
    write("e.cpp", "d,n.is_cuda()\n")
    r = run("fix", "--no-config", "e.cpp")
    check("e.cpp: a fix introduced a syntax error (pass 1, rules XPC701 (torch-cuda-tensor-method)) into a file that "
          "already has 1; file left untouched: correct those first" in r.err and "bug in xpuify" not in r.err,
          "the refusal blames the file's own errors", r.err)
    eq(read("e.cpp"), "d,n.is_cuda()\n")


KERNEL_GOLDENS = ["template_deduced.cu", "cg_block.cu"]


def test_golden_kernels(d):
    """Kernel fixtures fixed: the host file (kept kernels, stubs, launches) and the OpenCL C against their goldens
    (fixtures/golden/kernels; tests/runtime/test_kernels_opencl.py runs them on PoCL)."""
    for k in KERNEL_GOLDENS:
        shutil.copy(fixture("kernels", k), k)
    r = run("fix", ".")
    check("kept CUDA-only" not in r.err and "Traceback" not in r.err, "every kernel translated", r.err)
    for k in KERNEL_GOLDENS:
        eq(read(k), read(fixture("golden", "kernels", k)), k)
        eq(read(k + ".cl"), read(fixture("golden", "kernels", k + ".cl")), k + ".cl")


def test_template_launches_kept_by_name(d):
    """A template kernel whose launch has no instantiation the translator can make stays CUDA-only whole, with the
    reason at the launch: an argument deduced as a pointer or a struct or CUDA's __half, a launch inside a function
    template."""
    write("k.cu", """#include <cuda_runtime.h>
#include <cuda_fp16.h>
struct S { float v; };
template <typename T>
__global__ void take(T v, float *y) { y[0] = 1.0f; }
template <typename T>
__global__ void scale(T *x, T a, int n) { int i = threadIdx.x; if (i < n) x[i] *= a; }
template <typename T>
void run(T *x, int n) { scale<<<1, 128>>>(x, (T)2, n); }
template <typename T>
__global__ void fill(T *x, T v) { x[threadIdx.x] = v; }
template <typename T>
__global__ void copy(const T *x, T *y) { y[threadIdx.x] = x[threadIdx.x]; }
int main() {
    float *x;
    __half *h;
    S s;
    cudaMalloc(&x, 128 * sizeof(float));
    take<<<1, 1>>>(s, x);
    take<<<1, 1>>>(x, x);
    scale<<<1, 128>>>(x, 2.0f, 128);
    run(x, 128);
    fill<<<1, 128>>>(x, 1.0f);
    copy<<<1, 128>>>(h, h);
    return 0;
}
""")
    r = run("fix", ".")
    for line, why in ((19, "a template argument that is not a built-in number type (`S`)"),
                      (20, "a template argument that is not a built-in number type (`float *`)"),
                      # fast mode stands CUDA's __half in by float: deduced from the arguments' own spelling
                      (24, "a template argument that is not a built-in number type (`__half`)"),
                      (9, "a launch of the template kernel `scale` in a function template (its template arguments depend on that template's)")):
        check("k.cu:%d: kept CUDA-only: %s" % (line, why) in r.err, why, r.err)
    t = read("k.cu")
    for launch in ("take<<<1, 1>>>(s, x);", "take<<<1, 1>>>(x, x);", "scale<<<1, 128>>>(x, 2.0f, 128);", "scale<<<1, 128>>>(x, (T)2, n);"):
        check(launch in t, "kept as written: " + launch, t)
    check("xpu_launch_fill(1, 128, 0, 0, x, 1.0f);" in t, "the deduced launch of the other kernel is translated", t)
    cl = read("k.cu.cl")
    check("fill__float(" in cl and "scale" not in cl and "take" not in cl and "copy" not in cl, "only fill<float> in the OpenCL C", cl[-600:])


def test_cooperative_groups_kept_by_name(d):
    """A group the translator cannot carry exactly stays CUDA-only with the construct named: a block converted to a
    generic `cg::thread_group` parameter (block or tile: not known in the callee)."""
    write("g.cu", """#include <cooperative_groups.h>
#include <cuda_runtime.h>
namespace cg = cooperative_groups;
__device__ void sortColors(float *values, cg::thread_group tile) {
    values[tile.thread_rank()] = 1.0f;
    tile.sync();
}
__global__ void k1(float *x) {
    cg::thread_block cta = cg::this_thread_block();
    sortColors(x, cta);
}
__device__ float twice(float v, cg::thread_block cta) { cta.sync(); return 2.0f * v; }
__global__ void k2(float *x) {
    cg::thread_block cta = cg::this_thread_block();
    cg::thread_block other = cta;
    x[0] = twice(x[0], other);
}
int main() {
    float *x;
    cudaMalloc(&x, 4);
    k1<<<1, 32>>>(x);
    k2<<<1, 32>>>(x);
    return 0;
}
""")
    r = run("fix", ".")
    check("g.cu:10: kept CUDA-only: a cooperative group converted to or copied as `cg::thread_group`" in r.err, "the conversion named", r.err)
    check("k1<<<1, 32>>>(x);" in read("g.cu") and "xpu_launch_k2(1, 32, 0, 0, x);" in read("g.cu"), "k1 kept, k2 translated", read("g.cu"))
    cl = read("g.cu.cl")
    check("float twice(float v) { barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE); return 2.0f * v; }" in cl, "a copy of the block passed", cl[-800:])
    check("x[0] = twice(x[0]);" in cl and "k1" not in cl, "k2 only", cl[-800:])


JIT_KERNEL = """#include <torch/extension.h>
#include <cuda_runtime.h>

void check_launch() {
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) printf("%s\\n", cudaGetErrorString(err));
}
"""


def test_extension_package_data_keeps_cuda_runtime(d):
    # an extension's source inside a Python package is built from the installed package (torch's cpp_extension.load),
    # whose data does not hold the layer at the project's root: no layer include climbing out of the package, the
    # findings stay; the same source outside a package is ported through the layer
    write("pkg/__init__.py", "")
    write("pkg/ops/__init__.py", "")
    write("pkg/ops/kernel.cu", JIT_KERNEL)
    write("csrc/kernel.cu", JIT_KERNEL)
    r = run("fix", "--no-cache", ".")
    check(r.code in (0, 1), "fix failed", r)
    eq(read("pkg/ops/kernel.cu"), JIT_KERNEL, "package data unchanged")
    check("xpuGetLastError" in read("csrc/kernel.cu"), "outside a package: ported", read("csrc/kernel.cu"))
    r = run("check", "--no-cache", "--format", "json", ".")
    mine = [x for x in r.json() if x["path"] == "pkg/ops/kernel.cu" and x["code"].startswith("XPC1")]
    check(mine and all(x.get("fix") is None for x in mine), "still found, no fix", r.out)


def test_extension_cuda_backend_keeps_cuda_runtime(d):
    # an extension's CUDA backend (csrc/cuda/, beside csrc/cpu/: only the CUDA build compiles it) is CUDA by design:
    # no layer include, the findings stay; a directory whose name only contains "cuda" is no backend
    write("csrc/cuda/kernel.cu", JIT_KERNEL)
    write("csrc/cuda_utils/kernel.cu", JIT_KERNEL)
    r = run("fix", "--no-cache", ".")
    check(r.code in (0, 1), "fix failed", r)
    eq(read("csrc/cuda/kernel.cu"), JIT_KERNEL, "the CUDA backend unchanged")
    check("xpuGetLastError" in read("csrc/cuda_utils/kernel.cu"), "elsewhere: ported", read("csrc/cuda_utils/kernel.cu"))
    r = run("check", "--no-cache", "--format", "json", ".")
    mine = [x for x in r.json() if x["path"] == "csrc/cuda/kernel.cu" and x["code"].startswith("XPC1")]
    check(mine and all(x.get("fix") is None for x in mine), "still found, no fix", r.out)


if __name__ == "__main__":
    main(globals())
