"""End-to-end tests of the context facts (an_context): a CUDA backend module of an accelerators/ package is left
as it is by `fix` (even with unsafe fixes) and reported once, by XPU810; the same text elsewhere is ported; the
facts hold the same in `check` and `fix`, with one thread and many."""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lsp"))
from harness import check, eq, fixture, main, read, run, write  # noqa: E402
from lspclient import Server, uri_of  # noqa: E402

BACKEND = '''import torch


def num_cuda_devices():
    return torch.cuda.device_count()


def clear_cuda_memory():
    torch.cuda.empty_cache()
'''

FAMILY = BACKEND + '''

class Accelerator:
    pass


class CUDAAccelerator(Accelerator):
    def setup_device(self, device):
        torch.cuda.set_device(device)
'''

TRAIN = '''import torch


def step(x):
    torch.cuda.synchronize()
    return x
'''


def project():
    write("pkg/__init__.py", "")
    write("pkg/accelerators/__init__.py", "")
    write("pkg/accelerators/cuda.py", BACKEND)
    write("pkg/accelerators/cpu.py", "import torch\n")
    write("pkg/utils/__init__.py", "")
    write("pkg/utils/cuda.py", BACKEND)
    write("pkg/train.py", TRAIN)


def findings(*paths):
    r = run("check", "--no-cache", "--format", "json", *paths)
    check(r.code in (0, 1), "check failed", r)
    return [(os.path.relpath(d["path"]), d["line"], d["code"]) for d in r.json()]


def test_backend_module_reported_once():
    project()
    got = findings("pkg/accelerators/cuda.py")
    eq(got, [("pkg/accelerators/cuda.py", 5, "XPU810")], "the module's first CUDA-only use carries the one finding")
    r = run("check", "--no-cache", "--format", "json", "pkg/accelerators/cuda.py")
    msg = r.json()[0]["message"]
    check("`cuda.py` is the CUDA backend" in msg and "`accelerators` package" in msg and "`xpu.py`" in msg, msg)


def test_same_module_elsewhere_is_ported():
    project()
    got = findings("pkg/utils/cuda.py")
    eq(sorted(c for _, _, c in got), ["XPU201", "XPU203"], "outside a backend package the calls are findings")


def test_fix_leaves_backends_alone():
    project()
    write("pkg/accelerators/cuda_family.py", FAMILY)
    r = run("fix", "-q", "--no-cache", "--unsafe-fixes", "--target", "accelerator", "--torch-version", "2.10", "pkg")
    check(r.code in (0, 1), "fix failed", r)
    eq(read("pkg/accelerators/cuda.py"), BACKEND, "a backend module is not rewritten, not even by unsafe fixes")
    check(read("pkg/utils/cuda.py") != BACKEND, "the same text outside a backend package is ported")
    check("torch.cuda.synchronize" not in read("pkg/train.py"), "ordinary code is ported", read("pkg/train.py"))
    fam = read("pkg/accelerators/cuda_family.py")
    check("torch.cuda.set_device(device)" in fam, "the CUDA class of a family is not rewritten", fam)
    # the module's own functions belong to the backend module too
    check("torch.cuda.device_count()" in fam, "the backend module's functions are not rewritten", fam)


def test_class_speaks_for_module():
    write("accelerators/cuda.py", FAMILY)
    got = findings("accelerators/cuda.py")
    eq(got, [("accelerators/cuda.py", 16, "XPU810")], "a backend class inside a backend module: one finding, at it")
    # the module holds CUDA code of its own (BACKEND's functions): the class's finding speaks for the whole module,
    # so its scope (what tools count as left by design) is the module's, not only the class's
    r = run("check", "--no-cache", "--format", "json", "accelerators/cuda.py")
    sc = r.json()[0]["scope"]
    eq((sc["line"], sc["end_line"]), (1, len(FAMILY.splitlines()) + 1), "the scope spans the module")
    write("accelerators/cuda.py", "import torch\n\n\nclass Accelerator:\n    pass\n\n\n"
          "class CUDAAccelerator(Accelerator):\n    def setup_device(self, device):\n        torch.cuda.set_device(device)\n")
    r = run("check", "--no-cache", "--format", "json", "accelerators/cuda.py")
    sc = r.json()[0]["scope"]
    eq((r.json()[0]["line"], sc["line"]), (8, 8), "with no CUDA code of the module's own, the class's scope")


def test_xpu_sibling_module_silences():
    # DeepSpeed's layout: accelerator/cuda_accelerator.py next to accelerator/xpu_accelerator.py
    write("accelerator/cuda_accelerator.py", FAMILY)
    eq(findings("accelerator/cuda_accelerator.py"), [("accelerator/cuda_accelerator.py", 16, "XPU810")], "no sibling yet")
    write("accelerator/xpu_accelerator.py", "import torch\n")
    # with its XPU sibling nothing is to be done: the backend is only recorded as CUDA by design (XPU812, whose scope
    # is the module: what fix leaves there is counted apart), and that record fails no run
    eq(findings("accelerator/cuda_accelerator.py"), [("accelerator/cuda_accelerator.py", 1, "XPU812")],
       "with its XPU sibling the backend is only a record of code left as it is by design")
    eq(read("accelerator/cuda_accelerator.py"), FAMILY)


