"""End-to-end tests of the pre-commit hooks (.pre-commit-hooks.yaml, packaging/pre-commit-hook.sh) with the real
pre-commit and no network: `try-repo` runs the hooks of this checkout (uncommitted changes included), and a
commit in a throwaway repository runs them from a local hook repository with an xpuify installed by `make install`
(packaging/install.sh) into a temporary prefix, as docs/ci.md tells users to."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import ROOT, XPUIFY, check, eq, main, need_tool, read, run, write  # noqa: E402

CUDA = "import torch\nx = torch.zeros(1).cuda()\ntorch.cuda.synchronize()\n"


def tools_only_path(d):
    """A PATH with every command of this one except xpuify (even one installed in /usr/bin): one directory of
    links, first occurrence winning as on PATH."""
    need_tool("pre-commit", "pre-commit")
    bindir = os.path.join(d, "tools-bin")
    if not os.path.isdir(bindir):
        os.makedirs(bindir)
        for entry in os.environ.get("PATH", "").split(os.pathsep):
            if not os.path.isdir(entry):
                continue
            for name in os.listdir(entry):
                target, link = os.path.join(entry, name), os.path.join(bindir, name)
                if name != "xpuify" and not os.path.lexists(link) and os.access(target, os.X_OK):
                    os.symlink(target, link)
    return bindir


def hook_env(path):
    return dict(os.environ, PATH=path, PRE_COMMIT_HOME=os.path.abspath(".pc-home"), PRE_COMMIT_COLOR="never",
                NO_COLOR="1", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
                GIT_COMMITTER_EMAIL="t@t")


def precommit(*args, path=None):
    need_tool("pre-commit", "pre-commit")
    env = hook_env(path or os.path.dirname(XPUIFY) + os.pathsep + os.environ.get("PATH", ""))
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


def test_check_hook_covers_the_text_files_the_text_rules_check(d):
    project()
    texts = {"Dockerfile": "FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\n",
             "docker/Dockerfile.train": "RUN nvidia-smi\n",
             "requirements.txt": "torch\ncupy-cuda12x\n",
             "requirements-dev.txt": "pynvml\n",
             ".github/workflows/ci.yml": "jobs:\n  t:\n    runs-on: [self-hosted, gpu]\n    steps:\n      - run: nvidia-smi\n",
             "scripts/run.sh": "#!/bin/sh\nnvidia-smi -L\n",
             "CMakeLists.txt": "find_package(CUDAToolkit REQUIRED)\n"}
    for path, text in texts.items():
        write(path, text)
    subprocess.run(["git", "add", "."], check=True)
    code, out = precommit("xpuify-check", "--files", *texts)
    eq(code, 1, out)
    # each file was passed to xpuify, and each has a finding (what a user reads: its own path with a line)
    for path in texts:
        check(f"{path}:1:" in out or f"{path}:2:" in out or f"{path}:5:" in out, f"{path} is checked", out)


def test_hook_without_xpuify_says_how_to_install_it(d):
    project()
    code, out = precommit("xpuify-check", "--files", "a.py", path=tools_only_path(d))
    eq(code, 1, out)
    check("`xpuify` is not on PATH" in out and "make install" in out and "apt install ./build/xpuify_*.deb" in out,
          "the hook names both ways to install it", out)


def hook_repository(d):
    """A local hook repository holding this checkout's hooks (committed there: `repo:` needs a commit)."""
    repo = os.path.join(d, "hooks")
    for f in (".pre-commit-hooks.yaml", "packaging/pre-commit-hook.sh"):
        os.makedirs(os.path.dirname(os.path.join(repo, f)), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, f), os.path.join(repo, f))
    env = hook_env(os.environ["PATH"])
    subprocess.run(["git", "init", "-q", repo], check=True)
    subprocess.run(["git", "-C", repo, "add", "."], check=True)
    subprocess.run(["git", "-C", repo, "commit", "-q", "-m", "hooks"], check=True, env=env)
    rev = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout
    return repo, rev.strip()


def test_commit_with_the_fix_hook_needs_the_helper_staged(d):
    # xpuify installed as `make install` does, into a prefix of its own: the only xpuify on the hook's PATH
    prefix = os.path.join(d, "prefix")
    p = subprocess.run([os.path.join(ROOT, "packaging", "install.sh"), "install", "", prefix, XPUIFY],
                       capture_output=True, text=True)
    eq(p.returncode, 0, p.stdout + p.stderr)
    path = os.path.join(prefix, "bin") + os.pathsep + tools_only_path(d)
    repo, rev = hook_repository(d)
    subprocess.run(["git", "init", "-q", "proj"], check=True)
    os.chdir("proj")
    env = hook_env(path)
    write(".pre-commit-config.yaml", f"repos:\n  - repo: {repo}\n    rev: {rev}\n    hooks:\n      - id: xpuify-fix\n")
    write(".xpuify.yml", "target: compat\n")
    write("a.py", "import torch\n\ntorch.cuda.synchronize()\n")
    write(".gitignore", ".pc-home/\n")
    git = lambda *a: subprocess.run(["git", *a], capture_output=True, text=True, env=env, timeout=300)
    p = subprocess.run(["pre-commit", "install"], capture_output=True, text=True, env=env)
    eq(p.returncode, 0, p.stdout + p.stderr)
    git("add", ".")
    p = git("commit", "-m", "cuda")
    check(p.returncode != 0, "the first commit stops", p.stdout + p.stderr)
    out = p.stdout + p.stderr
    check("xpuify-fix: the fixed files need these new files, which are not staged:" in out, "the message", out)
    check("  xpuify_device.py" in out and "git add xpuify_device.py" in out, "names the helper and the command", out)
    check("xpuify_device.synchronize()" in read("a.py"), "a.py was fixed", read("a.py"))
    # staged alone, the fixed file would still be refused: the helper is untracked
    git("add", "a.py")
    p = git("commit", "-m", "cuda")
    check(p.returncode != 0 and "xpuify_device.py" in p.stdout + p.stderr, "still refused", p.stdout + p.stderr)
    git("add", "xpuify_device.py")
    p = git("commit", "-m", "cuda")
    eq(p.returncode, 0, p.stdout + p.stderr)
    files = git("ls-files").stdout.split()
    check("xpuify_device.py" in files and "a.py" in files, "committed together", files)


def test_docs_name_no_revision_that_does_not_exist(d):
    # a `rev:` in docs/ci.md is a placeholder or a tag/commit this repository has (v0.1.0 was named, never tagged)
    import re
    revs = re.findall(r"^\s*rev:\s*(\S+)", read(os.path.join(ROOT, "docs", "ci.md")), re.M)
    check(revs, "docs/ci.md shows a pre-commit configuration")
    for rev in revs:
        if rev.startswith("<"):
            continue
        p = subprocess.run(["git", "-C", ROOT, "rev-parse", "--verify", "-q", rev + "^{commit}"], capture_output=True)
        eq(p.returncode, 0, f"docs/ci.md names rev {rev}, which this repository does not have")


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
