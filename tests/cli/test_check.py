"""End-to-end tests of `xpuify check` and `xpuify rule`: every output format, every exit code, bad input,
.gitignore, selection, exclusion."""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import ROOT, check, eq, main, read, run, write  # noqa: E402

CUDA = "import torch\nx = torch.zeros(3).cuda()\ntorch.cuda.synchronize()\n"
CLEAN = "import torch\nx = torch.zeros(3)\n"


def test_exit_codes(d):
    write("clean.py", CLEAN)
    write("bad.py", CUDA)
    eq(run("check", "clean.py").code, 0)
    r = run("check", "bad.py")
    eq(r.code, 1)
    eq(run("check", "--exit-zero", "bad.py").code, 0)
    eq(run("check", "--bogus").code, 2)
    eq(run("check", "--format", "xml", "bad.py").code, 2)
    eq(run("check", "--select", "NOPE", "bad.py").code, 2)
    r = run("check", "missing.py")
    eq(r.code, 2)
    check("missing.py" in r.err and "No such file" in r.err, "names the missing file", r)
    # 2 wins over --exit-zero
    eq(run("check", "--exit-zero", "missing.py", "bad.py").code, 2)
    eq(run("bogus-command").code, 2)


def test_default_path_is_cwd(d):
    write("pkg/a.py", CUDA)
    r = run("check", "--format", "json")
    eq(r.code, 1)
    eq({f["path"] for f in r.json()}, {"pkg/a.py"})


def test_text_format_has_frame_and_summary(d):
    write("bad.py", CUDA)
    r = run("check", "bad.py")
    lines = r.out.splitlines()
    eq(lines[0], "bad.py:2:20: XPU101 [cuda-method-call] [*] `.cuda()` only targets CUDA; use `.to(DEV)` with a device chosen at run time")
    eq(lines[1], " 2 | x = torch.zeros(3).cuda()")
    eq(lines[2], "   |                    ^^^^")
    check(lines[-1].startswith("Found 2 findings in 1 file"), "summary", r)
    check("\033[" not in r.out, "no colour when not a terminal")


def test_concise_format(d):
    write("bad.py", CUDA)
    r = run("check", "--format", "concise", "--target", "accelerator", "bad.py")
    eq(r.out.splitlines()[:2], [
        "bad.py:2:20: XPU101 [cuda-method-call] [*] `.cuda()` only targets CUDA; use `.to(DEV)` with a device chosen at run time",
        "bad.py:3:1: XPU202 [cuda-stream-event] [*] `torch.cuda.synchronize` is CUDA-only; use `torch.accelerator.synchronize` (torch >= 2.6)"])


def test_message_names_what_the_target_writes(d):
    # no torch requirement: auto picks compat, whose fix calls the device helper (any torch): no version is named
    write("bad.py", CUDA)
    r = run("check", "--format", "concise", "bad.py")
    eq(r.out.splitlines()[1], "bad.py:3:1: XPU202 [cuda-stream-event] [*] `torch.cuda.synchronize` is CUDA-only; use `xpuify_device.synchronize`")
    write("requirements.txt", "torch>=2.9\n")
    r = run("check", "--format", "concise", "bad.py")
    eq(r.out.splitlines()[1], "bad.py:3:1: XPU202 [cuda-stream-event] [*] `torch.cuda.synchronize` is CUDA-only; use `torch.accelerator.synchronize` (torch >= 2.6)")


def test_json_format(d):
    write("bad.py", "# é\nimport torch\ny = 'é'; torch.cuda.synchronize()\n")
    r = run("check", "--format", "json", "bad.py")
    eq(r.code, 1)
    items = r.json()
    eq(len(items), 1)
    f = items[0]
    eq(set(f), {"path", "line", "column", "end_line", "end_column", "code", "name", "severity", "message", "fix"})
    eq((f["path"], f["line"], f["column"], f["end_line"], f["end_column"]), ("bad.py", 3, 10, 3, 32))
    eq((f["code"], f["name"], f["severity"]), ("XPU202", "cuda-stream-event", "warning"))
    eq(r.err, "")
    eq(run("check", "--format", "json", "--exit-zero", "bad.py").json(), items)


def test_json_empty_array_when_clean(d):
    write("clean.py", CLEAN)
    r = run("check", "--format", "json", "clean.py")
    eq((r.code, r.json()), (0, []))


