"""Hostile inputs, end to end: binary files, invalid UTF-8, NUL bytes, a 50 MB file, deeply nested code, CRLF /
BOM / tabs, odd file names, symlink loops, unreadable files and directories, read-only files under `fix`, a disk
that fills up half-way through a write, and Ctrl-C in the middle of `fix`.

Every test states what a user would expect: the run goes on, each skipped file is named with the reason, exit codes
keep their meaning (0 clean, 1 findings, 2 input error), no file is ever truncated or mixed. Time limits here
are hang detectors (generous timeouts), not speed goals: those live in bench/.

Unreadable paths: the tests run as root, for whom chmod 000 blocks nothing, so those tests run xpuify as the user
nobody through `setpriv` (util-linux); run as another user, they use chmod directly."""
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import XPUIFY, check, eq, main, need_tool, read, run, sanitizer_check, Result, write  # noqa: E402

CUDA = "import torch\nx = load().cuda()\ntorch.cuda.synchronize()\n"  # load(): a receiver of unknown type
NOBODY = 65534
SAN = "/san/" in XPUIFY  # a sanitizer build: slower, more memory


def run_bytes(*args, cwd=None, env=None, timeout=300, preexec=None, prefix=()):
    """xpuify with byte-exact stdout/stderr (file names and sources here are not always UTF-8)."""
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    e.pop("CI", None)  # as harness.run: CI=true makes skips exit 2; the tests that want that say so
    if env:
        e.update(env)
    p = subprocess.run([*prefix, XPUIFY, *args], cwd=cwd, capture_output=True, env=e, timeout=timeout,
                       preexec_fn=preexec)
    r = Result(p.returncode, p.stdout, p.stderr.decode("utf-8", "replace"))
    sanitizer_check(r)
    return r


def as_nobody():
    """How to run xpuify so that file permissions apply: nothing to add when not root, setpriv when root."""
    if os.geteuid() != 0:
        return ()
    tool = shutil.which("setpriv")
    tool or need_tool("setpriv", "util-linux (running as root, the test needs it to drop privileges)")
    return (tool, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups")


def open_up(d):
    """mkdtemp directories are 0700: let the user nobody in."""
    os.chmod(d, 0o755)


def compiles(path):
    with open(path, "rb") as f:
        src = f.read()
    try:
        compile(src, path, "exec")
        return True
    except SyntaxError:
        return False


# ---- unreadable content -------------------------------------------------------------------------------------------

def test_binary_invalid_utf8_and_nul_files_are_skipped_with_a_reason(d):
    write("good.py", CUDA)
    write("bin.py", b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)) * 4, "wb")
    write("latin1.py", "import torch\n# caf\xe9\ntorch.cuda.synchronize()\n".encode("latin-1"), "wb")
    write("nul.py", (CUDA + "\x00\n").encode(), "wb")
    r = run("check", "--format", "json", ".")
    eq(r.code, 1, "findings in good.py; the others are skipped, not errors")
    eq({f["path"] for f in r.json() if f["code"]}, {"good.py"})
    eq({f["path"] for f in r.json() if f["name"] == "not-checked"}, {"bin.py", "latin1.py", "nul.py"},
       "and the report names what it skipped")
    check("bin.py: binary file (contains NUL bytes); skipped" in r.err, "names the binary file", r)
    check("nul.py: binary file (contains NUL bytes); skipped" in r.err, "a NUL byte in a text file", r)
    check("latin1.py: not valid UTF-8 (first bad byte 0xe9 at line 2, column 6); skipped" in r.err,
          "says where the bad byte is", r)
    # named on the command line they are input errors (exit 2), and the run still reports good.py
    r = run("check", "--format", "json", "good.py", "latin1.py", "bin.py")
    eq(r.code, 2)
    eq({f["path"] for f in r.json() if f["code"]}, {"good.py"})
    eq({(f["path"], f["severity"]) for f in r.json() if not f["code"]}, {("latin1.py", "error"), ("bin.py", "error")})
    check("xpuify: error: latin1.py: not valid UTF-8" in r.err and "xpuify: error: bin.py: binary file" in r.err, "", r)
    # fix leaves them byte for byte
    before = {p: read(p, "rb") for p in ("bin.py", "latin1.py", "nul.py")}
    r = run("fix", "--target", "accelerator", ".")
    for p, b in before.items():
        eq(read(p, "rb"), b, f"fix touched {p}")
    check("torch.accelerator.synchronize()" in read("good.py"), "good.py fixed", r)


