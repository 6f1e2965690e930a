"""The results cache (.xpuify_cache/): a second run serves every unchanged file from the cache with the same
report (files the prefilter rejects are neither looked up nor stored); anything that could change a file's findings (its content, the rules, the selection, the fix target and
options, the per-file helper import, the xpuify build) misses; --no-cache / --cache-dir / XPUIFY_CACHE_DIR; a
damaged cache file is ignored and rewritten; concurrent runs never break it; a forged cache (entries whose MAC was
not made with this machine's key) is never trusted, the cache directory is never written through a symbolic link,
and under CI=true there is no cache unless a place is named. Speed is measured by
bench/cache_bench.sh, not here. XPUIFY_CACHE_STATS=1 makes xpuify print "cache: N hits, M misses". C/C++/CUDA files are cached in fast mode only."""
import glob
import hashlib
import hmac
import json
import os
import re
import shutil
import subprocess
import sys
import time

import stat
import struct

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import ROOT, XPUIFY, check, eq, main, read, run, write  # noqa: E402

STATS = {"XPUIFY_CACHE_STATS": "1"}
# these tests are about the cache's local default (.xpuify_cache/); under CI=true there is none (see test_ci_*)
os.environ.pop("CI", None)


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

    def fresh(*more):
        # fresh.py (and more) changed just now, same content, before each run that takes it by content: on a loaded
        # machine the runs of this test can take more than the 3 s after which a stamp is kept and trusted
        for f in ("fresh.py",) + more:
            write(f, read(f) if os.path.exists(f) else "import torch\ntorch.cuda.empty_cache()\n")

    fresh()
    uncached = {f: run("check", "--format", f, "--exit-zero", "--no-cache", ".").out for f in ("json", "text")}
    fresh()
    first = run("check", "--format", "json", "--exit-zero", ".", env=STATS)
    eq((stats(first), stamped(first)), ((0, 3), 0), "the first run reads everything")
    for f in ("json", "text"):  # text prints the source lines: hit.py is read, its findings still come from the cache
        fresh()
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
    fresh()
    r = run("check", "--format", "json", "--exit-zero", ".", env=STATS)
    check("clean.py" in {f["path"] for f in r.json()}, "the edited file's new finding is reported", r)
    eq(r.out, run("check", "--format", "json", "--exit-zero", "--no-cache", ".").out)
    eq(stamped(r), 2, "hit.py and nofind.py by their stamps")

    # a touch: new times, same content -> a hit by content hash, not a miss
    os.utime("hit.py")
    fresh("clean.py")  # its stamp is not trusted either: it was kept by the last run only if that ran 3 s late
    r = run("check", "--format", "json", "--exit-zero", ".", env=STATS)
    eq((stats(r), stamped(r)), ((4, 0), 1), "hit.py, clean.py, fresh.py by content, nofind.py by its stamp (then "
       "its cached findings: none)")
    # a lower --max-file-size applies to files trusted by their stamp too
    r = run("check", "--format", "json", "--exit-zero", "--max-file-size", "10", ".", env=STATS)
    eq([f for f in r.json() if f["code"]], [], r)
    eq(sorted(f["path"] for f in r.json() if f["name"] == "not-checked"), ["clean.py", "fresh.py", "hit.py", "nofind.py"],
       "each file is in the report as not checked")
    check("nofind.py: file is" in r.err and "over the 10-byte limit" in r.err, "each file is reported too large", r)
    # a file replaced by another with the same content, size and times (new inode) is read again
    st = os.stat("nofind.py")
    shutil.copy("nofind.py", "tmp.txt")
    os.replace("tmp.txt", "nofind.py")
    os.utime("nofind.py", ns=(st.st_atime_ns, st.st_mtime_ns))
    r = run("check", "--format", "json", "--exit-zero", ".", env=STATS)
    eq(r.out, run("check", "--format", "json", "--exit-zero", "--no-cache", ".").out)


