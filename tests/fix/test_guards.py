"""Guard rewrites check the code they guard (analyzer/python/an_guard.c): `torch.cuda.is_available()` becomes a test
for any accelerator as a SAFE fix only where the guarded code is device-generic after the fixer's passes; it stays
unsafe where xpuify cannot see into that code, and gets no fix where the code does CUDA-only things, each said in
the finding. Labelled cases (fixtures/python/XPU105.py, `(fix: safe|unsafe|none)`), a plain-fix golden, and a run
with Debian's torch: on the CPU (and with CUDA hidden) the fixed program prints what the original prints; with an
accelerator (the helper told it has one) the device-generic bodies run and work, the CUDA-only ones do not run."""
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import ROOT, check, eq, main, need_python, read, run, write  # noqa: E402

PY = "/usr/bin/python3"
FIX = os.path.join(ROOT, "fixtures", "python")
LABEL = re.compile(r"expect:[A-Z0-9_, ]*XPU105[A-Z0-9_, ]*\(fix: (safe|unsafe|none)\)")


def xpu105(path):
    r = run("check", "--no-cache", "--format", "json", path)
    check(r.code in (0, 1), "check failed", r)
    return {d["line"]: d for d in r.json() if d["code"] == "XPU105"}


def test_labelled_guards_get_their_applicability(d):
    shutil.copy(os.path.join(FIX, "XPU105.py"), "g.py")
    lines = read("g.py").split("\n")
    want = {i + 1: m.group(1) for i, l in enumerate(lines) if (m := LABEL.search(l))}
    check(len(want) >= 15 and {"safe", "unsafe", "none"} <= set(want.values()), "every kind is labelled", want)
    found = xpu105("g.py")
    got = {ln: (found[ln].get("fix") or {}).get("applicability", "none") if ln in found else "missing" for ln in want}
    eq(got, want, "applicability per labelled guard")
    for ln, kind in want.items():
        m = found[ln]["message"]
        if kind == "safe":
            check("Safe here: the code it guards is device-generic" in m and "Unsafe" not in m, "safe said", m)
        elif kind == "unsafe":
            check("Unsafe here: the guarded code " in m, "what keeps it unsafe is said", m)
        else:
            check("keep this test and add an XPU branch" in m or "keep this CUDA test, or add an XPU path" in m,
                  "guidance on a CUDA-only body (or on the code after an early exit)", m)
    # the reasons name the offending thing (the guards of `fused()` and `launch()`, found by their bodies)
    fused = lines.index("    fused()")  # 0-based index of the body = 1-based line of its guard
    launch = lines.index("    launch()")
    check("calls `fused`, whose body uses `flash_attn`, which is CUDA-only" in found[fused]["message"], "via a callee",
          found[fused]["message"])
    check("calls `launch`, which xpuify cannot see into" in found[launch]["message"], "unknown callee",
          found[launch]["message"])


def test_labelled_early_exits_get_their_applicability(d):
    """Early exits (fixtures/python/early_exits.py): the code an exit protects is the rest of the test, function or
    loop after it; a return that answers the callers (a value) or a raise, skip or exit that stops them (outside a
    test function or a script's top level) keeps the fix unsafe; the messages say which, about the code after
    the exit."""
    shutil.copy(os.path.join(FIX, "early_exits.py"), "early_exits.py")
    lines = read("early_exits.py").split("\n")
    want = {i + 1: m.group(1) for i, l in enumerate(lines) if (m := LABEL.search(l))}
    check(len(want) >= 20 and {"safe", "unsafe", "none"} <= set(want.values()), "every kind is labelled", want)
    found = xpu105("early_exits.py")
    got = {ln: (found[ln].get("fix") or {}).get("applicability", "none") if ln in found else "missing" for ln in want}
    eq(got, want, "applicability per labelled early exit")
    said = lambda text: [ln for ln, x in found.items() if text in x["message"]]
    at = lambda text: next(i + 1 for i, l in enumerate(lines) if text in l)
    # the reasons: callers stopped or answered, and what the code after the exit does
    check(at("def skip_without_gpu") + 1 in said("stops its callers where CUDA is missing (`pytest.skip("), "skip",
          found)
    check(at("def peak") + 2 in said("returns a result that depends on the test (`return 0`)"), "value", found)
    check(at("def require_gpu") + 2 in said("returns a result that depends on the test"), "decorator", found)
    check(at("def warm_up_kernels") + 1 in said("Here the guarded code (after this early exit) uses `flash_attn`, "
                                                "which is CUDA-only: keep this CUDA test, or add an XPU path"),
          "guidance on CUDA-only code after the exit", found)


def test_cuda_by_word_is_left_as_it_is(d):
    """A CUDA test inside code named for CUDA, or whose own gate states CUDA is required (a skip reason, an assert's
    message, what its exit raises): one XPU812 over what it gates, no fix, and `fix` leaves that scope byte for byte
    while it ports the code around it (fixtures/python/context_cuda_by_word.py)."""
    shutil.copy(os.path.join(FIX, "context_cuda_by_word.py"), "w.py")
    orig = read("w.py")
    lines = orig.split("\n")
    want = {i + 1: m.group(1) for i, l in enumerate(lines) if (m := LABEL.search(l))}
    found = xpu105("w.py")
    got = {ln: (found[ln].get("fix") or {}).get("applicability", "none") if ln in found else "missing" for ln in want}
    eq(got, want, "applicability per labelled guard")
    r = run("check", "--no-cache", "--format", "json", "w.py")
    design = [x for x in r.json() if x["code"] == "XPU812"]
    at = lambda text: next(i + 1 for i, l in enumerate(lines) if text in l)
    eq(sorted(x["line"] for x in design), sorted(i + 1 for i, l in enumerate(lines) if "expect: XPU812" in l),
       "one XPU812 per design guard")
    by_line = {x["line"]: x for x in design}
    check("states requires CUDA (\"int8 dynamic quant needs CUDA\")" in by_line[at("int8 dynamic")]["message"],
          "the statement is quoted", by_line)
    check("sits in `_cuda_capability_ok`, named for CUDA" in by_line[at("def _cuda_capability_ok") + 1]["message"],
          "the name is said", by_line)
    # the scopes: the skipped test whole; the rest of the function after an assert or an early exit; an elif's own
    # branch (not the ported branch before it, not the else after it)
    scopes = {x["line"]: (x["scope"]["line"], x["scope"]["end_line"]) for x in design}
    eq(scopes[at("int8 dynamic")], (at("int8 dynamic"), at("assert model(x)")), "skipped test")
    eq(scopes[at("CUDA required for APEX")], (at("CUDA required for APEX"), at('import_class("apex')), "assert")
    eq(scopes[at("elif torch.cuda")], (at("elif torch.cuda"), at("return run_fused")), "elif branch")
    eq(scopes[at("def _cuda_capability_ok") + 1], (at("def _cuda_capability_ok") + 1, at("get_device_capability()[0] >= 8")),
       "early exit")
    # nothing inside a scope is reported or rewritten; the code around it is
    inside = [x for x in r.json() if x["code"] != "XPU812" and any(a <= x["line"] <= b for a, b in scopes.values())]
    eq(inside, [], "findings inside design scopes are left out")
    r = run("fix", "-q", "--no-cache", "--target", "compat", "w.py")
    check(r.code in (0, 1), "fix failed", r)
    out = read("w.py")
    for a, b in scopes.values():
        block = "\n".join(lines[a - 1:b])
        check(block in out, "a design scope is left byte for byte", block)
    check("if fp16 and xpuify_device.is_available():" in out and "xpuify_device.synchronize()" in out,
          "the code around is ported", out)
    compile(out, "w.py", "exec")
    r2 = run("fix", "--no-cache", "--target", "compat", "--diff", "w.py")
    eq((r2.code, r2.out), (0, ""), "second fix is a no-op")


