"""Golden project fixtures for the project model (fixtures/golden/projects/NAME): each project's input/ tree is
fixed with default options (plain `xpuify fix`), every file under expected/ must match the fixed tree byte for byte,
no other file may change, the device helpers written must be exactly those listed in helpers.txt (one per import
root), a second fix must change nothing, and each command of imports.txt -- every changed module imported or run
the way its project does it -- must succeed with /usr/bin/python3 (Debian's torch) and CUDA hidden."""
import filecmp
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import ROOT, check, eq, main, read, run, skip  # noqa: E402

PROJECTS = os.path.join(ROOT, "fixtures", "golden", "projects")
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def files_under(top):
    out = set()
    for base, dirs, files in os.walk(top):
        dirs[:] = [x for x in dirs if x != "__pycache__"]
        for f in files:
            if f != ".keep":  # (keeps an empty expected/ in git)
                out.add(os.path.relpath(os.path.join(base, f), top))
    return out


def has_torch():
    return subprocess.run([PY, "-c", "import torch"], capture_output=True).returncode == 0


def project_case(name):
    def test(d):
        src = os.path.join(PROJECTS, name)
        tree = os.path.join(d, name)
        shutil.copytree(os.path.join(src, "input"), tree)
        r = run("fix", "-q", ".", cwd=tree)
        check(r.code in (0, 1), "fix failed", r)
        expected = os.path.join(src, "expected")
        want = files_under(expected)
        helpers = {h.strip() for h in read(os.path.join(src, "helpers.txt")).splitlines() if h.strip()}
        before = files_under(os.path.join(src, "input"))
        after = files_under(tree)
        eq(sorted(after - before), sorted(helpers), f"{name}: the helpers written (one per import root)")
        for p in sorted(before):
            if p in want:
                eq(read(os.path.join(tree, p)), read(os.path.join(expected, p)), f"{name}/{p}")
            else:
                check(filecmp.cmp(os.path.join(tree, p), os.path.join(src, "input", p), shallow=False),
                      f"{name}/{p} changed but is not in expected/", read(os.path.join(tree, p)))
        for p in want:
            check(p in before, f"{name}: expected/{p} has no input")
        r2 = run("fix", "-q", "--diff", ".", cwd=tree)
        eq((r2.code, r2.out), (0, ""), f"{name}: a second fix changes nothing")
        if not has_torch():
            skip(f"{PY} has no torch: the import commands need it")
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PY=PY, PYTHONPATH="", PYTHONDONTWRITEBYTECODE="1")
        for line in read(os.path.join(src, "imports.txt")).splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            p = subprocess.run(["bash", "-c", line], cwd=tree, env=env, capture_output=True, text=True, timeout=300)
            eq(p.returncode, 0, f"{name}: `{line}` failed after the fix:\n{p.stderr[-3000:]}")
    return test


for _name in sorted(os.listdir(PROJECTS)):
    globals()[f"test_project_{_name}"] = project_case(_name)


def test_withheld_fixes_say_why(d):
    """The exec-loaded config keeps its finding, and the finding says why it was not fixed."""
    tree = os.path.join(d, "p")
    shutil.copytree(os.path.join(PROJECTS, "execconfig", "input"), tree)
    r = run("check", ".", cwd=tree)
    eq(r.code, 1, r)
    check("not fixed: this file is a config loaded by exec" in r.out, "the finding says why", r)
    r = run("fix", ".", cwd=tree)
    check("not fixed: this file is a config loaded by exec" in r.out, "fix's remaining finding says why", r)


