"""End-to-end tests of `.xpuify.yml`: discovery (closest wins), `extend`, every key, command-line overrides, errors
naming file:line:column, and `xpuify config` with the origin of each value."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import check, eq, main, read, run, write  # noqa: E402

CUDA = "import torch\nx = y.cuda()\ntorch.cuda.synchronize()\n"


def found(*args):
    r = run("check", "--format", "json", *args)
    check(r.code in (0, 1), "check ran", r)
    return sorted((f["path"], f["code"], f["severity"]) for f in r.json())


def test_closest_wins_and_extend(d):
    write(".xpuify.yml", "select: [XPU1, XPU2]\nignore: XPU209\n")
    write("sub/.xpuify.yml", "extend: ../.xpuify.yml\nignore: [XPU202]\n")
    write("alone/.xpuify.yml", "select: [XPU202]\n")
    for p in ("a.py", "sub/b.py", "sub/deep/c.py", "alone/d.py"):
        write(p, CUDA)
    eq(found(), [("a.py", "XPU101", "warning"), ("a.py", "XPU202", "warning"),
                 ("alone/d.py", "XPU202", "warning"),
                 ("sub/b.py", "XPU101", "warning"), ("sub/deep/c.py", "XPU101", "warning")])
    # the same when the files are named one by one, or from another directory
    eq(found("sub/deep/c.py"), [("sub/deep/c.py", "XPU101", "warning")])
    os.chdir("sub")
    eq(found("b.py", "../alone/d.py"), [("../alone/d.py", "XPU202", "warning"), ("b.py", "XPU101", "warning")])


def test_per_file_ignores_exclude_severity_fail_on(d):
    write(".xpuify.yml", "per-file-ignores:\n  \"tests/\": [XPU101]\n  \"**/legacy_*.py\": [XPU2]\n"
                         "exclude: [\"gen\", \"*_pb2.py\"]\n"
                         "rule-options:\n  XPU202: {severity: error}\n  cuda-method-call: {severity: info}\n")
    write("tests/t.py", CUDA)
    write("pkg/legacy_x.py", CUDA)
    write("gen/g.py", CUDA)
    write("m_pb2.py", CUDA)
    write("a.py", CUDA)
    eq(found(), [("a.py", "XPU101", "info"), ("a.py", "XPU202", "error"),
                 ("pkg/legacy_x.py", "XPU101", "info"), ("tests/t.py", "XPU202", "error")])
    # fail-on: only findings at or above it fail the run
    write("only_info.py", "x = y.cuda()\n")
    eq(run("check", "only_info.py").code, 1)
    eq(run("check", "--fail-on", "warning", "only_info.py").code, 0)
    write(".xpuify.yml", "fail-on: error\nrule-options:\n  XPU202: {severity: error}\n")
    eq(run("check", "only_info.py").code, 0)
    eq(run("check", "a.py").code, 1)
    # a named file that an exclude matches is checked, unless --force-exclude
    write(".xpuify.yml", "exclude: [\"gen\"]\n")
    eq(run("check", "gen/g.py").code, 1)
    eq(run("check", "--force-exclude", "gen/g.py").code, 0)


def test_command_line_overrides(d):
    write(".xpuify.yml", "select: [XPU202]\n")
    write("a.py", CUDA)
    eq(found(), [("a.py", "XPU202", "warning")])
    eq(found("--select", "XPU101"), [("a.py", "XPU101", "warning")])
    eq(found("--ignore", "XPU202"), [])
    eq(found("--no-config"), [("a.py", "XPU101", "warning"), ("a.py", "XPU202", "warning")])
    write("other.yml", "select: [XPU101]\n")
    eq(found("--config", "other.yml"), [("a.py", "XPU101", "warning")])


def test_errors_name_file_line_column(d):
    write("a.py", CUDA)
    write(".xpuify.yml", "select: [XPU1]\nselct: [X]\nfail-on: loud\ntarget: gpu\nrule-options:\n  XPU101: {color: red}\n")
    r = run("check", "a.py")
    eq(r.code, 2)
    for msg in (".xpuify.yml:2:1: unknown key `selct`", ".xpuify.yml:3:10: `fail-on` must be one of: error, warning, info",
                ".xpuify.yml:4:9: `target` must be one of", ".xpuify.yml:6:12: unknown rule option `color`"):
        check(msg in r.err, msg, r)
    eq(r.out, "")
    write(".xpuify.yml", "select: [XPU1, NOPE]\nper-file-ignores:\n  x.py: [ALSO_NOPE]\n")
    r = run("check", "a.py")
    eq(r.code, 2)
    check(".xpuify.yml:1:16: `select`: `NOPE` matches no rule" in r.err, "selector position", r)
    check(".xpuify.yml:3:10: `per-file-ignores`: `ALSO_NOPE` matches no rule" in r.err, "pfi position", r)
    write(".xpuify.yml", "select: [XPU1\n")
    r = run("check", "a.py")
    eq(r.code, 2)
    check(".xpuify.yml:2:1: YAML error" in r.err, "yaml error position", r)
    write(".xpuify.yml", "extend: base.yml\n")
    write("base.yml", "extend: .xpuify.yml\n")
    r = run("check", "a.py")
    eq(r.code, 2)
    check("cycle" in r.err, "extend cycle", r)
    write(".xpuify.yml", "extend: missing.yml\n")
    r = run("check", "a.py")
    check(r.code == 2 and ".xpuify.yml:1:9: `extend`: cannot read missing.yml" in r.err, "extend missing", r)
    # a value YAML folds a newline into (found by fz_config): the error stays one line, the newline shown as \x0a
    write(".xpuify.yml", "extend: missing.yml\n\n ]\n")
    r = run("check", "a.py")
    lines = [x for x in r.err.splitlines() if "cannot read" in x]
    eq(lines, ["xpuify: error: .xpuify.yml:1:9: `extend`: cannot read missing.yml\\x0a]: No such file or directory"], r.err)
    check(all(x.startswith("xpuify: error: .xpuify.yml") for x in r.err.splitlines() if x.strip()), "every line names the file", r.err)
    write(".xpuify.yml", "rule-dirs: [nowhere]\n")
    r = run("check", "a.py")
    check(r.code == 2 and ".xpuify.yml:1:13: rule directory `nowhere` does not exist" in r.err, "rule dir", r)


def test_config_command_shows_origins(d):
    write(".xpuify.yml", "select: [XPU1, XPU2]\ntarget: compat\n")
    write("sub/.xpuify.yml", "extend: ../.xpuify.yml\nignore: [XPU202]\ndevice-priority: [xpu, cuda, cpu]\n")
    r = run("config", "sub")
    eq(r.code, 0, r)
    lines = r.out.splitlines()
    check(lines[0].endswith("/sub/.xpuify.yml"), "names the file", r)
    check("select: [XPU1, XPU2]  # .xpuify.yml:1:1" in lines, "inherited select", r)
    check("ignore: [XPU202]  # sub/.xpuify.yml:2:1" in lines, "own ignore", r)
    check("target: compat  # .xpuify.yml:2:1" in lines, "target", r)
    check("device-priority: [xpu,cuda,cpu]  # sub/.xpuify.yml:3:1" in lines, "priority", r)
    check("fail-on: info  # default" in lines, "default", r)
    j = json.loads(run("config", "--format", "json", "--target", "accelerator", "sub/x.py").out)
    eq(j["settings"]["target"], {"value": "accelerator", "origin": "command line"})
    eq(j["settings"]["ignore"], {"value": ["XPU202"], "origin": "sub/.xpuify.yml:2:1"})
    eq(j["settings"]["extend"]["origin"], "sub/.xpuify.yml:1:1")
    r = run("config", "--no-config")
    check(r.code == 0 and "built-in defaults" in r.out, "no config", r)
    write("sub/.xpuify.yml", "ignore: [NOPE]\n")
    eq(run("config", "sub").code, 2)


def test_target_priority_and_helper_from_config(d):
    write(".xpuify.yml", "target: compat\ndevice-priority: [xpu, cuda, cpu]\nhelper-path: lib/xpuify_device.py\n")
    write("train.py", "import torch\ntorch.cuda.synchronize()\n")
    os.makedirs("lib")
    r = run("fix", "train.py")
    eq(r.code, 0, r)
    check("compat (requested)" in r.err, "target from config", r)
    eq(read("train.py"), "import torch\nimport xpuify_device\nxpuify_device.synchronize()\n")
    helper = read("lib/xpuify_device.py")
    check("xpu,cuda,cpu" in helper, "priority baked in", helper)


if __name__ == "__main__":
    main(globals())
