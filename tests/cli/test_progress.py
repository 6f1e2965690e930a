"""The progress line of `fix` and `report` (as `check` has, cli/cli_progress.c): shown on a terminal (stderr on a
pseudo-terminal), erased before any other message and at the end, never when stderr is not a terminal, and not
with --no-progress."""
import os
import pty
import re
import select
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import XPUIFY, check, eq, fixture, main, read, run, write  # noqa: E402

CUDA = "import torch\nx = y.cuda()\ntorch.cuda.synchronize()\n"
N = 300


def run_on_tty(args, env):
    """Runs xpuify with stderr on a pseudo-terminal; returns (exit code, what the terminal showed)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([XPUIFY, *args], stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    out = b""
    while True:
        r, _, _ = select.select([master], [], [], 60)
        if not r:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    code = p.wait(timeout=120)
    os.close(master)
    return code, out.decode("utf-8", "replace")


def project():
    for i in range(N):
        write(f"p/m{i:03}.py", CUDA)
    shutil.copy(fixture("programs", "saxpy.cu"), "p/saxpy.cu")
    return N + 1


def no_message_glued_to_the_line(shown):
    """Every message starts on a line of its own: never right after the progress text."""
    glued = re.findall(r"\(\d+%\)[^\r\n]", shown)
    check(not glued, "a message was printed after the progress line without erasing it", repr(shown[-600:]))


def test_fix_shows_progress_on_a_terminal(d):
    total = project()
    env = dict(os.environ, XPUIFY_PROGRESS_DELAY_MS="0")
    code, shown = run_on_tty(["fix", "-j", "1", "p"], env)
    eq(code, 0, "everything is fixed (saxpy.cu's kernel is translated, docs/c-kernels.md)")
    check(f"xpuify: fixed {total}/{total} files (100%)" in shown, "progress shown on a terminal", repr(shown[-600:]))
    check(re.search(r"xpuify: fixed \d+/%d files \(\d+%%\)" % total, shown.split(f"{total}/{total}")[0]),
          "it counts up before the end", repr(shown[:300]))
    check("xpuify: wrote the device helper" in shown, "the helper message is shown", shown[-600:])
    no_message_glued_to_the_line(shown)
    last = shown.rindex("(100%)")
    check(shown[last:].startswith("(100%)\r\x1b[K"), "the line is erased at the end", repr(shown[-120:]))
    check("xpuify: wrote the portable layer" in shown[last:], "the C file's layer, said on a clean line")
    check("xpuify_device.synchronize()" in read("p/m000.py"), "the files were fixed")


def test_fix_is_silent_off_a_terminal_and_with_no_progress(d):
    project()
    env = dict(os.environ, XPUIFY_PROGRESS_DELAY_MS="0")
    code, shown = run_on_tty(["fix", "--no-progress", "--diff", "p"], env)
    eq(code, 1)
    check("files (" not in shown and "\x1b[K" not in shown, "--no-progress: no progress line", repr(shown[-300:]))
    r = run("fix", "p", env={"XPUIFY_PROGRESS_DELAY_MS": "0"})
    check("files (" not in r.err and "\r" not in r.err, "stderr not a terminal: silent", r.err[-300:])
    check("Fixed " in r.out, "the run itself happened", r)


def test_report_shows_progress_in_both_stages(d):
    total = project()
    env = dict(os.environ, XPUIFY_PROGRESS_DELAY_MS="0")
    code, shown = run_on_tty(["report", "--html", "r.html", "p"], env)
    eq(code, 0)
    check(f"xpuify: checked {total}/{total} files (100%)" in shown, "the check stage", repr(shown[-600:]))
    check(re.search(r"xpuify: computed the fixes of (\d+)/\1 files \(100%\)", shown), "the fix stage",
          repr(shown[-600:]))
    no_message_glued_to_the_line(shown)
    check("xpuify: wrote the report r.html" in shown, "the closing message", repr(shown[-300:]))
    code, shown = run_on_tty(["report", "--no-progress", "--html", "r2.html", "p"], env)
    check("files (" not in shown, "--no-progress", repr(shown))
    r = run("report", "--html", "r3.html", "p", env={"XPUIFY_PROGRESS_DELAY_MS": "0"})
    eq(r.code, 0)
    check("files (" not in r.err and "\r" not in r.err, "stderr not a terminal: silent", r.err[-300:])
    # a short run under the default delay shows nothing
    env.pop("XPUIFY_PROGRESS_DELAY_MS")
    code, shown = run_on_tty(["report", "--html", "r4.html", "p/m000.py"], env)
    check("files (" not in shown, "a short run: no line", repr(shown))


if __name__ == "__main__":
    main(globals())
