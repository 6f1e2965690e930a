"""`xpuify lsp` keeps the project model in step with the files: an __init__.py created or deleted on disk
(workspace/didChangeWatchedFiles), an import typed into another open buffer (didChange, unsaved) and closed again
(didClose: the file on disk counts again), or packaging metadata saved (didSave) move the helper import that the
quick fixes of the open documents insert, as `xpuify check` would compute it for the files as they are."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import check, eq, main, run, write  # noqa: E402
from lspclient import Server, edits_for, uri_of  # noqa: E402

CUDA = "import torch\n\n\ndef f():\n    torch.cuda.synchronize()\n"
WATCH = {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}}


FINDING = {}


def helper_import(s, uri):
    """The helper import line that the preferred quick fix of the XPU202 finding in uri inserts now (the finding
    is taken from the first publication: a publication that would say the same is not sent again)."""
    if uri not in FINDING:
        (FINDING[uri],) = [x for x in s.diagnostics(uri) if x["code"] == "XPU202"]
    diag = FINDING[uri]
    r = s.call("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": diag["range"],
                                           "context": {"diagnostics": [diag], "only": ["quickfix"]}})
    (fix,) = [a for a in r["result"] if a.get("isPreferred")]
    lines = [e["newText"].strip() for e in edits_for(fix["edit"], uri) if "xpuify_device\n" in e["newText"]]
    eq(len(lines), 1, f"one helper import in {fix}")
    return lines[0]


def check_import(tree, rel):
    """What `xpuify check` computes for the file on disk (the reference the server must agree with)."""
    r = run("check", "--format", "json", "--exit-zero", "--no-cache", rel, cwd=tree)
    for f in r.json():
        for e in (f.get("fix") or {}).get("edits", []):
            if "xpuify_device\n" in e["content"]:
                return e["content"].strip()
    return None


def start(root):
    FINDING.clear()
    s = Server()
    s.initialize(WATCH, root=uri_of(root))
    reg = s.wait(lambda m: m.get("method") == "client/registerCapability")
    globs = [w["globPattern"] for w in reg["params"]["registrations"][0]["registerOptions"]["watchers"]]
    check("**/*.py" in globs and "**/setup.py" in globs and "**/pyproject.toml" in globs,
          "the server watches what the project model reads", globs)
    s.send({"jsonrpc": "2.0", "id": reg["id"], "result": None})
    return s


def watched(s, path, kind):
    s.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": uri_of(path), "type": kind}]})


def test_init_py_created_and_deleted(d):
    write("p/setup.py", "from setuptools import setup\nsetup(name='x')\n")
    write("p/pkg/mod.py", CUDA)
    s = start("p")
    uri = uri_of("p/pkg/mod.py")
    s.open(uri, CUDA)
    eq(helper_import(s, uri), "import xpuify_device", "a directory without __init__.py: a script's sibling import")
    eq(check_import("p", "pkg/mod.py"), "import xpuify_device", "check agrees")

    write("p/pkg/__init__.py", "")
    watched(s, "p/pkg/__init__.py", 1)
    eq(helper_import(s, uri), "from . import xpuify_device", "pkg/__init__.py created: a package module")
    eq(check_import("p", "pkg/mod.py"), "from . import xpuify_device", "check agrees")

    os.remove("p/pkg/__init__.py")
    watched(s, "p/pkg/__init__.py", 3)
    eq(helper_import(s, uri), "import xpuify_device", "pkg/__init__.py deleted: a script again")
    eq(s.stop(), 0)


def test_import_typed_in_another_buffer(d):
    write("p/pyproject.toml", "[project]\nname = 'x'\n")
    write("p/models/bs/mod.py", CUDA)
    write("p/main.py", "import os\n")
    s = start("p")
    mod, main_uri = uri_of("p/models/bs/mod.py"), uri_of("p/main.py")
    s.open(mod, CUDA)
    s.open(main_uri, "import os\n")
    eq(helper_import(s, mod), "import xpuify_device", "nobody imports models.bs.mod")
    # unsaved: the buffer stands for main.py
    s.change(main_uri, 2, [{"text": "import os\nimport models.bs.mod\n"}])
    eq(helper_import(s, mod), "from .. import xpuify_device",
       "main.py's (unsaved) import makes models.bs.mod a module of the package `models`")
    # a change that keeps the imports keeps the model
    s.change(main_uri, 3, [{"text": "import os\nimport models.bs.mod\nX = 1\n"}])
    eq(helper_import(s, mod), "from .. import xpuify_device", "still imported")
    # closed without saving: the file on disk counts again
    s.notify("textDocument/didClose", {"textDocument": {"uri": main_uri}})
    eq(helper_import(s, mod), "import xpuify_device", "the import was never saved")
    # written by another program and reported by the watcher
    write("p/main.py", "import models.bs.mod\n")
    watched(s, "p/main.py", 2)
    eq(helper_import(s, mod), "from .. import xpuify_device", "main.py's import on disk")
    eq(check_import("p", "models/bs/mod.py"), "from .. import xpuify_device", "check agrees")
    eq(s.stop(), 0)


def test_packaging_metadata_saved(d):
    write("p/setup.py", "from setuptools import setup\nsetup(name='x')\n")
    write("p/lib/foo/mod.py", CUDA)
    write("p/tests/test_mod.py", "import foo.mod\n")
    s = start("p")
    uri = uri_of("p/lib/foo/mod.py")
    s.open(uri, CUDA)
    eq(helper_import(s, uri), "import xpuify_device", "lib/ is no import root")
    setup = "from setuptools import setup\nsetup(name='x', package_dir={'': 'lib'})\n"
    s.open(uri_of("p/setup.py"), "from setuptools import setup\nsetup(name='x')\n", language="python")
    write("p/setup.py", setup)
    s.change(uri_of("p/setup.py"), 2, [{"text": setup}])
    s.notify("textDocument/didSave", {"textDocument": {"uri": uri_of("p/setup.py")}})
    eq(helper_import(s, uri), "from . import xpuify_device", "setup.py saved with package_dir: lib/ is the root")
    eq(check_import("p", "lib/foo/mod.py"), "from . import xpuify_device", "check agrees")
    eq(s.stop(), 0)


GUARD = "import torch\n\nfrom pkg.util import prep\n\n\ndef f(x):\n    if torch.cuda.is_available():\n        print(prep(x))\n"
GENERIC = "def prep(x):\n    return x * 2\n"
KERNEL = "import flash_attn\n\n\ndef prep(x):\n    return flash_attn.flash_attn_func(x, x, x)\n"


def guard_says(s, uri, words):
    """Waits for the publication of uri whose XPU105 finding says words (one is sent when the findings change)."""
    def ok(m):
        if m.get("method") != "textDocument/publishDiagnostics" or m["params"]["uri"] != uri:
            return False
        return any(x["code"] == "XPU105" and words in x["message"] for x in m["params"]["diagnostics"])
    s.wait(ok, what=f"an XPU105 finding of {uri} saying {words!r}")


def test_guard_callee_edited_in_its_buffer_and_on_disk(d):
    """A guard's verdict that reads a callee in another module (an_guard) follows that module as the server sees it:
    its unsaved buffer, then the file on disk again once the buffer is closed, then the file changed on disk."""
    write("p/setup.py", "from setuptools import setup\nsetup(name='x')\n")
    write("p/pkg/__init__.py", "")
    write("p/pkg/util.py", GENERIC)
    write("p/pkg/train.py", GUARD)
    s = start("p")
    train, util = uri_of("p/pkg/train.py"), uri_of("p/pkg/util.py")
    s.open(train, GUARD)
    guard_says(s, train, "Safe here")
    s.open(util, GENERIC)
    s.change(util, 2, [{"text": KERNEL}])  # unsaved
    guard_says(s, train, "whose body uses `flash_attn`, which is CUDA-only")
    s.notify("textDocument/didClose", {"textDocument": {"uri": util}})
    guard_says(s, train, "Safe here")
    write("p/pkg/util.py", KERNEL)
    watched(s, "p/pkg/util.py", 2)
    guard_says(s, train, "whose body uses `flash_attn`, which is CUDA-only")
    r = run("check", "--format", "json", "--exit-zero", "--no-cache", "pkg/train.py", cwd="p")
    check(any("whose body uses `flash_attn`" in x["message"] for x in r.json() if x["code"] == "XPU105"), "check agrees",
          r.out)
    eq(s.stop(), 0)


if __name__ == "__main__":
    main(globals())