def test_sarif_format(d):
    write("src/bad file.py", CUDA)
    r = run("check", "--format", "sarif", "src")
    eq(r.code, 1)
    s = r.json()
    eq(s["version"], "2.1.0")
    run0 = s["runs"][0]
    driver = run0["tool"]["driver"]
    eq(driver["name"], "xpuify")
    ids = [x["id"] for x in driver["rules"]]
    check("XPU101" in ids and "XPU202" in ids, "rules listed")
    for rule in driver["rules"]:
        check(rule["name"] and rule["shortDescription"]["text"] and rule["help"]["text"], "rule metadata", rule)
    res = run0["results"]
    eq(len(res), 2)
    eq(res[0]["ruleId"], "XPU101")
    eq(driver["rules"][res[0]["ruleIndex"]]["id"], "XPU101")
    eq(res[0]["level"], "warning")
    loc = res[0]["locations"][0]["physicalLocation"]
    eq(loc["artifactLocation"]["uri"], "src/bad%20file.py")
    eq(loc["region"], {"startLine": 2, "startColumn": 20, "endLine": 2, "endColumn": 24})


def test_github_format(d):
    write("a,b.py", "import torch\ntorch.cuda.synchronize()\n")
    r = run("check", "--format", "github", "--target", "accelerator", "a,b.py")
    eq(r.code, 1)
    eq(r.out.strip(), "::warning file=a%2Cb.py,line=2,col=1,endLine=2,endColumn=23,title=XPU202 cuda-stream-event::"
                      "XPU202 `torch.cuda.synchronize` is CUDA-only; use `torch.accelerator.synchronize` (torch >= 2.6)")


def test_output_file(d):
    write("bad.py", CUDA)
    r = run("check", "--format", "json", "--output-file", "out.json", "bad.py")
    eq((r.code, r.out), (1, ""))
    eq(len(json.loads(read("out.json"))), 2)
    eq(run("check", "--output-file", "/nonexistent/dir/x", "bad.py").code, 2)


def test_select_and_ignore(d):
    write("bad.py", CUDA)
    codes = lambda *a: [f["code"] for f in run("check", "--format", "json", *a, "bad.py").json()]
    eq(codes("--select", "XPU1"), ["XPU101"])
    eq(codes("--select", "cuda-stream-event"), ["XPU202"])
    eq(codes("--ignore", "XPU101"), ["XPU202"])
    eq(codes("--select", "ALL", "--ignore", "XPU2,XPU1"), [])
    eq(run("check", "--select", "XPU101,nope", "bad.py").code, 2)


def test_bad_files_are_skipped_and_named(d):
    write("good.py", CUDA)
    write("bin.py", b"import torch\x00\x01", "wb")
    write("latin1.py", b"x = '\xe9'\ntorch.cuda.synchronize()\n", "wb")
    write("big.py", "x = 1\n" * 300000)
    r = run("check", "--format", "json", "--max-file-size", "1M", ".")
    eq(r.code, 1)
    eq({f["path"] for f in r.json() if f["code"]}, {"good.py"})
    eq({(f["path"], f["name"], f["severity"]) for f in r.json() if not f["code"]},
       {(p, "not-checked", "warning") for p in ("bin.py", "latin1.py", "big.py")}, "the report names what it skipped")
    check("bin.py: binary file" in r.err, "binary named", r)
    check("latin1.py: not valid UTF-8 (first bad byte 0xe9 at line 1, column 6)" in r.err, "utf8 named", r)
    check("big.py: file is 1800000 bytes, over the 1048576-byte limit" in r.err, "size named", r)
    # a file named on the command line that cannot be read is an input error
    r = run("check", "--format", "json", "bin.py", "good.py")
    eq(r.code, 2)
    eq(sorted((f["path"], f["severity"]) for f in r.json() if not f["code"]), [("bin.py", "error")])
    eq(len(r.json()), 3)
    eq(run("check", "-q", "--max-file-size", "1M", ".").err, "")


def test_syntax_error_still_lints_the_rest(d):
    write("broken.py", "import torch\ntorch.cuda.synchronize()\ndef f(:\n    pass\nx = y.cuda()\n")
    r = run("check", "--format", "json", "broken.py")
    codes = sorted(f["code"] for f in r.json())
    eq(codes, ["XPU001", "XPU101", "XPU202"])


