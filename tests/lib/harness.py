"""harness: a tiny TAP test runner for xpuify's end-to-end tests (no third-party packages).

Tests are functions named test_* in the calling module; each runs in a fresh temporary directory.
`run(...)` invokes the xpuify binary and returns (exit code, stdout, stderr)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
XPUIFY = os.path.abspath(os.environ.get("XPUIFY", os.path.join(ROOT, "build", "xpuify")))


class Result:
    def __init__(self, code, out, err):
        self.code, self.out, self.err = code, out, err

    def json(self):
        return json.loads(self.out)

    def __repr__(self):
        return f"exit {self.code}\n--- stdout\n{self.out}\n--- stderr\n{self.err}"


def run(*args, cwd=None, input=None, env=None, timeout=120):
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    e.pop("CI", None)  # CI=true changes xpuify's defaults (no cache, skips exit 2): tests that want it say so
    if env:
        e.update(env)
    p = subprocess.run([XPUIFY, *args], cwd=cwd, input=input, capture_output=True, text=True, env=e,
                       timeout=timeout)
    r = Result(p.returncode, p.stdout, p.stderr)
    sanitizer_check(r)
    return r


# Reports that ASan, UBSan and LSan print (a `make test SAN=1` build): any of them fails the test that ran it,
# whatever its exit status was.
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:", "SUMMARY: UndefinedBehaviorSanitizer")


def sanitizer_check(r):
    for m in SANITIZER_MARKS:
        if m in r.err:
            raise AssertionError(f"sanitizer report ({m}) from xpuify\n{r.err[-4000:]}")


def write(path, text, mode="w"):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, mode) as f:
        f.write(text)


def read(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


def fixture(*parts):
    return os.path.join(ROOT, "fixtures", *parts)


class Skip(Exception):
    """Raised by a test that cannot run here (a missing tool or header); reported as a TAP skip, not a pass."""


def skip(reason):
    raise Skip(reason)


def need_tool(tool, package):
    """A test that runs TOOL fails at once, naming the Debian package that provides it, when TOOL is not on PATH
    (`make test` installs every such package: tools/deps.sh test)."""
    check(shutil.which(tool), f"`{tool}` is not installed: Debian's {package} provides it (tools/deps.sh test)")


def need_python(py, modules):
    """Fails with the Debian package to install for the first of MODULES ((module, package) pairs, in import
    order) that PY cannot import: `import torch.utils.cpp_extension` needs torch, then setuptools."""
    for module, package in modules:
        p = subprocess.run([py, "-c", f"import {module}"], capture_output=True, text=True)
        last = (p.stderr.strip().splitlines() or [""])[-1]
        check(p.returncode == 0, f"{py} cannot import {module} ({last}): Debian's {package} provides it "
              "(tools/deps.sh test)")


def check(cond, msg="check failed", detail=None):
    if not cond:
        raise AssertionError(msg + ("\n" + str(detail) if detail is not None else ""))


def eq(a, b, msg=""):
    if a != b:
        raise AssertionError(f"{msg}\nexpected: {b!r}\n     got: {a!r}")


def main(module_globals):
    tests = [(n, f) for n, f in module_globals.items() if n.startswith("test_") and callable(f)]
    only = os.environ.get("TEST_ONLY")
    if only:
        tests = [(n, f) for n, f in tests if only in n]
    print(f"1..{len(tests)}")
    failed = 0
    for i, (name, fn) in enumerate(tests, 1):
        d = tempfile.mkdtemp(prefix="xpuify-test-")
        old = os.getcwd()
        try:
            os.chdir(d)
            fn(d) if fn.__code__.co_argcount else fn()
            print(f"ok {i} - {name}")
        except Skip as s:
            print(f"ok {i} - {name} # SKIP {s}")
        except Exception:
            failed += 1
            print(f"not ok {i} - {name}")
            # where in the test it failed (the frames inside the harness say nothing), then the whole message:
            # the assertion's text carries the detail (expected and got, the tool's output)
            etype, value, tb = sys.exc_info()
            here = os.path.abspath(__file__)
            for fr in [f for f in traceback.extract_tb(tb) if os.path.abspath(f.filename) != here][-3:]:
                print(f"# {os.path.relpath(fr.filename, ROOT)}:{fr.lineno}: {fr.line}")
            msg = "".join(traceback.format_exception_only(etype, value)).rstrip().splitlines()
            for line in msg[:80]:
                print("# " + line)
            if len(msg) > 80:
                print(f"# ... ({len(msg) - 80} more lines)")
        finally:
            os.chdir(old)
            shutil.rmtree(d, ignore_errors=True)
        sys.stdout.flush()
    sys.exit(1 if failed else 0)
