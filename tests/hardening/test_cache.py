"""The results cache (.xpuify_cache/): a second run serves every unchanged file from the cache with the same
report (files the prefilter rejects are neither looked up nor stored); anything that could change a file's findings (its content, the rules, the selection, the fix target and
options, the per-file helper import, the xpuify build) misses; --no-cache / --cache-dir / XPUIFY_CACHE_DIR; a
damaged cache file is ignored and rewritten; concurrent runs never break it. Speed is measured by
bench/cache_bench.sh, not here. XPUIFY_CACHE_STATS=1 makes xpuify print "cache: N hits, M misses"."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import ROOT, XPUIFY, check, eq, main, read, run, write  # noqa: E402

STATS = {"XPUIFY_CACHE_STATS": "1"}


def stats(r):
    m = re.search(r"cache: (\d+) hits, (\d+) misses", r.err)
    check(m, "no cache statistics line", r)
    return int(m.group(1)), int(m.group(2))


def stamped(r):
    m = re.search(r"cache: \d+ hits, \d+ misses, (\d+) files unchanged by size and times", r.err)
    check(m, "no cache statistics line", r)
    return int(m.group(1))


def tree(d):
    src = os.path.join(d, "src")
    shutil.copytree(os.path.join(ROOT, "fixtures", "python"), src)
    return src, len(glob.glob(os.path.join(src, "**", "*.py"), recursive=True))


def cache_files(d):
    return glob.glob(os.path.join(d, ".xpuify_cache", "v1", "*.bin"))


def test_second_run_is_served_from_the_cache_with_the_same_report(d):
    src, n = tree(d)
    for fmt in ("json", "sarif", "text", "concise", "github"):
        r1 = run("check", "--format", fmt, "--exit-zero", "--no-ignore", "src", env=STATS)
        r2 = run("check", "--format", fmt, "--exit-zero", "--no-ignore", "src", env=STATS)
        eq(r2.out, r1.out, f"{fmt}: the cached report differs")
        eq(stats(r2), (n, 0), f"{fmt}: every file from the cache")
        r3 = run("check", "--format", fmt, "--exit-zero", "--no-ignore", "--no-cache", "src")
        eq(r3.out, r1.out, f"{fmt}: the uncached report differs")
    eq(stats(r1)[1], 0, "the formats share the cache: only the very first run missed")
    eq(run("check", "--no-ignore", "src").code, 1, "the exit code of a cached run still says findings")
    check(os.path.isfile(".xpuify_cache/CACHEDIR.TAG") and read(".xpuify_cache/.gitignore").endswith("*\n"),
          "the cache directory is tagged and ignored by git")


def test_an_edited_file_misses_and_reports_its_new_findings(d):
    write("a.py", "import torch\ntorch.cuda.synchronize()\n")
    write("b.py", "import torch\nx = 1\n")
    run("check", "--format", "json", ".", env=STATS)
    write("b.py", "import torch\nx = torch.cuda.device_count()\n")
    r = run("check", "--format", "json", ".", env=STATS)
    eq(stats(r), (1, 1))
    eq(sorted((f["path"], f["code"]) for f in r.json()), [("a.py", "XPU202"), ("b.py", "XPU201")])
    write("a.py", "import torch\ntorch.cuda.empty_cache()\n")  # same length, new content: a content hash, not a size
    r = run("check", "--format", "json", ".", env=STATS)
    eq(stats(r), (1, 1))
    eq(sorted((f["path"], f["code"]) for f in r.json()), [("a.py", "XPU203"), ("b.py", "XPU201")])
    write("a.py", "import torch\n")  # the prefilter rejects it: neither looked up nor stored
    r = run("check", "--format", "json", ".", env=STATS)
    eq(stats(r), (1, 0))
    eq(sorted((f["path"], f["code"]) for f in r.json()), [("b.py", "XPU201")])


def test_files_the_prefilter_rejects_are_not_cached(d):
    """A file with no trigger word costs a literal scan, less than hashing it: it is neither looked up nor stored."""
    for i in range(5):
        write(f"clean{i}.py", f"import torch\nx = torch.zeros({i})\n")
    write("cuda.py", "import torch\ntorch.cuda.synchronize()\n")
    eq(stats(run("check", "--format", "json", ".", env=STATS)), (0, 1))
    r = run("check", "--format", "json", ".", env=STATS)
    eq(stats(r), (1, 0))
    eq([(f["path"], f["code"]) for f in r.json()], [("cuda.py", "XPU202")])


def test_files_unchanged_by_their_stamp_are_trusted_and_any_change_is_seen(d):
    """The stamp (device, inode, size, mtime, ctime) spares reading and hashing files that have not changed; any
    change to a file changes its ctime, even when its size and mtime are put back, and is read afresh."""
    write("hit.py", "import torch\ntorch.cuda.synchronize()\n")
    write("clean.py", "import torch\nx = torch.zeros(3)\n")
    write("nofind.py", "import torch\n# a comment on cuda\nuse_cuda = True\n")
    time.sleep(3.2)  # files changed less than 3 s before a run keep no stamp (a write in the same clock tick)
    write("fresh.py", "import torch\ntorch.cuda.empty_cache()\n")
    uncached = {f: run("check", "--format", f, "--exit-zero", "--no-cache", ".").out for f in ("json", "text")}
    first = run("check", "--format", "json", "--exit-zero", ".", env=STATS)
    eq((stats(first), stamped(first)), ((0, 3), 0), "the first run reads everything")
    for f in ("json", "text"):  # text prints the source lines: hit.py is read, its findings still come from the cache
        r = run("check", "--format", f, "--exit-zero", ".", env=STATS)
        eq(r.out, uncached[f], f"{f}: the report of a run trusting the stamps")
        eq((stats(r), stamped(r)), ((3, 0), 3), f"{f}: hit.py, clean.py, nofind.py by their stamps (the two that "
           "passed the prefilter then are cache hits without a hash), fresh.py by its content")

    # same size, same mtime, other content: the change time tells
    st = os.stat("clean.py")
    write("clean.py", "import torch\ntorch.cuda.init() \n")
    os.utime("clean.py", ns=(st.st_atime_ns, st.st_mtime_ns))
    new = os.stat("clean.py")
    eq((new.st_size, new.st_mtime_ns), (st.st_size, st.st_mtime_ns), "the test keeps size and mtime")
    r = run("check", "--format", "json", "--exit-zero", ".", env=STATS)
    check("clean.py" in {f["path"] for f in r.json()}, "the edited file's new finding is reported", r)
    eq(r.out, run("check", "--format", "json", "--exit-zero", "--no-cache", ".").out)
    eq(stamped(r), 2, "hit.py and nofind.py by their stamps")

    # a touch: new times, same content -> a hit by content hash, not a miss
    os.utime("hit.py")
    r = run("check", "--format", "json", "--exit-zero", ".", env=STATS)
    eq((stats(r), stamped(r)), ((4, 0), 1), "hit.py, clean.py, fresh.py by content, nofind.py by its stamp (then "
       "its cached findings: none)")
    # a lower --max-file-size applies to files trusted by their stamp too
    r = run("check", "--format", "json", "--exit-zero", "--max-file-size", "10", ".", env=STATS)
    eq(r.json(), [], r)
    check("nofind.py: file is" in r.err and "over the 10-byte limit" in r.err, "each file is reported too large", r)
    # a file replaced by another with the same content, size and times (new inode) is read again
    st = os.stat("nofind.py")
    shutil.copy("nofind.py", "tmp.txt")
    os.replace("tmp.txt", "nofind.py")
    os.utime("nofind.py", ns=(st.st_atime_ns, st.st_mtime_ns))
    r = run("check", "--format", "json", "--exit-zero", ".", env=STATS)
    eq(r.out, run("check", "--format", "json", "--exit-zero", "--no-cache", ".").out)


def test_configuration_is_part_of_the_key(d):
    write("a.py", "import torch\nx = torch.zeros(3).cuda()\ntorch.cuda.synchronize()\n")
    base = run("check", "--format", "json", "a.py", env=STATS)  # auto: compat (no torch requirement declared)
    eq(stats(base), (0, 1))
    variants = [
        ("--select", "XPU2"), ("--ignore", "XPU202"), ("--target", "none"), ("--target", "accelerator"),
        ("--target", "accelerator", "--torch-version", "2.0"), ("--target", "compat", "--helper-module", "devs"),
    ]
    outs = {}
    for v in variants:
        r1 = run("check", "--format", "json", *v, "a.py", env=STATS)
        eq(stats(r1), (0, 1), f"{v}: a new configuration must not reuse another's results")
        r2 = run("check", "--format", "json", *v, "a.py", env=STATS)
        eq((stats(r2), r2.out), ((1, 0), r1.out), f"{v}: its own second run hits")
        eq(r1.out, run("check", "--format", "json", "--no-cache", *v, "a.py").out, f"{v}: same as uncached")
        outs[v] = r1.out
    for v, out in outs.items():
        check(out != base.out, f"{v} reports differently from the default (findings or fixes): the test needs that")
    # extra rules change the catalog fingerprint
    write("rules/extra.yml", "rules:\n  - code: ZZZ1\n    name: zeros\n    language: python\n"
          "    message: 'zeros {name}'\n    qualnames: [torch.zeros]\n")
    r = run("check", "--format", "json", "--rules", "rules", "a.py", env=STATS)
    eq(stats(r), (0, 1))
    check("ZZZ1" in {f["code"] for f in r.json()}, "the extra rule runs", r)
    write("rules/extra.yml", "rules:\n  - code: ZZZ1\n    name: zeros\n    language: python\n"
          "    message: 'ZEROS {name}'\n    qualnames: [torch.zeros]\n")
    r = run("check", "--format", "json", "--rules", "rules", "a.py", env=STATS)
    eq(stats(r), (0, 1), "an edited rule file is a new catalog")
    check(any(f["message"].startswith("ZEROS") for f in r.json()), "", r)


def test_the_helper_import_of_each_file_is_part_of_the_key(d):
    """compat fixes import the helper relative to the package layout: adding __init__.py files changes the fix of an
    unchanged file."""
    write("pkg/sub/mod.py", "import torch\ntorch.cuda.synchronize()\n")
    def imports():
        r = run("check", "--format", "json", "--target", "compat", "pkg/sub/mod.py", env=STATS)
        edits = [e["content"] for f in r.json() if f["fix"] for e in f["fix"]["edits"]]
        return stats(r), [e for e in edits if "xpuify_device" in e and "import" in e]
    (_, miss1), before = imports()
    write("pkg/__init__.py", "")
    write("pkg/sub/__init__.py", "")
    (hits, _), after = imports()
    check(before != after, "the helper import follows the new package layout", (before, after))
    eq(hits, 0, "served from the cache with the old import")


def test_a_different_build_does_not_trust_the_cache(d):
    write("a.py", "import torch\ntorch.cuda.synchronize()\n")
    run("check", "a.py", env=STATS)
    eq(stats(run("check", "a.py", env=STATS)), (1, 0))
    other = os.path.join(d, "xpuify-rebuilt")
    shutil.copy(XPUIFY, other)
    with open(other, "ab") as f:
        f.write(b"\0rebuilt")  # trailing bytes: the same program, another executable hash
    p = subprocess.run([other, "check", "a.py"], capture_output=True, text=True, env=dict(os.environ, **STATS))
    eq(re.search(r"(\d+) hits, (\d+) misses", p.stderr).groups(), ("0", "1"), p.stderr)


def test_no_cache_cache_dir_and_environment(d):
    write("a.py", "import torch\ntorch.cuda.synchronize()\n")
    run("check", "--no-cache", "a.py")
    check(not os.path.exists(".xpuify_cache"), "--no-cache writes nothing")
    run("check", "--cache-dir", "elsewhere/c", "a.py")
    check(glob.glob("elsewhere/c/v1/*.bin") and not os.path.exists(".xpuify_cache"), "--cache-dir")
    run("check", "a.py", env={"XPUIFY_CACHE_DIR": os.path.join(d, "envcache")})
    check(glob.glob("envcache/v1/*.bin") and not os.path.exists(".xpuify_cache"), "XPUIFY_CACHE_DIR")
    eq(stats(run("check", "--cache-dir", "elsewhere/c", "a.py", env=STATS)), (1, 0))
    # fix does not write a cache (its analysis is per pass)
    run("fix", "--target", "accelerator", "a.py")
    check(not os.path.exists(".xpuify_cache"), "fix writes no cache")


def test_a_damaged_cache_file_is_ignored_and_rewritten(d):
    src, n = tree(d)
    good = run("check", "--format", "json", "--exit-zero", "--no-ignore", "src").out
    (path,) = cache_files(d)
    data = read(path, "rb")
    damages = {
        "truncated": data[: len(data) // 2],
        "flipped byte": data[:-100] + bytes([data[-100] ^ 0xFF]) + data[-99:],
        "garbage": os.urandom(len(data)),
        "empty": b"",
        "header only": data[:44],
    }
    for what, bad in damages.items():
        with open(path, "wb") as f:
            f.write(bad)
        r = run("check", "--format", "json", "--exit-zero", "--no-ignore", "src", env=STATS)
        eq(r.out, good, f"{what}: the report is the uncached one")
        eq(stats(r), (0, n), f"{what}: nothing is trusted")
        eq(stats(run("check", "--format", "json", "--exit-zero", "--no-ignore", "src", env=STATS)), (n, 0),
           f"{what}: the file was rewritten whole")


def test_an_unwritable_cache_is_a_warning_not_an_error(d):
    write("a.py", "import torch\ntorch.cuda.synchronize()\n")
    write("blocker", "a file where the cache directory should be")
    r = run("check", "--cache-dir", "blocker", "a.py")
    eq(r.code, 1, r)
    check("xpuify: warning: results cache not saved" in r.err and "blocker" in r.err, "", r)
    check("XPU202" in r.out, "the report is complete", r)
    r = run("check", "-q", "--cache-dir", "blocker", "a.py")
    eq(r.err, "", "quiet")


def test_concurrent_runs_keep_the_cache_valid(d):
    src, n = tree(d)
    expected = {}
    configs = [(), ("--select", "XPU2"), ("--target", "compat"), ("--ignore", "XPU1")]
    for c in configs:
        expected[c] = run("check", "--format", "json", "--exit-zero", "--no-ignore", "--no-cache", *c, "src").out
    for round_ in range(3):
        procs = [(c, subprocess.Popen([XPUIFY, "check", "--format", "json", "--exit-zero", "--no-ignore", *c, "src"],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
                 for c in configs for _ in range(2)]
        for c, p in procs:
            out, err = p.communicate(timeout=300)
            eq((p.returncode, out), (0, expected[c]), f"round {round_}, {c}: {err}")
            check("warning" not in err, "no cache warning", err)
    eq(len(cache_files(d)), 1, "one cache file for one build")
    eq([f for f in os.listdir(os.path.join(d, ".xpuify_cache", "v1")) if not f.endswith(".bin")], [],
       "no temporary file left")
    for c in configs:
        r = run("check", "--format", "json", "--exit-zero", "--no-ignore", *c, "src", env=STATS)
        eq(r.out, expected[c])
        hits, misses = stats(r)
        eq(hits + misses, n)


if __name__ == "__main__":
    main(globals())