def test_c_files_are_cached_in_fast_mode_only(d):
    """Fast mode (the default) follows no include and reads no compile database or toolkit, so a C/CUDA file's
    findings and fixes depend on its own text, the rules, the options and libclang: they are cached like a Python
    file's, with libclang's identity in the key. Precise mode reads headers and the compile database: never cached."""
    for name in ("runtime.cu", "nccl.cpp", "host.c", "launcher.h"):
        shutil.copy(os.path.join(ROOT, "fixtures", "c", name), name)
    outs = {f: run("check", "--format", f, "--exit-zero", "--no-cache", ".").out for f in ("json", "sarif", "text")}
    fixes = run("fix", "--diff", "--no-cache", ".").out
    check(fixes, "the C fixtures have fixes")
    first = run("check", "--format", "json", "--exit-zero", ".", env=STATS)
    n = stats(first)[1]
    eq(stats(first)[0], 0, "the first run misses")
    check(n >= 3, "the C files that pass the prefilter are looked up and stored", first)
    for f in ("json", "sarif", "text"):
        r = run("check", "--format", f, "--exit-zero", ".", env=STATS)
        eq(r.out, outs[f], f"{f}: the cached report of the C files")
        eq(stats(r), (n, 0), f"{f}: every C file from the cache")
    eq(run("fix", "--diff", ".").out, fixes, "fix --diff from a warm cache")
    # an edit misses and is seen
    with open("host.c", "a") as fh:
        fh.write("void more(void) { cudaDeviceSynchronize(); }\n")
    r = run("check", "--format", "json", "--exit-zero", ".", env=STATS)
    eq(stats(r), (n - 1, 1), "only the edited file is analyzed again")
    eq(r.out, run("check", "--format", "json", "--exit-zero", "--no-cache", ".").out)
    # another libclang is another key (XPUIFY_LIBCLANG names the same library by another path: a miss, same report)
    lib = "/usr/lib/llvm-14/lib/libclang.so.1"
    if os.path.exists(lib):
        shutil.copy(os.path.realpath(lib), "libclang-copy.so.1")
        r = run("check", "--format", "json", "--exit-zero", ".", env=dict(STATS, XPUIFY_LIBCLANG=os.path.abspath("libclang-copy.so.1")))
        eq(stats(r), (0, n), "a different libclang file: every C file misses")
        eq(r.out, run("check", "--format", "json", "--exit-zero", "--no-cache", ".").out)
    # precise mode: no lookups at all for C files
    r = run("check", "--format", "json", "--exit-zero", "--precise", ".", env=STATS)
    eq(stats(r), (0, 0), "precise mode does not cache C files")
    r = run("check", "--format", "json", "--exit-zero", "--precise", ".", env=STATS)
    eq(stats(r), (0, 0), "nor read them from the cache")


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
    check("xpuify: warning: results cache off: blocker: is not a directory" in r.err, "", r)
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




# ---- a cache the checked-out tree controls cannot change a report (issue 19, items 1 and 7) --------------------

FORGED_BLOB = b"\x01" + struct.pack("<I", 0)  # "parsed, 0 findings"


def entries(data):
    """(offset, key, content, mac, blob) of each entry of a cache file (format in analyzer/core/an_cache.c)."""
    off, out = 44, []
    while off + 76 <= len(data):
        (n,) = struct.unpack_from("<I", data, off + 72)
        out.append((off, data[off:off + 20], data[off + 20:off + 40], data[off + 40:off + 72], data[off + 76:off + 76 + n]))
        off += 76 + n
    return out


M64 = (1 << 64) - 1


def murmur3_128(data, seed):
    """MurmurHash3_x64_128, as util/ut_hash.c computes it (no secret: anyone can recompute a cache file's checksum)."""
    def rotl(x, r):
        return ((x << r) | (x >> (64 - r))) & M64

    def fmix(k):
        k ^= k >> 33
        k = (k * 0xff51afd7ed558ccd) & M64
        k ^= k >> 33
        k = (k * 0xc4ceb9fe1a85ec53) & M64
        return k ^ (k >> 33)
    c1, c2 = 0x87c37b91114253d5, 0x4cf5ad432745937f
    h1 = h2 = seed
    nblocks = len(data) // 16
    for i in range(nblocks):
        k1, k2 = struct.unpack_from("<QQ", data, 16 * i)
        k1 = rotl((k1 * c1) & M64, 31) * c2 & M64
        h1 = ((rotl(h1 ^ k1, 27) + h2) * 5 + 0x52dce729) & M64
        k2 = rotl((k2 * c2) & M64, 33) * c1 & M64
        h2 = ((rotl(h2 ^ k2, 31) + h1) * 5 + 0x38495ab5) & M64
    tail = data[16 * nblocks:]
    k1 = k2 = 0
    for i in range(len(tail) - 1, 7, -1):
        k2 ^= tail[i] << (8 * (i - 8))
    if len(tail) > 8:
        h2 ^= rotl((k2 * c2) & M64, 33) * c1 & M64
    for i in range(min(len(tail), 8) - 1, -1, -1):
        k1 ^= tail[i] << (8 * i)
    if tail:
        h1 ^= rotl((k1 * c1) & M64, 31) * c2 & M64
    h1 ^= len(data)
    h2 ^= len(data)
    h1 = (h1 + h2) & M64
    h2 = (h2 + h1) & M64
    h1, h2 = fmix(h1), fmix(h2)
    h1 = (h1 + h2) & M64
    h2 = (h2 + h1) & M64
    return struct.pack("<QQ", h1, h2)


