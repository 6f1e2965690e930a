"""End-to-end tests of the C/C++/CUDA and text front ends through `xpuify check`: every output format, mixed
repositories, selection, suppressions, the libclang loader and the prefilter, precise mode (compile_commands.json,
real CUDA headers; skipped without them), rule examples, generated docs, thread agreement."""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import ROOT, XPUIFY, check, eq, main, read, run, skip, write  # noqa: E402

KERNEL = """#include <cuda_runtime.h>
__global__ void scale(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}
void run(float *h, int n) {
  float *d;
  cudaMalloc(&d, n * sizeof(float));
  cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);
  scale<<<(n + 255) / 256, 256>>>(d, n);
  cudaFree(d);
}
"""
CUDA_HOME = "/usr/local/cuda"


def cuda_headers():
    root = os.environ.get("CUDA_PATH") or CUDA_HOME
    return root if os.path.exists(os.path.join(root, "include", "cuda_runtime_api.h")) else None


def codes(r):
    return sorted((f["line"], f["code"]) for f in r.json())


def test_every_format_carries_c_findings(d):
    write("k.cu", KERNEL)
    r = run("check", "--format", "json", "k.cu")
    eq(r.code, 1)
    eq(codes(r), [(1, "XPC601"), (2, "XPC501"), (3, "XPC504"), (3, "XPC504"), (3, "XPC504"), (8, "XPC101"),
                  (9, "XPC101"), (9, "XPC103"), (10, "XPC502"), (11, "XPC101")])
    f = [x for x in r.json() if x["code"] == "XPC502"][0]
    eq((f["line"], f["column"], f["end_line"], f["end_column"]), (10, 3, 10, 34))
    s = run("check", "--format", "sarif", "k.cu")
    eq(s.code, 1)
    sarif = json.loads(s.out)
    results = sarif["runs"][0]["results"]
    check(any(x["ruleId"] == "XPC101" and x["locations"][0]["physicalLocation"]["region"]["startLine"] == 8
              for x in results), "sarif result", results)
    rules = {x["id"] for x in sarif["runs"][0]["tool"]["driver"]["rules"]}
    check({"XPC101", "XPC502"} <= rules, "sarif rule metadata", rules)
    g = run("check", "--format", "github", "k.cu")
    check(re.search(r"^::warning file=k\.cu,line=10,.*XPC502", g.out, re.M), "github annotation", g.out)
    t = run("check", "k.cu")
    check(" 10 |   scale<<<(n + 255) / 256, 256>>>(d, n);\n    |   " + "^" * 31 + "\n" in t.out, "frame", t.out)
    c = run("check", "--format", "concise", "k.cu")
    check(c.out.splitlines()[0].startswith("k.cu:1:11: XPC601 [cuda-header] `#include <cuda_runtime.h>`"), "concise", c.out)


def test_one_run_covers_a_mixed_repository(d):
    subprocess.run(["git", "init", "-q", "."], check=True)
    write(".gitignore", "build/\n")
    write("train.py", "import torch\ntorch.cuda.synchronize()\n")
    write("csrc/k.cu", KERNEL)
    write("csrc/host.cpp", "#include <nccl.h>\nvoid f(ncclComm_t c) { ncclCommDestroy(c); }\n")
    write("csrc/plain.c", "int add(int a, int b) { return a + b; }\n")
    write("Dockerfile", "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n")
    write("requirements.txt", "torch==2.4.0+cu121\n")
    write("CMakeLists.txt", "project(p LANGUAGES CXX CUDA)\n")
    write("scripts/run.sh", "CUDA_VISIBLE_DEVICES=0 python train.py\n")
    write("README.md", "cudaMalloc and CUDA_VISIBLE_DEVICES in prose\n")
    write("build/gen.cu", KERNEL)
    r = run("check", "--format", "json", ".")
    eq(r.code, 1)
    paths = {f["path"] for f in r.json()}
    eq(paths, {"train.py", "csrc/k.cu", "csrc/host.cpp", "Dockerfile", "requirements.txt", "CMakeLists.txt", "scripts/run.sh"})
    t = run("check", ".")
    check("(8 files checked)" in t.out, "the clean C file is checked too, README and build/ are not", t.out)
    # selection by prefix works across front ends
    eq({f["code"][:3] for f in run("check", "--format", "json", "--select", "XPC", ".").json()}, {"XPC"})
    eq({f["code"][:3] for f in run("check", "--format", "json", "--ignore", "XPC,XPT", ".").json()}, {"XPU"})
    eq({f["code"] for f in run("check", "--format", "json", "--select", "XPC5", "csrc").json()}, {"XPC501", "XPC502", "XPC504"})


