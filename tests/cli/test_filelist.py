"""End-to-end tests of the file-list mode pre-commit and CI use (files named on the command line, not a directory):
the same findings as the walk of the directory, and no per-file set-up work (no git repository opened per file,
counted with strace when it is installed)."""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import XPUIFY, check, eq, fixture, main, run, skip  # noqa: E402


def make_tree(n_dirs=20):
    """A git work tree of n_dirs package directories holding copies of the labelled Python fixtures."""
    src = fixture("python")
    names = sorted(f for f in os.listdir(src) if f.endswith(".py"))[:10]
    files = []
    for i in range(n_dirs):
        d = os.path.join("proj", f"pkg{i:02}", "sub")
        os.makedirs(d)
        for f in names:
            shutil.copy(os.path.join(src, f), d)
            files.append(os.path.join(d, f))
    subprocess.run(["git", "init", "-q", "proj"], check=True)
    with open("proj/.gitignore", "w") as f:
        f.write("ignored/\n")
    return sorted(files)


def findings(args):
    r = run("check", "--format", "json", "--no-cache", "--no-config", "--exit-zero", *args)
    eq(r.code, 0, r)
    return sorted((f["path"].removeprefix("./"), f["line"], f["code"]) for f in r.json())


def test_a_file_list_finds_what_the_walk_finds(d):
    files = make_tree()
    walked = findings(["proj"])
    check(len(walked) > 100, "the tree has findings", len(walked))
    eq(findings(files), walked)
    # a named file is checked even where .gitignore covers it (as ruff does); the walk leaves it out
    os.makedirs("proj/ignored")
    shutil.copy(files[0], "proj/ignored/x.py")
    check(not any(p.startswith("proj/ignored/") for p, _, _ in findings(["proj"])), "the walk skips it")
    check(any(p == "proj/ignored/x.py" for p, _, _ in findings(["proj/ignored/x.py"])), "a named file is read")


def test_no_per_file_setup_for_named_files(d):
    if not shutil.which("strace"):
        skip("strace is not installed")
    files = make_tree()
    # LeakSanitizer cannot run under ptrace (the sanitizer pass of CI): the count is about system calls, not leaks
    env = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    p = subprocess.run(["strace", "-f", "-c", "-o", "trace.txt", XPUIFY, "check", "--no-cache", "--no-config",
                        "--exit-zero", "-q", "-f", "json", *files], capture_output=True, text=True, env=env)
    eq(p.returncode, 0, p.stderr)
    calls = {}
    for line in open("trace.txt"):
        m = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)$", line)
        if m:
            calls[m.group(2)] = int(m.group(1))
    stats = sum(v for k, v in calls.items() if "stat" in k) + calls.get("readlink", 0) + calls.get("access", 0)
    # reading a file costs an open, a stat and a close; the set-up around it (configuration per directory, the
    # torch requirement per directory) is shared. Before, every named file opened the git repository: ~70 calls.
    # The project model (analyzer/project) scans the project's .py files once per run, whatever was named: here
    # the project is these files, so that scan adds about three calls per file (a stat in the walk, the read's).
    # Per directory there is set-up too, shared by its files: the helper placement looks for an existing helper,
    # and imports are resolved against the project (`import unittest`: is there a unittest/ or unittest.py here?):
    # ~20 calls per directory with these fixtures (20 directories of 10 files), which grow with what they import.
    dirs = len({os.path.dirname(f) for f in files})
    check(stats < 5 * len(files) + 60 * dirs, f"{stats} stat/readlink/access calls for {len(files)} named files "
          f"in {dirs} directories", calls)


if __name__ == "__main__":
    main(globals())
