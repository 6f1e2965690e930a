#!/usr/bin/env python3
"""real_projects.py: the real-project regression harness behind `make try-projects` (tools/try_projects.sh).

For each project directory under CORPUS: copies it, runs plain `xpuify fix` (default options, no --unsafe-fixes)
on the copy, then checks what a maintainer would: every changed .py file compiles; a second fix changes nothing;
every changed module (and every helper written) is imported the ways its project imports it -- worked out here,
independently of xpuify's own project model, from the project's absolute imports (ast), __init__.py chains and
scripts' directories -- in the original and in the fixed copy, with /usr/bin/python3, CUDA hidden, and the
third-party modules the machine lacks stubbed by a meta-path finder (never a name the project itself defines). An
import regression is a module that imports in the original and fails in the fixed copy; where the project declares
a torch newer than the interpreter's (fix then chose the accelerator target) a failure for want of
`torch.accelerator` is listed apart ("needs the project's declared torch"), not as a regression. Also counted: helper
copies, and the `.cuda(` calls and `torch.cuda.` uses in code (tokens: not comments or strings) before and after the
fix; of those left, the ones inside a CUDA-by-design scope (what XPU810, XPU811 and XPU812 findings leave as it is:
their `scope` in the JSON report) are counted apart, and "left" is the share of the others.

Usage: tools/real_projects.py CORPUS [--xpuify build/xpuify] [--python /usr/bin/python3] [--only a,b]
       (the markdown table goes to stdout)"""
import argparse
import ast
import bisect
import copy
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tokenize

SKIP_DIRS = {".git", "__pycache__", "node_modules", "site-packages", "venv", ".venv", "build"}
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# Runs in the child interpreter: stubs what the machine lacks, then imports each (root, module, kind) in order and
# prints one JSON line per entry.
CHILD = r'''
import importlib, importlib.abc, importlib.machinery, json, linecache, os, signal, sys, types, traceback
# the project's top-level names: never stubbed for a script run by path, whose imports of them fail for real
# where its own sys.path set-up does not make them resolve (as they do for its users); stubbed elsewhere when missing
own = set(json.loads(os.environ["XP_OWN"]))
kind_now = [""]
class _Meta(type):
    def __getattr__(cls, n):
        if n.startswith("__"):
            raise AttributeError(n)
        return _make(n)
    def __call__(cls, *a, **k):
        if "_xp_stub" not in cls.__dict__:
            return super().__call__(*a, **k)
        if len(a) == 1 and callable(a[0]) and not k:
            return a[0]
        return _make("result")
    def __getitem__(cls, k):
        return cls
    def __iter__(cls):
        return iter(())
    def __len__(cls):
        return 0
    def __or__(cls, o):
        return cls
    __ror__ = __or__
    def __mro_entries__(cls, bases):
        return (object,)
    # version checks against a stub pass (a stub stands for a recent enough release)
    def __ge__(cls, o):
        return True
    __gt__ = __ge__
    def __le__(cls, o):
        return False
    __lt__ = __le__
    def __int__(cls):
        return 0
    __index__ = __int__
    def __float__(cls):
        return 0.0
def _make(n):
    return _Meta(n, (), {"_xp_stub": True})
class _Stub(types.ModuleType):
    __version__ = "99.0.0"
    def __getattr__(self, n):
        if n.startswith("__") or n == "xpuify_device":  # a helper is never stubbed, nor found in a stub
            raise AttributeError(n)
        return _make(n)
class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        m = _Stub(spec.name)
        m.__path__ = []
        return m
    def exec_module(self, m):
        pass
class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        top = name.split(".")[0]
        if (top in own and kind_now[0] == "script") or top == "xpuify_device":
            return None
        parent = sys.modules.get(name.rpartition(".")[0]) if "." in name else None
        if not isinstance(parent, _Stub) and not _from_project():
            return None  # torch's and the standard library's optional imports keep failing as they should
        return importlib.machinery.ModuleSpec(name, _Loader(), is_package=True)
def _from_project():
    """The import comes from the project's code, and not from a statement that imports the device helper (a
    helper import that does not resolve is exactly what this harness looks for: never stubbed)."""
    f = sys._getframe(2)
    while f is not None and (f.f_code.co_filename.startswith("<frozen") or "importlib" in f.f_code.co_filename):
        f = f.f_back
    if f is None or not f.f_code.co_filename.startswith(project_root):
        return False
    return "xpuify_device" not in linecache.getline(f.f_code.co_filename, f.f_lineno)
project_root = os.environ["XP_ROOT"]
sys.meta_path.append(_Finder())
class _Timeout(BaseException):
    pass
def _alarm(*a):
    raise _Timeout()
signal.signal(signal.SIGALRM, _alarm)
base_path = [p for p in sys.path if p]
# a script is imported two ways: run by path (`python tools/x.py`, from anywhere: sys.path[0] is its own directory
# and nothing else of the project is on the path, so imports of the project's packages work only after the script's
# own sys.path set-up), and with the project installed or run from its root through PYTHONPATH ("script-installed":
# the root, and src/, follow its directory)
installed = [project_root.rstrip("/")] + ([project_root + "src"] if os.path.isdir(project_root + "src") else [])
def _forget_project():
    """Drops the project's modules from sys.modules, namespace packages (no __file__, a __path__ in the project)
    included."""
    def own(m):
        if (getattr(m, "__file__", None) or "").startswith(project_root):
            return True
        return any(str(d).startswith(project_root) for d in (getattr(m, "__path__", None) or []))
    for k in [k for k, m in list(sys.modules.items()) if not isinstance(m, _Stub) and own(m)]:
        del sys.modules[k]
for line in sys.stdin:
    root, mod, kind = json.loads(line)
    kind_now[0] = kind
    sys.path[:] = [root] + base_path + (installed if kind == "script-installed" else [])
    sys.argv = [mod, "--help"]
    if kind.startswith("script"):  # a script runs in a process of its own: no project module imported before
        _forget_project()
    status, detail = "ok", ""
    signal.alarm(30)
    try:
        os.chdir(root)
        importlib.import_module(mod)
    except _Timeout:
        status = "timeout"
    except SystemExit as e:
        status = "ok" if e.code in (0, None) else "exit"
    except BaseException as e:
        status, detail = "error", "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:200] if str(e) else "")
    finally:
        signal.alarm(0)
    if status != "ok":  # a failed import leaves no half-initialised project module behind for the next one
        _forget_project()
    if kind.startswith("script"):
        sys.modules.pop(mod, None)
    print(json.dumps([root, mod, kind, status, detail]), flush=True)
'''


