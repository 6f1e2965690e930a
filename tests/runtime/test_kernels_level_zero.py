"""The Level Zero backend's launch of translated kernels, without an Intel GPU (none is reachable here).

Fixed programs (their kernels translated to OpenCL C by `xpuify fix`) are compiled to SPIR-V with the command
`fix` prints (clang-14 + llvm-spirv-14), checked by spirv-val, built with g++ -Wall -Werror against libze-dev's
headers and loader (-DXPU_BACKEND_LEVEL_ZERO -lze_loader), then run with LD_LIBRARY_PATH pointing at a FAKE loader
(tests/runtime/fake_ze_loader.c, built here) that checks the module is SPIR-V, reads its entry points and parameter
types, checks each argument's size against them, and records module, kernels, group sizes, arguments and group
counts. The test asserts each recorded launch is the source's launch configuration and arguments, and that every
kernel fixture (ours and the public ones) is launched with arguments the SPIR-V's parameter types accept.

What this does NOT show: that the SPIR-V runs on a Level Zero device, or computes the right values. The fake cannot
execute SPIR-V (a launch does nothing), so the programs' own result checks are not asserted here; the same OpenCL C
is run and checked on PoCL by tests/runtime/test_kernels_opencl.py. Also: a missing, non-SPIR-V or failing module
gives a clear xpuGetErrorString and a non-zero exit, not a crash."""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from harness import ROOT, check, eq, fixture, main, read, run, skip  # noqa: E402

FAKE_SRC = os.path.join(ROOT, "tests", "runtime", "fake_ze_loader.c")
PROGRAMS = [("programs", "saxpy.cu"), ("programs", "streams.cu"), ("kernels", "softmax.cu"), ("kernels", "template_axpy.cu"),
            ("kernels", "matmul_tiled.cu")]


def need_level_zero():
    if not os.path.exists("/usr/include/level_zero/ze_api.h"):
        skip("libze-dev is not installed (/usr/include/level_zero/ze_api.h)")
    for tool, pkg in (("g++", "g++"), ("gcc", "gcc"), ("clang-14", "clang-14"), ("llvm-spirv-14", "llvm-spirv-14"),
                      ("spirv-val", "spirv-tools")):
        if not shutil.which(tool):
            skip(tool + " is not installed (Debian package " + pkg + ")")


def spirv_command(err):
    """The SPIR-V command `xpuify fix` printed, as a function of the .cl path (the note names the first file)."""
    m = re.search(r"for this one: (clang-14 .*? -emit-llvm-bc (\S+)\.cl -o - \| llvm-spirv-14 - -o \2\.spv) \(docs/c-kernels\.md\)", err)
    check(m, "fix says how to make the .spv", err)
    cmd, stem = m.group(1), m.group(2)
    return lambda cl: cmd.replace(stem + ".cl", cl).replace(stem + ".spv", cl[:-3] + ".spv")


def setup():
    need_level_zero()
    for group, f in PROGRAMS:
        shutil.copy(fixture(group, f), f)
    r = run("fix", ".")  # exit 1: matmul_tiled's `dim3` finding is left (XPC509), its kernel translated
    for _, f in PROGRAMS:
        check("wrote 1 translated kernel to ./" + f + ".cl" in r.err or "wrote 2 translated kernels to ./" + f + ".cl" in r.err,
              f + " translated", r.err)
    make = spirv_command(r.err)
    check(r.err.count("xpuify: note: the Level Zero backend") == 1, "the note once a run", r.err)
    for _, f in PROGRAMS:
        cl = "./" + f + ".cl"
        c = subprocess.run(make(cl), shell=True, capture_output=True, text=True)
        eq(c.returncode, 0, make(cl) + "\n" + c.stderr)
        v = subprocess.run(["spirv-val", f + ".spv"], capture_output=True, text=True)
        eq(v.returncode, 0, f + ".spv: " + v.stdout + v.stderr)
        b = subprocess.run(["g++", "-std=c++17", "-Wall", "-Werror", "-x", "c++", "-DXPU_BACKEND_LEVEL_ZERO", f, "-lze_loader",
                            "-o", f[:-3]], capture_output=True, text=True)
        eq(b.returncode, 0, f + " builds on the Level Zero backend: " + b.stdout + b.stderr)
    fake_setup()
    return make


def fake_setup():
    os.mkdir("fake")
    b = subprocess.run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-Wl,-soname,libze_loader.so.1",
                        FAKE_SRC, "-o", "fake/libze_loader.so.1"], capture_output=True, text=True)
    eq(b.returncode, 0, "the fake loader builds: " + b.stderr)