def test_empty_and_bom_only_files(d):
    write("empty.py", "")
    write("bom.py", b"\xef\xbb\xbf", "wb")
    write("nl.py", "\n\n\n")
    r = run("check", "--format", "json", ".")
    eq((r.code, r.json()), (0, []), r)
    eq(run("fix", ".").code, 0)
    eq(read("bom.py", "rb"), b"\xef\xbb\xbf")


def test_50mb_file(d):
    """Over the default --max-file-size (10M) a file is skipped at once with the reason; raised above it, a 50 MB file
    without CUDA code is read, validated and prefiltered (never parsed) in bounded memory."""
    line = "    " + ", ".join("0.123456" for _ in range(12)) + ",\n"
    n = (50 << 20) // len(line) + 1
    with open("data.py", "w") as f:
        f.write("DATA = [\n")
        f.write(line * n)
        f.write("]\n")
    write("good.py", CUDA)
    size = os.path.getsize("data.py")
    check(size > 50 << 20, "50 MB")
    r = run("check", "--format", "json", ".", timeout=120)
    eq(r.code, 1)
    eq({f["path"] for f in r.json() if f["code"]}, {"good.py"})
    eq({f["path"] for f in r.json() if f["name"] == "not-checked"}, {"data.py"})
    check(f"data.py: file is {size} bytes, over the 10485760-byte limit (--max-file-size); skipped" in r.err, "", r)
    eq(run("check", "data.py").code, 2, "named: an input error")
    # raised limit: measured in a child of a fresh interpreter so that the peak is this run's alone
    probe = ("import resource, subprocess, sys; "
             "p = subprocess.run(sys.argv[1:], capture_output=True); "
             "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    p = subprocess.run([sys.executable, "-c", probe, XPUIFY, "check", "-q", "--max-file-size", "64M", "data.py"],
                       capture_output=True, text=True, timeout=300)
    rc, rss_kb = map(int, p.stdout.split())
    eq(rc, 0, "clean")
    limit_mb = 600 if SAN else 160  # the text (50 MB) plus the process; never a parse tree
    check(rss_kb < limit_mb * 1024, f"peak RSS {rss_kb // 1024} MB for a 50 MB file that needs no parse")


# ---- deep nesting ---------------------------------------------------------------------------------------------------

def small_stack():
    # 1 MB of stack for the main thread and (glibc takes the default from it) for every worker thread: any
    # recursion per tree level would overflow on these inputs
    resource.setrlimit(resource.RLIMIT_STACK, (1 << 20, 1 << 20))


DEEP = 100000
DEEP_INPUTS = {
    "parens.py": "import torch\nx = " + "(" * DEEP + "torch.cuda.synchronize()" + ")" * DEEP + "\n",
    "calls.py": "import torch\nx = " + "torch.cuda.synchronize(" * DEEP + ")" * DEEP + "\n",
    "chain.py": "import torch\nx = torch" + ".cuda" * DEEP + "\n",
    "sum.py": "import torch\nx = " + "torch.cuda.device_count() + " * DEEP + "1\n",
    "unary.py": "import torch\nx = " + "-" * DEEP + "torch.cuda.current_device()\n",
    "lambdas.py": "import torch\nf = " + "lambda torch: " * DEEP + "torch.cuda.synchronize()\n",
    # the syntax error sits at the bottom of the nesting: error collection walks all the way down
    "broken.py": "import torch\nx = " + "[" * DEEP + "torch.cuda.synchronize(" + "]" * DEEP + "\n",
}


