"""XPU606's fix at run time: `xpuify fix --unsafe-fixes` on setup.py files that only know CUDAExtension, then
the patched files run with Debian's torch (/usr/bin/python3, torch 1.13: no SyclExtension) under a stubbed
`setuptools.setup`. With `torch.utils.cpp_extension.CUDA_HOME` set, the patched file builds exactly the
extension the original builds (every attribute of the setuptools Extension); without it, a CppExtension without
the .cu sources, with XPUIFY_NO_CUDA defined and no nvcc flags, and a warning naming what was left out; with a
SyclExtension and SYCL_HOME stubbed in and a .sycl file beside every .cu source, the SYCL build. Also: the
function is written once per file (CRLF kept), and not at all where its name is taken or where a call in the
import block would run before it is defined."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import check, eq, main, need_python, read, run, write  # noqa: E402

PY = "/usr/bin/python3"

SETUP = '''"""Build script of fused_ops."""
import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

HERE = os.path.dirname(os.path.abspath(__file__))

setup(
    name="fused_ops",
    ext_modules=[
        CUDAExtension(
            name="fused_ops._C",
            sources=["csrc/bindings.cpp", "csrc/adam.cu", "csrc/norm_kernel.cu"],
            include_dirs=[os.path.join(HERE, "csrc")],
            define_macros=[("FUSED_OPS_VERSION", "2")],
            libraries=["m"],
            extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "--use_fast_math"]},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
'''

# The other call shapes: through a module alias, positional name and sources, extra_compile_args as a list
# (flags for every compiler) and missing; a function that builds them (not run when the file is loaded).
SHAPES = '''import torch.utils.cpp_extension as ce
from torch.utils import cpp_extension


def extensions():
    return [
        ce.CUDAExtension("pos_ops", ["pos.cpp", "pos_kernel.cu"], extra_compile_args=["-O2", "-g"]),
        cpp_extension.CUDAExtension("bare_ops", sources=["bare.cu"]),
        ce.CUDAExtension("dict_ops", ["d.cpp", "d.cu"], extra_compile_args={"nvcc": ["-G"], "nvcc_dlink": ["-x"]},
                         dlink=True),
    ]
'''

# Runs in the project directory with Debian's torch. argv: the file, the mode (original / patched run of the
# same name is the caller's business), CUDA_HOME ("" for None), SYCL ("1": a fake SyclExtension and SYCL_HOME).
PROBE = r'''
import io
import json
import runpy
import sys

import setuptools
import torch.utils.cpp_extension as cpp

path, cuda_home, sycl, call = sys.argv[1:5]
cpp.CUDA_HOME = cuda_home or None
if sycl == "1":
    def SyclExtension(name, sources, *args, **kwargs):
        ext = cpp.CppExtension(name, sources, *args, **kwargs)
        ext.built_by = "SyclExtension"
        return ext
    cpp.SyclExtension = SyclExtension
    cpp.SYCL_HOME = "/opt/intel/oneapi/compiler/latest"
calls = []
setuptools.setup = lambda **kw: calls.append(kw)
err = io.StringIO()
sys.stderr = err


def describe(ext):
    d = {k: v for k, v in vars(ext).items()}
    d["class"] = type(ext).__name__
    return d


try:
    ns = runpy.run_path(path, run_name="__main__")
    if call:
        exts = ns[call]()
    else:
        exts = calls[0]["ext_modules"]
    out = {"exts": [describe(e) for e in exts], "has_helper": "xpuify_extension" in ns}
except Exception as e:
    out = {"error": "%s: %s" % (type(e).__name__, e)}
out["stderr"] = err.getvalue()
sys.__stdout__.write(json.dumps(out, default=list))
'''


def probe(path, cuda_home, sycl=False, call=""):
    p = subprocess.run([PY, "probe.py", path, cuda_home or "", "1" if sycl else "0", call], capture_output=True,
                       text=True, timeout=120, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    check(p.returncode == 0, "probe ran", p.stdout + p.stderr)
    return json.loads(p.stdout)


def fixed(name, text):
    write(name, text)
    write("orig_" + name, text)
    r = run("fix", "-q", "--unsafe-fixes", "--target", "compat", name)
    check(r.code in (0, 1), "fix ran", r)
    out = read(name)
    check("def xpuify_extension(" in out and "CUDAExtension(" not in out.split("def xpuify_extension")[0],
          "the helper is inserted after the imports", out)
    eq(out.count("def xpuify_extension("), 1, "one helper")
    eq((run("fix", "-q", "--unsafe-fixes", "--target", "compat", "--diff", name).code), 0, "second fix is a no-op")
    return out


def setup_probe():
    need_python(PY, [("torch", "python3-torch"), ("setuptools", "python3-setuptools"),
                     ("torch.utils.cpp_extension", "python3-torch")])
    write("probe.py", PROBE)


def test_cuda_home_set_builds_the_same_cuda_extension(d):
    setup_probe()
    fixed("setup.py", SETUP)
    want = probe("orig_setup.py", "/opt/cuda")
    got = probe("setup.py", "/opt/cuda")
    check("error" not in want and "error" not in got, "both ran", (want, got))
    eq(len(got["exts"]), 1)
    check("c10_cuda" in want["exts"][0]["libraries"], "the original is a CUDAExtension", want)
    eq(got["exts"], want["exts"], "CUDA_HOME set: the very same CUDAExtension")
    eq(got["stderr"], "", "no warning on CUDA")


def test_no_cuda_home_builds_a_cpp_extension_without_cu_sources(d):
    setup_probe()
    fixed("setup.py", SETUP)
    orig = probe("orig_setup.py", "")
    check("error" in orig, "the original cannot build without CUDA_HOME", orig)
    got = probe("setup.py", "")
    check("error" not in got, "the patched file builds", got)
    ext = got["exts"][0]
    eq(ext["name"], "fused_ops._C")
    eq(ext["sources"], ["csrc/bindings.cpp"], "the .cu sources are left out")
    eq(ext["extra_compile_args"], {"cxx": ["-O3"]}, "no nvcc flags")
    eq(ext["define_macros"], [["FUSED_OPS_VERSION", "2"], ["XPUIFY_NO_CUDA", None]])
    check(not any("cuda" in lib for lib in ext["libraries"]), "no CUDA libraries", ext["libraries"])
    check("torch_cpu" in ext["libraries"] and "m" in ext["libraries"], "a CppExtension's libraries", ext["libraries"])
    check(not any("cuda" in p for p in ext["include_dirs"] + ext["library_dirs"]), "no CUDA paths", ext)
    check("csrc/adam.cu" in got["stderr"] and "csrc/norm_kernel.cu" in got["stderr"] and "CppExtension" in got["stderr"],
          "a warning names the sources left out", got["stderr"])
    eq(len(got["stderr"].strip().splitlines()), 1, "one line")


def test_cpu_fallback_is_what_cpp_extension_builds(d):
    """The CPU branch equals a hand-written CppExtension call with the same arguments (less the CUDA ones)."""
    setup_probe()
    fixed("setup.py", SETUP)
    write("cpp_reference.py", SETUP.replace("CUDAExtension", "CppExtension").replace(
        '"csrc/bindings.cpp", "csrc/adam.cu", "csrc/norm_kernel.cu"', '"csrc/bindings.cpp"').replace(
        '("FUSED_OPS_VERSION", "2")]', '("FUSED_OPS_VERSION", "2"), ("XPUIFY_NO_CUDA", None)]').replace(
        ', "nvcc": ["-O3", "--use_fast_math"]', ""))
    want = probe("cpp_reference.py", "")
    got = probe("setup.py", "")
    eq(got["exts"], want["exts"])


def test_call_shapes(d):
    setup_probe()
    fixed("shapes.py", SHAPES)
    want = probe("orig_shapes.py", "/opt/cuda", call="extensions")
    got = probe("shapes.py", "/opt/cuda", call="extensions")
    check("error" not in want, "original ran", want)
    eq(got["exts"], want["exts"], "CUDA: positional, keyword, list and dict flags, dlink: all unchanged")
    cpu = probe("shapes.py", "", call="extensions")
    check("error" not in cpu, "CPU ran", cpu)
    pos, bare, dct = cpu["exts"]
    eq((pos["name"], pos["sources"], pos["extra_compile_args"]), ("pos_ops", ["pos.cpp"], ["-O2", "-g"]),
       "positional name and sources; a list of flags is kept")
    eq((bare["name"], bare["sources"], bare["extra_compile_args"], bare["define_macros"]),
       ("bare_ops", [], [], [["XPUIFY_NO_CUDA", None]]), "no extra_compile_args: none added")
    # (an empty dict: setuptools keeps `extra_compile_args or []`)
    eq((dct["sources"], dct["extra_compile_args"]), (["d.cpp"], []), "every nvcc entry dropped")
    check("dlink" not in dct, "the dlink option is dropped", dct)
    eq(len(cpu["stderr"].strip().splitlines()), 3, "one warning per extension")


def test_sycl_branch_needs_every_sycl_twin(d):
    setup_probe()
    fixed("setup.py", SETUP.replace('"nvcc": ["-O3", "--use_fast_math"]', '"nvcc": ["-O3"], "sycl": ["-fsycl"]'))
    write("csrc/adam.sycl", "// hand-ported\n")
    got = probe("setup.py", "", sycl=True)
    check("error" not in got, "ran", got)
    eq(got["exts"][0]["class"], "Extension")
    eq(got["exts"][0]["sources"], ["csrc/bindings.cpp"], "one .sycl twin missing: the CppExtension")
    check("built_by" not in got["exts"][0], "not the SyclExtension", got)
    write("csrc/norm_kernel.sycl", "// hand-ported\n")
    got = probe("setup.py", "", sycl=True)
    ext = got["exts"][0]
    eq(ext.get("built_by"), "SyclExtension")
    eq(ext["sources"], ["csrc/bindings.cpp", "csrc/adam.sycl", "csrc/norm_kernel.sycl"])
    eq(ext["extra_compile_args"], {"cxx": ["-O3"], "sycl": ["-fsycl"]}, "nvcc dropped, sycl kept")
    eq(ext["define_macros"], [["FUSED_OPS_VERSION", "2"], ["XPUIFY_SYCL", None], ["XPUIFY_NO_CUDA", None]])
    eq(got["stderr"], "")
    # CUDA still wins where its toolkit is found
    got = probe("setup.py", "/opt/cuda", sycl=True)
    check("c10_cuda" in got["exts"][0]["libraries"] and "built_by" not in got["exts"][0], "CUDA first", got)


def test_helper_written_once_and_only_where_it_can_run(d):
    fix = ("fix", "-q", "--unsafe-fixes", "--target", "compat")
    # two calls, CRLF: one helper, in CRLF
    write("two.py", 'from torch.utils.cpp_extension import CUDAExtension\r\n\r\na = CUDAExtension("a", ["a.cu"])\r\n'
          'b = CUDAExtension("b", ["b.cu"])\r\n'.encode(), "wb")
    run(*fix, "two.py")
    out = read("two.py", "rb").decode()
    eq(out.count("def xpuify_extension("), 1)
    check(out.count("xpuify_extension(") == 3 and "CUDAExtension(\"" not in out, "both calls rewritten", out)
    check("\n" not in out.replace("\r\n", ""), "CRLF kept", out)
    # a later call in a file that has the helper: only the call changes
    write("two.py", 'c = torch.utils.cpp_extension.CUDAExtension("c", ["c.cu"])\r\n'.encode(), "ab")
    r = run(*fix, "--diff", "two.py")
    added = [x for x in r.out.splitlines() if x.startswith("+") and not x.startswith("+++")]
    check(r.code == 1 and added == ['+c = xpuify_extension("c", ["c.cu"])'], "just the call", r)
    # the name means something else here
    taken = 'from torch.utils.cpp_extension import CUDAExtension\nxpuify_extension = None\nCUDAExtension("a", ["a.cu"])\n'
    write("taken.py", taken)
    run(*fix, "taken.py")
    eq(read("taken.py"), taken, "no fix where xpuify_extension is taken")
    # a call in the import block would run before the function exists
    early = ('try:\n    from torch.utils.cpp_extension import CUDAExtension\n    EXT = CUDAExtension("a", ["a.cu"])\n'
             'except ImportError:\n    EXT = None\n')
    write("early.py", early)
    run(*fix, "early.py")
    eq(read("early.py"), early, "no fix for a call in the import block")


def test_safe_fixes_leave_the_build_alone(d):
    write("setup.py", SETUP)
    r = run("fix", "--target", "compat", "setup.py")
    eq(read("setup.py"), SETUP, "the fix is unsafe: not applied without --unsafe-fixes")
    check("XPU606" in r.out, "still reported", r)


if __name__ == "__main__":
    main(globals())