def py_files(top):
    for base, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for f in sorted(files):
            if f.endswith(".py"):
                yield os.path.relpath(os.path.join(base, f), top)


def read(p):
    try:
        with open(p, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


class Model:
    """How each file is imported, from the project's own absolute imports (computed here, not by xpuify)."""

    def __init__(self, top):
        self.top = top
        self.names = set()
        self.importers = {}
        self.main = set()
        self.work = set()
        self.own = set()
        for rel in py_files(top):
            parts = rel.split(os.sep)
            for p in parts[:-1]:
                self.own.add(p)
            self.own.add(parts[-1][:-3])
            text = read(os.path.join(top, rel))
            if re.search(r"^if\s+__name__\s*==\s*['\"]__main__['\"]", text, re.M):
                self.main.add(rel)
            try:
                tree = ast.parse(text)
                nodes = ast.walk(tree)
            except (SyntaxError, ValueError, RecursionError):
                tree, nodes = None, []
            # a script's work at the top level (a loop, a `with`, an assert, a call statement) in a module without
            # relative imports: run by path when no module imports it (sam2's benchmark.py)
            if tree is not None and any(isinstance(n, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith,
                                                       ast.Assert)) or (isinstance(n, ast.Expr) and
                                                                        isinstance(n.value, ast.Call))
                                        for n in tree.body) and not any(
                    isinstance(n, ast.ImportFrom) and n.level for n in ast.walk(tree)):
                self.work.add(rel)
            d = self.resolves_from(rel, rel in self.main or text.startswith("#!"))
            for n in nodes:
                if isinstance(n, ast.Import):
                    for a in n.names:
                        self.add(a.name, d)
                elif isinstance(n, ast.ImportFrom) and not n.level and n.module:
                    self.add(n.module, d)
                    for a in n.names:
                        self.add(n.module + "." + a.name, d)

    def top_names(self):
        """The modules and packages the project's root (and its src/) hold: what `import NAME` finds there."""
        out = set()
        for base in (self.top, os.path.join(self.top, "src")):
            if not os.path.isdir(base):
                continue
            for e in os.listdir(base):
                p = os.path.join(base, e)
                if e.endswith(".py") and IDENT.match(e[:-3]):
                    out.add(e[:-3])
                elif os.path.isdir(p) and IDENT.match(e) and e not in SKIP_DIRS and any(
                        f.endswith(".py") for _, _, fs in os.walk(p) for f in fs):
                    out.add(e)
        return out

    def resolves_from(self, rel, script):
        """Where a file's absolute imports resolve from: a script's own directory (sys.path[0]); a package module's
        root above the top of its __init__.py chain; another file's own directory (a namespace package, or a
        module beside scripts)."""
        d = os.path.dirname(rel)
        if script or not os.path.exists(os.path.join(self.top, d, "__init__.py")):
            return d
        while d and os.path.exists(os.path.join(self.top, d, "__init__.py")):
            d = os.path.dirname(d)
        return d

    def add(self, name, importer_dir):
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            k = ".".join(parts[:i])
            self.names.add(k)
            self.importers.setdefault(k, set()).add(importer_dir)

    def imported_from(self, name, root_parts):
        """name is imported by a file at or below the root (resolved from there), or the root is the project's
        or its src/"""
        if name not in self.names:
            return False
        if not root_parts or root_parts == ["src"]:
            return True
        # deeper, a standard-library name is the standard library's (dinov2's `import logging` is no import of its
        # dinov2/logging package from dinov2/)
        if name.split(".")[0] in getattr(sys, "stdlib_module_names", ()):
            return False
        r = os.path.join(*root_parts)
        return any(d == r or d.startswith(r + os.sep) for d in self.importers.get(name, ()))

    def ways(self, rel):
        parts = rel.split(os.sep)
        dirs, stem = parts[:-1], parts[-1][:-3]
        out = []
        for j in range(len(dirs)):
            chain = dirs[j:]
            if all(IDENT.match(c) for c in chain) and self.imported_from(".".join(chain), dirs[:j]):
                mod = ".".join(chain + ([] if stem == "__init__" else [stem]))
                out.append((os.path.join(self.top, *dirs[:j]), mod, "package"))
        if not out and os.path.exists(os.path.join(self.top, *dirs, "__init__.py")):
            k = len(dirs)
            while k > 0 and os.path.exists(os.path.join(self.top, *dirs[:k], "__init__.py")):
                k -= 1
            chain = dirs[k:]
            if all(IDENT.match(c) for c in chain):
                mod = ".".join(chain + ([] if stem == "__init__" else [stem]))
                out.append((os.path.join(self.top, *dirs[:k]), mod, "package"))
        # also run by path: a __main__ block; imported by its bare name from a script beside it (generative-models'
        # turbo.py: `from streamlit_helpers import *`); a script's top-level work and no module imports it
        d = os.path.join(*dirs) if dirs else ""
        script = rel in self.main or (stem != "__init__" and d in self.importers.get(stem, ())) or (
            rel in self.work and stem not in self.names and not any(m in self.names for _, m, _ in out))
        if (not out or script) and IDENT.match(stem) and stem != "__init__":
            out.append((os.path.join(self.top, *dirs), stem, "script"))
            out.append((os.path.join(self.top, *dirs), stem, "script-installed"))
        return out