def test_editor_sees_the_same_facts():
    # the language server publishes what check reports, inside a backend module and in ordinary code, and after an
    # edit inside the backend class (a re-analysis of part of the file) the class still holds only XPU810
    project()
    write("pkg/accelerators/cuda_family.py", FAMILY)
    want = findings("pkg/accelerators/cuda_family.py", "pkg/utils/cuda.py")
    s = Server()
    s.initialize({"general": {"positionEncodings": ["utf-32"]}})
    got = []
    for path in ("pkg/accelerators/cuda_family.py", "pkg/utils/cuda.py"):
        uri = uri_of(path)
        s.open(uri, read(path))
        got += [(path, x["range"]["start"]["line"] + 1, x["code"]) for x in s.diagnostics(uri, version=1)]
    eq(sorted(got), sorted(want), "lsp and check")
    uri = uri_of("pkg/accelerators/cuda_family.py")
    line = FAMILY.split("\n").index("        torch.cuda.set_device(device)")
    s.change(uri, 2, [{"range": {"start": {"line": line, "character": 8}, "end": {"line": line, "character": 8}},
                       "text": "torch.cuda.synchronize(); "}])
    after = sorted((x["range"]["start"]["line"] + 1, x["code"]) for x in s.diagnostics(uri, version=2))
    eq(after, [(16, "XPU810")], "an edit inside the backend")
    s.stop()


def test_guard_of_cuda_only_results_kept_with_guidance():
    src = ("import torch\n\n\ndef cap():\n    if torch.cuda.is_available():\n"
           "        return torch.cuda.get_device_properties(0).major\n    return 0\n\n\n"
           "def sync():\n    if torch.cuda.is_available():\n        torch.cuda.synchronize()\n")
    write("g.py", src)
    msgs = {d["line"]: d["message"] for d in run("check", "--no-cache", "--format", "json", "g.py").json()
            if d["code"] == "XPU105"}
    check("keep this test and add an XPU branch" in msgs[5], "guidance on the guard of CUDA-only results", msgs)
    check("keep this test" not in msgs[11], "no such guidance on a guard of generic work", msgs)
    r = run("fix", "-q", "--no-cache", "--unsafe-fixes", "--target", "compat", "g.py")
    check(r.code in (0, 1), "fix failed", r)
    out = read("g.py")
    check("    if torch.cuda.is_available():\n        return xpuify_device.get_device_properties(0).major" in out,
          "the guard stays a CUDA test, also after the call in its body was ported", out)
    check("    if xpuify_device.is_available():\n        xpuify_device.synchronize()" in out, "a generic body", out)


def test_threads_agree():
    project()
    a = run("check", "--no-cache", "--format", "json", "--threads", "1", "pkg")
    b = run("check", "--no-cache", "--format", "json", "--threads", "4", "pkg")
    eq(a.out, b.out, "one thread and four")


def test_extension_is_cuda_routing():
    # C++ extensions: an is_cuda() test that sends tensors to a CUDA kernel (an if around a *_cuda call or a
    # WITH_CUDA block, a TORCH_CHECK before one) stays; one that only asks "on a device?" becomes !x.is_cpu()
    shutil.copy(fixture("golden", "ext", "routing.cpp"), "routing.cpp")
    r = run("fix", "-q", "--no-cache", "routing.cpp")
    check(r.code in (0, 1), "fix failed", r)
    eq(read("routing.cpp"), read(fixture("golden", "ext", "routing.fixed.cpp")), "routing.cpp")
    r = run("check", "--no-cache", "--format", "json", "routing.cpp")
    kept = sorted(d["line"] for d in r.json() if d["code"] == "XPC701")
    eq(kept, [11, 24, 29, 46, 57, 63], "the routing tests stay findings, without a fix")


CHECKS = '#include <torch/extension.h>\n#define CHECK_DEVICE(x) TORCH_CHECK(x.is_cuda(), #x " must be a CUDA tensor")\n'


def test_extension_cuda_backend_sources():
    # the sources of an extension's CUDA backend (its cuda/ directory) are compiled by the CUDA build only: their
    # is_cuda() tests stay, found but without a fix; the same macro in a shared header is fixed, and so is a
    # directory whose name only contains "cuda"
    for rel in ("csrc/cuda/checks.cuh", "csrc/checks.h", "csrc/cuda_utils/checks.h"):
        write(rel, CHECKS)
    r = run("fix", "-q", "--no-cache", "csrc")
    check(r.code in (0, 1), "fix failed", r)
    eq(read("csrc/cuda/checks.cuh"), CHECKS, "csrc/cuda/checks.cuh is the CUDA backend's")
    for rel in ("csrc/checks.h", "csrc/cuda_utils/checks.h"):
        eq(read(rel), CHECKS.replace("x.is_cuda()", "!x.is_cpu()"), f"{rel} is fixed")
    r = run("check", "--no-cache", "--format", "json", "csrc")
    found = sorted((d["path"], d.get("fix") is not None) for d in r.json() if d["code"] == "XPC701")
    eq(found, [("csrc/cuda/checks.cuh", False)], "reported, no fix offered")


if __name__ == "__main__":
    main(globals())