def test_guard_of_helper_ported_calls(d):
    """A CUDA availability test around calls that the compat helper ports for every device (memory_summary,
    ipc_collect: XPU206 entries with a compat form) is judged like any other guard, and safe here; the same calls
    under a device-type test (`if DEV == "cuda":`, the rule's advice followed) stay unreported (XPU206.py)."""
    shutil.copy(os.path.join(FIX, "XPU206.py"), "m.py")
    lines = read("m.py").split("\n")
    want = {i + 1: m.group(1) for i, l in enumerate(lines) if (m := LABEL.search(l))}
    check(want, "a labelled guard", lines)
    found = xpu105("m.py")
    eq({ln: (found[ln].get("fix") or {}).get("applicability", "none") if ln in found else "missing" for ln in want},
       want, "applicability per labelled guard")
    r = run("fix", "-q", "--no-cache", "--target", "compat", "m.py")
    check(r.code in (0, 1), "fix failed", r)
    out = read("m.py")
    at = out.index("def log_memory():")
    check(re.match(r"def log_memory\(\):\n    if xpuify_device\.is_available\(\):.*\n        print\(xpuify_device\."
                   r"memory_summary\(abbreviated=True\)\).*\n        xpuify_device\.ipc_collect\(\)", out[at:]),
          "ported together", out[at:])
    check(re.search(r'if DEV == "cuda":.*\n    torch\.cuda\.ipc_collect\(\)', out), "the device-type branch is left as it is", out)


def test_plain_fix_rewrites_only_generic_guards(d):
    shutil.copy(os.path.join(FIX, "guards", "prog.py"), "prog.py")
    args = ["fix", "-q", "--no-cache", "--target", "compat", "prog.py"]
    r = run(*args)
    check(r.code in (0, 1), "fix failed", r)
    eq(read("prog.py"), read(os.path.join(FIX, "guards", "prog.compat.py")), "guards/prog.compat.py")
    compile(read("prog.py"), "prog.py", "exec")
    r2 = run(*args[:-1], "--diff", "prog.py")
    eq((r2.code, r2.out), (0, ""), "second fix is a no-op")


def test_fixpoint_nested_and_ported_bodies(d):
    """A guard whose body holds another guard and a call the same pass ports: decided on what the pass writes."""
    # g's model.cuda() stays unported: the file imports a library xpuify knows nothing of, whose objects may have a
    # .cuda() of their own (the receiver's type is unknown)
    src = ("import torch\nimport leftpad\n\n\ndef f():\n    if torch.cuda.is_available():\n        if torch.cuda.is_available():\n"
           "            torch.cuda.synchronize()\n        torch.cuda.empty_cache()\n\n\n"
           "def g(model):\n    if torch.cuda.is_available():\n        if torch.cuda.is_available():\n"
           "            model.cuda()\n")
    with open("n.py", "w") as f:
        f.write(src)
    found = xpu105("n.py")
    eq({ln: (x.get("fix") or {}).get("applicability", "none") for ln, x in found.items()},
       {6: "safe", 7: "safe", 13: "none", 14: "none"}, "outer guards follow their inner guards")
    r = run("fix", "-q", "--no-cache", "--target", "compat", "n.py")
    check(r.code in (0, 1), "fix failed", r)
    out = read("n.py")
    check("    if xpuify_device.is_available():\n        if xpuify_device.is_available():\n"
          "            xpuify_device.synchronize()\n        xpuify_device.empty_cache()" in out, "f ported", out)
    check("def g(model):\n    if torch.cuda.is_available():\n        if torch.cuda.is_available():" in out, "g kept", out)


def runs(script, env):
    e = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **env)
    p = subprocess.run([PY, script], capture_output=True, text=True, env=e, timeout=300)
    check(p.returncode == 0, f"{script} runs with {env}", p.stdout + p.stderr)
    return p.stdout


def test_fixed_guards_run_right_on_cpu_and_on_an_accelerator(d):
    need_python(PY, [("torch", "python3-torch")])
    shutil.copy(os.path.join(FIX, "guards", "prog.py"), "orig.py")
    os.mkdir("fixed")
    shutil.copy(os.path.join(FIX, "guards", "prog.py"), "fixed/prog.py")
    r = run("fix", "-q", "--no-cache", "--target", "compat", "fixed/prog.py")
    check(r.code in (0, 1), "fix failed", r)
    for env in ({}, {"CUDA_VISIBLE_DEVICES": ""}):
        before = runs("orig.py", env)
        eq(runs("fixed/prog.py", env), before, f"the same behaviour without an accelerator ({env})")
        check("ran" not in before and "mode no" in before, "no guarded body runs on the CPU", before)
    # an accelerator host as the helper sees one (Debian's torch has no XPU or MPS: the helper is told)
    acc = runs("fixed/prog.py", {"XPUIFY_DEVICE": "mps"})
    eq([l for l in acc.split("\n") if l.startswith(("ran", "mode", "kinds"))],
       ["ran empty_cache 2.0", "ran cudnn flag 2.0", "mode bf16", "kinds []", "ran flag 2.0", "ran test 2.0"],
       "the generic bodies run there and work; the CUDA-only ones (capability, the \"cuda\" list) do not run")


LOOP_LABEL = re.compile(r"expect:[A-Z0-9_, ]*XPU201 \(fix: (safe|unsafe|none)\)")


def test_device_count_loops_are_judged_like_guards(d):
    """`for i in range(torch.cuda.device_count()):` runs its body once per CUDA device and no time without CUDA: a
    device-generic body lets the count be ported (safe), a body that reads CUDA-only results keeps it (no fix, and
    says why), as the guards of the same body would (guards/device_loops.py, labelled; plain fix golden
    guards/device_loops.compat.py). Run with Debian's torch: on the CPU original and fixed print the same, and with the
    helper told it has an accelerator the capability loops still run no time (they raised when the count was
    ported and the body was not)."""
    src = os.path.join(FIX, "guards", "device_loops.py")
    shutil.copy(src, "loops.py")
    lines = read("loops.py").split("\n")
    want = {i + 1: m.group(1) for i, l in enumerate(lines) if (m := LOOP_LABEL.search(l))}
    check({"safe", "none"} <= set(want.values()), "both kinds are labelled", want)
    r = run("check", "--no-cache", "--format", "json", "--target", "compat", "loops.py")
    found = {x["line"]: x for x in r.json() if x["code"] == "XPU201" and "device_count" in x["message"]}
    got = {ln: (found[ln].get("fix") or {}).get("applicability", "none") if ln in found else "missing" for ln in want}
    eq(got, want, "applicability per labelled loop")
    for ln, kind in want.items():
        if kind == "none":
            check("Here the loop over the devices reads a CUDA-only result" in found[ln]["message"], "why is said",
                  found[ln]["message"])
    r = run("fix", "-q", "--no-cache", "--target", "compat", "loops.py")
    check(r.code in (0, 1), "fix failed", r)
    eq(read("loops.py"), read(os.path.join(FIX, "guards", "device_loops.compat.py")), "guards/device_loops.compat.py")
    need_python(PY, [("torch", "python3-torch")])
    shutil.copy(src, "orig.py")
    for env in ({}, {"CUDA_VISIBLE_DEVICES": ""}):
        eq(runs("loops.py", env), runs("orig.py", env), f"the same on the CPU ({env})")
    acc = runs("loops.py", {"XPUIFY_DEVICE": "mps"})
    check(acc.startswith("caps [] older False names 1"), "on an accelerator the capability loops do not run", acc)


DDP_PROG = """import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def wrap(model):
    if torch.cuda.is_available():
        return DDP(model, device_ids=[0]), "ddp"
    return model, "plain"


def reduce(t):
    if torch.cuda.is_available():
        dist.all_reduce(t)
    return t


def sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return "synced"


print(wrap(torch.nn.Linear(2, 2))[1], reduce(torch.ones(2)).tolist(), sync())
"""


