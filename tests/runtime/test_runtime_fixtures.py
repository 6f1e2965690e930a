"""The runtime fixtures (fixtures/runtime/, listed in fixtures.tsv) on the CPU tier with Debian's torch
(/usr/bin/python3): each CUDA-only original fails on the CPU; `xpuify verify --target compat` fixes a copy
whose run matches the hand-written CPU reference (reference_cpu.py); the fixture directory is never
written. Also: verify catches a patched program that cannot run (the accelerator target needs torch >= 2.6,
which this torch is not)."""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import ROOT, XPUIFY, check, eq, main, need_python, need_tool, read, skip  # noqa: E402

PY = "/usr/bin/python3"
FIXTURES = os.path.join(ROOT, "fixtures", "runtime")


def fixtures():
    out = []
    with open(os.path.join(FIXTURES, "fixtures.tsv")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, entry, compare = line.rstrip("\n").split("\t")
            out.append((name, entry, compare.split()))
    return out


def torch_version():
    p = subprocess.run([PY, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else None


def tree_hash(root):
    h = hashlib.sha256()
    for base, dirs, files in sorted(os.walk(root)):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for f in sorted(files):
            p = os.path.join(base, f)
            h.update(os.path.relpath(p, root).encode())
            with open(p, "rb") as fh:
                h.update(fh.read())
    return h.hexdigest()


def verify(d, *args):
    e = dict(os.environ, TMPDIR=d, PYTHONDONTWRITEBYTECODE="1")
    e.pop("CUDA_VISIBLE_DEVICES", None)
    return subprocess.run([XPUIFY, "verify", *args], capture_output=True, text=True, env=e, timeout=600)


def make_test(name, entry, compare):
    def test(d):
        need_python(PY, [("torch", "python3-torch")])
        src = os.path.join(FIXTURES, name)
        before = tree_hash(src)
        # the original is CUDA-only: it fails on the CPU
        work = os.path.join(d, "direct")
        shutil.copytree(src, work)
        p = subprocess.run([PY, entry], cwd=work, capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
        check(p.returncode != 0, f"{name}/{entry} fails on the CPU before the fix", p.stdout + p.stderr)
        # verify: fix a copy, run both on the CPU tier, compare with the CPU reference
        p = verify(d, src, "--run", f"{PY} {entry}", "--reference", f"{PY} reference_cpu.py", "--devices", "cpu",
                   "--target", "compat", "--compare", *compare, "--format", "json", "--timeout", "300")
        check(p.returncode == 0, f"verify passes for {name}", p.stdout[-3000:] + p.stderr[-3000:])
        rep = json.loads(p.stdout)
        check(rep["fix"]["fixed"] > 0 and not rep["fix"]["errors"], "the copy was fixed", rep["fix"])
        runs = {(r["tier"], r["variant"]): r for r in rep["runs"]}
        eq(runs[("cpu", "original")]["verdict"], "fails")
        eq(runs[("cpu", "ref-cmd")]["verdict"], "ran")
        pr = runs[("cpu", "patched")]
        eq((pr["verdict"], pr["compared_with"], pr["equal"]), ("match", "ref-cmd/cpu", True), f"{name}: {pr}")
        check(pr["numbers"] >= 6, "numbers were compared", pr)
        eq(pr["max_abs"], 0, f"{name}: the patched CPU run reproduces the CPU reference exactly")
        check("original fails, patched runs and matches the reference command" in rep["summary"], "summary", rep)
        eq(tree_hash(src), before, f"fixtures/runtime/{name} was not written")
        eq([x for x in os.listdir(d) if x.startswith("xpuify-verify-")], [], "temporary directories removed")
    return test


for _name, _entry, _compare in fixtures():
    globals()["test_" + _name] = make_test(_name, _entry, _compare)


def test_the_demo_project_runs_on_the_cpu_once_fixed(d):
    """What `make demo` (the README's first command) shows: examples/train_cuda fails on the CPU, `xpuify fix
    --unsafe-fixes` ports a copy, the copy trains on the CPU, and a second fix changes nothing."""
    need_python(PY, [("torch", "python3-torch")])
    proj = os.path.join(d, "train_cuda")
    shutil.copytree(os.path.join(ROOT, "examples", "train_cuda"), proj)
    run_py = lambda: subprocess.run([PY, "train.py", "--epochs", "2"], cwd=proj, capture_output=True, text=True,
                                    timeout=300)
    before = run_py()
    check(before.returncode != 0, "the CUDA-only original fails on the CPU", before.stderr[-2000:])
    p = subprocess.run([XPUIFY, "fix", "--unsafe-fixes", proj], capture_output=True, text=True)
    check(p.returncode in (0, 1) and "Fixed" in p.stdout, "fix ran", p.stdout[-2000:] + p.stderr[-2000:])
    after = run_py()
    eq(after.returncode, 0, "the fixed copy runs on the CPU: " + after.stderr[-2000:])
    check("epoch 1 loss" in after.stdout and "on cpu" in after.stdout, "it trained", after.stdout)
    again = subprocess.run([XPUIFY, "fix", "--unsafe-fixes", "--diff", proj], capture_output=True, text=True)
    eq(again.returncode, 0, "a second fix changes nothing: " + again.stdout[-2000:])


def test_ddp_fixtures_free_the_process_group_without_the_gil(d):
    """torch 1.13 deadlocks when a DDP reducer is the last owner of a gloo process group: the group is destroyed
    with the GIL held while a gloo worker thread waits for the GIL to free a tensor (fixtures/runtime/README.md).
    The DDP fixtures free the DDP wrapper before destroy_process_group(); under gdb, the thread that destroys the
    group of ddp_torchrun's reference must not hold the GIL (it did, from Reducer::~Reducer, with the old order)."""
    need_python(PY, [("torch", "python3-torch")])
    need_tool("gdb", "gdb")
    work = os.path.join(d, "ddp_torchrun")
    shutil.copytree(os.path.join(FIXTURES, "ddp_torchrun"), work)
    env = dict(os.environ, MASTER_PORT=str(29500 + os.getpid() % 400), CUDA_VISIBLE_DEVICES="")
    p = subprocess.run(["gdb", "-batch", "-ex", "set breakpoint pending on", "-ex",
                        "break c10d::ProcessGroupGloo::~ProcessGroupGloo", "-ex", "run", "-ex", "bt 3", "-ex",
                        "print (int)PyGILState_Check()", "-ex", "kill", "--args", PY, "reference_cpu.py"],
                       cwd=work, capture_output=True, text=True, timeout=300, env=env)
    out = p.stdout + p.stderr
    check(re.search(r"Breakpoint 1(\.\d+)?, ", out), "the process group was destroyed while the program ran", out[-3000:])
    check("Reducer::~Reducer" not in out, "not by the DDP reducer", out[-3000:])
    # the spawned fixture cannot run under gdb here (its ranks are new processes): its rank function frees the DDP
    # wrapper before the group, as the torchrun one does (checked first: the GIL question below needs gdb to call a
    # function in the program)
    for f in ("train_ddp.py", "reference_cpu.py"):
        src = read(os.path.join(FIXTURES, "ddp", f))
        check(0 <= src.find("del ddp") < src.find("dist.destroy_process_group()"), f"ddp/{f} frees DDP first")
    if "Couldn't write extended state status" in out and "$1 = " not in out:
        # some kernels (virtual machines without the XSAVE layout gdb expects) refuse ptrace's register writes, so
        # gdb cannot call PyGILState_Check there; the destroyer's caller was checked above
        skip("gdb cannot call a function in the program on this machine (\"Couldn't write extended state status\")")
    check(re.search(r"^\$1 = 0$", out, re.M), "the destroying thread does not hold the GIL", out[-3000:])


def test_every_fixture_is_listed(d):
    dirs = sorted(x for x in os.listdir(FIXTURES) if os.path.isdir(os.path.join(FIXTURES, x)) and x != "__pycache__")
    eq(sorted(n for n, _, _ in fixtures()), dirs)
    for n, entry, _ in fixtures():
        check(os.path.exists(os.path.join(FIXTURES, n, entry)), f"{n}/{entry} exists")
        check(os.path.exists(os.path.join(FIXTURES, n, "reference_cpu.py")), f"{n} has a CPU reference")


def test_verify_catches_a_patched_program_that_cannot_run(d):
    """The accelerator target writes torch.accelerator calls; Debian's torch 1.13 has none, so the patched
    program fails and verify says so (exit 1), while the compat target passes (above)."""
    v = torch_version()
    check(v, "torch imports")
    major, minor = (int(x) for x in v.split(".")[:2])
    if (major, minor) >= (2, 6):
        return  # torch.accelerator exists: nothing to catch here
    p = verify(d, os.path.join(FIXTURES, "amp_train"), "--run", f"{PY} train.py", "--reference",
               f"{PY} reference_cpu.py", "--devices", "cpu", "--target", "accelerator", "--format", "json")
    eq(p.returncode, 1, p.stdout + p.stderr)
    rep = json.loads(p.stdout)
    pr = [r for r in rep["runs"] if r["variant"] == "patched"][0]
    eq(pr["verdict"], "FAILS")
    check("accelerator" in (pr["stderr_tail"] or ""), "the error names torch.accelerator", pr)


if __name__ == "__main__":
    main(globals())