# brackets nested deeper than AN_PY_MAX_NESTING (1000; CPython allows 200) are never handed to tree-sitter
BRACKETS_DEEP = {"parens.py", "calls.py", "broken.py"}


def test_deeply_nested_code_is_refused_in_bounded_time_and_stack(d):
    for name, src in DEEP_INPUTS.items():
        write(name, src)
        if name in BRACKETS_DEEP:
            continue
        r = run_bytes("check", "--format", "json", name, timeout=300, preexec=small_stack)
        check(r.code == 1, f"{name}: exit {r.code}", r.err[-3000:])
        got = json.loads(r.out)
        eq([f["code"] for f in got], ["XPU001"], f"{name}: one finding saying why the file is not analyzed")
        check("nested more than 4000 levels deep" in got[0]["message"], name, got)
        r = run_bytes("fix", name, timeout=300, preexec=small_stack)
        eq(read(name), src, f"{name}: fix leaves it alone")


def test_deep_brackets_are_skipped_before_parsing(d):
    """65,535 unclosed `(` aborted check, fix and the language server (a double free in tree-sitter 0.20.7, before
    any depth limit of the front end applied): a byte scan refuses such files before the parse, naming the file,
    the line and the reason, and the rest of the run goes on."""
    files = dict((n, DEEP_INPUTS[n]) for n in BRACKETS_DEEP)
    files["unclosed.py"] = "import torch\ntorch.cuda.synchronize()\nx = " + "(" * 65535 + "\n"
    files["unclosed_list.py"] = "import torch\ntorch.cuda.synchronize()\nx = " + "[" * 65535 + "\n"
    files["fstring.py"] = "import torch\ntorch.cuda.synchronize()\nx = f'{" + "(" * 65535 + "'\n"
    # brackets in strings and comments do not nest: analyzed as usual
    files["strings.py"] = "import torch\ns = '" + "(" * 5000 + "'\n# " + "[" * 5000 + "\nt = \"\"\"" + \
        "{" * 5000 + "\"\"\"\ntorch.cuda.synchronize()\n"
    for name, src in files.items():
        write(name, src)
    write("good.py", CUDA)
    r = run_bytes("check", "--format", "json", ".", timeout=300, preexec=small_stack)
    eq(r.code, 1, r.err[-3000:])
    report = json.loads(r.out)
    eq({f["path"] for f in report if f["code"]}, {"good.py", "strings.py"}, "the deep files are skipped, the rest checked")
    eq({f["path"] for f in report if not f["code"]}, BRACKETS_DEEP | {"unclosed.py", "unclosed_list.py", "fstring.py"},
       "each deep file is in the report as not checked")
    for name in BRACKETS_DEEP | {"unclosed.py", "unclosed_list.py", "fstring.py"}:
        line = 2 if name in BRACKETS_DEEP else 3
        check(f"{name}: brackets nested more than 1000 deep at line {line} (CPython allows 200); not analyzed; "
              "skipped" in r.err, f"{name}: named with the reason", r.err[-3000:])
    # named on the command line: an input error, still no crash
    r = run_bytes("check", "unclosed.py", timeout=300, preexec=small_stack)
    eq(r.code, 2, r.err[-2000:])
    check("error: unclosed.py: brackets nested more than 1000 deep" in r.err, "", r.err[-2000:])
    r = run_bytes("fix", ".", timeout=300, preexec=small_stack)
    check(r.code in (0, 1), f"fix exit {r.code}", r.err[-3000:])
    check("unclosed.py: brackets nested more than 1000 deep" in r.err, "fix names the skipped file", r.err[-3000:])
    for name, src in files.items():
        if name != "strings.py":
            eq(read(name), src, f"{name}: fix leaves it alone")
    check(read("good.py") != CUDA, "good.py fixed", r.err[-2000:])