def test_suppression_comments_in_c_and_text(d):
    write("a.cu", "// xpuify: ignore-file[XPC101]\nvoid f(void **p) { cudaMalloc(p, 1); }\n__global__ void k() {}\n")
    eq([x["code"] for x in run("check", "--format", "json", "a.cu").json()], ["XPC501"])
    write("b.cu", "void f(void **p) {\n  /* xpuify: disable[XPC1] */\n  cudaMalloc(p, 1);\n  cudaFree(*p);\n"
                  "  /* xpuify: enable[XPC1] */\n  cudaDeviceReset();\n}\n")
    eq(codes(run("check", "--format", "json", "b.cu")), [(6, "XPC101")])
    write("run.sh", "# xpuify: ignore-file[XPT101]\nCUDA_VISIBLE_DEVICES=0 nvidia-smi\n")
    eq([x["code"] for x in run("check", "--format", "json", "run.sh").json()], ["XPT102"])
    write("setup.cfg", "[x]\n; xpuify: ignore[XPT203]\ndeps = cupy-cuda12x\nmore = pycuda\n")
    eq(codes(run("check", "--format", "json", "setup.cfg")), [(4, "XPT203")])


def test_libclang_is_loaded_only_for_c_files_that_need_it(d):
    env = {"XPUIFY_LIBCLANG": "/nonexistent/libclang.so"}
    write("plain/a.c", "#include <stdio.h>\n#include <sys/types.h>\n#define MAX(a, b) ((a) > (b) ? (a) : (b))\n"
                       "static inline __attribute__((always_inline)) int f(int x) { return __builtin_expect(x, 1); }\n"
                       "static unsigned t(void) { unsigned lo, hi; asm volatile(\"rdtsc\" : \"=a\"(lo), \"=d\"(hi)); return lo; }\n"
                       "int main(void) { return MAX(f(0), 0); }\n")
    write("plain/b.cpp", "#include <vector>\n#if __has_include(<string>)\n#endif\nint g() { std::vector<int> v; return v.size(); }\n")
    write("plain/t.py", "import torch\n")
    r = run("check", "plain", env=env)
    eq(r.code, 0)
    eq(r.err, "")  # no C file passed the prefilter: libclang was never needed
    write("cuda/k.cu", KERNEL)
    r = run("check", "cuda", env=env)
    check(r.code == 0 and "cuda/k.cu: libclang cannot be loaded" in r.err and "skipped" in r.err, "walked: a warning", r)
    r = run("check", "cuda/k.cu", env=env)
    check(r.code == 2 and "error: cuda/k.cu: libclang cannot be loaded" in r.err, "named: an error", r)


