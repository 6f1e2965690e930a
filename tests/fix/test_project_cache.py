"""The project model under the results cache: each file's import summary is kept under its stamp, so a warm run
builds the model without reading unchanged files, and a change that moves a file's helper import (an __init__.py
added or removed, packaging metadata's package directory, an import in another file) changes the warm run's fix
exactly as it changes a run without the cache. The cache trusts only stamps older than a few seconds before its run
(a write in the same clock tick would keep the times), so the trees are made, then aged by one wait, then checked."""
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import check, eq, main, need_tool, run, write  # noqa: E402

CUDA = "import torch\n\n\ndef f():\n    torch.cuda.synchronize()\n"


def helper_imports(tree, cache):
    """The helper import each file's fix inserts, by path, from `check --format json` (with the cache or without)."""
    args = ["check", "--format", "json", "--exit-zero", "--target", "compat"]
    args += ["--cache-dir", cache] if cache else ["--no-cache"]
    r = run(*args, ".", cwd=tree, env={"XPUIFY_CACHE_STATS": "1"})
    eq(r.code, 0, r)
    out = {}
    for f in r.json():
        for e in (f.get("fix") or {}).get("edits", []):
            if "xpuify_device\n" in e["content"] and "import" in e["content"]:
                out[f["path"]] = e["content"].strip()
    return out, r.err


def warm_equals_cold(tree, cache, what):
    """The warm run (cache filled before) gives what a run without the cache gives, and used the cache."""
    warm, err = helper_imports(tree, cache)
    cold, _ = helper_imports(tree, None)
    eq(warm, cold, f"{what}: the warm run's helper imports are those of a run without the cache")
    check(" 0 files unchanged by size and times" not in err, f"{what}: the warm run trusted stamps", err)
    return warm


def scenario_trees(d):
    trees = {}
    # an __init__.py added: pkg/mod.py turns from a script beside its helper into a package module
    t = trees["init"] = os.path.join(d, "init")
    write(os.path.join(t, "setup.py"), "from setuptools import setup\nsetup(name='x')\n")
    write(os.path.join(t, "pkg", "mod.py"), CUDA)
    write(os.path.join(t, "other.py"), "import os\n")
    # packaging metadata: setup.py's package_dir makes lib/ the import root of foo
    t = trees["setup"] = os.path.join(d, "setup")
    write(os.path.join(t, "setup.py"), "from setuptools import setup\nsetup(name='x')\n")
    write(os.path.join(t, "lib", "foo", "mod.py"), CUDA)
    write(os.path.join(t, "tests", "test_mod.py"), "import foo.mod\n")
    # an import in another file: main.py importing models.bs.mod makes it a module of the package `models`
    t = trees["import"] = os.path.join(d, "import")
    write(os.path.join(t, "pyproject.toml"), "[project]\nname = 'x'\n")
    write(os.path.join(t, "models", "bs", "mod.py"), CUDA)
    write(os.path.join(t, "main.py"), "import os\n")
    return trees


def test_warm_runs_follow_the_project_model(d):
    trees = scenario_trees(d)
    caches = {k: os.path.join(d, "cache-" + k) for k in trees}
    time.sleep(3.5)  # older than the cache's racy margin: the first run keeps every stamp
    for k, t in trees.items():
        helper_imports(t, caches[k])  # fills the cache

    # an unchanged tree: served from the cache, as before
    t = trees["init"]
    eq(warm_equals_cold(t, caches["init"], "unchanged"), {"pkg/mod.py": "import xpuify_device"}, "a script's import")

    write(os.path.join(t, "pkg", "__init__.py"), "")
    eq(warm_equals_cold(t, caches["init"], "__init__.py added"), {"pkg/mod.py": "from . import xpuify_device"},
       "an __init__.py makes pkg a package: the import is relative")
    os.remove(os.path.join(t, "pkg", "__init__.py"))
    eq(warm_equals_cold(t, caches["init"], "__init__.py removed"), {"pkg/mod.py": "import xpuify_device"},
       "without the __init__.py the module is a script again")

    t = trees["setup"]
    eq(warm_equals_cold(t, caches["setup"], "setup.py unchanged"), {"lib/foo/mod.py": "import xpuify_device"},
       "lib/ is no import root yet")
    write(os.path.join(t, "setup.py"), "from setuptools import setup\nsetup(name='x', package_dir={\"\": \"lib\"})\n")
    eq(warm_equals_cold(t, caches["setup"], "package_dir added"), {"lib/foo/mod.py": "from . import xpuify_device"},
       "setup.py's package_dir makes foo a package imported from lib/")

    t = trees["import"]
    eq(warm_equals_cold(t, caches["import"], "no importer"), {"models/bs/mod.py": "import xpuify_device"},
       "nobody imports models.bs.mod yet")
    write(os.path.join(t, "main.py"), "import os\nimport models.bs.mod\n")
    eq(warm_equals_cold(t, caches["import"], "import added"), {"models/bs/mod.py": "from .. import xpuify_device"},
       "main.py's import makes models.bs.mod a package module: the helper goes in models/")
    write(os.path.join(t, "main.py"), "import os\n")
    eq(warm_equals_cold(t, caches["import"], "import removed"), {"models/bs/mod.py": "import xpuify_device"},
       "the import removed again")