def run_fake(exe, **env):
    log = os.path.abspath(exe + ".log")
    if os.path.exists(log):
        os.unlink(log)
    e = dict(os.environ, LD_LIBRARY_PATH=os.path.abspath("fake"), FAKE_ZE_LOG=log)
    e.update(env)
    p = subprocess.run(["./" + exe], capture_output=True, text=True, timeout=120, env=e)
    lines = read(log).splitlines() if os.path.exists(log) else []
    check(lines and lines[0].startswith("zeInit"), exe + " ran on the fake loader", p.stdout + p.stderr)
    check(p.returncode >= 0, exe + " ended without a signal", p.returncode)
    return p, lines


def only(lines, prefix):
    return [x for x in lines if x.startswith(prefix)]


def test_launches_match_the_source(d):
    setup()
    # saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y) with n = 1 << 20, on the default stream (synchronous list 1);
    # the pointers are the USM allocations themselves (cudaMalloc order: x dev1, y dev2), each followed by offset 0
    p, log = run_fake("saxpy")
    eq(p.returncode, 0, p.stdout + p.stderr)  # runs to the end (its checksum is not the kernel's: nothing executed)
    check("list 1 synchronous" in log, "the default stream", log)
    eq(len(only(log, "module spirv")), 1, log)
    check(only(log, "module spirv")[0].endswith("entry-points=saxpy(6)"), "the .spv has the kernel, 4 params -> 6", log)
    eq(only(log, "kernel "), ["kernel saxpy"])
    eq(only(log, "launch "), ["launch saxpy list=1 group=(256,1,1) count=(4096,1,1) "
                              "args=[i32 1048576, f32 2, global dev1+0, i64 0, global dev2+0, i64 0]"])
    eq(only(log, "error"), [])
    # streams: scale<<<(half + 255) / 256, 256, 0, s[k]>>>(d + k * half, half, k + 2.0f) on two created streams
    # (asynchronous lists 1 and 2): pointer arithmetic on the device pointer arrives as the USM address
    p, log = run_fake("streams")
    eq(p.returncode, 0, p.stdout + p.stderr)
    check("list 1 asynchronous" in log and "list 2 asynchronous" in log, "two streams", log)
    eq(only(log, "kernel "), ["kernel scale"], "created once, cached")
    eq(len(only(log, "module spirv")), 1, "loaded once")
    eq(only(log, "launch "), ["launch scale list=1 group=(256,1,1) count=(512,1,1) args=[global dev1+0, i64 0, i32 131072, f32 2]",
                              "launch scale list=2 group=(256,1,1) count=(512,1,1) args=[global dev1+524288, i64 0, i32 131072, f32 3]"])
    # softmax<<<rows, threads, threads * sizeof(float)>>>(x, y, cols): the extern __shared__ array is a __local
    # argument of the launch's dynamic size, set with a size and no value
    p, log = run_fake("softmax")
    eq(only(log, "launch "), ["launch softmax list=1 group=(128,1,1) count=(37,1,1) "
                              "args=[global dev1+0, i64 0, global dev2+0, i64 0, i32 300, local 512]"])
    # template instantiations: one kernel each, size_t n as a 64-bit integer, T a float then a double
    p, log = run_fake("template_axpy")
    check(only(log, "module spirv")[0].endswith("entry-points=axpy__float(6),axpy__double(6)"), "both instantiations", log)
    eq(only(log, "launch "), ["launch axpy__float list=1 group=(128,1,1) count=(40,1,1) "
                              "args=[i64 5000, f32 1.5, global dev1+0, i64 0, global dev2+0, i64 0]",
                              "launch axpy__double list=1 group=(128,1,1) count=(40,1,1) "
                              "args=[i64 5000, f64 -2.25, global dev3+0, i64 0, global dev4+0, i64 0]"])
    # a 2-D grid: dim3 block(TILE, TILE), grid((n + TILE - 1) / TILE, ...) with TILE 16, n 100
    p, log = run_fake("matmul_tiled")
    eq(only(log, "launch "), ["launch matmul list=1 group=(16,16,1) count=(7,7,1) "
                              "args=[global dev1+0, i64 0, global dev2+0, i64 0, global dev3+0, i64 0, i32 100]"])
    for exe in ("softmax", "template_axpy", "matmul_tiled"):
        eq(only(read(exe + ".log").splitlines(), "error"), [], exe)