def test_guards_of_distributed_work_stay_false_on_mps(d):
    """A guard whose code runs torch.distributed work on the device (DDP, collectives) becomes
    `xpuify_device.dist_available()`: true on CUDA (as before) and on XPU with XCCL or oneCCL, false on MPS, whose
    tensors no backend carries (gloo takes CPU tensors), so a Mac keeps the original's other branch (guided-diffusion
    wrapped its MPS model in DDP over gloo after `is_available()`). Other guards still become `is_available()`. Run
    with Debian's torch: original and fixed print the same on the CPU and with the helper told it has MPS."""
    write("ddp.py", DDP_PROG)
    r = run("check", "--no-cache", "--format", "json", "--target", "compat", "ddp.py")
    found = {x["line"]: x for x in r.json() if x["code"] == "XPU105"}
    eq({ln: (x.get("fix") or {}).get("applicability") for ln, x in found.items()}, {7: "safe", 13: "safe", 19: "safe"})
    for ln in (7, 13):
        check("no backend carries for MPS tensors" in found[ln]["message"] and "MPS too" not in found[ln]["message"],
              "said", found[ln]["message"])
    check("no backend carries" not in found[19]["message"], "a generic guard is not distributed", found[19]["message"])
    r = run("check", "--no-cache", "--format", "json", "--target", "accelerator", "--torch-version", "2.10", "ddp.py")
    acc = {x["line"]: (x.get("fix") or {}).get("applicability") for x in r.json() if x["code"] == "XPU105"}
    eq(acc, {7: "unsafe", 13: "unsafe", 19: "safe"}, "torch.accelerator.is_available() is true on MPS too")
    shutil.copy("ddp.py", "orig.py")
    r = run("fix", "-q", "--no-cache", "--target", "compat", "ddp.py")
    check(r.code in (0, 1), "fix failed", r)
    out = read("ddp.py")
    eq(out.count("if xpuify_device.dist_available():"), 2, out)
    check("    if xpuify_device.is_available():\n        xpuify_device.synchronize()" in out, "the generic guard", out)
    need_python(PY, [("torch", "python3-torch")])
    for env in ({}, {"XPUIFY_DEVICE": "mps"}):
        eq(runs("ddp.py", env), runs("orig.py", env), f"the same ({env})")
    eq(runs("ddp.py", {"XPUIFY_DEVICE": "mps"}), "plain [1.0, 1.0] synced\n", "MPS keeps the plain branch")
    # a process group of the device's backend is such work too (fairscale's dist_init); a gloo one is not
    write("init.py", "import torch\nimport torch.distributed as dist\nif torch.cuda.is_available():\n"
                     "    dist.init_process_group(backend=\"nccl\")\nif torch.cuda.is_available():\n"
                     "    dist.init_process_group(backend=\"gloo\")\n")
    r = run("fix", "-q", "--no-cache", "--target", "compat", "init.py")
    out = read("init.py")
    check("if xpuify_device.dist_available():\n    dist.init_process_group(backend=xpuify_device.dist_backend())" in out
          and "if xpuify_device.is_available():\n    dist.init_process_group(backend=\"gloo\")" in out, "groups", out)


def test_plain_fix_of_early_exits(d):
    """Plain fix of early exits (guards/exits.py, a unittest program; guards/exits_pytest.py, a pytest module): the
    tests whose following code is device-generic become the helper's, the others stay CUDA tests."""
    for name in ("exits", "exits_pytest"):
        shutil.copy(os.path.join(FIX, "guards", name + ".py"), name + ".py")
        args = ["fix", "-q", "--no-cache", "--target", "compat", name + ".py"]
        r = run(*args)
        check(r.code in (0, 1), "fix failed", r)
        eq(read(name + ".py"), read(os.path.join(FIX, "guards", name + ".compat.py")), f"guards/{name}.compat.py")
        r2 = run(*args[:-1], "--diff", name + ".py")
        eq((r2.code, r2.out), (0, ""), "second fix is a no-op")


# what the pytest module needs of pytest (Debian's python3 has none here): skip marks and pytest.skip, and a runner
# that honours the module's pytestmark
PYTEST_STUB = """import unittest
class _Skip:
    def __init__(self, condition, reason):
        self.condition, self.reason = condition, reason
    def __call__(self, fn):
        return unittest.skipIf(self.condition, self.reason)(fn)
class mark:
    skipif = _Skip
def skip(reason):
    raise unittest.SkipTest(reason)
"""
PYTEST_RUN = """import sys, unittest
sys.path.insert(0, sys.argv[1])
import exits_pytest as m
mark = getattr(m, "pytestmark", None)
for name in sorted(n for n in vars(m) if n.startswith("test")):
    fn = getattr(m, name)
    try:
        if mark is not None and mark.condition:
            raise unittest.SkipTest(mark.reason)
        if getattr(fn, "__unittest_skip__", False):
            raise unittest.SkipTest(fn.__unittest_skip_why__)
        fn()
        print("ok", name)
    except unittest.SkipTest as e:
        print("skipped", name, e)
"""


def test_fixed_early_exits_skip_on_cpu_and_run_on_an_accelerator(d):
    """The fixed tests still skip where no accelerator is (the CPU, CUDA hidden: the same output as the original),
    and run on an accelerator host as the helper sees one (Debian's torch has no XPU or MPS: the helper is told),
    where the CUDA-only ones (compute capability, cuDNN) still do not run."""
    need_python(PY, [("torch", "python3-torch")])
    for name in ("exits", "exits_pytest"):
        write(os.path.join("orig", name + ".py"), read(os.path.join(FIX, "guards", name + ".py")))
        write(os.path.join("fixed", name + ".py"), read(os.path.join(FIX, "guards", name + ".py")))
        r = run("fix", "-q", "--no-cache", "--target", "compat", os.path.join("fixed", name + ".py"))
        check(r.code in (0, 1), "fix failed", r)
    for where in ("orig", "fixed"):
        write(os.path.join(where, "pytest.py"), PYTEST_STUB)
    write("run_pytest.py", PYTEST_RUN)

    def outcome(where, env):
        lines = runs(os.path.join(where, "exits.py"), env).split("\n")
        e = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **env)
        p = subprocess.run([PY, "run_pytest.py", where], capture_output=True, text=True, env=e, timeout=300)
        check(p.returncode == 0, f"the pytest module runs in {where} with {env}", p.stdout + p.stderr)
        return sorted(l for l in lines + p.stdout.split("\n") if l)

    for env in ({}, {"CUDA_VISIBLE_DEVICES": ""}):
        before = outcome("orig", env)
        eq(outcome("fixed", env), before, f"the same behaviour without an accelerator ({env})")
        check(not [l for l in before if l.startswith(("ran", "ok"))], "nothing runs on the CPU", before)
    acc = outcome("fixed", {"XPUIFY_DEVICE": "mps"})
    eq(acc, sorted(["ran warm_up 2.0", "ran batch 1 2.0", "ran batch 2 2.0", "peak 0",
                    "ok test_skip_generic", "ran test_skip_generic 2.0", "ok test_assert_generic",
                    "ran test_assert_generic 2.0", "ok test_marked", "ran test_marked 2.0",
                    "skipped test_skip_cudnn needs cuDNN",
                    "ok test_marked", "ran test_marked 2.0", "ok test_skip_generic", "ran test_skip_generic 2.0"]),
       "the device-generic code after the exits runs there and works; the CUDA-only code (capability, cuDNN) and "
       "the unsafe `peak()` (its result answers the callers) do not change")