def test_warm_run_reads_no_unchanged_file(d):
    """With every stamp trusted, the model reads no file: only files with findings are opened (their text is in
    the report), not the project's other modules."""
    need_tool("strace", "strace")
    t = os.path.join(d, "p")
    write(os.path.join(t, "setup.py"), "from setuptools import setup\nsetup(name='x')\n")
    write(os.path.join(t, "pkg", "__init__.py"), "")
    write(os.path.join(t, "pkg", "mod.py"), CUDA)
    for i in range(5):
        write(os.path.join(t, "pkg", f"plain{i}.py"), f"import os\nfrom pkg import mod\nX = {i}\n")
    cache = os.path.join(d, "cache")
    time.sleep(3.5)
    first, _ = helper_imports(t, cache)
    eq(first, {"pkg/mod.py": "from . import xpuify_device"}, "the package's import")
    log = os.path.join(d, "strace.log")
    from harness import XPUIFY
    # LeakSanitizer cannot run under ptrace (the sanitizer pass of CI): this counts the files opened, not leaks
    env = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    p = subprocess.run(["strace", "-f", "-e", "trace=open,openat", "-o", log, XPUIFY, "check", "--format", "json",
                        "--exit-zero", "--target", "compat", "--cache-dir", cache, "."], cwd=t, capture_output=True,
                       text=True, env=env)
    eq(p.returncode, 0, p.stderr)
    opened = [line for line in open(log) if ".py\"" in line and "ENOENT" not in line]
    eq([line for line in opened if "plain" in line], [], "the unchanged modules without findings are not read")
    check(any("mod.py" in line for line in opened), "the file with a finding is read for the report", opened)
    eq(json.loads(p.stdout)[0]["fix"]["edits"][0]["content"], "from . import xpuify_device\n", "the same fix")
    shutil.rmtree(cache)


def cuda_fix(tree, cache):
    """The applicability of the fix of the one `.cuda()` in use.py (its receiver's type unknown)."""
    args = ["check", "--format", "json", "--exit-zero", "--select", "XPU101"]
    args += ["--cache-dir", cache] if cache else ["--no-cache"]
    r = run(*args, ".", cwd=tree)
    eq(r.code, 0, r)
    return [(f["path"], (f.get("fix") or {}).get("applicability")) for f in r.json() if f.get("code")]


def test_warm_runs_see_a_cuda_method_of_another_file(d):
    """An unknown receiver's `.cuda()` is a safe fix only while no class of the project has a `cuda` method that does
    more than `.to()`: a fact of the whole project, kept in each file's summary. Adding such a method to another,
    unchanged-looking file (and removing it) must change the warm run's verdict as it changes a cold run's."""
    t = os.path.join(d, "p")
    write(os.path.join(t, "pyproject.toml"), "[project]\nname = 'x'\n")
    write(os.path.join(t, "use.py"), "import torch\n\n\ndef move(x):\n    return x.cuda()\n")
    write(os.path.join(t, "things.py"), "class Box:\n    def to(self, dev):\n        return self\n")
    cache = os.path.join(d, "cache")
    time.sleep(3.5)
    eq(cuda_fix(t, cache), [("use.py", "safe")], "no class of the project has its own cuda()")
    eq(cuda_fix(t, cache), cuda_fix(t, None), "warm as cold")
    write(os.path.join(t, "things.py"), "class Box:\n    def cuda(self):\n        self.on_gpu = True\n        return self\n")
    time.sleep(3.5)
    eq(cuda_fix(t, cache), [("use.py", "unsafe")], "Box.cuda() records state: x may be a Box")
    eq(cuda_fix(t, cache), cuda_fix(t, None), "warm as cold, once more")
    write(os.path.join(t, "things.py"), "class Box:\n    def to(self, dev):\n        return self\n")
    time.sleep(3.5)
    eq(cuda_fix(t, cache), [("use.py", "safe")], "the method removed again")


def test_the_helper_import_keeps_an_unknown_receiver_safe(d):
    """A file that already imports the device helper (an editor's quick fix added it before its fix-all) keeps the
    verdict of the file without it: the helper is no library whose objects have a `.cuda()` of their own."""
    t = os.path.join(d, "p")
    write(os.path.join(t, "pyproject.toml"), "[project]\nname = 'x'\n")
    write(os.path.join(t, "use.py"), "import torch\nimport xpuify_device\n\n\ndef move(x):\n    return x.cuda()\n")
    eq(cuda_fix(t, None), [("use.py", "safe")])
    write(os.path.join(t, "use.py"), "import torch\nimport leftpad\n\n\ndef move(x):\n    return x.cuda()\n")
    eq(cuda_fix(t, None), [("use.py", "unsafe")], "an unknown library keeps it unsafe")


if __name__ == "__main__":
    main(globals())