def test_deep_but_valid_python_is_analyzed(d):
    """The depth limit is above what CPython compiles: code CPython accepts is analyzed as usual."""
    n = 2900  # CPython 3.11 compiles sums of up to ~2986 terms
    src = "import torch\nx = " + "torch.cuda.device_count() + " * n + "1\n"
    write("sum.py", src)
    check(compiles("sum.py"), "CPython compiles it")
    r = run_bytes("check", "--format", "json", "sum.py", timeout=300, preexec=small_stack)
    codes = [f["code"] for f in json.loads(r.out)]
    eq((r.code, len(codes), set(codes)), (1, n, {"XPU201"}), r.err[-2000:])
    indent = "import torch\n" + "".join(" " * i + "if torch.cuda.is_available():\n" for i in range(99)) + \
        " " * 99 + "torch.cuda.synchronize()\n"
    write("indent.py", indent)
    check(compiles("indent.py"), "CPython compiles 99 levels of indentation")
    r = run_bytes("check", "--format", "json", "indent.py", timeout=300, preexec=small_stack)
    check("XPU202" in {f["code"] for f in json.loads(r.out)}, "the innermost call is reported", r.out[:2000])


# ---- line endings, BOM, tabs, file names ----------------------------------------------------------------------------

def test_crlf_bom_and_tabs_positions_and_fixes(d):
    files = {
        "crlf.py": b"import torch\r\nx = torch.zeros(3).cuda()\r\ntorch.cuda.synchronize()\r\n",
        "bom.py": b"\xef\xbb\xbfimport torch\nx = torch.zeros(3).cuda()\ntorch.cuda.synchronize()\n",
        "tabs.py": b"import torch\nif True:\n\tx = torch.zeros(3).cuda()\n\ttorch.cuda.synchronize()\n",
        "crlftabs.py": b"import os\r\nimport torch\r\n\r\ndef f():\r\n\tx = torch.zeros(3).cuda()\r\n\ttorch.cuda.synchronize()\r\n",
        "cr_only.py": b"import torch\rtorch.cuda.synchronize()\r",
    }
    for name, b in files.items():
        write(name, b, "wb")
    r = run("check", "--format", "json", ".")
    pos = {(f["path"], f["code"]): (f["line"], f["column"], f["end_line"], f["end_column"]) for f in r.json()}
    eq(pos[("crlf.py", "XPU202")], (3, 1, 3, 23))
    eq(pos[("bom.py", "XPU101")], (2, 20, 2, 24), "a BOM is not a column")
    eq(pos[("tabs.py", "XPU202")], (4, 2, 4, 24), "a tab is one column")
    eq(pos[("crlftabs.py", "XPU101")], (5, 21, 5, 25))
    eq(pos[("cr_only.py", "XPU202")], (2, 1, 2, 23), "old Mac line ends count as lines")
    for target in ("accelerator", "compat"):
        for unsafe in ((), ("--unsafe-fixes",)):
            work = os.path.join(d, f"{target}{len(unsafe)}")
            os.mkdir(work)
            for name, b in files.items():
                write(os.path.join(work, name), b, "wb")
            r = run("fix", "--target", target, *unsafe, work)
            check(r.code in (0, 1), "fix ran", r)
            for name, b in files.items():
                p = os.path.join(work, name)
                out = read(p, "rb")
                check(out != b or name == "cr_only.py", f"{target}{unsafe}: {name} was fixed", out)
                check(compiles(p), f"{target}{unsafe}: {name} no longer compiles", out)
                if b"\r\n" in b:
                    check(out.count(b"\n") == out.count(b"\r\n"), f"{target}{unsafe}: {name}: mixed line endings", out)
                if b.startswith(b"\xef\xbb\xbf"):
                    check(out.startswith(b"\xef\xbb\xbf") and out.count(b"\xef\xbb\xbf") == 1,
                          f"{name}: BOM kept once", out)
                if b"\tx = " in b:
                    check(b"\tx = torch.zeros(3)" in out and b"    x" not in out, f"{name}: tabs kept", out)


