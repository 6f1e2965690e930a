"""End-to-end tests of `[tool.xpuify]` in pyproject.toml: the same keys as .xpuify.yml, found as ruff finds its
configuration (the closest directory wins; in one directory .xpuify.yml wins over pyproject.toml; a pyproject.toml
without the table does not count), origins and errors with pyproject.toml's lines."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import check, eq, main, run, write  # noqa: E402

SRC = "import torch\ntorch.cuda.synchronize()\nx = y.cuda()\nz = torch.cuda.memory_stats()\n"
PYPROJECT = """[project]
name = "demo"
dependencies = ["torch>=2.6"]

[tool.ruff]
line-length = 100

[tool.xpuify]
# the CUDA-only checks we care about
ignore = ["XPU202"]   # synchronize is fine here
exclude = [
  "build/*",
  'vendor/*',
]
fail-on = "warning"

[tool.xpuify.per-file-ignores]
"tests/*.py" = ["XPU101"]

[tool.xpuify.rule-options]
XPU203 = {severity = "error"}

[tool.black]
line-length = 100
"""


def codes(*args, cwd="proj"):
    r = run("check", "--format", "json", "--no-cache", *args, cwd=cwd)
    check(r.code in (0, 1), "check ran", r)
    return sorted((f["path"].removeprefix("./"), f["code"], f["severity"]) for f in r.json())


def test_tool_xpuify_is_read_with_every_key(d):
    write("proj/pyproject.toml", PYPROJECT)
    write("proj/src/a.py", SRC)
    write("proj/tests/t.py", SRC)
    write("proj/vendor/v.py", SRC)
    eq(codes("."), [("src/a.py", "XPU101", "warning"), ("src/a.py", "XPU203", "error"),
                    ("tests/t.py", "XPU203", "error")])
    c = run("config", "src/a.py", cwd="proj")
    eq(c.code, 0, c)
    check(c.out.startswith("# configuration file: " + os.path.realpath("proj/pyproject.toml") + " [tool.xpuify]\n"),
          "the file", c.out)
    check("in one directory .xpuify.yml wins over pyproject.toml" in c.out, "precedence said", c.out)
    for line in ("ignore: [XPU202]  # pyproject.toml:10:1", "exclude: [\"build/*\", \"vendor/*\"]  # pyproject.toml:11:1",
                 "per-file-ignores: {\"tests/*.py\": [XPU101]}  # pyproject.toml:17:1",
                 "rule-options: {XPU203: {severity: error}}  # pyproject.toml:20:1",
                 "fail-on: warning  # pyproject.toml:15:1"):
        check(line in c.out, line, c.out)


def test_precedence_closest_directory_then_xpuify_yml(d):
    write("proj/pyproject.toml", PYPROJECT)
    write("proj/src/a.py", SRC)
    write("proj/lib/b.py", SRC)
    write("proj/other/c.py", SRC)
    # a closer pyproject.toml with the table governs its directory (no merging with the outer one, as in ruff)
    write("proj/lib/pyproject.toml", "[tool.xpuify]\nselect = [\"XPU202\"]\n")
    # a closer pyproject.toml without the table does not count: the outer one governs
    write("proj/other/pyproject.toml", "[project]\nname = \"other\"\n")
    got = codes(".")
    eq([x for x in got if x[0].startswith("lib/")], [("lib/b.py", "XPU202", "warning")])
    eq([x[1] for x in got if x[0].startswith("other/")], ["XPU101", "XPU203"])
    # in one directory, .xpuify.yml wins over pyproject.toml
    write("proj/.xpuify.yml", "select: [XPU101]\n")
    eq([x for x in codes(".") if x[0].startswith("src/")], [("src/a.py", "XPU101", "warning")])
    check("# configuration file: " + os.path.realpath("proj/.xpuify.yml") in run("config", "src", cwd="proj").out)
    # a pyproject.toml's table can extend a YAML file, as .xpuify.yml can
    os.remove("proj/.xpuify.yml")
    write("proj/base.yml", "ignore: [XPU203]\n")
    write("proj/lib/pyproject.toml", "[tool.xpuify]\nextend = \"../base.yml\"\n")
    eq([x[1] for x in codes(".") if x[0].startswith("lib/")], ["XPU101", "XPU202"])


def test_errors_name_the_pyproject_line(d):
    write("proj/a.py", SRC)
    cases = [
        ("[tool.xpuify]\nignore = [\"XPU1O1\"]\n", "pyproject.toml:2:11: `ignore`: `XPU1O1` matches no rule code"),
        ("[tool.xpuify]\nfail-on = \"sometimes\"\n", "pyproject.toml:2:"),
        ("[tool.xpuify]\nignore = \"\"\"XPU101\"\"\"\n", "pyproject.toml:2: [tool.xpuify]: multi-line strings are not supported"),
        ("[tool.xpuify]\nlint.ignore = [\"XPU101\"]\n", "pyproject.toml:2: [tool.xpuify]: dotted keys are not supported"),
        ("[tool.xpuify]\nexclude = [\"a\",\n", "pyproject.toml:3: [tool.xpuify]: an array or inline table is not closed"),
        ("[tool.xpuify]\nunknown-key = 1\n", "pyproject.toml:2:1"),
    ]
    for text, want in cases:
        write("proj/pyproject.toml", text)
        r = run("check", "--no-cache", ".", cwd="proj")
        eq(r.code, 2, r)
        check(want in r.err, want, r)


if __name__ == "__main__":
    main(globals())