def test_verdicts_in_a_large_file_are_those_of_the_whole_file(d):
    """A large file's guards are judged over the top-level statements that hold a test or an import (an_guard
    parses only those), and over the whole file where a verdict reads beyond them (a function of the file, the rest
    of the module): the labelled fixture followed by 400 unrelated functions gets the verdicts and reasons it gets
    alone."""
    shutil.copy(os.path.join(FIX, "XPU105.py"), "g.py")
    alone = xpu105("g.py")
    pad = "".join(f"\n\ndef unrelated_{i}(x):\n    y = [x + k for k in range({i})]\n    return sum(y)\n" for i in range(400))
    with open("g.py", "a") as f:
        f.write(pad)
    padded = xpu105("g.py")
    check(len(alone) >= 15, "the fixture's guards are found", alone)
    key = lambda ds: {ln: (x["message"], (x.get("fix") or {}).get("applicability")) for ln, x in ds.items()}
    eq(key(padded), key(alone), "verdicts with the file grown")


def test_verdicts_over_local_imports_are_those_of_the_whole_file(d):
    """A function or class of a large file that holds no test but imports inside (a script's `main` importing wandb)
    gives the guard's partial tree its import statements only (an_pyregion_units: an_pyunit.imports_known), parsed
    as top-level ones: the names they bind mean what they mean in the whole file (a CUDA-only library keeps the test;
    numpy does not), an import in an except clause, or a function whose other text says `import`, is taken whole, and
    a guard that calls such a function reads its body. Each verdict and reason is the one the file gets alone."""
    head = (
        "import torch\n\n\n"
        "@staticmethod\n"
        "def setup(args):\n    x = args\n    from flash_attn import (\n        flash_attn_func as fa,\n    )\n"
        "    import numpy as np\n    return x\n\n\n"
        "async def fallback():\n    try:\n        import apex\n    except ImportError:\n        import fused as apex\n\n\n"
        "def documented():\n    \"\"\"Call after the import of triton.\"\"\"\n    import triton\n\n\n"
        "def cuda_body():\n    import pynvml\n    return torch.cuda.get_device_capability()\n\n\n"
        "class Holder:\n    def load(self):\n        from flash_attn import flash_attn_qkvpacked_func as fq\n\n\n"
        "def run(x):\n"
        "    if torch.cuda.is_available():\n        x = fa(x)\n"
        "    if torch.cuda.is_available():\n        x = np.zeros(3)\n"
        "    if torch.cuda.is_available():\n        x = apex.amp(x)\n"
        "    if torch.cuda.is_available():\n        x = triton.jit(x)\n"
        "    if torch.cuda.is_available():\n        cuda_body()\n"
        "    if torch.cuda.is_available():\n        x = fq(x)\n"
        "    return x\n"
    )
    pad = "".join(f"\n\ndef unrelated_{i}(x):\n    y = [x + k for k in range({i})]\n    return sum(y)\n" for i in range(400))
    key = lambda ds: [(x["message"], (x.get("fix") or {}).get("applicability")) for _, x in sorted(ds.items())]
    write("g.py", head)
    alone = xpu105("g.py")
    check(len(alone) == 6, "the tests are found", alone)
    kinds = [a for _, a in key(alone)]
    check(kinds.count("safe") >= 1 and kinds.count("safe") < 6, "some safe, some not", alone)
    # padding after the tests and between the functions that import (the tests' function is not most of the file)
    for grown in (head + pad, head.replace("\n\ndef run", pad + "\n\ndef run").replace("\n\nasync def", pad + "\n\nasync def")):
        write("g.py", grown)
        got = xpu105("g.py")
        eq(key(got), key(alone), "verdicts with the file grown")


def test_verdicts_in_a_large_class_are_those_of_the_whole_class(d):
    """A guard in one method of a large class is judged over the class's header and that method (an_guard), and
    over the whole class where the verdict reads its other members (a method called on `self`, the uses of a
    private attribute): each class grown by 400 methods gets the verdicts and reasons it gets alone."""
    calls = (
        "import torch\n\n\nclass Runner:\n"
        "    def _helper(self):\n        return torch.cuda.get_device_capability()\n\n"
        "    def _plain(self, x):\n        return x * 2\n\n"
        "    def step(self, x):\n"
        "        if torch.cuda.is_available():\n            self._helper()\n"
        "        if torch.cuda.is_available():\n            x = self._plain(x)\n"
        "        if torch.cuda.is_available():\n            x = x + 1\n"
        "        return x\n"
    )
    flag = (
        "import torch\nfrom flash_attn import flash_attn_func\n\n\nclass Runner:\n"
        "    def __init__(self):\n        self._flag = torch.cuda.is_available()\n\n"
        "    def later(self, x):\n        if self._flag:\n            x = flash_attn_func(x)\n        return x\n"
    )
    pad = "".join(f"\n    def unrelated_{i}(self, x):\n        return [x + k for k in range({i})]\n" for i in range(400))
    key = lambda ds: {ln: (x["message"], (x.get("fix") or {}).get("applicability")) for ln, x in ds.items()}
    for head, n in ((calls, 3), (flag, 1)):
        with open("c.py", "w") as f:
            f.write(head)
        alone = xpu105("c.py")
        with open("c.py", "w") as f:
            f.write(head + pad)
        grown = xpu105("c.py")
        check(len(alone) == n, "the tests are found", alone)
        check(any((x.get("fix") or {}).get("applicability") != "safe" for x in alone.values()), "one is not safe", alone)
        eq(key(grown), key(alone), "verdicts with the class grown")


def test_verdicts_through_callees_of_a_large_file_are_those_of_the_whole_file(d):
    """A verdict that reads functions of the file a partial tree lacks is judged again over the tree grown by the
    statements that define them (an_guard: grow_partial), callee by callee, and over the whole file after a few
    rounds: chains of callees (CUDA-only at their end, generic, through a method of a large class) spread among
    400 unrelated functions get the verdicts and reasons they get in the file alone."""
    head = (
        "import torch\nfrom flash_attn import flash_attn_func\n\n\n"
        "def deep(x):\n    return flash_attn_func(x)\n\n\n"
        "def middle(x):\n    return deep(x) + 1\n\n\n"
        "def plain(x):\n    return x * 2\n\n\n"
        "def outer(x):\n    return plain(middle(x))\n\n\n"
        "def generic_a(x):\n    return generic_b(x) + plain(x)\n\n\n"
        "def generic_b(x):\n    return [x]\n\n\n"
        "class Runner:\n"
        "    def _far(self, x):\n        return torch.cuda.get_device_capability()\n\n"
        "    def _near(self, x):\n        return self._far(x)\n\n"
        "    def _ok(self, x):\n        return generic_a(x)\n\n"
        "    def step(self, x):\n"
        "        if torch.cuda.is_available():\n            x = self._near(x)\n"
        "        if torch.cuda.is_available():\n            x = self._ok(x)\n"
        "        return x\n\n\n"
        "def run(x):\n"
        "    if torch.cuda.is_available():\n        x = outer(x)\n"
        "    if torch.cuda.is_available():\n        x = generic_a(x)\n"
        "    if torch.cuda.is_available():\n        x = middle(x)\n"
        "    return x\n"
    )
    fn = "".join(f"\n\ndef unrelated_{i}(x):\n    y = [x + k for k in range({i})]\n    return sum(y)\n" for i in range(200))
    meth = "".join(f"\n    def unrelated_{i}(self, x):\n        return [x + k for k in range({i})]\n" for i in range(200))
    key = lambda ds: {ln: (x["message"], (x.get("fix") or {}).get("applicability")) for ln, x in ds.items()}
    write("g.py", head)
    alone = xpu105("g.py")
    check(len(alone) == 5, "the tests are found", alone)
    kinds = {(x.get("fix") or {}).get("applicability") for x in alone.values()}
    check("safe" in kinds and len(kinds) > 1, "some safe, some not", alone)
    # padding between the definitions (the callees lie outside the statements that hold a test) and in the class
    grown = head.replace("\n\ndef middle", fn + "\n\ndef middle").replace("    def _near", meth.lstrip("\n") + "\n    def _near")
    write("g.py", grown)
    shift = grown.count("\n") - head.count("\n")
    got = xpu105("g.py")
    check(len(got) == 5, "the tests are found in the grown file", got)
    moved = {ln: x for ln, x in got.items()}
    # the same verdicts in the same order of lines (every test lies after the padding)
    eq([v for _, v in sorted(key(moved).items())], [v for _, v in sorted(key(alone).items())], "verdicts with the file grown")
    check(all(ln > shift for ln in got), "the tests moved by the padding", (shift, sorted(got)))
    # a class the partial tree holds in part (the method with the test), called itself: read whole, its CUDA-only
    # member included
    cls = (
        "import torch\nfrom flash_attn import flash_attn_func\n\n\nclass Model:\n"
        "    def _kernel(self, x):\n        return flash_attn_func(x)\n\n"
        "    def build(self, x):\n        if torch.cuda.is_available():\n            return Model()\n        return x\n"
    )
    why = "calls `Model`, whose body uses `flash_attn_func`, which is CUDA-only"
    for text in (cls, cls.replace("    def build", meth.lstrip("\n") + "\n    def build")):
        write("g.py", text)
        got = list(xpu105("g.py").values())
        check(len(got) == 1 and (got[0].get("fix") or {}).get("applicability") != "safe" and why in got[0]["message"],
              "the class's CUDA-only member (first in its body) keeps the test", got)