def test_dockerfile_opening_with_an_empty_crlf_line(d):
    """The Dockerfile masker looked one byte before the buffer for a line continuation when the file opened with an
    empty CRLF line (ASan: a 1-byte read before the buffer; found by fuzz/fz_text)."""
    write("Dockerfile", b"\r\nRUN nvidia-smi\n", "wb")
    write("Containerfile", b"\r\n\r\n# nvidia-smi\r\nRUN \\\r\n  nvidia-smi\r\n", "wb")
    r = run_bytes("check", "--format", "json", ".")
    eq(r.code, 1, r.err)
    got = sorted((f["path"], f["line"], f["code"]) for f in json.loads(r.out))
    eq(got, [("Containerfile", 5, "XPT102"), ("Dockerfile", 2, "XPT102")], "the comment masked, the commands found")


def test_odd_file_names_keep_reports_valid(d):
    names = [b"space name.py", b"quote\"s.py", b"back\\slash.py", b"pct%41.py", b"caf\xc3\xa9.py",
             b"latin\xe9.py", b"new\nline.py", b"-dash.py"]
    for n in names:
        with open(os.path.join(d.encode(), n), "w") as f:
            f.write(CUDA)
    r = run_bytes("check", "--format", "json", ".")
    eq(r.code, 1)
    items = json.loads(r.out.decode("utf-8"))  # strict: the report is valid UTF-8
    eq(len({i["path"] for i in items}), len(names), "every file reported")
    check("latin\ufffd.py" in {i["path"] for i in items}, "a non-UTF-8 name is shown with U+FFFD")
    r = run_bytes("check", "--format", "sarif", ".")
    sarif = json.loads(r.out.decode("utf-8"))
    uris = {res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for res in sarif["runs"][0]["results"]}
    check("latin%E9.py" in uris and "new%0Aline.py" in uris and "caf%C3%A9.py" in uris, "percent-encoded URIs", uris)
    r = run_bytes("check", "--format", "github", ".")
    lines = r.out.split(b"\n")[:-1]
    eq(len(lines), 2 * len(names), "one line per finding, newline in a name escaped")
    check(any(b"file=new%0Aline.py" in l for l in lines), "", r.out)


# ---- file system oddities -------------------------------------------------------------------------------------------

def test_symlink_loops(d):
    write("pkg/a.py", CUDA)
    os.symlink("..", "pkg/up")                  # a directory loop
    os.symlink(".", "pkg/self")
    os.symlink("loop2.py", "pkg/loop1.py")      # a file loop
    os.symlink("loop1.py", "pkg/loop2.py")
    os.symlink("missing.py", "pkg/dangling.py")
    os.symlink("a.py", "pkg/alias.py")          # a file link is read (once per name)
    r = run("check", "--format", "json", ".", timeout=60)
    eq(r.code, 1, r)
    eq(sorted({f["path"] for f in r.json()}), ["pkg/a.py", "pkg/alias.py"])
    r = run("check", "pkg/loop1.py", timeout=60)
    eq(r.code, 2)
    check("pkg/loop1.py: Too many levels of symbolic links" in r.err, "named loop: an error naming it", r)


