"""What a committed configuration may point at, end to end: `helper-path`, `extend` and `rule-dirs` stay inside
the project (no `..`, absolute path or symlinked directory out of it), configuration files are read only when
regular files of bounded size (`--config /dev/zero`, `extend:` a FIFO or a directory), an `extend` target outside
the project is never read (its lines are never echoed in errors), and a key given twice is an error naming it."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import check, eq, main, read, run, skip, write  # noqa: E402

CUDA = "import torch\nx = torch.zeros(3).cuda()\ntorch.cuda.synchronize()\n"


def project(d):
    """d/outside (a sibling the project must not touch) and d/proj, a git work tree with one CUDA file; cwd: proj."""
    os.makedirs("outside")
    os.makedirs("proj")
    os.chdir("proj")
    subprocess.run(["git", "init", "-q", "."], check=True)
    write("train.py", CUDA)
    return os.path.abspath("../outside")


def listing(root):
    return sorted(os.path.join(dp, f) for dp, _, fs in os.walk(root) for f in fs)


def test_helper_path_escaping_the_project_is_refused(d):
    outside = project(d)
    os.symlink(outside, "linked")
    cases = {
        "../outside/deep/dir/sitecustomize.py": "../outside/deep/dir/sitecustomize.py",
        os.path.join(outside, "helper.py"): os.path.join(outside, "helper.py"),
        "linked/deep/helper.py": "linked/deep/helper.py",
    }
    for value in cases:
        write(".xpuify.yml", f"target: compat\nhelper-path: {value}\n")
        r = run("fix", ".")
        eq(r.code, 2, r)
        check(f".xpuify.yml:2:14: `helper-path` must stay inside the project ({os.path.realpath('.')}): `{value}` "
              "leaves it; refused" in r.err, f"names the file, line and key for {value}", r)
        eq(listing(outside), [], f"nothing written outside for {value}")
        eq(read("train.py"), CUDA, "nothing fixed under a refused configuration")
    # inside the project (even through `..` that comes back in) it is used
    write(".xpuify.yml", "target: compat\nhelper-path: pkg/../tools/xpuify_device.py\n")
    r = run("fix", ".")
    check(r.code in (0, 1), "fix ran", r)
    check(os.path.isfile("tools/xpuify_device.py"), "the helper is written where the configuration says", r)


def test_extend_outside_the_project_is_never_read(d):
    outside = project(d)
    write(os.path.join(outside, "secret.yml"), "SECRET_LINE_1: do-not-echo\nroot:$6$hash:19000:0:99999:7:::\n")
    for target in ("../outside/secret.yml", os.path.join(outside, "secret.yml"), "/etc/shadow", "/etc"):
        write(".xpuify.yml", f"extend: {target}\n")
        r = run("check", ".")
        eq(r.code, 2, r)
        check(f".xpuify.yml:1:9: `extend`: `{target}` lies outside the project" in r.err, f"refused: {target}", r)
        check("SECRET_LINE" not in r.err and "root:" not in r.err and "do-not-echo" not in r.err, "no content", r)


def test_configuration_files_must_be_regular_and_bounded(d):
    project(d)
    t0 = time.time()
    r = run("check", "--config", "/dev/zero", ".", timeout=60)
    eq(r.code, 2, r)
    check("/dev/zero: cannot read the configuration: not a regular file" in r.err, "", r)
    os.mkfifo("fifo.yml")
    write(".xpuify.yml", "extend: fifo.yml\n")
    r = run("check", ".", timeout=60)
    eq(r.code, 2, r)
    check("`extend`: cannot read fifo.yml: not a regular file" in r.err, "a FIFO is never opened for reading", r)
    os.makedirs("conf.d")
    write(".xpuify.yml", "extend: conf.d\n")
    r = run("check", ".", timeout=60)
    eq(r.code, 2, r)
    check("cannot read conf.d: is a directory" in r.err, "", r)
    write("big.yml", "# padding\n" * 200000)
    write(".xpuify.yml", "extend: big.yml\n")
    r = run("check", ".", timeout=60)
    eq(r.code, 2, r)
    check("cannot read big.yml: 2000000 bytes, over the 1048576-byte limit" in r.err, "", r)
    check(time.time() - t0 < 50, "no hang")


def test_duplicate_keys_are_errors(d):
    project(d)
    write(".xpuify.yml", "ignore: [XPU101]\nselect: [XPU1]\nignore: [XPU202]\n")
    r = run("check", ".")
    eq(r.code, 2, r)
    check(".xpuify.yml:3:1: duplicate key `ignore` (first at line 1)" in r.err, "", r)
    write("a.yml", "ignore: [XPU101]\n")
    write("b.yml", "ignore: [XPU202]\n")
    write(".xpuify.yml", "extend: a.yml\nextend: b.yml\n")
    r = run("check", ".")
    eq(r.code, 2, r)
    check(".xpuify.yml:2:1: duplicate key `extend` (first at line 1)" in r.err, "", r)
    write(".xpuify.yml", "extend: a.yml\n")
    r = run("check", "--format", "json", ".")
    eq(r.code, 1, r)
    eq(sorted({f["code"] for f in r.json()}), ["XPU202"], "a single extend still works")


def test_compile_database_forced_include_of_a_device_is_dropped(d):
    """`-include /dev/zero` in compile_commands.json made precise mode read without end (killed at 24 GB): a forced
    include that is not a regular file of sane size is dropped, with a warning, and the file is still checked."""
    import json
    write("src/a.c", "#include <stdio.h>\nvoid f(void) { cudaDeviceReset(); }\n")
    write("include/force.h", "#define FORCED 1\n")
    db = [{"directory": os.path.abspath("build"), "file": os.path.abspath("src/a.c"),
           "command": "cc -include /dev/zero -include ../include/force.h -c ../src/a.c -o a.o"}]
    write("build/compile_commands.json", json.dumps(db))
    r = run("check", "--format", "json", "-p", "build", "src/a.c", timeout=60)
    if "libclang" in r.err and r.code == 2:
        skip("no libclang: precise mode is not available (Debian: libclang1-14)")
    if "no CUDA toolkit found" in r.err:
        # precise mode (the one that reads compile_commands.json) needs the CUDA headers; without them the file is
        # parsed in fast mode and the database's flags are never read
        skip("no CUDA toolkit: precise mode does not run (NVIDIA's CUDA toolkit; Debian non-free: nvidia-cuda-toolkit)")
    eq(r.code, 1, r)
    check("forces the inclusion of /dev/zero, which is not a regular file" in r.err, "says so", r)
    check("force.h" not in r.err, "a regular forced include is kept", r)
    check("XPC101" in {f["code"] for f in r.json()}, "the file is still checked", r)


if __name__ == "__main__":
    main(globals())
