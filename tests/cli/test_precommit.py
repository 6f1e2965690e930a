"""End-to-end tests of the pre-commit hooks (.pre-commit-hooks.yaml) with the real pre-commit (`try-repo` runs the
hooks of this checkout, uncommitted changes included), and of the options they rely on."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import ROOT, XPUIFY, check, eq, main, need_tool, read, run, write  # noqa: E402

CUDA = "import torch\nx = torch.zeros(1).cuda()\ntorch.cuda.synchronize()\n"


def precommit(*args):
    env = dict(os.environ, PATH=os.path.dirname(XPUIFY) + os.pathsep + os.environ.get("PATH", ""),
               PRE_COMMIT_HOME=os.path.abspath(".pc-home"), PRE_COMMIT_COLOR="never", NO_COLOR="1",
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    p = subprocess.run(["pre-commit", "try-repo", ROOT, *args], capture_output=True, text=True, env=env, timeout=300)
    return p.returncode, p.stdout + p.stderr


def project():
    subprocess.run(["git", "init", "-q", "proj"], check=True)
    os.chdir("proj")
    write(".xpuify.yml", "exclude: [gen]\n")
    write("a.py", CUDA)
    write("gen/x.py", CUDA)
    write("clean.py", "x = 1\n")
    write(".gitignore", ".pc-home/\n")
    subprocess.run(["git", "add", "."], check=True)


def test_check_hook(d):
    need_tool("pre-commit", "pre-commit")
    project()
    code, out = precommit("xpuify-check", "--all-files")
    eq(code, 1, out)
    check("xpuify check" in out and "Failed" in out, "hook ran and failed", out)
    check("a.py:2:" in out and "gen/x.py" not in out, "excluded file not checked", out)
    code, out = precommit("xpuify-check", "--files", "gen/x.py")  # only an excluded file: nothing to check
    eq(code, 0, out)
    code, out = precommit("xpuify-check", "--files", "clean.py")
    eq(code, 0, out)
    code, out = precommit("xpuify-check", "--files", "README.md")  # no file of ours: pre-commit skips the hook
    eq(code, 0, out)
    check("Skipped" in out, "skipped", out)


def test_fix_hook(d):
    project()
    code, out = precommit("xpuify-fix", "--files", "a.py", "gen/x.py")
    eq(code, 1, out)  # it changed a file (and one finding needs --unsafe-fixes)
    check("files were modified by this hook" in out, "pre-commit saw the change", out)
    check("torch.cuda.synchronize" not in read("a.py"), "fixed", read("a.py"))
    eq(read("gen/x.py"), CUDA)


def test_no_files_means_nothing_to_check(d):
    write("a.py", CUDA)
    r = run("check", "--force-exclude", "--no-default-path")
    eq((r.code, r.out.strip()), (0, "All checks passed (0 files checked)."))
    r = run("fix", "--force-exclude", "--no-default-path")
    eq(r.code, 0, r)
    eq(read("a.py"), CUDA)
    eq(run("check").code, 1)  # without the option: the working directory


if __name__ == "__main__":
    main(globals())