def test_unreadable_files_and_directories(d):
    prefix = as_nobody()
    open_up(d)
    write("ok/a.py", CUDA)
    os.chmod("ok", 0o777)  # nobody fixes it: a temporary file goes beside it
    os.chmod("ok/a.py", 0o666)
    write("locked/b.py", CUDA)
    write("secret.py", CUDA)
    os.chmod("locked", 0)
    os.chmod("secret.py", 0)
    try:
        r = run_bytes("check", "--format", "json", ".", prefix=prefix)
        eq(r.code, 1, r.err)
        eq({f["path"] for f in json.loads(r.out) if f["code"]}, {"ok/a.py"})
        eq({f["path"] for f in json.loads(r.out) if f["name"] == "not-checked"}, {"locked", "secret.py"},
           "the report names what it could not read")
        check("xpuify: warning: locked: cannot read directory: Permission denied" in r.err, "", r.err)
        check("xpuify: warning: secret.py: cannot open: Permission denied; skipped" in r.err, "", r.err)
        r = run_bytes("check", "secret.py", "ok", prefix=prefix)
        eq(r.code, 2, r.err)
        check("xpuify: error: secret.py: cannot open: Permission denied" in r.err, "", r.err)
        r = run_bytes("check", "locked", prefix=prefix)
        eq(r.code, 2, "a named directory that cannot be read is an input error")
        check("xpuify: error: locked: cannot read directory: Permission denied" in r.err, "", r.err)
        r = run_bytes("fix", "--target", "accelerator", ".", prefix=prefix)
        # everything readable is fixed (load()'s .cuda() too: the file imports only torch and nothing in reach has
        # a .cuda() of another meaning), so no finding remains; the unreadable ones are warnings
        eq(r.code, 0, r.err)
        check("torch.accelerator.synchronize()" in read("ok/a.py") and ".cuda(" not in read("ok/a.py"),
              "the readable file is fixed", read("ok/a.py"))
        check("secret.py: cannot open: Permission denied" in r.err, "the skipped file is named", r.err)
    finally:
        os.chmod("locked", 0o755)
        os.chmod("secret.py", 0o644)
    eq(read("secret.py"), CUDA)
    eq(read("locked/b.py"), CUDA)


def test_fix_leaves_read_only_files_and_directories_alone(d):
    write("ro.py", CUDA)
    write("rw.py", CUDA)
    os.chmod("ro.py", 0o444)
    r = run("fix", "--target", "accelerator", ".")
    eq(r.code, 2, r)
    check("xpuify: error: ro.py: file is read-only; left untouched" in r.err, "", r)
    eq(read("ro.py"), CUDA)
    eq(os.stat("ro.py").st_mode & 0o777, 0o444)
    check("torch.accelerator.synchronize()" in read("rw.py"), "the writable file is fixed", r)
    # a writable file in a directory nobody may write: no temporary file can be made beside it
    prefix = as_nobody()
    open_up(d)
    write("rodir/a.py", CUDA)
    os.chmod("rodir/a.py", 0o666)
    os.chmod("rodir", 0o555)
    try:
        r = run_bytes("fix", "--target", "accelerator", "rodir", prefix=prefix)
        eq(r.code, 2, r.err)
        check("rodir/a.py: cannot create a temporary file beside it: Permission denied" in r.err, "", r.err)
    finally:
        os.chmod("rodir", 0o755)
    eq(read("rodir/a.py"), CUDA)
    eq(sorted(os.listdir("rodir")), ["a.py"])


def leftovers(root):
    return [os.path.join(p, f) for p, _, fs in os.walk(root) for f in fs if ".xpuify-" in f]


def test_write_failing_half_way_keeps_the_original(d):
    big = "import torch\n" + "".join(f"def f{i}():\n    torch.cuda.synchronize()\n" for i in range(400))
    write("a.py", big)
    write("b.py", CUDA)
    os.chmod("a.py", 0o640)
    r = run("fix", "--target", "accelerator", ".", env={"XPUIFY_FAULT_WRITE": "enospc"})
    eq(r.code, 2, r)
    check("a.py: write failed, original left untouched: No space left on device" in r.err, "", r)
    eq(read("a.py"), big)
    eq(read("b.py"), CUDA)
    eq(os.stat("a.py").st_mode & 0o777, 0o640)
    eq(leftovers(d), [], "no temporary file left")


