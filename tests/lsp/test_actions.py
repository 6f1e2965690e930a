"""Transcript tests of `xpuify lsp` code actions, commands and hover: quick fixes applied to the text remove their
finding; "ignore for this line" appends, extends or places the suppression comment so it hides the finding and
the file still parses; fix-all gives what `xpuify fix` writes; xpuify.applyAll goes through workspace/applyEdit;
hover shows the rule's documentation over the whole range of a finding, its first character included."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import check, eq, main, read, run, write  # noqa: E402
from lspclient import Server, apply_edits, edits_for, position, uri_of  # noqa: E402

CUDA = ("import torch, mylib\n"  # mylib: a library xpuify knows nothing of (x.cuda() stays unsafe)
        "\n"
        "def step(model, x):\n"
        "    y = model(x.cuda())\n"
        "    torch.cuda.synchronize()\n"
        "    return y, torch.cuda.device_count()\n")


class Session:
    """A server with one open document whose text the test keeps in step."""

    def __init__(self, path, text, caps=None, options=None):
        write(path, text)
        self.s = Server()
        self.s.initialize(caps or {}, options)
        self.uri, self.text, self.version, self.path = uri_of(path), text, 1, path
        self.s.open(self.uri, text)
        self.diags = self.s.diagnostics(self.uri, 1)

    def find(self, code):
        return [x for x in self.diags if x["code"] == code]

    def actions(self, diag=None, only=None, rng=None):
        params = {"textDocument": {"uri": self.uri}, "range": rng or diag["range"],
                  "context": {"diagnostics": [diag] if diag else []}}
        if only is not None:
            params["context"]["only"] = only
        r = self.s.call("textDocument/codeAction", params)
        check("result" in r, "code actions", r)
        return r["result"]

    def apply(self, edit):
        self.text = apply_edits(self.text, edits_for(edit, self.uri), self.s.encoding)
        self.version += 1
        self.s.change(self.uri, self.version, [{"text": self.text}])
        self.diags = self.s.diagnostics(self.uri, self.version)

    def codes(self):
        return sorted(x["code"] for x in self.diags)


def test_quick_fix_removes_its_finding(d):
    t = Session("a.py", CUDA)
    eq(t.codes(), ["XPU101", "XPU201", "XPU202"])
    (diag,) = t.find("XPU202")
    acts = t.actions(diag, only=["quickfix"])
    fix = [a for a in acts if a.get("isPreferred")]
    eq(len(fix), 1)
    eq(fix[0]["kind"], "quickfix")
    eq(fix[0]["diagnostics"], [diag])  # the client's diagnostic is echoed back
    check(fix[0]["title"].startswith("Replace `torch.cuda.synchronize`"), "title", fix[0])
    t.apply(fix[0]["edit"])
    eq(t.codes(), ["XPU101", "XPU201"])
    check("    xpuify_device.synchronize()\n" in t.text and "import xpuify_device\n" in t.text, "fixed text", t.text)
    # the compat helper the fix imports: written by the command the action carries
    cmd = fix[0]["command"]
    eq(cmd["command"], "xpuify.writeHelper")
    check(not os.path.exists("xpuify_device.py"))
    eq(t.s.call("workspace/executeCommand", {"command": cmd["command"], "arguments": cmd["arguments"]})["result"], None)
    check("def synchronize" in read("xpuify_device.py"), "helper written")
    # an unsafe fix says so and is not preferred
    (diag,) = t.find("XPU101")
    (unsafe,) = [a for a in t.actions(diag, only=["quickfix"]) if "edit" in a and "Replace" in a["title"]]
    check("unsafe" in unsafe["title"] and not unsafe.get("isPreferred"), "unsafe marked", unsafe)
    t.apply(unsafe["edit"])
    eq(t.codes(), ["XPU201"])
    check("model(x.to(xpuify_device.DEV))" in t.text, t.text)
    eq(t.s.stop(), 0)


def ignore_action(t, diag):
    acts = [a for a in t.actions(diag, only=["quickfix"]) if a["title"].startswith("Ignore")]
    eq(len(acts), 1, "one ignore action")
    return acts[0]


def test_ignore_for_this_line_appends(d):
    t = Session("a.py", CUDA)
    (diag,) = t.find("XPU202")
    act = ignore_action(t, diag)
    eq(act["title"], "Ignore XPU202 (cuda-stream-event) for this line")
    t.apply(act["edit"])
    check("    torch.cuda.synchronize()  # xpuify: ignore[XPU202]\n" in t.text, t.text)
    eq(t.codes(), ["XPU101", "XPU201"])
    eq(t.s.stop(), 0)


def test_ignore_extends_an_existing_comment(d):
    text = "import torch\nx = torch.zeros(3).cuda(); torch.cuda.synchronize()  # xpuify: ignore[XPU101]\n"
    t = Session("a.py", text)
    eq(t.codes(), ["XPU202"])
    t.apply(ignore_action(t, t.find("XPU202")[0])["edit"])
    check("# xpuify: ignore[XPU101, XPU202]\n" in t.text, t.text)
    eq(t.codes(), [])
    eq(t.s.stop(), 0)


def test_ignore_goes_above_a_line_with_a_comment_or_an_open_string(d):
    text = ("import torch\n"
            "def f():\n"
            "    torch.cuda.synchronize()  # keep the timing honest\n"
            "    n = torch.cuda.device_count(); s = '''a\n"
            "b'''\n")
    t = Session("a.py", text)
    eq(t.codes(), ["XPU201", "XPU202"])
    t.apply(ignore_action(t, t.find("XPU202")[0])["edit"])
    check("    # xpuify: ignore[XPU202]\n    torch.cuda.synchronize()  # keep the timing honest\n" in t.text, t.text)
    eq(t.codes(), ["XPU201"])
    t.apply(ignore_action(t, t.find("XPU201")[0])["edit"])
    check("    # xpuify: ignore[XPU201]\n    n = torch.cuda.device_count(); s = '''a\nb'''\n" in t.text, t.text)
    eq(t.codes(), [])
    eq(t.s.stop(), 0)


def test_ignore_on_a_continuation_line(d):
    text = "import torch\nx = 1 + \\\n    torch.cuda.device_count()\n"
    t = Session("a.py", text)
    t.apply(ignore_action(t, t.find("XPU201")[0])["edit"])
    check("    torch.cuda.device_count()  # xpuify: ignore[XPU201]\n" in t.text, t.text)
    eq(t.codes(), [])
    t.s.stop()


def test_no_ignore_where_a_comment_cannot_go(d):
    text = "import torch\nx = 1 + \\\n    torch.cuda.device_count() + \\\n    2\n"
    t = Session("a.py", text)
    (diag,) = t.find("XPU201")
    eq([a for a in t.actions(diag, only=["quickfix"]) if a["title"].startswith("Ignore")], [])
    # syntax errors are never suppressed, so no ignore action either
    t2 = Session("b.py", "import torch\ndef f(:\n    torch.cuda.synchronize()\n")
    (err,) = t2.find("XPU001")
    eq(t2.actions(err, only=["quickfix"]), [])
    t.s.stop()
    t2.s.stop()


def fixed_by_cli(name, text, *args):
    write(os.path.join("cli", name), text)
    r = run("fix", *args, os.path.join("cli", name))
    check(r.code in (0, 1), "xpuify fix ran", r)
    return read(os.path.join("cli", name))


def test_fix_all_matches_xpuify_fix(d):
    t = Session("a.py", CUDA)
    # a quick-fix request without `only` also offers fix-all, `only: quickfix` does not
    (diag,) = t.find("XPU202")
    check(any(a["kind"] == "source.fixAll.xpuify" for a in t.actions(diag)), "offered")
    check(not any(a["kind"] == "source.fixAll.xpuify" for a in t.actions(diag, only=["quickfix"])), "not asked for")
    acts = t.actions(only=["source.fixAll"], rng={"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}})
    eq(len(acts), 1)
    eq(acts[0]["kind"], "source.fixAll.xpuify")
    check("(2)" in acts[0]["title"], "counts the safe fixes", acts[0])
    t.apply(acts[0]["edit"])
    eq(t.text, fixed_by_cli("a.py", CUDA))
    eq(t.codes(), ["XPU101"])  # the unsafe one is left
    # nothing safe is left to fix: no fix-all beside its quick fixes
    (diag,) = t.find("XPU101")
    check(not any(a["kind"] == "source.fixAll.xpuify" for a in t.actions(diag)), "not offered")
    eq(t.actions(only=["source.fixAll"], rng=diag["range"]), [])
    eq(t.s.stop(), 0)


def test_fix_all_with_unsafe_fixes_setting(d):
    t = Session("a.py", CUDA, options={"unsafeFixes": True})
    (act,) = t.actions(only=["source.fixAll.xpuify"], rng={"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}})
    t.apply(act["edit"])
    eq(t.text, fixed_by_cli("a.py", CUDA, "--unsafe-fixes"))
    eq(t.codes(), [])
    eq(t.s.stop(), 0)


def test_apply_all_command(d):
    caps = {"workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}}}
    t = Session("a.py", CUDA, caps=caps)
    i = t.s.request("workspace/executeCommand", {"command": "xpuify.applyAll", "arguments": [t.uri]})
    req = t.s.wait(lambda m: m.get("method") == "workspace/applyEdit")
    (dc,) = req["params"]["edit"]["documentChanges"]
    eq(dc["textDocument"], {"uri": t.uri, "version": 1})
    t.s.send({"jsonrpc": "2.0", "id": req["id"], "result": {"applied": True}})
    eq(t.s.response(i)["result"], None)
    t.apply(req["params"]["edit"])
    eq(t.text, fixed_by_cli("a.py", CUDA))
    check(os.path.exists("xpuify_device.py"), "the helper the fixed file imports is written")
    # bad calls
    eq(t.s.call("workspace/executeCommand", {"command": "xpuify.nope", "arguments": [t.uri]})["error"]["code"], -32602)
    eq(t.s.call("workspace/executeCommand", {"command": "xpuify.applyAll", "arguments": ["file:///not/open.py"]})["error"]["code"], -32602)
    eq(t.s.call("workspace/executeCommand", {"command": "xpuify.applyAll"})["error"]["code"], -32602)
    eq(t.s.stop(), 0)
    t2 = Session("b.py", CUDA)  # a client that cannot apply edits
    eq(t2.s.call("workspace/executeCommand", {"command": "xpuify.applyAll", "arguments": [{"uri": t2.uri}]})["error"]["code"], -32803)
    t2.s.stop()


def hover(t, line, character):
    r = t.s.call("textDocument/hover", {"textDocument": {"uri": t.uri}, "position": {"line": line, "character": character}})
    check("result" in r, "hover answered", r)
    return r["result"]


def test_hover_over_a_finding(d):
    t = Session("a.py", CUDA, caps={"textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]}}})
    (diag,) = t.find("XPU202")
    start, end = diag["range"]["start"], diag["range"]["end"]
    for ch in (start["character"], start["character"] + 5, end["character"] - 1):  # first character included
        h = hover(t, start["line"], ch)
        check(h and h["contents"]["kind"] == "markdown", "markdown hover", h)
        v = h["contents"]["value"]
        check("**XPU202** `cuda-stream-event`" in v and "docs/rules.md#XPU202" in v, "the rule's documentation", v)
        eq(h["range"], diag["range"])
    eq(hover(t, start["line"], end["character"]), None)  # the end is exclusive
    eq(hover(t, 1, 0), None)
    eq(t.s.stop(), 0)


def test_hover_over_a_suppression_comment(d):
    text = "import torch\ntorch.cuda.synchronize(); x.cuda()  # xpuify: ignore[XPU202, cuda-method-call]\n"
    t = Session("a.py", text)
    eq(t.diags, [])
    col = text.splitlines()[1].index("XPU202") + 2
    h = hover(t, 1, col)
    check(h and "XPU202 cuda-stream-event" in h["contents"]["value"], "plain-text rule doc", h)
    col = text.splitlines()[1].index("cuda-method-call") + 1
    check("XPU101" in hover(t, 1, col)["contents"]["value"], "by name too")
    eq(t.s.stop(), 0)


def test_positions_in_actions_with_non_ascii(d):
    text = "import torch\nmsg = '𝔁é'; torch.cuda.synchronize()\n"
    t = Session("a.py", text)
    (diag,) = t.find("XPU202")
    idx = text.index("torch.cuda.synchronize")
    eq(diag["range"]["start"], position(text, idx, "utf-16"))
    t.apply([a for a in t.actions(diag, only=["quickfix"]) if a.get("isPreferred")][0]["edit"])
    check("msg = '𝔁é'; xpuify_device.synchronize()\n" in t.text, t.text)
    eq(t.s.stop(), 0)


if __name__ == "__main__":
    main(globals())