def test_gitignore_and_no_ignore(d):
    subprocess.run(["git", "init", "-q", "."], check=True)
    write(".gitignore", "ignored.py\ngen/\n")
    write("kept.py", CUDA)
    write("ignored.py", CUDA)
    write("gen/x.py", CUDA)
    write("sub/deeper/y.py", CUDA)
    paths = lambda *a: sorted({f["path"] for f in run("check", "--format", "json", *a).json()})
    eq(paths(), ["kept.py", "sub/deeper/y.py"])
    eq(paths("--no-ignore"), ["gen/x.py", "ignored.py", "kept.py", "sub/deeper/y.py"])
    eq(paths("sub"), ["sub/deeper/y.py"])
    # a named file or directory is checked even when ignored (like ruff without --force-exclude)
    eq(paths("ignored.py"), ["ignored.py"])
    eq(paths("gen"), ["gen/x.py"])


def test_exclude_and_default_excludes(d):
    write("a.py", CUDA)
    write("tests/test_a.py", CUDA)
    write(".venv/lib/x.py", CUDA)
    write("node_modules/x.py", CUDA)
    paths = lambda *a: sorted({f["path"] for f in run("check", "--format", "json", *a).json()})
    eq(paths(), ["a.py", "tests/test_a.py"])
    eq(paths("--exclude", "tests"), ["a.py"])
    eq(paths("--exclude", "test_*.py"), ["a.py"])


def test_directory_symlink_loop(d):
    write("a/x.py", CUDA)
    os.symlink("..", "a/loop")
    r = run("check", "--format", "json", ".")
    eq(r.code, 1)
    eq([f["path"] for f in r.json()], ["a/x.py", "a/x.py"])  # once, not once per trip round the loop


def test_crlf_and_bom(d):
    write("w.py", b"\xef\xbb\xbfimport torch\r\nx = torch.zeros(1).cuda()\r\n", "wb")
    f = run("check", "--format", "json", "w.py").json()
    eq([(x["line"], x["column"], x["code"]) for x in f], [(2, 20, "XPU101")])


def test_threads_agree(d):
    for i in range(30):
        write(f"m{i:02}.py", CUDA if i % 3 else CLEAN)
    a = run("check", "--format", "json", "-j", "1").out
    b = run("check", "--format", "json", "-j", "4").out
    eq(a, b)
    eq(len(json.loads(a)), 40)


def test_files_of_every_size_keep_their_order(d):
    # threads take the files as they finish others, small and large mixed: the report keeps the paths' order
    for i in range(12):
        write(f"s{i:02}.py", "import torch\n" + "x = torch.zeros(1).cuda()\n" * (1 + (i * 37) % 11 * 200))
    a = run("check", "--format", "json", "--no-cache", "-j", "1")
    b = run("check", "--format", "json", "--no-cache", "-j", "2")
    eq(a.out, b.out)
    paths = [x["path"] for x in a.json()]
    eq(paths, sorted(paths))
    eq(sorted(set(paths)), [f"s{i:02}.py" for i in range(12)])


def test_rule_command(d):
    r = run("rule", "XPU101")
    eq(r.code, 0)
    check(r.out.startswith("XPU101 cuda-method-call (python, warning, fix: safe)"), "rule text", r)
    eq(run("rule", "cuda-method-call").out, r.out)
    j = json.loads(run("rule", "XPU202", "--format", "json").out)
    eq(j["name"], "cuda-stream-event")
    check(any(q["name"] == "torch.cuda.synchronize" and q["replacement"] == "torch.accelerator.synchronize"
              and q["min_torch"] == "2.6" for q in j["qualnames"]), "table entry", j)
    allr = json.loads(run("rule", "--all", "--format", "json").out)
    codes = [x["code"] for x in allr]
    eq(len(codes), len(set(codes)))
    check(len(codes) > 40, "catalog size")
    for x in allr:
        check(re.fullmatch(r"XP[UCT]\d{3}", x["code"]) and re.fullmatch(r"[a-z0-9-]+", x["name"]), "code/name form", x)
        check(x["doc"] and x["summary"] and x["message"], "documented", x["code"])
    eq(run("rule", "XPU999").code, 2)
    eq(run("rule").code, 2)