# a project whose guards call into its other modules (also a golden project: tests/fix/test_projects.py)
XMOD = os.path.join(ROOT, "fixtures", "golden", "projects", "xguard", "input")


def applicability(found, ln):
    return (found[ln].get("fix") or {}).get("applicability", "none") if ln in found else "missing"


def test_callees_in_other_modules_of_the_project(d):
    """A guard's callees in other modules of the project are followed through its imports (absolute, relative,
    re-exported by a package's __init__.py, `import pkg.mod as m; m.f()`), the project model's import roots finding
    their files: a device-generic class or function there makes the rewrite safe; a CUDA library there gives
    guidance and no fix; CUDA that the other module's own fixes port, a compiled extension, a third-party library
    and a module that is no file of the project keep it unsafe; a cycle of calls between two modules ends."""
    shutil.copytree(XMOD, "xmod")
    lines = read("xmod/pkg/train.py").split("\n")
    want = {i + 1: m.group(1) for i, l in enumerate(lines) if (m := LABEL.search(l))}
    check(len(want) == 8 and {"safe", "unsafe", "none"} <= set(want.values()), "every kind is labelled", want)
    r = run("check", "--no-cache", "--format", "json", "pkg/train.py", cwd="xmod")
    check(r.code in (0, 1), "check failed", r)
    found = {x["line"]: x for x in r.json() if x["code"] == "XPU105"}
    eq({ln: applicability(found, ln) for ln in want}, want, "applicability per labelled guard")
    msg = lambda name: found[lines.index(f"def {name}(x):") + 2]["message"]
    check("calls `fused`, whose body uses `flash_attn`, which is CUDA-only" in msg("attention_library"), "why none",
          msg("attention_library"))
    check("calls `sync`, whose body uses `torch.cuda.synchronize`, which its module's own fixes may port, in a module "
          "whose own fixes this pass does not see" in msg("synchronize_elsewhere"), "why unsafe", msg("synchronize_elsewhere"))
    check("calls `_Deform`, whose body calls `_C.deform_forward`, which xpuify cannot see into" in msg("extension"),
          "the module-level value `deform = _Deform.apply` is followed", msg("extension"))
    check("`transformers.AutoModel.from_pretrained`, which xpuify cannot see into" in msg("third_party"), "third-party",
          msg("third_party"))


def test_callees_in_a_large_module(d):
    """Chains of callees through a large module of the project (a CUDA library at the end of one, a generic one, a
    class whose CUDA-only member is first in its body), read for several guard files in one run (--threads 1: one
    thread reads them all in turn, the module kept between them) in either order, and for each file alone, get the
    same verdicts and reasons."""
    pad = "".join(f"\n\ndef unrelated_{i}(x):\n    y = [x + k for k in range({i})]\n    return sum(y)\n" for i in range(300))
    meth = "".join(f"\n    def unrelated_{i}(self, x):\n        return [x + k for k in range({i})]\n" for i in range(100))
    lib = ("from flash_attn import flash_attn_func\n" + pad +
           "\n\ndef _kernel(x):\n    return flash_attn_func(x)\n" + pad.replace("unrelated_", "more_") +
           "\n\ndef entry(x):\n    return _kernel(x) + 1\n\n\ndef _plain(x):\n    return [x]\n" +
           "\n\ndef generic(x):\n    return _plain(x)\n\n\nclass Tool:\n" +
           "    def _far(self, x):\n        return flash_attn_func(x)\n" + meth +
           "\n    def run(self, x):\n        return self._far(x)\n")
    guard = lambda call: f"import torch\nfrom lib import entry, generic, Tool\n\n\ndef go(x):\n    if torch.cuda.is_available():\n        x = {call}\n    return x\n"
    want = {"a.py": ("none", "calls `_kernel`, whose body uses `flash_attn_func`"),
            "b.py": ("safe", None),
            "c.py": ("none", "calls `Tool`, whose body uses `flash_attn_func`")}
    calls = {"a.py": "entry(x)", "b.py": "generic(x)", "c.py": "Tool().run(x)"}
    os.makedirs("p", exist_ok=True)
    write("p/setup.py", "")
    write("p/lib.py", lib)
    for name, call in calls.items():
        write(f"p/{name}", guard(call))
    for order in (["a.py", "b.py", "c.py"], ["c.py", "b.py", "a.py"]):
        r = run("check", "--no-cache", "--threads", "1", "--format", "json", "--exit-zero", *order, cwd="p")
        found = {x["path"].split("/")[-1]: x for x in r.json() if x["code"] == "XPU105"}
        for name, (kind, why) in want.items():
            check(name in found, "the guard is found", (name, found.keys()))
            got = (found[name].get("fix") or {}).get("applicability", "none")
            eq(got, kind, f"applicability of {name} ({order})")
            check(why is None or why in found[name]["message"], "the reason", (name, found[name]["message"]))
        # the same alone
        for name, (kind, _) in want.items():
            r1 = run("check", "--no-cache", "--format", "json", "--exit-zero", name, cwd="p")
            one = [x for x in r1.json() if x["code"] == "XPU105"]
            eq([(x.get("fix") or {}).get("applicability", "none") for x in one], [kind], f"{name} alone")


# Many guard files of one project calling the same callees of its other modules: at several call depths, through
# a package's re-export, a cycle between two modules, a chain past the depth xpuify follows, a CUDA library.
KEPT_LIB = {
    "pkg/__init__.py": "from .core import shared_generic, shared_cuda\n",
    "pkg/core.py": ("import torch\nfrom flash_attn import flash_attn_func\nfrom .deep import level1\nfrom . import cyc_a\n\n\n"
                    "def shared_generic(x):\n    return x * 2 + level1(x)\n\n\n"
                    "def shared_cuda(x):\n    return flash_attn_func(x, x, x)\n\n\n"
                    "def cycle(x):\n    return cyc_a.a(x)\n"),
    "pkg/deep.py": ("def level1(x):\n    return level2(x) + 1\n\n\ndef level2(x):\n    return level3(x) + 1\n\n\n"
                    "def level3(x):\n    return level4(x) + 1\n\n\ndef level4(x):\n    return x\n"),
    "pkg/cyc_a.py": "from .cyc_b import b\n\n\ndef a(x):\n    return b(x - 1) if x else x\n",
    "pkg/cyc_b.py": "from . import cyc_a\n\n\ndef b(x):\n    return cyc_a.a(x) + 1\n",
}
KEPT_CALLS = ["shared_generic(x)", "shared_cuda(x)", "core.cycle(x)", "helper(x)", "deep.level3(x)", "deep.level1(x)"]