def test_dual_run_check_and_fix_agree(d):
    """A module imported from its package and also run by path gets the guarded fallback import: `check` offers a
    fix for every finding `fix` then fixes (none is withheld as "may also run by path"), fix leaves nothing that
    check reports as fixable, and the fixed modules run by path, with -m and imported (CRLF files too)."""
    tree = os.path.join(d, "p")
    shutil.copytree(os.path.join(PROJECTS, "dualrun", "input"), tree)
    # the nested module with Windows line endings: the fallback is inserted with them and a second fix finds it
    probe = os.path.join(tree, "pkg", "sub", "probe.py")
    with open(probe, "rb") as f:
        text = f.read()
    with open(probe, "wb") as f:
        f.write(text.replace(b"\n", b"\r\n"))
    r = run("check", "--format", "json", ".", cwd=tree)
    eq(r.code, 1, r)
    found = r.json()
    check(not any("may also run by path" in x["message"] for x in found), "no fix is withheld", r.out)
    fixable = [x for x in found if x.get("fix") and x["fix"].get("applicability") == "safe"]
    check(fixable, "check offers safe fixes", r.out)
    r = run("fix", ".", cwd=tree)
    check(r.code in (0, 1), "fix failed", r)
    check(f"Fixed {len(fixable)} findings" in r.out, f"fix fixes the {len(fixable)} safe fixes check offers", r.out)
    with open(probe, "rb") as f:
        fixed = f.read()
    check(b"try:\r\n    from . import xpuify_device\r\nexcept ImportError:" in fixed, "CRLF kept", fixed)
    check(b"\n" not in fixed.replace(b"\r\n", b""), "no bare LF in a CRLF file", fixed)
    r = run("fix", "-q", "--diff", ".", cwd=tree)
    eq((r.code, r.out), (0, ""), "a second fix changes nothing")
    r = run("check", "--format", "json", ".", cwd=tree)
    left = [x for x in r.json() if x.get("fix") and x["fix"].get("applicability") == "safe"]
    eq(left, [], "check after fix: nothing safe left to fix")
    if not has_torch():
        skip(f"{PY} has no torch")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONPATH="", PYTHONDONTWRITEBYTECODE="1")
    for cmd, cwd in (([PY, "pkg/sub/probe.py"], tree), ([PY, "-m", "pkg.sub.probe"], tree),
                     ([PY, "-c", "import pkg.sub.probe"], tree), ([PY, "-m", "probe"], os.path.join(tree, "pkg", "sub"))):
        p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
        eq(p.returncode, 0, f"{cmd} in {cwd}: {p.stderr[-2000:]}")


def test_helper_has_no_import_side_effects(d):
    """Importing the helper imports no torch and probes no device; the device is picked at first use, after the
    environment set-up that follows the import, and cached."""
    helper = os.path.join(d, "xpuify_device.py")
    with open(os.path.join(d, "a.py"), "w") as f:
        f.write("import torch\ntorch.cuda.synchronize()\n")
    r = run("fix", "-q", "--target", "compat", "a.py", cwd=d)
    check(r.code in (0, 1), "fix failed", r)
    check(os.path.exists(helper), "helper written")
    if not has_torch():
        skip("no torch")
    code = ("import sys, os\nimport xpuify_device as x\n"
            "assert 'torch' not in sys.modules, 'the helper imported torch'\n"
            "os.environ['XPUIFY_DEVICE'] = 'cpu'\n"
            "assert x.DEV == 'cpu' and x._DEV == 'cpu'\n"
            "x.synchronize(); x.synchronize(0); x.set_device('cuda:0'); x.manual_seed_all(0)\n"
            "assert x.current_device() == 0 and x.device_count() == 0 and not x.is_available()\n"
            "with x.stream(x.Stream()): x.current_stream().synchronize()\n"
            "assert x.memory_allocated() == 0 and x.mem_get_info() == (0, 0)\n"
            "assert issubclass(x.OutOfMemoryError, BaseException)\n")
    p = subprocess.run([PY, "-c", code], cwd=d, capture_output=True, text=True,
                       env=dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONPATH=""))
    eq(p.returncode, 0, p.stderr)


def test_setup_py_gets_no_helper_beside_it(d):
    """A stand-alone setup.py keeps its finding and says why it was not fixed (pip's PEP 517 backend does not put
    the project's directory on sys.path); a setup.py that imports its own package gets the helper from there."""
    tree = os.path.join(d, "p")
    shutil.copytree(os.path.join(PROJECTS, "setuppy", "input"), tree)
    r = run("fix", ".", cwd=tree)
    check("contrib/setup.py:5:19: XPU201" in r.out and "not fixed: this file is setup.py" in r.out, "said why", r)
    check(not os.path.exists(os.path.join(tree, "contrib", "xpuify_device.py")), "no helper beside it")
    check("from mypkg import xpuify_device" in read(os.path.join(tree, "setup.py")), "the package's helper")



if __name__ == "__main__":
    main(globals())
