"""`xpuify lsp` keeps its memory flat over a long editing session: over 10,000 edits (typing and erasing CUDA calls,
with a hover and a code action now and then) the heap in use (malloc's count, from the server's xpuify/stats
request) is sampled every 1,000 edits after a warm-up. A leak grows it in every interval; an array or buffer
reaching a new high-water mark grows it once (+16 to 24 KiB once, between 1,500 and 4,500 edits, when the machine is
loaded and edits arrive in batches: seen in CI and under heaptrack; which array it is was not traced). So at most
two of the nine intervals may grow by more than 2 KiB (the noise is about 1 KiB either way), and the whole by less
than 64 KiB (a leak of 16 bytes per analysis, one in ten edits, grows every interval by ~3 KiB and fails), and the
resident set by less than a loose 3 MiB. Not a timing test.

The server runs with glibc's per-thread cache off (glibc.malloc.tcache_count=0): malloc counts the chunks that cache
holds as in use, and it fills over a session (up to 7 freed chunks of each size class), which made the heap look as
if it grew by 40-80 KiB, a little in every interval, with nothing held by the server."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import check, main  # noqa: E402
from lspclient import Server  # noqa: E402

EDITS = 10000
BOUND_KB = 3 * 1024
HEAP_BOUND = 64 * 1024
STEP = 2048
STEPS_ALLOWED = 2
NO_TCACHE = {"GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"}


def module():
    out = ["import torch", ""]
    for i in range(60):
        out += [f"def step_{i}(model, x):", f"    y = model(x) * {i}", "    return y.cuda()", ""]
    return "\n".join(out) + "\n"


def test_rss_flat_over_10000_edits(d):
    s = Server(env=NO_TCACHE)
    s.initialize()
    uri = "file:///tmp/mem.py"
    text = module()
    s.open(uri, text)
    s.diagnostics(uri, 1)
    snippet = "    torch.cuda.synchronize()\n"
    line = 5  # inside step_1, before its return
    version, warm, samples = 1, None, []
    for n in range(EDITS):
        # type the snippet one character at a time, then erase it one character at a time
        k = n % (2 * len(snippet))
        version += 1
        if k < len(snippet):
            ch = snippet[k]
            pos = {"line": line, "character": k}
            s.change(uri, version, [{"range": {"start": pos, "end": pos}, "text": ch}])
        else:
            j = 2 * len(snippet) - k - 1  # erase from the end
            if j == len(snippet) - 1:
                rng = {"start": {"line": line, "character": j}, "end": {"line": line + 1, "character": 0}}
            else:
                rng = {"start": {"line": line, "character": j}, "end": {"line": line, "character": j + 1}}
            s.change(uri, version, [{"range": rng, "text": ""}])
        if n % 10 == 9:
            s.diagnostics(uri, version, timeout=60)
        if n % 500 == 499:
            s.call("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 4, "character": 14}})
            s.call("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": {"start": {"line": 6, "character": 0},
                   "end": {"line": 6, "character": 20}}, "context": {"diagnostics": []}})
            s.seen.clear()  # the client side keeps nothing either
        if n == 999:
            warm = s.rss_kb()
        if n % 1000 == 999:
            samples.append(s.call("xpuify/stats")["result"]["heapBytes"])
    end = s.rss_kb()
    stats = s.call("xpuify/stats")["result"]
    heap, warm_heap = stats["heapBytes"], samples[0]
    check(stats["analyses"] >= EDITS // 10, "every batch was analyzed", stats)
    if stats.get("sanitized"):
        # an AddressSanitizer build (make test SAN=1): freed memory sits in ASan's quarantine, so the resident set
        # grows by design and malloc's count is not ours; LeakSanitizer checks for leaks when the server exits
        print("# sanitized server: heap and RSS bounds not applicable; LeakSanitizer checks the exit")
    else:
        steps = [b - a for a, b in zip(samples, samples[1:])]
        check(sum(d > STEP for d in steps) <= STEPS_ALLOWED,
              f"the heap grew by more than {STEP} bytes in {sum(d > STEP for d in steps)} of {len(steps)} intervals of "
              "1,000 edits: a leak", steps)
        check(heap - warm_heap < HEAP_BOUND, f"heap grew {heap - warm_heap} bytes over {EDITS - 1000} edits", stats)
        check(end - warm < BOUND_KB, f"RSS grew {end - warm} KiB over {EDITS - 1000} edits (bound {BOUND_KB} KiB)",
              f"after warm-up {warm} KiB, at the end {end} KiB")
    print(f"# RSS {warm} KiB after 1,000 edits, {end} KiB after {EDITS:,}; heap {warm_heap} -> {heap} bytes "
          f"(per 1,000 edits: {[b - a for a, b in zip(samples, samples[1:])]}); "
          f"{stats['regionAnalyses']} of {stats['analyses']} analyses incremental")
    check(s.stop(timeout=60) == 0, "clean exit")


if __name__ == "__main__":
    main(globals())