def kept_project(n):
    for path, text in KEPT_LIB.items():
        write(os.path.join("kp", path), text)
    for i in range(n):
        calls = KEPT_CALLS[i % len(KEPT_CALLS):] + KEPT_CALLS[:i % len(KEPT_CALLS)]  # each file in another order
        body = "".join(f"\n\ndef g{k}(x):\n    if torch.cuda.is_available():\n        x = {c}\n    return x\n"
                       for k, c in enumerate(calls))
        write(f"kp/pkg/user{i}.py", "import torch\nfrom pkg import shared_generic, shared_cuda\nfrom pkg import core, deep\n\n\n"
              "def helper(x):\n    return core.cycle(shared_generic(x))\n" + body)


def test_kept_callee_verdicts_are_the_walked_ones(d):
    """Verdicts of callees in other modules are kept for the run (and for later threads): a check of twelve guard
    files that call the same callees in other orders gives exactly what walking every callee each time gives
    (XPUIFY_NO_GUARD_MEMO=1), with one thread and with two, over the directory and file by file."""
    kept_project(12)
    time.sleep(3.5)  # modules changed less than 3 s before they are read are read again each time (GUARD_RACY_NS)
    runs = {}
    for memo in (True, False):
        for threads in ("1", "2"):
            env = {} if memo else {"XPUIFY_NO_GUARD_MEMO": "1"}
            r = run("check", "--no-cache", "--threads", threads, "--format", "json", "--exit-zero", "pkg", cwd="kp", env=env)
            check(r.code == 0, "check failed", r)
            runs[memo, threads] = r.out
    found = [x for x in json.loads(runs[True, "1"]) if x["code"] == "XPU105"]
    kinds = {(x.get("fix") or {}).get("applicability", "none") for x in found}
    check(len(found) == 12 * len(KEPT_CALLS) and {"safe", "none"} <= kinds, "every guard judged, both ways", found)
    for key, out in runs.items():
        eq(out, runs[False, "1"], f"kept verdicts {key} against walked ones")
    # a file checked alone reads its callees afresh: the same verdicts and reasons
    alone = {x["message"] for x in run("check", "--no-cache", "--format", "json", "--exit-zero", "pkg/user5.py", cwd="kp").json()
             if x["code"] == "XPU105"}
    eq(alone, {x["message"] for x in found if x["path"].endswith("user5.py")}, "user5.py alone")


def test_second_fix_judges_as_the_first(d):
    """The guard over a callee whose CUDA call its own module's fixes port (`torch.cuda.synchronize()` in
    pkg/util.py) is judged with those fixes made where the run fixes that module too (`fix .`, `check .`: safe) and
    unsafe where it does not (pkg/train.py alone: a module whose own fixes the run does not see). After `fix .`, the
    guards left keep their verdicts, a second `fix` changes nothing, and pkg/train.py checked alone still calls the
    ported callee unproven (the helper stands for the CUDA it replaced, in a module this run does not fix)."""
    shutil.copytree(XMOD, "xmod")
    line = read("xmod/pkg/train.py").split("\n").index("def synchronize_elsewhere(x):") + 2

    def verdicts(path):
        return {x["line"]: applicability({x["line"]: x}, x["line"])
                for x in run("check", "--no-cache", "--format", "json", "--exit-zero", path, cwd="xmod").json()
                if x["code"] == "XPU105" and x["path"].endswith("train.py")}

    alone, together = verdicts("pkg/train.py"), verdicts(".")
    eq((alone[line], together[line]), ("unsafe", "safe"), "alone, and with pkg/util.py fixed in the same run")
    eq({k: v for k, v in alone.items() if k != line}, {k: v for k, v in together.items() if k != line}, "the others")
    r = run("fix", "-q", "--no-cache", "--target", "compat", ".", cwd="xmod")
    check(r.code in (0, 1), "fix failed", r)
    check("xpuify_device.synchronize()" in read("xmod/pkg/util.py"), "the callee's own call is ported", read("xmod/pkg/util.py"))
    guard = "    if xpuify_device.is_available():  # expect: XPU105 (fix: unsafe)\n        print(util.sync(x))"
    check(guard in read("xmod/pkg/train.py"), "its guard rewritten in the same run", read("xmod/pkg/train.py"))
    after = verdicts(".")
    eq(sorted(after.values()), sorted(v for v in together.values() if v != "safe"), "the guards left keep their verdicts")
    r2 = run("fix", "-q", "--no-cache", "--target", "compat", "--diff", ".", cwd="xmod")
    eq((r2.code, r2.out), (0, ""), "second fix is a no-op")
    # the same guard, unfixed, over the ported callee: unproven when pkg/util.py is not in the run, safe when it is
    src = read("xmod/pkg/train.py").replace(guard, guard.replace("xpuify_device.is_available()", "torch.cuda.is_available()"))
    with open("xmod/pkg/train.py", "w") as f:
        f.write(src)
    line = src.split("\n").index("def synchronize_elsewhere(x):") + 2
    r = run("check", "--no-cache", "--format", "json", "--exit-zero", "pkg/train.py", cwd="xmod")
    msg = [x["message"] for x in r.json() if x["code"] == "XPU105" and x["line"] == line]
    check(msg and "uses `xpuify_device` where its module's fixes ported CUDA code" in msg[0], "alone: unproven", msg)
    eq(verdicts(".")[line], "safe", "with pkg/util.py in the run: its helper calls are device-generic")


TEST_MODULE = """import unittest

import torch

TEST_CUDA = torch.cuda.is_available()


class T(unittest.TestCase):
    @unittest.skipIf(not TEST_CUDA, "needs a GPU")
    def test_add(self):
        x = torch.ones(2).cuda()
        self.assertEqual((x + 1).sum().item(), 4.0)
"""


def test_a_test_module_s_own_names(d):
    """A test module's module-level name holding the test (`TEST_CUDA = torch.cuda.is_available()`) is followed into
    its uses where no file of the project imports that module (a test runner collects it): safe here. Once another
    module imports it (`from tests.test_a import TEST_CUDA`), its names may be read elsewhere: unsafe, also with the
    results cache warm (the project's imports are part of the key)."""
    write("p/tests/__init__.py", "")
    write("p/tests/test_a.py", TEST_MODULE)

    def kind():
        r = run("check", "--format", "json", "--exit-zero", "--cache-dir", "../cache", "tests/test_a.py", cwd="p")
        f = [x for x in r.json() if x["code"] == "XPU105"]
        check(len(f) == 1, "one guard", f)
        return (f[0].get("fix") or {}).get("applicability", "none"), f[0]["message"]

    for _ in range(2):
        eq(kind()[0], "safe", "nobody imports the test module")
    write("p/tests/test_c.py", "from tests.test_a import TEST_CUDA\n")
    k, m = kind()
    eq(k, "unsafe", m)
    check("stores the test in the module-level `TEST_CUDA`, which other modules may import" in m, "said", m)


TESTING = """import torch

devices = [torch.device("cpu")]
if torch.cuda.is_available():
    devices += [torch.device("cuda:0")]
"""