def test_every_kernel_fixture_launches_through_the_fake(d):
    """Every kernel fixture (ours and the public ones; warp_divergent.cu keeps its kernels CUDA-only): each entry point
    of its SPIR-V is launched, and the fake accepted every argument's size against the SPIR-V parameter's type."""
    need_level_zero()
    kdir = fixture("kernels")
    files = [("kernels", f) for f in sorted(os.listdir(kdir)) if f.endswith(".cu") and f != "warp_divergent.cu"]
    files += [("kernels", "public", f) for f in sorted(os.listdir(os.path.join(kdir, "public"))) if f.endswith(".cu")]
    for parts in files:
        shutil.copy(fixture(*parts), parts[-1])
    make = spirv_command(run("fix", ".").err)
    fake_setup()
    launched = 0
    for parts in files:
        f = parts[-1]
        check(os.path.exists(f + ".cl"), f + " translated")
        c = subprocess.run(make("./" + f + ".cl"), shell=True, capture_output=True, text=True)
        eq(c.returncode, 0, f + ": " + c.stderr)
        v = subprocess.run(["spirv-val", f[:-3] + ".cu.spv"], capture_output=True, text=True)
        eq(v.returncode, 0, f + ".spv: " + v.stdout + v.stderr)
        b = subprocess.run(["g++", "-std=c++17", "-Wall", "-Werror", "-x", "c++", "-DXPU_BACKEND_LEVEL_ZERO", f, "-lze_loader",
                            "-o", f[:-3]], capture_output=True, text=True)
        eq(b.returncode, 0, f + " builds on the Level Zero backend: " + b.stdout + b.stderr)
        p, log = run_fake(f[:-3])  # its own result check fails: the fake runs nothing
        eq(only(log, "error"), [], f)
        mods = only(log, "module spirv")
        eq(len(mods), 1, f)
        entries = set(re.sub(r"\(\d+\)", "", x) for x in mods[0].split("entry-points=")[1].split(","))
        eq(set(x.split()[1] for x in only(log, "launch ")), entries, f + ": every kernel launched")
        launched += len(entries)
    check(launched >= 25, "the kernels of all fixtures", launched)
    check("global null" in read("null_pointers.log"), "a NULL device pointer passed as a null USM pointer")


def test_spirv_found_on_the_kernel_path(d):
    setup()
    os.mkdir("spv")
    os.rename("saxpy.cu.spv", "spv/saxpy.cu.spv")
    p, log = run_fake("saxpy", XPUIFY_CL_PATH=os.path.abspath("spv"))
    eq(p.returncode, 0, p.stdout + p.stderr)
    eq(len(only(log, "launch saxpy ")), 1, log)


def test_missing_bad_or_failing_module_is_a_clear_error(d):
    make = setup()
    # no .spv: the launch records xpuErrorInvalidKernelImage; cudaGetLastError (CHECK) prints its string and exits 1
    os.unlink("saxpy.cu.spv")
    p, log = run_fake("saxpy")
    eq(p.returncode, 1, p.stdout + p.stderr)
    check("the SPIR-V kernel file saxpy.cu.spv was not found ($XPUIFY_CL_PATH or " in p.stderr, "says what is missing", p.stderr)
    check("| llvm-spirv-14 - -o saxpy.cu.spv" in p.stderr, "and how to make it", p.stderr)
    eq(only(log, "launch "), [])
    # not SPIR-V (the OpenCL C under the .spv name): refused before the driver sees it
    shutil.copy("saxpy.cu.cl", "saxpy.cu.spv")
    p, log = run_fake("saxpy")
    eq(p.returncode, 1, p.stdout + p.stderr)
    check("saxpy.cu.spv is not a SPIR-V module" in p.stderr, "not SPIR-V", p.stderr)
    eq(only(log, "module"), [])
    # the driver refuses the module: its build log on stderr and in xpuGetErrorString
    os.unlink("saxpy.cu.spv")
    subprocess.run(make("./saxpy.cu.cl"), shell=True, check=True)
    p, log = run_fake("saxpy", FAKE_ZE_BUILD_FAIL="1")
    eq(p.returncode, 1, p.stdout + p.stderr)
    check("saxpy.cu.spv did not build for the Level Zero device" in p.stderr and "build log:" in p.stderr, "the log printed", p.stderr)
    check("refused on purpose" in p.stderr.split("build log:")[1], "the driver's log itself", p.stderr)
    check(re.search(r"saxpy\.cu:\d+: saxpy\.cu\.spv did not build \(ze_result_t 0x[0-9a-f]+\): fake loader:", p.stderr),
          "xpuGetErrorString has it", p.stderr)
    eq(only(log, "launch "), [])


if __name__ == "__main__":
    main(globals())