def test_fast_mode_reads_no_file_an_include_names(d):
    # fast mode follows no include: not even an absolute path or one climbing out of the virtual directory. A
    # device made libclang read 2 GB (/dev/zero) or block on the input (/dev/stdin), and a real file's text broke
    # the parse so that the finding after it was lost (found by fuzz/fz_c)
    write("words.h", "these are not declarations\n")
    call = "void f(float **p) { cudaMalloc(p, 4); }\n"
    for inc in ("/dev/zero", "/dev/stdin", os.path.abspath("words.h"), "../../../../../../../" + os.path.abspath("words.h")):
        write("k.cu", f'#include "{inc}"\n' + call)
        p = subprocess.Popen([XPUIFY, "check", "--format", "json", "k.cu"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, err = p.communicate(timeout=60)  # stdin stays open until the check is done
        except subprocess.TimeoutExpired:
            p.kill()
            raise AssertionError(f"#include \"{inc}\": xpuify check did not finish")
        eq(p.returncode, 1, f"{inc}: {err}")
        eq([(f["line"], f["code"]) for f in json.loads(out)], [(2, "XPC101")], inc)


def example_name(rule):
    """A file name the rule reads: its first `files` glob made concrete (C rules: a .cu file)."""
    if rule["language"] == "c":
        return "example.cu"
    glob = (rule.get("files") or ["*.sh"])[0]
    return glob.replace("*", "x", 1) if glob.startswith("*") else glob.replace("*", "")


def test_rule_examples_hold(d):
    """Every `examples` snippet of the C and text rules: `flag` ones produce the rule, `ok` ones do not."""
    checked = 0
    for x in run("rule", "--all", "--format", "json").json():
        ex = x.get("examples")
        if x["language"] not in ("c", "text") or not ex:
            continue
        name = example_name(x)
        for kind in ("flag", "ok"):
            for snippet in ex.get(kind, []):
                write(name, snippet + "\n")
                got = [f["code"] for f in run("check", "--format", "json", "--no-ignore", name).json()]
                check((x["code"] in got) == (kind == "flag"), f"{x['code']} {kind} example in {name}: {snippet!r} gave {got}")
                checked += 1
    check(checked >= 40, "examples exist", checked)


def test_docs_c_tables_are_generated(d):
    r = run("rule", "--c-tables")
    eq(r.code, 0)
    check(read(os.path.join(ROOT, "docs", "c-api-tables.md")) == r.out, "docs/c-api-tables.md is stale: run `make docs`")
    check("| `cudaMalloc` | function | memory | `xpuMalloc` | `sycl::malloc_device(size, q)` |" in r.out, "a runtime row", r.out[:400])


def test_rule_command_shows_api_rows(d):
    r = run("rule", "XPC301")
    eq(r.code, 0)
    check("ncclAllReduce (function, collective)  portable: xcclAllReduce  oneCCL: onecclAllReduce" in r.out, "row", r.out)
    j = run("rule", "XPC101", "--format", "json").json()
    row = [a for a in j["api"] if a["name"] == "cudaMalloc"][0]
    eq((row["kind"], row["portable"], row["section"]), ("function", "xpuMalloc", "memory"))
    eq(j["headers"][0], "cuda_runtime_api.h")
    t = run("rule", "XPT201", "--format", "json").json()
    check("whl/" in t["pattern"], "pattern", t)


def test_threads_agree_on_c_files(d):
    for i in range(12):
        write(f"src/k{i}.cu", KERNEL.replace("scale", f"scale{i}"))
        write(f"src/h{i}.cpp", f"#include <cublas_v2.h>\nvoid f{i}(cublasHandle_t h) {{ cublasDestroy(h); }}\n")
    one = run("check", "--format", "json", "--threads", "1", "src")
    many = run("check", "--format", "json", "--threads", "4", "src")
    eq(one.code, 1)
    eq(len(one.json()), 12 * 10 + 12 * 3)
    eq(many.out, one.out)


def test_fix_ports_host_calls_translates_kernels_and_leaves_text_files_alone(d):
    write("k.cu", KERNEL)
    write("Dockerfile", "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n")
    r = run("fix", ".")
    eq(r.code, 1)  # the Dockerfile's finding remains
    fixed = read("k.cu")
    expected = KERNEL.replace("#include <cuda_runtime.h>", '#include "xpuify_gpu.h"')
    for name in ("cudaMalloc", "cudaMemcpyHostToDevice", "cudaMemcpy", "cudaFree", "cudaDeviceSynchronize"):
        expected = re.sub(r"\b%s\b" % name, "xpu" + name[4:], expected)
    kernel = expected[expected.index("__global__"):expected.index("}\n") + 2]
    # the kernel kept verbatim for the CUDA backend, its launch through the stub (docs/c-kernels.md)
    check("#if defined(XPU_BACKEND_CUDA)\n" + kernel + "#endif\n" in fixed, "the kernel is kept for CUDA", fixed)
    check("xpu_launch_scale((n + 255) / 256, 256, 0, 0, d, n);" in fixed, "the launch calls the stub", fixed)
    host = fixed[fixed.index("void run"):]
    eq(host, expected[expected.index("void run"):].replace("scale<<<(n + 255) / 256, 256>>>(d, n);",
                                                              "xpu_launch_scale((n + 255) / 256, 256, 0, 0, d, n);"))
    check("__kernel void scale(" not in read("k.cu.cl") and "void scale(__global float *x__xb, ulong x__xo, int n)" in read("k.cu.cl"),
          "the OpenCL C beside the layer", read("k.cu.cl")[-400:])
    eq(read("Dockerfile"), "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n")
    check("XPT401" in r.out and "kernels to port" not in r.out, "the text finding remains, no kernel to port", r.out)


# ---- precise mode --------------------------------------------------------------------------------------------

def project(d):
    write("include/proj.h", "#pragma once\n#include <cuda_runtime.h>\n#define PROJ_ALLOC(p, n) cudaMalloc((void **)(p), (n))\n")
    write("src/main.cu", "#include \"proj.h\"\n#ifdef USE_CUDA\n__global__ void k(float *x) { x[threadIdx.x] = 0; }\n#endif\n"
                         "int main() {\n  float *p;\n  PROJ_ALLOC(&p, 64);\n#ifdef USE_CUDA\n  k<<<1, 32>>>(p);\n#endif\n"
                         "  cudaDeviceSynchronize();\n  return cudaFree(p) != cudaSuccess;\n}\n")
    db = [{"directory": os.path.join(d, "build"), "file": os.path.join(d, "src/main.cu"),
           "command": "/usr/local/cuda/bin/nvcc -DUSE_CUDA -I../include -gencode arch=compute_80,code=sm_80 "
                      "--expt-relaxed-constexpr -Xcompiler -fPIC -c ../src/main.cu -o main.o"}]
    write("build/compile_commands.json", json.dumps(db))


def test_precise_mode_with_compile_commands(d):
    if not cuda_headers():
        skip("no CUDA headers ($CUDA_PATH, /usr/local/cuda): NVIDIA's CUDA toolkit (Debian non-free: nvidia-cuda-toolkit)")
    project(d)
    fast = run("check", "--format", "json", "src/main.cu")
    precise = run("check", "--format", "json", "-p", "build", "src/main.cu")
    eq(precise.code, 1)
    # nvcc's flags are translated (-I relative to the build directory, -D kept, -gencode dropped): a clean parse
    check(not [f for f in precise.json() if f["code"] == "XPC001"], "no parse error in precise mode", precise.out)
    eq(codes(precise), codes(fast))
    eq(codes(precise), [(3, "XPC501"), (3, "XPC504"), (9, "XPC502"), (11, "XPC101"), (12, "XPC101"), (12, "XPC103")])
    # a broken include path is reported once per file, at its first error, in precise mode only
    write("src/bad.cu", "#include \"missing_header.h\"\nvoid f() { cudaDeviceReset(); }\n")
    r = run("check", "--format", "json", "--precise", "src/bad.cu")
    eq(codes(r), [(1, "XPC001"), (2, "XPC101")])
    check("missing_header.h" in [f for f in r.json() if f["code"] == "XPC001"][0]["message"], "names the error", r.out)
    eq(codes(run("check", "--format", "json", "src/bad.cu")), [(2, "XPC101")])


def test_precise_mode_options_and_fallbacks(d):
    write("k.cu", KERNEL)
    eq(run("check", "-p", "nowhere", "k.cu").code, 2)
    r = run("check", "--format", "json", "--precise", "--cuda-path", "/nonexistent", "k.cu")
    eq(r.code, 1)
    check("--cuda-path does not hold include/cuda_runtime_api.h" in r.err and "fast mode" in r.err, "warns once", r.err)
    eq(r.err.count("warning"), 1)
    eq(codes(r), codes(run("check", "--format", "json", "k.cu")))

UNTRANSLATABLE = ("#include <cuda_runtime.h>\n"
                  "__global__ void warp(float *x) {\n"
                  "  x[threadIdx.x] += __shfl_down_sync(0xffffu, x[threadIdx.x], 1);\n"
                  "}\n"
                  "__global__ void plain(float *x) { x[threadIdx.x] *= 2.0f; }\n")


def test_untranslatable_kernel_in_check_and_sarif(d):
    """XPC517: the kernel the OpenCL translator keeps CUDA-only, the construct and its line, in every format; the
    kernel it translates has none."""
    write("k.cu", UNTRANSLATABLE)
    r = run("check", "--format", "json", "k.cu")
    got = [x for x in r.json() if x["code"] == "XPC517"]
    eq([(x["line"], x["column"], x["end_column"]) for x in got], [(3, 21, 37)])
    check("kernel `warp` stays CUDA-only" in got[0]["message"] and "`__shfl_down_sync`" in got[0]["message"], "message", got)
    sarif = json.loads(run("check", "--format", "sarif", "k.cu").out)
    res = [x for x in sarif["runs"][0]["results"] if x["ruleId"] == "XPC517"]
    eq([x["locations"][0]["physicalLocation"]["region"]["startLine"] for x in res], [3])
    eq(run("rule", "XPC517").code, 0)
    # after fix: `plain` is translated, `warp` keeps its finding
    write("p.cu", UNTRANSLATABLE + "int main() { float *d; cudaMalloc(&d, 4); warp<<<1, 32>>>(d); plain<<<1, 32>>>(d); return 0; }\n")
    f = run("fix", "--layer-dir", ".", "p.cu")
    check("p.cu:3: kept CUDA-only: `__shfl_down_sync`" in f.err, "fix says it", f.err)
    after = [(x["line"], x["code"]) for x in run("check", "--format", "json", "p.cu").json() if x["code"] in ("XPC517", "XPC502")]
    lines = read("p.cu").splitlines()
    eq(sorted((lines[n - 1].strip()[:16], c) for n, c in after),
       [("int main() { flo", "XPC502"), ("x[threadIdx.x] +", "XPC517")])
    check(any("warp<<<1, 32>>>(d); xpu_launch_plain(1, 32, 0, 0, d);" in x for x in lines), "plain launched by its stub", lines)


COOPERATIVE = ("#include <cooperative_groups.h>\n"
               "#include <cooperative_groups/reduce.h>\n"
               "#include <cuda_runtime.h>\n"
               "namespace cg = cooperative_groups;\n"
               "__global__ void rows(float *out, const float *in, int C) {\n"
               "  cg::thread_block block = cg::this_thread_block();\n"
               "  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);\n"
               "  int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();\n"
               "  float s = 0.0f;\n"
               "  for (int i = warp.thread_rank(); i < C; i += warp.size()) s += in[row * C + i];\n"
               "  s = cg::reduce(warp, s, cg::plus<float>{});\n"
               "  float m = cg::reduce(warp, s, cg::greater<float>{}) + warp.shfl_xor(s, 1);\n"
               "  block.sync();\n"
               "  cg::sync(block);\n"
               "  if (warp.thread_rank() == 0) out[row] = s + m + block.thread_rank();\n"
               "}\n"
               "__global__ void divergent(float *out) {\n"
               "  cg::thread_block block = cg::this_thread_block();\n"
               "  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);\n"
               "  if (out[0] > 0.0f) out[1] = cg::reduce(warp, out[1], cg::plus<float>{});\n"
               "}\n"
               "__global__ void grid(float *out) {\n"
               "  cg::grid_group g = cg::this_grid();\n"
               "  g.sync();\n"
               "}\n"
               "int main() { float *d; cudaMalloc(&d, 4096); rows<<<2, 128>>>(d, d, 10); divergent<<<1, 32>>>(d);"
               " grid<<<1, 32>>>(d); return 0; }\n")


def test_cooperative_groups_simple_forms_translate(d):
    """Cooperative groups: fast mode declares their simple forms (no CUDA headers here), a block variable's
    sync/thread_rank and a 32-thread tile's ranks, shuffles and cg::reduce become OpenCL C on the warp emulation;
    a tile call under a branch and grid groups keep their kernel CUDA-only, XPC517 naming the construct."""
    write("k.cu", COOPERATIVE)
    got = [(x["line"], x["message"]) for x in run("check", "--format", "json", "k.cu").json() if x["code"] == "XPC517"]
    eq([(n, m[m.index("kernel `"):m.index("`", m.index("kernel `") + 8) + 1]) for n, m in got],
       [(20, "kernel `divergent`"), (23, "kernel `grid`"), (23, "kernel `grid`"), (24, "kernel `grid`")])
    check("`cg::reduce` under control flow that can differ" in got[0][1], "the divergent reduce named", got)
    check("the cooperative group cg::grid_group `g`" in got[1][1] + got[2][1], "the grid group named", got)
    f = run("fix", "--layer-dir", ".", "k.cu")
    check("wrote 1 translated kernel to ./k.cu.cl" in f.err, "rows translated", f.err)
    cl = read("k.cu.cl")
    body = cl[cl.index("void rows("):]
    for want in ("int row = blockIdx.x * ((xpu_nthreads() + 31u) >> 5) + (xpu_tid() >> 5);",
                 "for (int i = (xpu_tid() & 31u); i < C; i += 32u)", "s = xpu_reduce_add_f32(xpu_ws, s);",
                 "float m = xpu_reduce_max_f32(xpu_ws, s) + xpu_shfl_xor_f32(xpu_ws, s, 1, 32);",
                 "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);",
                 "out[row] = s + m + xpu_tid();", "__local ulong xpu_ws[1024];"):
        check(want in body, want, body)
    check("cg::" not in body and "block" not in body.replace("blockIdx", ""), "no cooperative groups left", body)
    check("#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n" in read("k.cu"),
          "the kept kernels still need the headers in every build", read("k.cu"))
    # a file whose kernels all translate: the headers and the alias only where CUDA builds it
    write("only.cu", COOPERATIVE[:COOPERATIVE.index("__global__ void divergent")] +
          "int main() { float *d; cudaMalloc(&d, 4096); rows<<<2, 128>>>(d, d, 10); return 0; }\n")
    f = run("fix", "--layer-dir", ".", "only.cu")
    check("wrote 1 translated kernel to ./only.cu.cl" in f.err and "kept" not in f.err, "rows translated", f.err)
    text = read("only.cu")
    for h in ("<cooperative_groups.h>", "<cooperative_groups/reduce.h>"):
        check("#if defined(__CUDACC__) || defined(XPU_BACKEND_CUDA)\n#include %s\n#endif\n" % h in text, h + " guarded", text)
    check("#if defined(__CUDACC__) || defined(XPU_BACKEND_CUDA)\nnamespace cg = cooperative_groups;\n#endif\n" in text, "alias guarded", text)
    # fixing again changes nothing (the guards are recognized)
    run("fix", "--layer-dir", ".", "only.cu")
    eq(read("only.cu"), text)


def test_cache_hint_loads_and_stores_translate(d):
    """__ldcs/__stcs and the other cache-hint loads and stores (llm.c's permute and residual kernels) are the access
    itself in OpenCL C."""
    write("k.cu", "#include <cuda_runtime.h>\n"
                  "__global__ void res(float *out, const float *a, const float *b, int n) {\n"
                  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                  "  if (i < n) __stcs(&out[i], __ldcs(&a[i]) + __ldcg(&b[i]));\n"
                  "}\n"
                  "int main() { float *d; cudaMalloc(&d, 4096); res<<<1, 32>>>(d, d, d, 32); return 0; }\n")
    eq([x for x in run("check", "--format", "json", "k.cu").json() if x["code"] == "XPC517"], [])
    f = run("fix", "--layer-dir", ".", "k.cu")
    check("wrote 1 translated kernel to ./k.cu.cl" in f.err and "kept" not in f.err, "translated", f.err)
    cl = read("k.cu.cl")
    check("#define __stcs(p, v) ((void)(*(p) = (v)))" in cl and "__stcs(&out[i], __ldcs(&a[i]) + __ldcg(&b[i]));" in cl, "as macros", cl[-600:])


def test_a_launch_that_does_not_parse_keeps_its_kernel(d):
    """A launch whose arguments do not parse (`k<<<1, 32>>>(d, n+;`) keeps its kernel CUDA-only (XPC517 at the
    launch): the stub's call would parse differently, and fix's re-parse check refused the whole file as an xpuify
    bug (found by fz_c). The file's other kernels and calls are still fixed."""
    write("p.cu", "#include <cuda_runtime.h>\n"
                  "__global__ void k(float *x, int n) { if (threadIdx.x < n) x[threadIdx.x] *= 2.0f; }\n"
                  "__global__ void ok(float *x) { x[threadIdx.x] += 1.0f; }\n"
                  "int main() {\n  float *d; int n = 32;\n  cudaMalloc(&d, 4 * n);\n  k<<<1, 32>>>(d, n+;\n"
                  "  ok<<<1, 32>>>(d);\n  cudaDeviceSynchronize();\n  return 0;\n}\n")
    got = [(x["line"], x["message"]) for x in run("check", "--format", "json", "p.cu").json() if x["code"] == "XPC517"]
    eq([x[0] for x in got], [7])
    check("a launch of `k` whose arguments the C front end could not parse" in got[0][1], "says why", got)
    f = run("fix", "--layer-dir", ".", "p.cu")
    check("a bug in xpuify" not in f.err and "syntax error" not in f.err, "no refusal", f.err)
    text = read("p.cu")
    check("k<<<1, 32>>>(d, n+;" in text and "xpu_launch_ok(1, 32, 0, 0, d);" in text and "xpuMalloc" in text,
          "k stays, ok and the runtime call are fixed", text)


NULL_KERNELS = ("#include <cuda_runtime.h>\n"
                "#define AS_FLOATS(p) ((float *)(p))\n"
                "__global__ void bias_add(float *out, const float *bias, int n) {\n"
                "  const float *b = NULL;\n"
                "  if (bias != NULL && (const float *)NULL != bias) b = bias;\n"
                "  out[threadIdx.x] += b != NULL ? b[threadIdx.x] : 0.0f;\n"
                "}\n"
                "__global__ void macro_cast(void *raw) { AS_FLOATS(raw)[threadIdx.x] = 0.0f; }\n"
                "int main() { float *d; cudaMalloc(&d, 64); bias_add<<<1, 16>>>(d, NULL, 16); macro_cast<<<1, 16>>>(d); return 0; }\n")


def test_null_and_macro_casts_in_kernels(d):
    """Edits land on the kernel's own text, never inside a macro's name (round 3 wrote `N__global ULL` for llm.c's
    `bias != NULL`): NULL translates (OpenCL C gets CUDA C++'s integer NULL), a pointer cast spelled by the file's
    own macro keeps its kernel CUDA-only, naming the macro."""
    write("k.cu", NULL_KERNELS)
    got = [(x["line"], x["message"]) for x in run("check", "--format", "json", "k.cu").json() if x["code"] == "XPC517"]
    eq([n for n, _ in got], [8], got)
    check("kernel `macro_cast`" in got[0][1] and "a pointer cast inside the macro `AS_FLOATS`" in got[0][1], "names the macro", got)
    f = run("fix", "--layer-dir", ".", "k.cu")
    cl = read("k.cu.cl")
    check("wrote 1 translated kernel" in f.err and "macro_cast" not in cl, "bias_add alone translated", f.err)
    body = cl[cl.index("void bias_add("):]
    check("__global" not in body.replace("__global float", "").replace("__global const float", "").replace("__global const char", ""),
          "no address space outside the kernel's own declarations and casts", body)
    check("(__global const float *)NULL != bias" in body and "#define NULL 0" in cl, "the cast of NULL keeps its space", body)

NOT_COMPILING = ("#include <cuda_runtime.h>\n"
                 "__device__ float scaled(float v, float s = 2.0f) { return v * s; }\n"
                 "__global__ void braces(float *x) {\n"
                 "  float first{x[0]};\n"
                 "  x[threadIdx.x] += first;\n"
                 "}\n"
                 "__global__ void uses_default(float *x) { x[threadIdx.x] = scaled(x[threadIdx.x]); }\n"
                 "__global__ void attn_scale(float *x, int HS) { x[threadIdx.x] *= 1.0f / sqrtf(HS); }\n"
                 "__global__ void plain(float *x) { x[threadIdx.x] *= 2.0f; }\n"
                 "int main() {\n"
                 "  float *d;\n"
                 "  cudaMalloc(&d, 64 * sizeof(float));\n"
                 "  braces<<<1, 16>>>(d);\n"
                 "  uses_default<<<1, 16>>>(d);\n"
                 "  attn_scale<<<1, 16>>>(d, 64);\n"
                 "  plain<<<1, 16>>>(d);\n"
                 "  return 0;\n"
                 "}\n")
OUTSIDE = ("#include <cuda_runtime.h>\n"
           "typedef std::size_t idx_t;\n"
           "__global__ void first(float *x) { idx_t i = threadIdx.x; x[i] = 0.0f; }\n"
           "__global__ void second(float *x) { x[threadIdx.x] = 1.0f; }\n"
           "int main() { float *d; cudaMalloc(&d, 64); first<<<1, 16>>>(d); second<<<1, 16>>>(d); return 0; }\n")


def test_opencl_c_that_does_not_compile_is_never_written(d):
    """The compile check: the translated OpenCL C is compiled in-process (libclang, -cl-std=CL1.2); a kernel whose
    code, or whose __device__ function's code, does not compile stays CUDA-only with clang's message, the rest is
    translated again without it; an error outside every function keeps all the file's kernels CUDA-only."""
    write("k.cu", NOT_COMPILING)
    write("u.cu", OUTSIDE)
    got = [(x["path"], x["line"], x["message"]) for x in run("check", "--format", "json", "--select", "XPC517", ".").json()]
    eq([(p, n) for p, n, _ in got], [("k.cu", 2), ("k.cu", 3), ("u.cu", 3), ("u.cu", 4)], got)
    check("kernel `uses_default`" in got[0][2] and "a __device__ function whose OpenCL C does not compile (clang: C does not support default arguments)" in got[0][2], "device function", got)
    check("kernel `braces`" in got[1][2] and "OpenCL C that does not compile (clang: " in got[1][2], "kernel", got)
    check("outside the kernels' own code" in got[2][2] and "kernel `second`" in got[3][2], "outside", got)
    f = run("fix", "--layer-dir", ".", ".")
    check("wrote 2 translated kernels to ./k.cu.cl" in f.err and "k.cu:3: kept CUDA-only: OpenCL C that does not compile" in f.err, "fix says it", f.err)
    check(not os.path.exists("u.cu.cl"), "no OpenCL C for a file none of whose kernels compiles", os.listdir("."))
    cl = read("k.cu.cl")
    check("void attn_scale(" in cl and "void plain(" in cl and "braces" not in cl and "scaled" not in cl, "the rest translated", cl[-800:])
    fixed = read("k.cu")
    check("braces<<<1, 16>>>(d);" in fixed and "xpu_launch_plain(1, 16, 0, 0, d);" in fixed, "launches", fixed)
    if shutil.which("clang-14"):
        c = subprocess.run(["clang-14", "-x", "cl", "-cl-std=CL1.2", "-fsyntax-only", "k.cu.cl"], capture_output=True, text=True)
        eq(c.returncode, 0, c.stderr)


if __name__ == "__main__":
    main(globals())