def test_device_list_of_a_package_with_compiled_ops(d):
    """pytorch_cluster's torch_cluster/testing.py: the device list every op test runs on gets CUDA where CUDA is. The
    project's setup.py builds a CUDAExtension: its ops have CPU and CUDA kernels only, so the list keeps its CUDA test
    (each op would fail its device check on an XPU or MPS host), also in the fixer's later passes, which read the
    device string as the first pass ported it; without a CUDA extension the list takes the run-time device."""
    for with_ext in (True, False):
        top = "ext" if with_ext else "plain"
        write(f"{top}/setup.py", "from setuptools import setup\nfrom torch.utils.cpp_extension import " +
              ("CUDAExtension\nsetup(name='pkg', ext_modules=[CUDAExtension('pkg._C', ['a.cu'])])\n" if with_ext
               else "CppExtension\nsetup(name='pkg', ext_modules=[CppExtension('pkg._C', ['a.cpp'])])\n"))
        write(f"{top}/pkg/__init__.py", "")
        write(f"{top}/pkg/testing.py", TESTING)
        found = xpu105(f"{top}/pkg/testing.py")
        eq(applicability(found, 4), "none" if with_ext else "safe", top)
        if with_ext:
            check("compiled ops have CPU and CUDA kernels only" in found[4]["message"], "said", found[4]["message"])
        r = run("fix", "-q", "--no-cache", "--target", "compat", ".", cwd=top)
        check(r.code in (0, 1), "fix failed", r)
        out = read(f"{top}/pkg/testing.py")
        check(("if torch.cuda.is_available():" in out) == with_ext, f"{top}: the guard", out)
        check("torch.device(xpuify_device.device_str(0))" in out, f"{top}: the device string", out)


OPS = """import torch


def nms_rotated(boxes, scores, t):
    return torch.ops.{ns}.nms_rotated(boxes, scores, t)
"""

OP_TEST = """import unittest

import torch

from pkg.layers import nms_rotated


class T(unittest.TestCase):
    @unittest.skipIf(not torch.cuda.is_available(), "CUDA not available")
    def test_nms_rotated_cuda(self):
        boxes = torch.rand(4, 5)
        keep = nms_rotated(boxes.to("cuda"), torch.rand(4).to("cuda"), 0.5)
        self.assertEqual(keep.dim(), 1)

    def test_devices(self):
        for device in ["cpu"] + (["cuda"] if torch.cuda.is_available() else []):
            keep = nms_rotated(torch.rand(4, 5, device=device), torch.rand(4, device=device), 0.5)
            self.assertEqual(keep.dim(), 1)

    def test_plain_devices(self):
        for device in ["cpu"] + (["cuda"] if torch.cuda.is_available() else []):
            self.assertEqual(torch.ones(2, device=device).sum().item(), 2)
"""


def test_a_test_of_a_compiled_op(d):
    """detectron2's tests/layers/test_nms_rotated.py: a CUDA-skipped test calls the project's own compiled operator
    (`torch.ops.detectron2.nms_rotated`) through a function in another module. With setup.py building a CUDAExtension
    the operator has CPU and CUDA kernels only: the test routes CUDA devices to a CUDA kernel and keeps its CUDA test
    (no fix, not even an unsafe one: on an XPU host the operator has no kernel). Another library's operator
    (torchvision's may have XPU kernels), or a project with no CUDA extension, leaves the guard unproven."""
    for top, ext, ns in (("ext", True, "pkg"), ("other", True, "torchvision"), ("plain", False, "pkg")):
        write(f"{top}/setup.py", "from setuptools import setup\nfrom torch.utils.cpp_extension import " +
              ("CUDAExtension\nsetup(name='pkg', ext_modules=[CUDAExtension('pkg._C', ['a.cu'])])\n" if ext
               else "CppExtension\nsetup(name='pkg', ext_modules=[CppExtension('pkg._C', ['a.cpp'])])\n"))
        write(f"{top}/pkg/__init__.py", "")
        write(f"{top}/pkg/layers.py", OPS.replace("{ns}", ns))
        write(f"{top}/tests/test_ops.py", OP_TEST)
        r = run("check", "--no-cache", "--format", "json", f"{top}/tests/test_ops.py")
        check(r.code in (0, 1), "check failed", r)
        found = {(x["line"], x["code"]): x for x in r.json()}
        own = top == "ext"
        if own:  # CUDA by design: XPU812 in place of XPU105, over the skipped test, with no fix
            check((9, "XPU105") not in found, "no XPU105", found)
            x = found.get((9, "XPU812"))
            check(x is not None and not x.get("fix"), "XPU812 with no fix", found)
            check("compiled by this project for the CPU and CUDA only" in x["message"], "said", x["message"])
            eq((x["scope"]["line"], x["scope"]["end_line"]), (9, 13), "the scope: the decorated test")
            # a device list a loop runs over, whose body calls the operator: the loop is the scope; a loop of plain
            # torch keeps its guidance (its "cuda" is no device the fix ports)
            x = found.get((16, "XPU812"))
            check(x is not None and (x["scope"]["line"], x["scope"]["end_line"]) == (16, 18), "the loop", found)
            check((16, "XPU105") not in found and (21, "XPU105") in found and (21, "XPU812") not in found, "loops", found)
            r = run("check", "--no-cache", "--format", "json", "--ignore", "XPU812", f"{top}/tests/test_ops.py")
            check(not [x for x in r.json() if x["line"] == 9], "nothing where XPU812 is off", r.json())
        else:
            eq(applicability(xpu105(f"{top}/tests/test_ops.py"), 9), "unsafe", top)
        r = run("fix", "-q", "--no-cache", "--unsafe-fixes", ".", cwd=top)
        check(r.code in (0, 1), "fix failed", r)
        out = read(f"{top}/tests/test_ops.py")
        check(("skipIf(not torch.cuda.is_available()" in out) == own, f"{top}: the guard after --unsafe-fixes", out)


def test_a_guard_of_a_cuda_extension_module(d):
    """fairseq's dynamic_convolution.py: `if torch.cuda.is_available():` returns a layer whose function calls
    `dynamicconv_cuda`, a module that fairseq/modules/dynamicconv_layer/setup.py builds from .cu sources, and the code
    after it is the fallback. The guard routes CUDA devices to a CUDA kernel: CUDA by design (XPU812 over the if
    statement, no fix). A module built from C++ sources alone is no CUDA kernel: a call into it is one xpuify cannot
    see into, as before."""
    for top, cu in (("cu", True), ("cpp", False)):
        write(f"{top}/setup.py", "from setuptools import setup\nsetup(name='pkg')\n")
        write(f"{top}/pkg/__init__.py", "")
        write(f"{top}/pkg/ops/__init__.py", "")
        write(f"{top}/pkg/ops/setup.py", "from setuptools import setup\nfrom torch.utils.cpp_extension import CppExtension\n"
              "setup(name='myconv', ext_modules=[CppExtension(name='myconv_cuda', sources=['myconv_cuda.cpp'" +
              (", 'myconv_cuda_kernel.cu'" if cu else "") + "])])\n")
        write(f"{top}/pkg/ops/layer.py", "import torch\nimport myconv_cuda\n\n\nclass MyConv(torch.nn.Module):\n"
              "    def forward(self, x):\n        return myconv_cuda.forward(x)\n")
        write(f"{top}/pkg/model.py", "import torch\n\n\ndef conv():\n    if torch.cuda.is_available():\n"
              "        from pkg.ops.layer import MyConv\n\n        return MyConv()\n    return torch.nn.Identity()\n")
        r = run("check", "--no-cache", "--format", "json", f"{top}/pkg/model.py")
        check(r.code in (0, 1), "check failed", r)
        found = {(x["line"], x["code"]): x for x in r.json()}
        if cu:
            x = found.get((5, "XPU812"))
            check(x is not None and (5, "XPU105") not in found, "XPU812 in place of XPU105", found)
            check("compiles with CUDA kernels" in x["message"], "said", x["message"])
            eq((x["scope"]["line"], x["scope"]["end_line"]), (5, 8), "the scope: the if statement")
            # the results cache: a warm run sees a setup.py that no longer builds the module from .cu sources
            r = run("check", "--format", "json", f"{top}/pkg/model.py", cwd=".")
            check((5, "XPU812") in {(x["line"], x["code"]) for x in r.json()}, "cached", r.json())
            write(f"{top}/pkg/ops/setup.py", read(f"{top}/pkg/ops/setup.py").replace(", 'myconv_cuda_kernel.cu'", ""))
            r = run("check", "--format", "json", f"{top}/pkg/model.py", cwd=".")
            check((5, "XPU105") in {(x["line"], x["code"]) for x in r.json()}, "the cache follows setup.py", r.json())
        else:
            x = found.get((5, "XPU105"))
            check(x is not None and (5, "XPU812") not in found and "myconv_cuda" in x["message"], "as before", found)