def test_real_full_disk_keeps_the_original(d):
    """The same on a real full file system (a 64 KiB tmpfs), where mounting one is allowed."""
    mnt = os.path.join(d, "small")
    os.mkdir(mnt)
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt],
                                           capture_output=True).returncode != 0:
        print("# no tmpfs can be mounted here: covered by XPUIFY_FAULT_WRITE only")
        return
    try:
        src = "import torch\n" + "".join(f"def f{i}():\n    torch.cuda.synchronize()\n" for i in range(1150))
        p = os.path.join(mnt, "a.py")
        write(p, src)
        check(40000 < len(src) < 60000, "fits once, not twice")
        r = run("fix", "--target", "accelerator", mnt)
        eq(r.code, 2, r)
        check("write failed, original left untouched: No space left on device" in r.err, "", r)
        eq(read(p), src)
        eq(leftovers(mnt), [])
    finally:
        subprocess.run(["umount", mnt])


def test_sigint_during_fix_never_truncates(d):
    """Ctrl-C while `fix` rewrites many files: each file is either the original or the fully fixed text, and no
    temporary file is left behind. Half the rounds slow each write down (XPUIFY_FAULT_WRITE=slow) so that the
    signal lands while a temporary file exists."""
    body = "import torch\n\n" + "".join(
        f"def f{i}(x):\n    torch.cuda.synchronize()\n    torch.cuda.empty_cache()\n    return x\n\n" for i in range(40))
    n = 300
    ref = os.path.join(d, "ref")
    write(os.path.join(ref, "m.py"), body)
    eq(run("fix", "--target", "accelerator", ref).code in (0, 1), True)
    fixed = read(os.path.join(ref, "m.py"))
    check(fixed != body, "the reference is fixed")
    partial_seen = 0
    for attempt, (delay, fault) in enumerate(((0.0, ""), (0.05, ""), (0.3, ""), (0.0, "slow"), (0.05, "slow"),
                                               (0.3, "slow"))):
        tree = os.path.join(d, f"t{attempt}")
        for i in range(n):
            write(os.path.join(tree, f"m{i:04d}.py"), body)
        first = os.path.join(tree, "m0000.py")
        # a suite launched without job control (`cmd &` in a script, nohup) inherits SIGINT ignored, and exec
        # keeps it ignored: the child gets the default disposition back, as a terminal's Ctrl-C would find it
        p = subprocess.Popen([XPUIFY, "fix", "-q", "--target", "accelerator", tree], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, env=dict(os.environ, XPUIFY_FAULT_WRITE=fault),
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        t0 = time.time()
        while p.poll() is None and read(first) == body and time.time() - t0 < 120:
            time.sleep(0.002)
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        err = p.communicate(timeout=120)[1].decode("utf-8", "replace")
        sanitizer_check(Result(p.returncode, "", err))
        states = {"original": 0, "fixed": 0}
        for i in range(n):
            t = read(os.path.join(tree, f"m{i:04d}.py"))
            check(t in (body, fixed), f"m{i:04d}.py is neither original nor fully fixed ({len(t)} bytes)", t[:300])
            states["original" if t == body else "fixed"] += 1
        eq(leftovers(tree), [], "temporary files left behind")
        if states["original"] and states["fixed"]:
            partial_seen += 1
            eq(p.returncode, -signal.SIGINT, "interrupted by the signal")
    check(partial_seen, "no run was interrupted half-way: the test proved nothing (machine too fast or too slow?)")


def test_report_write_failure_is_an_error(d):
    write("a.py", CUDA)
    for verb in ("check", "fix"):
        r = run(verb, "--target", "accelerator", "-o", "/dev/full", "a.py")
        eq(r.code, 2, f"{verb} -o /dev/full")
        # check names the file ("writing the report to /dev/full failed"), fix does not
        check("writing the report" in r.err and "failed" in r.err, verb, r)


if __name__ == "__main__":
    main(globals())