def use_positions(text):
    """The code uses of `.cuda(` and `torch.cuda.` in a file's text, as two lists of (line, column) (1-based, code
    points, where the use begins: the `.` of `.cuda(`, the `torch` of `torch.cuda.`); comments and strings do not
    count. Text that does not tokenize is counted textually."""
    calls, mods = [], []
    try:
        toks = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                if t.type in (tokenize.NAME, tokenize.OP)]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        starts = [0] + [m.end() for m in re.finditer(r"\n", text)]

        def at(i):
            k = bisect.bisect_right(starts, i) - 1
            return (k + 1, i - starts[k] + 1)
        return ([at(m.start()) for m in re.finditer(r"\.cuda\(", text)],
                [at(m.start()) for m in re.finditer(r"\btorch\.cuda\.", text)])
    for i, t in enumerate(toks):
        if t.string == "." and i + 2 < len(toks) and toks[i + 1].string == "cuda" and toks[i + 2].string == "(":
            calls.append((t.start[0], t.start[1] + 1))
        elif (t.string == "torch" and i + 3 < len(toks) and toks[i + 1].string == "." and toks[i + 2].string == "cuda"
              and toks[i + 3].string == "."):
            mods.append((t.start[0], t.start[1] + 1))
    return calls, mods


ASSIGN_OPS = {"=", "+=", "-=", "*=", "/=", "//=", "%=", "**=", "&=", "|=", "^=", ">>=", "<<=", "@="}


