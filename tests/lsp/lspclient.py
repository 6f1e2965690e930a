"""lspclient: drives `xpuify lsp` over pipes for the transcript tests: framing, requests with ids, waiting for
responses and notifications with timeouts (a hung server fails the test instead of hanging it), and applying
TextEdits to text in UTF-8 or UTF-16 positions."""
import json
import os
import queue
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import XPUIFY  # noqa: E402


def frame(obj):
    body = json.dumps(obj).encode() if not isinstance(obj, (bytes, str)) else (obj.encode() if isinstance(obj, str) else obj)
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


# XPUIFY_LSP_RECORD=DIR: every Server's client stream (the bytes sent, in order) is also written to a file in DIR,
# named after the test: `fuzz/fz_lsp_seeds.py --record` keeps them as seeds of the fz_lsp fuzz target.
RECORD = os.environ.get("XPUIFY_LSP_RECORD")
_recorded = [0]


def _record_file():
    import inspect
    test = next((f.function for f in inspect.stack() if f.function.startswith("test_")), "session")
    _recorded[0] += 1
    os.makedirs(RECORD, exist_ok=True)
    return open(os.path.join(RECORD, f"{os.path.basename(sys.argv[0])[:-3]}-{test}-{_recorded[0]}"), "wb")


class Server:
    def __init__(self, *args, cwd=None, env=None):
        self.rec = _record_file() if RECORD else None
        e = dict(os.environ)
        if env:
            e.update(env)
        self.p = subprocess.Popen([XPUIFY, "lsp", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, cwd=cwd, env=e)
        self.q = queue.Queue()
        self.err = []
        self.next_id = 1
        self.seen = []  # every message received, in order
        self.encoding = "utf-16"
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read(self):
        f = self.p.stdout
        while True:
            headers = {}
            while True:
                line = f.readline()
                if not line:
                    self.q.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                k, _, v = line.decode().partition(":")
                headers[k.strip().lower()] = v.strip()
            n = int(headers["content-length"])
            body = f.read(n)
            self.q.put(json.loads(body))

    def _read_err(self):
        for line in self.p.stderr:
            self.err.append(line.decode(errors="replace"))

    # ---- sending
    def send_raw(self, data):
        if self.rec:
            self.rec.write(data)
            self.rec.flush()
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, obj):
        self.send_raw(frame(obj))

    def request(self, method, params=None, send=True):
        i = self.next_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": i, "method": method}
        if params is not None:
            msg["params"] = params
        if send:
            self.send(msg)
            return i
        return i, msg

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    # ---- receiving
    def recv(self, timeout=20):
        try:
            m = self.q.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no message from the server within {timeout}s; stderr:\n{''.join(self.err)}")
        if m is None:
            raise AssertionError(f"the server closed its output; stderr:\n{''.join(self.err)}")
        self.seen.append(m)
        return m

    def wait(self, pred, timeout=20, what="a message"):
        """Returns the first message (seen before or new) that pred accepts and has not been taken yet."""
        deadline = time.time() + timeout
        for m in self.seen:
            if not m.get("_taken") and pred(m):
                m["_taken"] = True
                return m
        while True:
            left = deadline - time.time()
            if left <= 0:
                raise AssertionError(f"timed out waiting for {what}; received:\n" +
                                     "\n".join(json.dumps(m)[:300] for m in self.seen[-20:]))
            m = self.recv(left)
            if pred(m):
                m["_taken"] = True
                return m

    def response(self, i, timeout=20):
        return self.wait(lambda m: m.get("id") == i and "method" not in m, timeout, f"the response to request {i}")

    def call(self, method, params=None, timeout=20):
        return self.response(self.request(method, params), timeout)

    def diagnostics(self, uri, version=None, timeout=20):
        def ok(m):
            if m.get("method") != "textDocument/publishDiagnostics" or m["params"]["uri"] != uri:
                return False
            return version is None or m["params"].get("version") == version
        return self.wait(ok, timeout, f"diagnostics for {uri} (version {version})")["params"]["diagnostics"]

    def messages(self, method):
        return [m for m in self.seen if m.get("method") == method]

    # ---- lifecycle
    def initialize(self, capabilities=None, options=None, root=None):
        params = {"processId": os.getpid(), "capabilities": capabilities or {}, "rootUri": root}
        if options is not None:
            params["initializationOptions"] = options
        r = self.call("initialize", params)
        assert "result" in r, r
        self.encoding = r["result"]["capabilities"].get("positionEncoding", "utf-16")
        self.notify("initialized", {})
        return r["result"]

    def open(self, uri, text, version=1, language="python"):
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": language, "version": version,
                                                              "text": text}})

    def change(self, uri, version, changes):
        self.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": changes})

    def stop(self, timeout=20):
        """shutdown + exit; returns the exit status."""
        r = self.call("shutdown")
        assert "result" in r and r["result"] is None, r
        self.notify("exit")
        return self.wait_exit(timeout)

    def wait_exit(self, timeout=20):
        try:
            return self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            raise AssertionError("the server did not exit")

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()

    def rss_kb(self):
        with open(f"/proc/{self.p.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0


def uri_of(path):
    from urllib.parse import quote
    return "file://" + quote(os.path.abspath(path))


def offset(text, line, character, encoding):
    """Byte-free: an index into the Python string for an LSP position."""
    lines = text.splitlines(keepends=True)
    if line >= len(lines):
        return len(text)
    start = sum(len(x) for x in lines[:line])
    body = lines[line].rstrip("\r\n")
    units = 0
    for i, ch in enumerate(body):
        if units >= character:
            return start + i
        units += len(ch.encode("utf-16-le")) // 2 if encoding == "utf-16" else len(ch.encode()) if encoding == "utf-8" else 1
    return start + len(body)


def position(text, index, encoding):
    before = text[:index]
    line = before.count("\n")
    col_text = before[before.rfind("\n") + 1:]
    if encoding == "utf-16":
        ch = len(col_text.encode("utf-16-le")) // 2
    elif encoding == "utf-8":
        ch = len(col_text.encode())
    else:
        ch = len(col_text)
    return {"line": line, "character": ch}


def apply_edits(text, edits, encoding):
    spans = []
    for e in edits:
        r = e["range"]
        a = offset(text, r["start"]["line"], r["start"]["character"], encoding)
        b = offset(text, r["end"]["line"], r["end"]["character"], encoding)
        spans.append((a, b, e["newText"]))
    for a, b, t in sorted(spans, key=lambda s: (s[0], s[1]), reverse=True):
        text = text[:a] + t + text[b:]
    return text


def edits_for(edit, uri):
    """The TextEdits of a WorkspaceEdit for one document."""
    if "documentChanges" in edit:
        out = []
        for dc in edit["documentChanges"]:
            if dc.get("textDocument", {}).get("uri") == uri:
                out += dc["edits"]
        return out
    return edit.get("changes", {}).get(uri, [])