SAME_RUN = {
    "pkg/__init__.py": "",
    # fairseq's utils: the current device's index only as a caller's device's default, made the run-time device where
    # it is used; the move passed to a helper that calls it from a closure
    "pkg/utils.py": """import torch

from pkg import other


def apply_to_sample(f, sample):
    if hasattr(sample, "__len__") and len(sample) == 0:
        return {}

    def _apply(x):
        if torch.is_tensor(x):
            return f(x)
        elif isinstance(x, dict):
            return {key: _apply(value) for key, value in x.items()}
        else:
            return x

    return _apply(sample)


def move_to_cuda(sample, device=None):
    device = device or torch.cuda.current_device()

    def _move_to_cuda(tensor):
        return tensor.to(device=device, non_blocking=True)

    return apply_to_sample(_move_to_cuda, sample)


def capability(sample):
    device = torch.cuda.current_device()
    print(device)
    return move_to_cuda(sample, device)


def warm(x):
    # a guard of its own over another module: its analysis, asked for by app/main.py's guards, reads pkg/other.py
    if torch.cuda.is_available():
        other.noop()
    return x
""",
    "pkg/other.py": "def noop():\n    return None\n",
    "app/__init__.py": "",
    "app/main.py": """import torch

from pkg import utils


def go(x):
    use_cuda = torch.cuda.is_available()
    if use_cuda:
        x = utils.move_to_cuda({"x": x})["x"]
    return x


def index(x):
    if torch.cuda.is_available():
        x = utils.capability(x)
    return x
""",
}

# records where the fixed code sends tensors (Debian's torch has no MPS: `.to()` is recorded, not run)
SAME_RUN_DRIVER = """import torch
seen = []
torch.Tensor.to = lambda self, *a, **k: (seen.append(str(k.get("device", a[0] if a else None))), self)[1]
from app import main
main.go(torch.ones(2))
print(seen)
"""


def test_guards_count_the_fixes_of_modules_fixed_in_the_same_run(d):
    """fairseq's entry points guard `utils.move_to_cuda(sample)` with torch.cuda.is_available(): move_to_cuda's index
    (`device or torch.cuda.current_device()`) goes only where utils.py's own fixes make it the run-time device, and it
    passes its nested move to apply_to_sample, which calls it from a closure (the parameter's argument is read). With
    pkg/utils.py fixed in the same run (`check .`, `fix .`) the guard is safe; checked alone, the index is CUDA's. An
    index used elsewhere (printed) keeps its guard. The results cache keeps the two runs apart. The fixed program
    sends the sample to the picked accelerator, and does nothing on the CPU, as the original did without CUDA."""
    for path, text in SAME_RUN.items():
        write(os.path.join("p", path), text)
    lines = SAME_RUN["app/main.py"].split("\n")
    go, index = lines.index("def go(x):") + 2, lines.index("def index(x):") + 2

    def found(*args):
        r = run("check", "--format", "json", "--exit-zero", "--cache-dir", "../cache", *args, cwd="p")
        return {x["line"]: x for x in r.json() if x["code"] == "XPU105" and x["path"].endswith("main.py")}

    for _ in range(2):  # computed, then from the cache
        together, alone = found("."), found("app/main.py")
        eq((applicability(together, go), applicability(alone, go)), ("safe", "none"), "same run / alone")
        check("reads a CUDA-only result (`current_device`)" in alone[go]["message"], "why, alone", alone[go]["message"])
        eq((applicability(together, index), applicability(alone, index)), ("none", "none"), "an index used elsewhere")
    # warm: every entry holds (the analysis of pkg/utils.py done for app/main.py's guards read pkg/other.py without
    # asking the run about it: no dependency on it is noted, which once made every warm run miss)
    for expect in ("computed", "warm"):
        r = run("check", "-q", "--cache-dir", "../cache", ".", cwd="p", env={"XPUIFY_CACHE_STATS": "1"})
    check(re.search(r"cache: [1-9]\d* hits, 0 misses", r.err), "a warm run misses nothing", r.err)
    # a shard's guards are judged as the whole run's (the files fixed together are all of them)
    shards = {}
    for k in (1, 2):
        shards.update(found("--no-cache", "--shard", f"{k}/2", "."))
    eq({ln: applicability(shards, ln) for ln in (go, index)}, {go: "safe", index: "none"}, "sharded")
    shutil.copytree("p", "orig")
    r = run("fix", "-q", "--no-cache", "--target", "compat", ".", cwd="p")
    check(r.code in (0, 1), "fix failed", r)
    out = read("p/app/main.py")
    check("use_cuda = xpuify_device.is_available()" in out and "    if torch.cuda.is_available():\n        x = utils.capability(x)" in out,
          "the guards", out)
    check("tensor.to(device=xpuify_device.device_str(device), non_blocking=True)" in read("p/pkg/utils.py"), "the callee",
          read("p/pkg/utils.py"))
    need_python(PY, [("torch", "python3-torch")])
    write("p/drive.py", SAME_RUN_DRIVER)
    write("orig/drive.py", SAME_RUN_DRIVER)
    cpu = {"CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": ""}
    eq(runs("p/drive.py", {**cpu, "XPUIFY_DEVICE": "cpu"}), runs("orig/drive.py", cpu), "the CPU: as the original")
    eq(runs("p/drive.py", {**cpu, "XPUIFY_DEVICE": "mps"}), "['mps:0']\n", "an accelerator: the sample goes there")


def test_cached_verdict_follows_its_callee(d):
    """A verdict read from another module is cached with that module's content: with the results cache on, editing
    only the callee's file changes the guard's finding (its own file unchanged), and editing it back restores it."""
    shutil.copytree(XMOD, "xmod")
    args = ["check", "--format", "json", "--exit-zero", "--cache-dir", "../cache", "pkg/train.py"]
    line = read("xmod/pkg/train.py").split("\n").index("def generic_function(x):") + 2

    def verdict():
        r = run(*args, cwd="xmod", env={"XPUIFY_CACHE_STATS": "1"})
        check(r.code == 0, "check failed", r)
        hits = re.search(r"cache: (\d+) hits, (\d+) misses", r.err)
        check(hits, "cache statistics", r.err)
        found = {x["line"]: x for x in r.json() if x["code"] == "XPU105"}
        return applicability(found, line), int(hits.group(1))

    eq(verdict(), ("safe", 0), "first run: computed")
    eq(verdict(), ("safe", 1), "second run: from the cache")
    util = read("xmod/pkg/util.py")
    with open("xmod/pkg/util.py", "w") as f:
        f.write(util.replace("    return x * 2\n", "    return flash_attn.flash_attn_func(x, x, x)\n"))
    eq(verdict(), ("none", 0), "the callee now calls a CUDA library: the cached entry no longer holds")
    eq(verdict(), ("none", 1), "and the new verdict is cached")
    with open("xmod/pkg/util.py", "w") as f:
        f.write(util)
    eq(verdict(), ("safe", 0), "edited back: computed again (a file has one entry, the last run's)")
    eq(verdict(), ("safe", 1), "and cached again")


if __name__ == "__main__":
    main(globals())