def hash20(data):
    return murmur3_128(data, 0x58505531) + struct.pack("<I", len(data) & 0xFFFFFFFF)


def forge(path, secret):
    """Rewrites every findings entry of a cache file as "0 findings" with a valid header and checksum, and MACs made
    with secret: what someone who has the same build and a key of their own can do offline."""
    data = read(path, "rb")
    build = bytes.fromhex(os.path.basename(path)[:-4])
    payload, count = b"", 0
    for _, key, content, mac, blob in entries(data):
        if len(blob) != 41:  # findings, not a stamp: claim there are none
            blob = FORGED_BLOB
            mac = hmac.new(secret, b"xpuify-cache-entry" + build + key + content + struct.pack("<I", len(blob)) + blob,
                           hashlib.sha256).digest()
        payload += key + content + mac + struct.pack("<I", len(blob)) + blob
        count += 1
    hdr = data[:12] + struct.pack("<IQ", count, len(payload)) + hash20(payload)
    with open(path, "wb") as f:
        f.write(hdr + payload)


def cache_env(d, name):
    home = os.path.join(d, "keys-" + name)
    os.makedirs(home, exist_ok=True)
    return {"XDG_CACHE_HOME": home, **STATS}


def key_of(env):
    return read(os.path.join(env["XDG_CACHE_HOME"], "xpuify", "key"), "rb")


def test_a_forged_committed_cache_never_makes_check_pass(d):
    """The attack of issue 19: a repository commits .xpuify_cache/ whose entries say "0 findings". Made with the
    attacker's own key it would work on the attacker's machine (the forgery is real), never on another one."""
    write("a.py", "import torch\ntorch.cuda.synchronize()\nx = torch.zeros(1).cuda()\n")
    attacker, victim = cache_env(d, "attacker"), cache_env(d, "victim")
    honest = run("check", "--format", "json", "a.py", env=victim)
    eq((honest.code, len(honest.json())), (1, 2), honest)
    shutil.rmtree(".xpuify_cache")
    run("check", "a.py", env=attacker)
    (path,) = cache_files(d)
    forge(path, key_of(attacker))
    committed = read(path, "rb")
    r = run("check", "a.py", env=attacker)
    eq(r.code, 0, "the forgery is well-formed: under the key that made it, the cache is trusted")
    check("All checks passed" in r.out, "", r)
    with open(path, "wb") as f:
        f.write(committed)
    r = run("check", "--format", "json", "a.py", env=victim)
    eq((r.code, r.out), (honest.code, honest.out), "another machine's key: the forged entries are misses")
    check(re.search(r"[1-9]\d* entries not authentic", r.err), "the forgery is counted", r)
    check(FORGED_BLOB not in [e[4] for e in entries(read(path, "rb"))], "forged entries are not written back")
    r = run("check", "--format", "json", "a.py", env=victim)
    eq((r.code, r.out, stats(r)), (honest.code, honest.out, (1, 0)), "they were replaced by this machine's own")


