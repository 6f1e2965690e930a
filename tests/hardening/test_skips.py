"""What a run does not check is never silent (issue 19, items 2, 11, 17 and "everything a run skips"): directories
deeper than the walk's limit, FIFOs (named or walked: never opened, never a hang), binary, oversized and unreadable
files appear in every report format (text and concise list them and never say "All checks passed", JSON as entries
with code null, SARIF as invocations[].toolExecutionNotifications, JUnit as testcases in error, GitHub and GitLab as
annotations and issues), and under CI=true a run that skipped anything exits 2."""
import json
import os
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import check, eq, main, read, run, write  # noqa: E402

CUDA = "import torch\ntorch.cuda.synchronize()\n"
DEEP_REASON = "more than 256 directories deep; not walked"


def deep_tree(levels=300):
    """a CUDA file 300 directories down, and a clean file at the top"""
    p = os.path.join(*(["d"] * levels))
    os.makedirs(p)
    write(os.path.join(p, "a.py"), CUDA)
    write("top.py", "import torch\n")
    return os.path.join(*(["d"] * 257))  # the first directory not walked


def reported(fmt, out, path, reason):
    """True when the report in format fmt names path as not checked, with reason."""
    if fmt in ("text", "concise"):
        return "All checks passed" not in out and any(
            line.startswith(f"{path}: not checked: ") and reason in line for line in out.splitlines())
    if fmt == "json":
        return any(e["path"] == path and e["code"] is None and e["name"] == "not-checked" and reason in e["message"]
                   for e in json.loads(out))
    if fmt == "sarif":
        run0 = json.loads(out)["runs"][0]
        notes = [n for inv in run0.get("invocations", []) for n in inv.get("toolExecutionNotifications", [])]
        return any(n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == path and reason in n["message"]["text"]
                   and n["descriptor"]["id"] == "xpuify/not-checked" for n in notes)
    if fmt == "junit":
        root = ET.fromstring(out)
        cases = [c for c in root.iter("testcase") if c.get("file") == path and c.find("error") is not None]
        return bool(cases) and reason in cases[0].find("error").get("message") and int(root.get("errors")) >= 1
    if fmt == "github":
        return any(line.startswith("::") and f"file={path}," in line and reason in line for line in out.splitlines())
    if fmt == "gitlab":
        return any(i["check_name"] == "xpuify/not-checked" and i["location"]["path"] == path and reason in i["description"]
                   for i in json.loads(out))
    raise AssertionError(fmt)


FORMATS = ("text", "concise", "json", "sarif", "junit", "github", "gitlab")


def test_a_directory_too_deep_is_reported_in_every_format(d):
    skipped = deep_tree()
    for fmt in FORMATS:
        r = run("check", "--no-cache", "--format", fmt, ".")
        eq(r.code, 0, f"{fmt}: outside CI a skip is a warning, the exit code still says findings or none")
        check(reported(fmt, r.out, skipped, DEEP_REASON), f"{fmt}: the skipped directory is in the report", r)
        check(f"warning: {skipped}: {DEEP_REASON}" in r.err, f"{fmt}: and on stderr", r)
    r = run("check", "--no-cache", ".")
    check("No findings in 1 file checked, 1 not checked." in r.out, "the summary counts it", r)
    # -q silences the warning, not the report
    r = run("check", "-q", "--no-cache", "--format", "json", ".")
    check(reported("json", r.out, skipped, DEEP_REASON) and r.err == "", "", r)


def test_under_ci_a_run_that_skipped_anything_exits_2(d):
    skipped = deep_tree()
    r = run("check", "--no-cache", ".", env={"CI": "true"})
    eq(r.code, 2, r)
    check("1 path was not checked (see above); under CI=true that fails the run" in r.err, "", r)
    check(reported("text", r.out, skipped, DEEP_REASON), "", r)
    r = run("check", "--no-cache", "--exit-zero", "--format", "sarif", ".", env={"CI": "true"})
    eq(r.code, 2, "--exit-zero silences findings, not errors")
    inv = json.loads(r.out)["runs"][0]["invocations"][0]
    eq((inv["executionSuccessful"], inv["toolExecutionNotifications"][0]["level"]), (False, "warning"),
       "a walked skip is a warning notification, and under CI the run did not succeed")
    # a binary file found by the walk is a skip too
    os.system("rm -rf d")
    write("blob.py", b"\x00\x01\x02torch.cuda\n", "wb")
    r = run("check", "--no-cache", ".", env={"CI": "true"})
    eq(r.code, 2, r)
    r = run("check", "--no-cache", ".")
    eq(r.code, 0, r)
    check("blob.py: not checked:" in r.out and "All checks passed" not in r.out, "", r)


