"""End-to-end tests of the command-line habits users bring from ruff and git: "did you mean" for a mistyped verb,
option or rule code (on the command line and in .xpuify.yml), and when reports get colour (--color, NO_COLOR,
FORCE_COLOR, CLICOLOR_FORCE, TERM=dumb, a terminal or a pipe)."""
import os
import pty
import select
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import XPUIFY, check, eq, main, run, write  # noqa: E402

CUDA = "import torch\ntorch.cuda.synchronize()\n"
ESC = "\033["


def test_did_you_mean_for_verbs_options_and_rule_codes(d):
    write("a.py", CUDA)
    cases = [
        (("chek", "."), "unknown command `chek`; did you mean `check`?"),
        (("check", "--formt", "json", "a.py"), "unknown option `--formt`; did you mean `--format`?"),
        (("check", "--exlude=x", "a.py"), "unknown option `--exlude=x`; did you mean `--exclude`?"),
        (("check", "--no-cahce", "a.py"), "did you mean `--no-cache`?"),
        (("fix", "--unsafe-fix", "a.py"), "unknown option `--unsafe-fix`; did you mean `--unsafe-fixes`?"),
        (("check", "--select", "XPU2O1", "a.py"), "`XPU2O1` matches no rule code, code prefix or rule name; did you "
                                                  "mean `XPU201`?"),
        (("check", "--ignore", "cuda-stream-events", "a.py"), "did you mean `cuda-stream-event`?"),
        (("rule", "cuda-memory-apis"), "no rule `cuda-memory-apis`; did you mean `cuda-memory-api`?"),
    ]
    for args, want in cases:
        r = run(*args)
        eq(r.code, 2, r)
        check(want in r.err, f"{args}: {want}", r)
    # nothing close: no guess
    for args in (("zzzz",), ("check", "--qqqqqq", "a.py"), ("rule", "XYZ999")):
        r = run(*args)
        eq(r.code, 2, r)
        check("did you mean" not in r.err, f"{args}: no suggestion", r)
    # the configuration file's selectors get the same help, with their place
    write(".xpuify.yml", "select: [XPU1O1]\n")
    r = run("check", "a.py")
    eq(r.code, 2, r)
    check(".xpuify.yml:1:10: `select`: `XPU1O1`" in r.err and "did you mean `XPU101`?" in r.err, "config", r)


def on_tty(args, env):
    """Runs xpuify with stdout on a pseudo-terminal; returns what the terminal showed."""
    master, slave = pty.openpty()
    p = subprocess.Popen([XPUIFY, *args], stdout=slave, stderr=subprocess.DEVNULL, env=env)
    os.close(slave)
    out = b""
    while True:
        r, _, _ = select.select([master], [], [], 30)
        if not r:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    p.wait(timeout=60)
    os.close(master)
    return out.decode("utf-8", "replace")


def test_colour_follows_the_flag_and_the_environment(d):
    write("a.py", CUDA)
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "TERM")}
    base["TERM"] = "xterm-256color"
    args = ["check", "--no-cache", "--no-config", "a.py"]

    def tty(extra=(), **env):
        return ESC in on_tty(args + list(extra), dict(base, **env))

    def pipe(extra=(), **env):
        p = subprocess.run([XPUIFY, *args, *extra], capture_output=True, text=True, env=dict(base, **env))
        eq(p.returncode, 1, p.stderr)
        return ESC in p.stdout

    eq(tty(), True, "a terminal gets colour")
    eq(tty(TERM="dumb"), False, "TERM=dumb gets none")
    eq(tty(NO_COLOR="1"), False, "NO_COLOR")
    eq(tty(["--color", "never"]), False, "--color never")
    eq(pipe(), False, "a pipe gets none")
    eq(pipe(FORCE_COLOR="1"), True, "FORCE_COLOR in a CI log")
    eq(pipe(CLICOLOR_FORCE="1"), True, "CLICOLOR_FORCE")
    eq(pipe(CLICOLOR_FORCE="0"), False, "CLICOLOR_FORCE=0 forces nothing")
    eq(pipe(FORCE_COLOR="1", TERM="dumb"), True, "forced even on a dumb terminal")
    eq(pipe(FORCE_COLOR="1", NO_COLOR="1"), False, "NO_COLOR wins over FORCE_COLOR")
    eq(pipe(["--color", "always"], NO_COLOR="1"), True, "the flag wins over the environment")
    eq(pipe(["--color=never"], FORCE_COLOR="1"), False, "--color=never")
    # colour never reaches a report file or a machine format
    eq(pipe(["--color", "always", "--format", "json"]), False, "json")
    r = run(*args, "--color", "always", "-o", "out.txt")
    check(ESC not in open("out.txt").read(), "file")
    r = run(*args, "--color", "sometimes")
    check(r.code == 2 and "--color: `sometimes` is not one of auto, always, never" in r.err, "bad value", r)


if __name__ == "__main__":
    main(globals())