def test_docs_rules_md_is_generated(d):
    r = run("rule", "--all", "--format", "markdown")
    eq(r.code, 0)
    check(read(os.path.join(ROOT, "docs", "rules.md")) == r.out,
          "docs/rules.md is stale: run `make docs`")


def test_help_and_version(d):
    eq(run("--version").out.strip().split()[0], "xpuify")
    r = run("check", "--help")
    check(r.code == 0 and "--select" in r.out, "check help", r)
    check(run("help").code == 0, "help")




def _region_corpus():
    """A module where only a few statements can hold findings, with the shapes region selection must get right."""
    parts = ['"""Module docstring."""\n# leading comment\nfrom __future__ import annotations\nimport os\nimport torch as t\n'
             'from torch.cuda import amp as A\n\nVALUE = "cuda"\n']
    for i in range(60):
        parts.append(f"def plain_{i}(x, y=[1,\n      2]):\n    s = '''not code: torch.cuda.synchronize()\n'''\n"
                     f"    return x + {i}  # a comment\n\n")
    parts.append("class Big:\n    '''docstring'''\n    attr = {'k': (1,\n  2)}\n\n")
    for i in range(40):
        body = "        return x\n"
        if i == 7:
            body = "        import torch.cuda as tc\n        tc.synchronize()\n        return x.cuda()\n"
        if i == 19:
            body = "        with A.autocast():  # alias hides the CUDA name\n            return x\n"
        if i == 23:
            body = ("        try:\n            t.cuda.get_device_name()\n        except Exception:\n            pass\n"
                    "        return x\n")
        parts.append(f"    @staticmethod\n    def m{i}(x):\n{body}\n")
    parts.append("    # xpuify: ignore[XPU202]\n    def later(self):\n        t.cuda.synchronize()\n\n")
    parts.append("if t.cuda.is_available():\n    t.cuda.synchronize()\nelif t.xpu.is_available():\n    t.xpu.synchronize()\n")
    parts.append("def tail(x):\n    if x:\n        return os.environ['CUDA_VISIBLE_DEVICES']\n    else:\n        return 1\n")
    # hits deep inside compound statements: loops, with, if/elif/else ladders, try bodies with silent handlers
    parts.append("def loops(xs):\n    for x in xs:\n        if x:\n            y = 1\n        elif x is None:\n"
                 "            with open('f') as f:\n                t.cuda.synchronize()\n                z = 2\n"
                 "        else:\n            while x:\n                x -= 1\n    else:\n        pass\n"
                 "    if t.xpu.is_available():\n        t.xpu.synchronize()\n    else:\n        q = 3\n"
                 "        t.cuda.empty_cache()\n    for i in range(3):\n        try:\n            w = 1\n"
                 "            t.cuda.get_device_name()\n        except Exception:\n            pass\n"
                 "        finally:\n            w = 2\n    async_ok = 1\n\n")
    parts.append("async def agen(xs):\n    async for x in xs:\n        x = x.cuda()\n    async with xs:\n"
                 "        pass\n        y = 'cuda'\n\n")
    return "".join(parts)


def test_regions_match_whole_files(d):
    """Parsing only the statements that can hold a finding gives exactly the whole-file results."""
    write("big.py", _region_corpus())
    write("crlf.py", _region_corpus().replace("\n", "\r\n"))
    write("tabs.py", _region_corpus().replace("    ", "\t"))
    for f in ("big.py", "crlf.py", "tabs.py"):
        a = run("check", "--format", "json", "-v", f)
        b = run("check", "--format", "json", "--whole-files", f)
        eq(a.json(), b.json(), f)
        check(len(a.json()) >= 8, "findings in the big file", a.json())
    codes = sorted({x["code"] for x in run("check", "--format", "json", "big.py").json()})
    check({"XPU101", "XPU202", "XPU301", "XPU305", "XPU601", "XPU703"} <= set(codes), "kinds of findings", codes)
    # the fixtures too
    for f in sorted(os.listdir(os.path.join(ROOT, "fixtures", "python"))):
        p = os.path.join(ROOT, "fixtures", "python", f)
        if f.endswith(".py") and f not in ("syntax_error.py", "XPU001.py"):
            eq(run("check", "--format", "json", p).out, run("check", "--format", "json", "--whole-files", p).out, f)