def test_binary_and_oversized_files_are_in_every_format(d):
    write("ok.py", CUDA)
    write("blob.py", b"import torch\x00\n", "wb")
    write("big.py", "import torch\n" + "x = 1\n" * 2000)
    for fmt in FORMATS:
        r = run("check", "--no-cache", "--max-file-size", "4000", "--format", fmt, ".")
        eq(r.code, 1, f"{fmt}: the finding of ok.py decides the exit code")
        for path in ("blob.py", "big.py"):
            reason = "over the 4000-byte limit" if path == "big.py" else ""
            check(reported(fmt, r.out, path, reason), f"{fmt}: {path} is reported as not checked", r)


def test_a_fifo_never_blocks_and_is_reported(d):
    os.mkfifo("pipe.py")
    write("a.py", CUDA)
    for verb in (("check", "--no-cache"), ("fix", "--target", "accelerator", "--diff")):
        r = run(*verb, "pipe.py", "a.py", timeout=20)
        eq(r.code, 2, f"{verb[0]}: a named FIFO is an input error")
        check("pipe.py: not a regular file (a FIFO)" in r.err, verb[0], r)
    r = run("check", "--no-cache", "--format", "sarif", "pipe.py", timeout=20)
    inv = json.loads(r.out)["runs"][0]["invocations"][0]
    eq(inv["executionSuccessful"], False, "a named path not checked is an error notification")
    eq(inv["toolExecutionNotifications"][0]["level"], "error")
    # walked: never opened, reported as not checked
    r = run("check", "--no-cache", "--format", "json", ".", timeout=20)
    eq(r.code, 1, r)
    check(reported("json", r.out, "pipe.py", "not a regular file (a FIFO)"), "", r)


def test_a_run_with_an_error_never_says_all_checks_passed(d):
    """Item 17: a named path that cannot be checked made the summary say "All checks passed (1 file checked)"."""
    write("a.py", "import torch\n")
    os.mkfifo("pipe.py")
    r = run("check", "--no-cache", "a.py", "pipe.py", "missing.py", timeout=20)
    eq(r.code, 2, r)
    check("All checks passed" not in r.out, "", r)
    check("No findings in 1 file checked, 1 not checked; the run had errors (see above)." in r.out, "", r)
    r = run("check", "--no-cache", "a.py")
    check("All checks passed (1 file checked)." in r.out, "a clean run still says so", r)


def test_a_read_only_file_gets_no_helper_and_no_advice_for_another_target(d):
    """Item 17: fix wrote xpuify_device.py for a read-only file it then left untouched, and described what remained
    with torch.accelerator's names although compat was chosen."""
    write("ro.py", CUDA)
    os.chmod("ro.py", 0o444)
    r = run("fix", "--target", "compat", ".")
    eq(r.code, 2, r)
    check("xpuify: error: ro.py: file is read-only; left untouched" in r.err, "", r)
    eq(sorted(os.listdir(".")), ["ro.py"], "no helper written for a file that is not written")
    check("use `xpuify_device.synchronize`" in r.out and "torch.accelerator" not in r.out,
          "what remains is described for the compat target", r)
    eq(read("ro.py"), CUDA)


def git(*args):
    import subprocess
    subprocess.run(["git", *args], check=True, capture_output=True)


def test_tracked_files_are_checked_even_when_gitignore_matches_them(d):
    """Item 4: `git add -f` puts a file in the repository that a committed .gitignore matches; gitignore rules are
    for untracked files, so the gate checks it (ruff and ripgrep do not; a gate must)."""
    git("init", "-q", ".")
    for p in ("gen/a.py", "vendor/deep/b.py", "vendor/untracked.py", "top.py", "scratch.py"):
        write(p, CUDA)
    write(".gitignore", "gen/\nvendor/\ntop.py\nscratch.py\n")
    git("add", ".gitignore")
    git("add", "-f", "gen/a.py", "vendor/deep/b.py", "top.py")
    r = run("check", "--no-cache", "--format", "json", ".")
    eq(r.code, 1, r)
    eq(sorted({f["path"] for f in r.json()}), ["gen/a.py", "top.py", "vendor/deep/b.py"],
       "tracked files are checked; untracked ignored ones (vendor/untracked.py, scratch.py) are not")
    r = run("check", "--no-cache", "--format", "json", "vendor")
    eq(sorted({f["path"] for f in r.json()}), ["vendor/deep/b.py", "vendor/untracked.py"],
       "a named directory is checked whole, as before")


if __name__ == "__main__":
    main(globals())