def test_the_machine_key_is_private_and_checked(d):
    write("a.py", "import torch\ntorch.cuda.synchronize()\n")
    env = cache_env(d, "home")
    key = os.path.join(env["XDG_CACHE_HOME"], "xpuify", "key")
    run("check", "a.py", env=env)
    st = os.lstat(key)
    eq((stat.S_IMODE(st.st_mode), st.st_size), (0o600, 32), "a fresh key: 32 bytes, 0600")
    first = read(key, "rb")
    run("check", "a.py", env=env)
    eq(read(key, "rb"), first, "the key is kept")
    for what, damage, message in (
            ("readable by others", lambda: os.chmod(key, 0o644), "readable or writable by others"),
            ("a link", lambda: (os.unlink(key), os.symlink(os.path.join(d, "elsewhere"), key)), "a symbolic link"),
            ("a directory", lambda: (os.unlink(key), os.mkdir(key)), "not a regular file"),
            ("short", lambda: (os.rmdir(key), write(key, "short"), os.chmod(key, 0o600)), "of the wrong length")):
        damage()
        r = run("check", "a.py", env=env)
        eq(r.code, 1, f"{what}: the run goes on without the cache")
        check("XPU202" in r.out and f"results cache off: the cache key {key} is {message}" in r.err, what, r)
        check("cache:" not in r.err, f"{what}: no cache was used", r)
    os.unlink(key)
    r = run("check", "a.py", env={"XDG_CACHE_HOME": "", "HOME": "", **STATS})
    check(r.code == 1 and "neither $XDG_CACHE_HOME nor $HOME" in r.err, "no home: no key, no cache", r)


def test_ci_has_no_cache_in_the_tree_unless_a_place_is_named(d):
    write("a.py", "import torch\ntorch.cuda.synchronize()\n")
    env = cache_env(d, "ci")
    for ci in ("true", "1"):
        r = run("check", "a.py", env={**env, "CI": ci})
        eq(r.code, 1, r)
        check(not os.path.exists(".xpuify_cache") and "cache:" not in r.err, f"CI={ci}: no cache by default", r)
    run("check", "a.py", env={**env, "CI": "false"})
    check(os.path.isdir(".xpuify_cache"), "CI=false is no CI")
    shutil.rmtree(".xpuify_cache")
    outside = os.path.join(d, "runner-temp", "xpuify")
    for _ in range(2):
        r = run("check", "a.py", env={**env, "CI": "true", "XPUIFY_CACHE_DIR": outside})
    eq(stats(r), (1, 0), "a named place is used in CI")
    check(not os.path.exists(".xpuify_cache"), "")


def listing(top):
    return sorted(os.path.relpath(os.path.join(r, f), top) for r, ds, fs in os.walk(top) for f in fs + ds)


def test_a_symlinked_cache_directory_is_never_written_through(d):
    """Item 7: `.xpuify_cache -> ..` committed to a repository made check write into the parent directory."""
    os.makedirs("outside")
    os.makedirs("proj")
    write("proj/a.py", "import torch\ntorch.cuda.synchronize()\n")
    env = cache_env(d, "links")
    before = listing("outside")
    cases = [
        (".xpuify_cache", "../outside", [], ".xpuify_cache: is a symbolic link"),
        (".xpuify_cache/v1", "../../outside", [], ".xpuify_cache/v1: is a symbolic link"),
        ("sub", "../outside", ["--cache-dir", "sub/cache"], "sub: is a symbolic link"),
    ]
    for link, target, args, message in cases:
        shutil.rmtree("proj/.xpuify_cache", ignore_errors=True)
        os.makedirs(os.path.dirname(os.path.join("proj", link)) or "proj", exist_ok=True)
        os.symlink(target, os.path.join("proj", link))
        r = run("check", *args, "a.py", cwd="proj", env=env)
        eq(r.code, 1, f"{link}: the run goes on")
        check("XPU202" in r.out, f"{link}: the report is complete", r)
        check(f"results cache off: {message}" in r.err, f"{link}: refused with a message", r)
        eq(listing("outside"), before, f"{link}: nothing written outside the project")
        os.unlink(os.path.join("proj", link))
    # the cache file itself as a link: replaced by the rename, its target untouched
    run("check", "a.py", cwd="proj", env=env)
    (path,) = glob.glob("proj/.xpuify_cache/v1/*.bin")
    write("outside/victim", "precious\n")
    os.unlink(path)
    os.symlink(os.path.join(d, "outside", "victim"), path)
    write("proj/a.py", "import torch\ntorch.cuda.synchronize()\ntorch.cuda.empty_cache()\n")
    r = run("check", "a.py", cwd="proj", env=env)
    eq(r.code, 1, r)
    eq(read("outside/victim"), "precious\n", "the link's target is never written")
    check(not os.path.islink(path), "the link was replaced by the cache file")


if __name__ == "__main__":
    main(globals())