def test_many_statements_apart_parse_whole(d):
    """Past AN_PYREGION_MAX_SPANS separate statements the file is parsed whole (tree-sitter's lexer scans its
    included ranges from the first at every token: a parse of n ranges costs n times the tokens); below it, the
    selected statements only. Either way the results are the whole-file results."""
    def classes(n):
        return "import torch\n" + "".join(
            "class C%d(torch.nn.Module):\n    pass\nm%d = C%d().cuda()\n" % (i, i, i) for i in range(n))
    for name, n, whole in (("few.py", 600, False), ("many.py", 1100, True)):
        text = classes(n)
        write(name, text)
        a = run("check", "--format", "json", "--no-cache", "-v", name)
        parsed = int(re.search(r"\((\d+) bytes parsed\)", a.err).group(1))
        check((parsed == len(text)) == whole, "%s: %d of %d bytes parsed" % (name, parsed, len(text)), a.err)
        eq(len(a.json()), n, name + ": a finding per class")
        eq(a.json(), run("check", "--format", "json", "--no-cache", "--whole-files", name).json(), name)


def test_scoped_findings_parse_their_statements_only(d):
    """A design finding's scope (XPU812: flags a CUDA guard only sets, a dispatch with an XPU branch in a method)
    reaches over statements the regions leave out: the top-level statements holding such scopes are parsed again
    whole, not the file, and the results are those of --whole-files. A scope that runs to the end of the module
    (code after the import of a CUDA-only library) needs the whole file."""
    filler = "".join(f"def filler_{i}(x):\n    y = x + {i}\n    return y * 2\n\n\n" for i in range(60))
    text = ("import torch\n\n\n" + filler + "def main(args):\n    model = args.model\n"
            + "".join(f"    v{i} = args.v{i}\n" for i in range(40))
            + "    if torch.cuda.is_available():\n        torch.backends.cudnn.benchmark = True\n"
            + "".join(f"    w{i} = v{i} + 1\n" for i in range(40)) + "    return model\n\n\n" + filler
            + "class Cache:\n    def a(self):\n        return 1\n\n    def clear(self, device):\n"
            "        if device.type == 'xpu':\n            torch.xpu.empty_cache()\n"
            "        elif device.type == 'cuda':\n            torch.cuda.empty_cache()\n\n"
            "    def c(self):\n        return torch.cuda.device_count()\n\n\n" + filler)
    write("scoped.py", text)
    module = ("import torch\nimport transformer_engine.pytorch as te\n\n\n" + filler
              + "def run(x):\n    torch.cuda.synchronize()\n    return x.cuda()\n\n\n" + filler
              + "def last():\n    return torch.cuda.device_count()\n")
    write("module.py", module)
    for f, size in (("scoped.py", len(text)), ("module.py", len(module))):
        a = run("check", "--format", "json", "-v", "--no-cache", f)
        b = run("check", "--format", "json", "--whole-files", "--no-cache", f)
        eq(a.json(), b.json(), f)
        got = [(x["line"], x["code"]) for x in a.json()]
        if f == "scoped.py":
            eq(got, [(346, "XPU812"), (347, "XPU501"), (696, "XPU812"), (702, "XPU201")], f)
            eq((a.json()[2]["scope"]["line"], a.json()[2]["scope"]["end_line"]), (696, 699), "the dispatch's scope")
            check(_bytes_parsed(a) < size // 4, "only main() and Cache are parsed again", a.err)
        else:
            eq(got, [(5, "XPU812")], f)
            eq(a.json()[0]["scope"]["end_line"], module.count("\n") + 1, "the rest of the module")
            eq(_bytes_parsed(a), size, "the whole file")


def test_comments_and_docstrings_are_not_parsed(d):
    """A file whose CUDA words are all in comments and docstrings passes the prefilter but is not parsed; a rule
    that reads a block's text (XPU703) ignores the comments in it, in both modes."""
    write("doc.py", '"""Runs on cuda (torch.cuda.is_available())."""\nimport torch\n\n\n'
                    'def f(x):\n    """Move x with x.cuda() first."""\n    r"torch.cuda.synchronize()"  # cuda\n'
                    '    return x + 1  # torch.cuda.synchronize()\n')
    for extra in ([], ["--whole-files"]):
        r = run("check", "--format", "json", "-v", *extra, "doc.py")
        eq(r.json(), [], "doc.py " + " ".join(extra))
    check(" 0 parsed after the prefilter" in run("check", "-v", "doc.py").err, "nothing parsed", run("check", "-v", "doc.py"))
    probe = ("import torch\n\n\ndef g():\n    try:\n        import os  # torch.cuda.init() would be slower\n"
             "    except Exception:\n        pass\n\n\ndef h():\n    try:\n        torch.cuda.init()\n"
             "    except Exception:\n        pass\n")
    write("probe.py", probe)
    for extra in ([], ["--whole-files"]):
        got = [(x["line"], x["code"]) for x in run("check", "--format", "json", *extra, "probe.py").json() if x["code"] == "XPU703"]
        eq(got, [(14, "XPU703")], "probe.py " + " ".join(extra))


def _bytes_parsed(r):
    m = re.search(r"\((\d+) bytes parsed\)", r.err)
    check(m, "check -v says how many bytes were parsed", r)
    return int(m.group(1))


def test_a_hit_in_a_method_parses_only_its_statement(d):
    """Region selection goes down through nested definitions: a hit in one statement of a method parses the file's
    opening, the class header, the method header and that statement, not the class (nor the method) whole; a
    definition that ends the opening without a hit is parsed as its header and its smallest member."""
    opening, cls, meth, stmt = "import torch\n\n\n", "class Trainer:\n", "    def step(self, batch):\n", "        x = batch.cuda()\n"
    init = "    def __init__(self, model):\n" + "".join(f"        self.a{i} = model\n" for i in range(20)) + "\n"
    body = "".join(f"        batch = batch + {i}\n" for i in range(20))
    write("nest.py", opening + cls + init + meth + body + stmt + "        return x\n")
    r = run("check", "--format", "json", "-v", "nest.py")
    eq([(x["line"], x["code"]) for x in r.json()], [(48, "XPU101")])
    eq(r.json(), run("check", "--format", "json", "--whole-files", "nest.py").json(), "same as a whole-file parse")
    eq(_bytes_parsed(r), len(opening + cls + meth + stmt), "parsed: opening, class header, method header, statement")
    # a class right after the imports with no hit of its own, then a function with one
    small = "    def m(self):\n        return 1\n"
    tail = "\n\ndef f(x):\n    return x.cuda()\n"
    write("open.py", opening + cls + init + small + tail)
    r = run("check", "--format", "json", "-v", "open.py")
    eq([x["code"] for x in r.json()], ["XPU101"])
    eq(r.json(), run("check", "--format", "json", "--whole-files", "open.py").json(), "same as a whole-file parse")
    eq(_bytes_parsed(r), len(opening + cls + small + "\n\ndef f(x):\n    return x.cuda()\n"),
       "the class that ends the opening: its header and its smallest member")
    r = run("fix", "--diff", "--unsafe-fixes", "open.py")
    check("+from xpuify_device import DEV" in r.out or "+import xpuify_device" in r.out, "the fix adds its import", r)
    eq(r.out, run("fix", "--diff", "--unsafe-fixes", "--whole-files", "open.py").out, "the fix places its imports the same way")


def test_a_hit_in_a_block_parses_its_clause_headers_and_a_member_of_each(d):
    """Region selection goes down into if/for/while/with/try blocks: a hit in one statement of a loop parses the
    loop's header and that statement; each other clause (elif, else) keeps its header and its smallest statement;
    a try's handlers are kept whole (rules read what a handler does around its try body). A hit in a clause header
    takes the statement whole; one in a definition's decorator or signature keeps the header and its smallest
    statement."""
    opening = "import torch\n\n\n"
    fill = "".join(f"        a{i} = {i}\n" for i in range(20))
    head, stmt = "def f(xs):\n    for x in xs:\n", "        x = x.cuda()\n"
    els, small = "    else:\n", "        b = 1\n"
    write("loop.py", opening + head + fill + stmt + fill + els + fill + small)
    r = run("check", "--format", "json", "-v", "loop.py")
    eq([(x["line"], x["code"]) for x in r.json()], [(26, "XPU101")])
    eq(r.json(), run("check", "--format", "json", "--whole-files", "loop.py").json(), "same as a whole-file parse")
    eq(_bytes_parsed(r), len(opening + head + stmt + els + small), "headers, the statement, else's smallest member")
    eq(run("fix", "--diff", "--unsafe-fixes", "loop.py").out,
       run("fix", "--diff", "--unsafe-fixes", "--whole-files", "loop.py").out, "the same fix")
    # a try: the body goes down to the statement, the handlers are whole
    tryh, probe = "def g():\n    try:\n", "        torch.cuda.init()\n"
    handler = "    except Exception:\n        pass\n        c = 1\n"
    write("try.py", opening + tryh + fill + probe + handler)
    r = run("check", "--format", "json", "-v", "try.py")
    eq(r.json(), run("check", "--format", "json", "--whole-files", "try.py").json(), "same as a whole-file parse")
    eq(_bytes_parsed(r), len(opening + tryh + probe + handler), "try header, the probe, the handler whole")
    # a hit in a decorator or a signature: the definition's header and its smallest statement, not its body
    deco = "@torch.cuda.amp.custom_fwd\ndef k(x, device='cuda'):\n"
    write("deco.py", opening + deco + "".join(f"    a{i} = {i}\n" for i in range(20)) + "    return x\n")
    r = run("check", "--format", "json", "-v", "deco.py")
    eq([(x["line"], x["code"]) for x in r.json()], [(4, "XPU304"), (5, "XPU103")], r.json())
    eq(r.json(), run("check", "--format", "json", "--whole-files", "deco.py").json(), "same as a whole-file parse")
    eq(_bytes_parsed(r), len(opening + deco + "    a0 = 0\n"), "the header and the smallest statement")
    eq(run("fix", "--diff", "--unsafe-fixes", "deco.py").out,
       run("fix", "--diff", "--unsafe-fixes", "--whole-files", "deco.py").out, "the same fix")
    # a hit in the condition: the whole if statement
    cond = "def h(x):\n    if torch.cuda.is_available():\n" + fill + "    else:\n" + fill
    write("cond.py", opening + cond)
    r = run("check", "--format", "json", "-v", "cond.py")
    eq(r.json(), run("check", "--format", "json", "--whole-files", "cond.py").json(), "same as a whole-file parse")
    eq(_bytes_parsed(r), len(opening + cond), "the whole statement")


def test_imports_that_bind_no_rule_name_are_not_parsed(d):
    """In the opening only the imports that bind a name some rule resolves (torch here, not math, sys, json, a
    sibling module or typing's names), the first statement (its leading comments), __future__ imports and the last
    import of a run are parsed; the fix still lands after the whole import block."""
    head = "# license\nfrom __future__ import annotations\n"
    imports = ("import math\nimport sys\nfrom .sibling import thing\nfrom typing import (Optional,  # torch\n  List)\n"
               "import torch\nimport json\nimport re\n\n\n")
    body = "def f(x):\n    return x.cuda()\n"
    write("imp.py", head + imports + body)
    r = run("check", "--format", "json", "-v", "imp.py")
    eq([x["code"] for x in r.json()], ["XPU101"])
    eq(r.json(), run("check", "--format", "json", "--whole-files", "imp.py").json(), "same as a whole-file parse")
    eq(_bytes_parsed(r), len(head + "import torch\n" + "import re\n\n\n" + body), "math, sys, json, ... are not parsed")
    r = run("fix", "--diff", "--unsafe-fixes", "imp.py")
    check("+import xpuify_device" in r.out, "the fix adds its import", r)
    eq(r.out, run("fix", "--diff", "--unsafe-fixes", "--whole-files", "imp.py").out, "at the same place")
    # an import of the device helper is parsed wherever it sits, whatever the helper's name: the fix must see it
    write("helped.py", "import math\nimport mydev\nimport sys\n\n\ndef f(x):\n    return x.cuda()\n")
    for helper in ([], ["--helper-path", "mydev.py"]):
        a = run("check", "--format", "json", *helper, "helped.py").json()
        eq(a, run("check", "--format", "json", "--whole-files", *helper, "helped.py").json(), f"helper {helper}")
    edits = [e["content"] for e in a[0]["fix"]["edits"]]
    check("import mydev\n" not in edits, "no second import of the helper", edits)


if __name__ == "__main__":
    main(globals())