def _cuda_chain(node):
    """the dotted name of an attribute chain rooted at `torch.cuda` (`torch.cuda.memory.max_memory_allocated`), or None"""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not (isinstance(node, ast.Name) and node.id == "torch" and len(parts) >= 2 and parts[-1] == "cuda"):
        return None
    return ".".join(["torch"] + parts[::-1])


def write_positions(text):
    """The `torch.cuda.` uses that are writes, not uses of CUDA to port (issue #17: "assignments are not uses";
    xpuify reports none and never rewrites one): assignment targets, also inside a tuple (`torch.cuda.is_available
    = lambda: True`, `torch.cuda.is_available, torch.cuda.is_bf16_supported = saved`: a test's spoof of the CUDA API
    and its undoing), and the reads, not calls, of a name the file writes so (`saved = torch.cuda.is_available`: the
    original kept to undo the spoof). Positions as use_positions gives them; text that does not parse is read
    token by token (plain `torch.cuda.X =` targets only)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _write_positions_tokens(text)
    lines = re.split(r"\r\n|\r|\n", text)  # the lines ast numbers (not str.splitlines's, which also splits at \f)

    def pos(node):  # ast columns are UTF-8 byte offsets; use_positions counts code points
        line = lines[node.lineno - 1] if node.lineno <= len(lines) else ""
        return (node.lineno, len(line.encode("utf-8")[:node.col_offset].decode("utf-8", "replace")) + 1)

    def targets(t):
        if isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                yield from targets(e)
        elif isinstance(t, ast.Starred):
            yield from targets(t.value)
        elif isinstance(t, ast.Attribute):
            yield t

    written, out, called, parent = {}, set(), set(), {}
    for node in ast.walk(tree):
        for ch in ast.iter_child_nodes(node):
            parent[id(ch)] = node
        tl = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for t in tl:
            for a in targets(t):
                name = _cuda_chain(a)
                if name:
                    out.add(pos(a))
                    if isinstance(node, ast.Assign) and node.value is not None:
                        written.setdefault(name, set()).add(ast.dump(node.value))
        if isinstance(node, ast.Call):
            called.add(id(node.func))
    for node in ast.walk(tree) if written else ():
        if not (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and id(node) not in called):
            continue
        name = _cuda_chain(node)
        if name not in written:
            continue
        up = parent.get(id(node))
        while isinstance(up, (ast.Tuple, ast.List)):
            up = parent.get(id(up))
        # the save: `kept = torch.cuda.X`, later put back with `torch.cuda.X = kept`
        if isinstance(up, ast.Assign) and len(up.targets) == 1 and _as_load(up.targets[0]) in written[name]:
            out.add(pos(node))
    return sorted(out)


def _as_load(target):
    """ast.dump of an assignment target as the same expression read (the value that puts a saved name back)"""
    t = copy.deepcopy(target)
    for n in ast.walk(t):
        if hasattr(n, "ctx"):
            n.ctx = ast.Load()
    return ast.dump(t)


def _write_positions_tokens(text):
    try:
        toks = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                if t.type in (tokenize.NAME, tokenize.OP)]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []
    out = []
    for i, t in enumerate(toks):
        if not (t.string == "torch" and i + 4 < len(toks) and toks[i + 1].string == "." and toks[i + 2].string == "cuda"
                and toks[i + 3].string == "." and toks[i + 4].type == tokenize.NAME):
            continue
        if i > 0 and toks[i - 1].string == ".":
            continue  # x.torch.cuda.y: not the module
        k = i + 5
        while k + 1 < len(toks) and toks[k].string == "." and toks[k + 1].type == tokenize.NAME:
            k += 2
        if k < len(toks) and toks[k].string in ASSIGN_OPS and toks[k].start[0] == toks[i].start[0]:
            out.append((t.start[0], t.start[1] + 1))
    return out


def check_findings(xpuify, top):
    """The JSON findings of a plain `check` of top (all rules), [] when it prints none that parse."""
    p = subprocess.run([xpuify, "check", "--no-cache", "--format", "json", "."],
                       cwd=top, capture_output=True, text=True)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return []


def scopes_of(findings):
    """{path: [(start, end)]}: the `scope` of each XPU810 (a CUDA backend), XPU811 (the CUDA branch of a dispatch
    without an XPU branch) and XPU812 (other code the analyzer leaves out as CUDA by design: a dispatch that already
    serves XPU, a guard that routes to a CUDA kernel, code after an early exit where CUDA is unavailable...)
    finding, as (line, column) pairs."""
    out = {}
    for f in findings:
        sc = f.get("scope")
        if f.get("code") in ("XPU810", "XPU811", "XPU812") and sc:
            out.setdefault(os.path.normpath(f["path"]), []).append(
                ((sc["line"], sc["column"]), (sc["end_line"], sc["end_column"])))
    return out


def design_scopes(xpuify, top):
    """{path relative to top: [(start, end)]}: what XPU810, XPU811 and XPU812 leave as it is by design (scopes_of),
    from a plain `check`'s JSON report. All rules run: XPU812 speaks where another rule's finding is left out, so
    it needs those rules."""
    return scopes_of(check_findings(xpuify, top))


def count_uses(top, files, scopes):
    """(`.cuda(` calls, `torch.cuda.` uses, of them inside design scopes: calls, uses, and the `torch.cuda.` writes
    outside design scopes) in the code of files"""
    n = [0, 0, 0, 0, 0]
    for rel in files:
        if os.path.basename(rel) == "xpuify_device.py":
            continue
        text = read(os.path.join(top, rel))
        calls, mods = use_positions(text)
        spans = scopes.get(os.path.normpath(rel), [])
        for k, uses in enumerate((calls, mods)):
            n[k] += len(uses)
            n[2 + k] += sum(1 for u in uses if any(a <= u < b for a, b in spans))
        n[4] += sum(1 for u in write_positions(text) if not any(a <= u < b for a, b in spans))
    return tuple(n)


def left_pct(before, after, design_before, design_after):
    """the share of uses left by the fix, the ones counted apart (CUDA by design; for `torch.cuda.` also writes) out
    of both counts; None without any to port"""
    todo = before - design_before
    return None if todo <= 0 else round(100.0 * (after - design_after) / todo)


def import_all(python, entries, own, timeout, root):
    """[(root, module, kind)] -> {(root, module, kind): (status, detail)}"""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", XP_OWN=json.dumps(sorted(own)), XP_ROOT=root + os.sep, PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH="", XPUIFY_DEVICE_PRIORITY="cuda,xpu,mps,cpu", MPLBACKEND="Agg")
    results = {}
    todo = list(entries)
    while todo:  # a child that dies (a segfault, os._exit) is restarted after the entry that killed it
        inp = "".join(json.dumps(list(e)) + "\n" for e in todo)
        try:
            p = subprocess.run([python, "-c", CHILD], input=inp, capture_output=True, text=True, env=env,
                               timeout=timeout, cwd=tempfile.gettempdir())
            out = p.stdout
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        done = 0
        for line in out.splitlines():
            try:
                root, mod, kind, status, detail = json.loads(line)
            except ValueError:
                continue
            results[(root, mod, kind)] = (status, detail)
            done += 1
        if done < len(todo):
            results[tuple(todo[done])] = ("crash", "the interpreter died while importing it")
            done += 1
        todo = todo[done:]
    return results


def run_project(name, src, work, xpuify, python):
    row = {"project": name}
    orig = os.path.join(work, "orig", name)
    fixed = os.path.join(work, "fixed", name)
    for d in (orig, fixed):
        shutil.copytree(src, d, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    before = set(py_files(orig))
    t = time.time()
    p = subprocess.run([xpuify, "fix", "-q", "--no-cache", "."], cwd=fixed, capture_output=True, text=True)
    row["fix_seconds"] = round(time.time() - t, 1)
    row["fix_exit"] = p.returncode
    row["fix_errors"] = [l for l in p.stderr.splitlines() if "error:" in l][:5]
    after = set(py_files(fixed))
    helpers = sorted(f for f in after - before if os.path.basename(f) == "xpuify_device.py")
    changed = sorted(f for f in before if read(os.path.join(orig, f)) != read(os.path.join(fixed, f)))
    row["changed"], row["helpers"] = len(changed), helpers
    bad = []
    for f in changed + helpers:
        try:
            # the bytes, as Python reads a module (a UTF-8 BOM or a coding cookie is the file's, not an error)
            with open(os.path.join(fixed, f), "rb") as fh:
                compile(fh.read(), f, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as e:
            bad.append(f"{f}: {e}")
    row["compile_failures"] = bad
    p2 = subprocess.run([xpuify, "fix", "-q", "--no-cache", "--diff", "."], cwd=fixed, capture_output=True, text=True)
    row["idempotent"] = p2.returncode == 0 and not p2.stdout.strip()
    cb = count_uses(orig, before, design_scopes(xpuify, orig))
    ca = count_uses(fixed, before, design_scopes(xpuify, fixed))
    # .cuda( and torch.cuda.: before, after, inside design scopes before and after, % left without them
    # writes (assignment targets) are counted apart for `torch.cuda.` only (a `.cuda(` call is never one); the
    # share with them counted as uses is kept too ("left_pct_with_writes")
    row["uses"] = {}
    for k, kind in enumerate((".cuda(", "torch.cuda.")):
        wb, wa = (cb[4], ca[4]) if k else (0, 0)
        row["uses"][kind] = {"before": cb[k], "after": ca[k], "design_before": cb[2 + k], "design_after": ca[2 + k],
                             "writes_before": wb, "writes_after": wa,
                             "left_pct": left_pct(cb[k], ca[k], cb[2 + k] + wb, ca[2 + k] + wa),
                             "left_pct_with_writes": left_pct(cb[k], ca[k], cb[2 + k], ca[2 + k])}
    model = Model(orig)
    entries = []
    for f in changed:
        for w in model.ways(f):
            entries.append(w)
    entries = sorted(set(entries))
    # the project's top-level names (what its root and src/ hold): a script run by path that imports them without
    # its own sys.path set-up fails for real, as it does for its users (the child never stubs them there)
    own = model.top_names()
    res_o = import_all(python, entries, own, 1800, orig)
    res_f = import_all(python, [(r.replace(orig, fixed, 1), m, k) for r, m, k in entries], own, 1800, fixed)
    regress, both_ok, both_fail, fixed_only, why_fail, newer_torch = [], 0, 0, 0, {}, []
    # the accelerator target's code: torch.accelerator written where the original had none
    accel = any("torch.accelerator" in read(os.path.join(fixed, f)) and "torch.accelerator" not in read(os.path.join(orig, f))
                for f in changed)
    for r, m, k in entries:
        so = res_o.get((r, m, k), ("missing", ""))
        sf = res_f.get((r.replace(orig, fixed, 1), m, k), ("missing", ""))
        if (so[0] == "ok") != (sf[0] == "ok"):  # confirmed alone, in fresh interpreters (no order effects)
            so = import_all(python, [(r, m, k)], own, 300, orig).get((r, m, k), ("missing", ""))
            fk = (r.replace(orig, fixed, 1), m, k)
            sf = import_all(python, [fk], own, 300, fixed).get(fk, ("missing", ""))
        if so[0] == "ok" and sf[0] != "ok" and accel and "has no attribute 'accelerator'" in sf[1]:
            # the project declares a torch newer than this interpreter's, so fix chose the accelerator target,
            # whose torch.accelerator this torch lacks: no regression for the project's users (kept apart)
            newer_torch.append(f"{os.path.relpath(r, orig) or '.'}: {m} ({k})")
        elif so[0] == "ok" and sf[0] != "ok":
            regress.append(f"{os.path.relpath(r, orig) or '.'}: {m} ({k}): {sf[0]} {sf[1]}")
        elif so[0] == "ok":
            both_ok += 1
        elif sf[0] == "ok":
            fixed_only += 1
        else:
            both_fail += 1
            key = so[1][:90] or so[0]
            why_fail[key] = why_fail.get(key, 0) + 1
    row["fail_both_why"] = dict(sorted(why_fail.items(), key=lambda kv: -kv[1])[:5])
    row.update(imports=len(entries), imports_ok=both_ok, imports_fail_both=both_fail, imports_fixed_only=fixed_only,
               regressions=regress, needs_declared_torch=newer_torch)
    return row


def fmt_uses(u, writes=False):
    pct = "n/a" if u["left_pct"] is None else f"{u['left_pct']}%"
    w = f" | {u.get('writes_after', 0)}" if writes else ""
    return f"{u['before']} → {u['after']} | {u['design_after']}{w} | {pct}"


def markdown(rows):
    out = ["| project | files changed | helper copies | imports tried (ok before and after / fail in both) | "
           "import regressions | compile failures | second fix no-op | `.cuda(` before → after | of them by design | "
           "`.cuda(` left | `torch.cuda.` before → after | of them by design | of them writes | `torch.cuda.` left | "
           "fix time |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    tot = {k: {"before": 0, "after": 0, "design_before": 0, "design_after": 0, "writes_before": 0, "writes_after": 0}
           for k in (".cuda(", "torch.cuda.")}
    for r in rows:
        if "skipped" in r:
            out.append(f"| {r['project']} | {r['skipped']} | | | | | | | | | | | | | |")
            continue
        u = r["uses"]
        for k in tot:
            for f in tot[k]:
                tot[k][f] += u[k].get(f, 0)
        out.append(f"| {r['project']} | {r['changed']} | {len(r['helpers'])} | {r['imports']} ({r['imports_ok']} / "
                   f"{r['imports_fail_both']}) | **{len(r['regressions'])}** | {len(r['compile_failures'])} | "
                   f"{'yes' if r['idempotent'] else 'NO'} | {fmt_uses(u['.cuda('])} | "
                   f"{fmt_uses(u['torch.cuda.'], True)} | {r['fix_seconds']} s |")
    for k in tot:
        t = tot[k]
        t["left_pct"] = left_pct(t["before"], t["after"], t["design_before"] + t["writes_before"],
                                 t["design_after"] + t["writes_after"])
        t["left_pct_with_writes"] = left_pct(t["before"], t["after"], t["design_before"], t["design_after"])
    out.append(f"| all | | | | | | | {fmt_uses(tot['.cuda('])} | {fmt_uses(tot['torch.cuda.'], True)} | |")
    w = tot["torch.cuda."]["left_pct_with_writes"]
    out.append("")
    out.append(f"`torch.cuda.` left with the writes counted as uses to port: {'n/a' if w is None else str(w) + '%'}.")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--xpuify", default="build/xpuify")
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--only", default="")
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    xpuify = os.path.abspath(a.xpuify)
    names = sorted(d for d in os.listdir(a.corpus) if os.path.isdir(os.path.join(a.corpus, d)))
    if a.only:
        names = [n for n in names if n in a.only.split(",")]
    rows = []
    fail = False
    with tempfile.TemporaryDirectory() as work:
        for n in names:
            try:
                row = run_project(n, os.path.join(a.corpus, n), work, xpuify, a.python)
            except Exception as e:  # one broken project does not end the run
                row = {"project": n, "skipped": f"harness error: {e}"}
            rows.append(row)
            fail |= bool(row.get("regressions") or row.get("compile_failures")) or row.get("idempotent") is False
            print(json.dumps(row), file=sys.stderr, flush=True)
            shutil.rmtree(os.path.join(work, "orig", n), ignore_errors=True)
            shutil.rmtree(os.path.join(work, "fixed", n), ignore_errors=True)
    print(markdown(rows))
    for r in rows:
        for x in r.get("regressions", [])[:20]:
            print(f"- {r['project']}: import regression: {x}")
        for x in r.get("needs_declared_torch", [])[:20]:
            print(f"- {r['project']}: needs the project's declared torch (accelerator target; not run here): {x}")
        for x in r.get("compile_failures", [])[:10]:
            print(f"- {r['project']}: does not compile: {x}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
