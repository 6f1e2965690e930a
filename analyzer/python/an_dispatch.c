/* an_dispatch: multi-device dispatches without an XPU branch (see an_dispatch.h). Conditions are read as words
 * (parts of identifiers split by `_` or `.`, string values): `self.is_npu`, `is_mlu_available()`, `device.type ==
 * "npu"`, `torch.backends.mps.is_available()`, `torch.version.hip`. A dispatch that mentions XPU or
 * torch.accelerator anywhere has its XPU branch already. */
#include "analyzer/python/an_dispatch.h"
#include "analyzer/python/an_pyfield.h"
#include "analyzer/python/an_resolve.h"
#include "util/ut_buf.h"
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <strings.h>

/* deeper trees are not analyzed by the front end either (an_python.c) */
#define DISPATCH_MAX_DEPTH 4000

typedef struct {
    const char *word; /* lower case */
    const char *label;
} device;

/* accelerators other than CUDA and XPU (ROCm answers to torch.cuda, but a branch for it is a branch for another
 * device all the same); the CPU is no sibling: CUDA-or-CPU code is the unported code other rules report */
static const device others[] = {
    {"npu", "NPU"},   {"mlu", "MLU"},     {"mps", "MPS"},       {"hpu", "HPU"},   {"gaudi", "HPU"},
    {"habana", "HPU"}, {"xla", "XLA"},    {"tpu", "TPU"},       {"musa", "MUSA"}, {"sdaa", "SDAA"},
    {"neuron", "Neuron"}, {"hip", "ROCm"}, {"rocm", "ROCm"},    {"mtia", "MTIA"}, {"ipu", "IPU"},
    {"privateuseone", "PrivateUse1"}, {NULL, NULL}};

static bool is(TSNode n, const char *t) { return !ts_node_is_null(n) && !strcmp(ts_node_type(n), t); }

/* w (lower case) at i as a word or a part of an identifier split by `_`, `.` or quotes, in any case */
static bool word_at(const char *s, size_t n, size_t i, const char *w, size_t wl) {
    if (i + wl > n) return false;
    for (size_t k = 0; k < wl; k++)
        if (tolower((unsigned char)s[i + k]) != w[k]) return false;
    return (i == 0 || !isalnum((unsigned char)s[i - 1])) && (i + wl >= n || !isalnum((unsigned char)s[i + wl]));
}

static bool has_word(const char *s, size_t n, const char *w) {
    size_t wl = strlen(w);
    for (size_t i = 0; i + wl <= n; i++)
        if (word_at(s, n, i, w, wl)) return true;
    return false;
}

static bool alnum(unsigned char c) { return (unsigned)((c | 32) - 'a') < 26 || (unsigned)(c - '0') < 10; }

/* the other devices a text names, as a bit set over others[]: one pass over its words (runs of letters and digits,
 * in any case), which is has_word for every device at once (the whole file is read this way first). Only a word
 * as long as some device's is lowered and compared (most are not: this runs over every analyzed file). */
static uint32_t other_devices(const char *s, size_t n) {
    uint32_t m = 0, lens = 0;
    for (int d = 0; others[d].word; d++) lens |= 1u << strlen(others[d].word);
    for (size_t i = 0; i < n;) {
        if (!alnum((unsigned char)s[i])) { i++; continue; }
        size_t j = i + 1;
        while (j < n && alnum((unsigned char)s[j])) j++;
        size_t wl = j - i;
        if (wl < 32 && (lens & (1u << wl))) {
            char w[32];
            for (size_t k = 0; k < wl; k++) w[k] = (char)(s[i + k] | ((unsigned)(s[i + k] - 'A') < 26 ? 32 : 0));
            for (int d = 0; others[d].word; d++)
                if (others[d].word[0] == w[0] && strlen(others[d].word) == wl && !memcmp(others[d].word, w, wl)) m |= 1u << d;
        }
        i = j;
    }
    return m;
}

/* the other devices whose modules a branch calls (`torch.npu.synchronize()`, `torch_npu.npu.empty_cache()`,
 * `torch.mps.empty_cache`): a branch that does the device's work, not one that only picks a device (`device =
 * torch.device("mps")`: device selection, which other rules complete) */
static uint32_t other_modules(const char *s, size_t n) {
    uint32_t m = 0;
    for (int d = 0; others[d].word; d++) {
        size_t wl = strlen(others[d].word);
        for (size_t i = 0; i + wl < n && !(m & (1u << d)); i++)
            if (s[i + wl] == '.' && word_at(s, n, i, others[d].word, wl) &&
                (i == 0 || !(isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_')))
                m |= 1u << d;
    }
    return m;
}

/* the first `torch.cuda.NAME` of a subtree (*call), or whether it calls `.cuda(` at all; comments and strings do
 * not count */
static bool cuda_use(TSNode body, const char *src, TSNode *call) {
    bool method = false;
    *call = (TSNode){0};
    TSTreeCursor cur = ts_tree_cursor_new(body);
    unsigned depth = 0;
    for (;;) {
        TSNode n = ts_tree_cursor_current_node(&cur);
        bool descend = true;
        if (is(n, "attribute")) {
            TSNode obj = an_py_field(n, "object", 6);
            TSNode attr = an_py_field(n, "attribute", 9);
            uint32_t os = ts_node_start_byte(obj), oe = ts_node_end_byte(obj);
            if (!ts_node_is_null(obj) && oe - os == 10 && !memcmp(src + os, "torch.cuda", 10)) {
                *call = n;
                break;
            }
            TSNode p = ts_node_parent(n);
            if (!ts_node_is_null(attr) && ts_node_end_byte(attr) - ts_node_start_byte(attr) == 4 &&
                !memcmp(src + ts_node_start_byte(attr), "cuda", 4) && is(p, "call") &&
                ts_node_start_byte(an_py_field(p, "function", 8)) == ts_node_start_byte(n))
                method = true;
        } else if (is(n, "string") || is(n, "comment")) {
            descend = false;
        }
        if (descend && depth < DISPATCH_MAX_DEPTH && ts_tree_cursor_goto_first_child(&cur)) {
            depth++;
            continue;
        }
        for (;;) {
            if (!depth) goto done;
            if (ts_tree_cursor_goto_next_sibling(&cur)) break;
            ts_tree_cursor_goto_parent(&cur);
            depth--;
        }
    }
done:
    ts_tree_cursor_delete(&cur);
    return !ts_node_is_null(*call) || method;
}

static char *labels(uint32_t m) {
    ut_buf b;
    ut_buf_init(&b);
    for (int d = 0; others[d].word; d++) {
        if (!(m & (1u << d)) || (b.len && strstr(b.data, others[d].label))) continue;
        ut_buf_printf(&b, "%s%s", b.len ? ", " : "", others[d].label);
    }
    return ut_buf_take(&b);
}

typedef struct {
    TSNode cond, body;
    uint32_t start; /* the branch's test */
} branch;

static void on_if(an_dispatches *out, TSNode n, const char *src) {
    const char *s = src + ts_node_start_byte(n);
    size_t sl = ts_node_end_byte(n) - ts_node_start_byte(n);
    if (an_py_mentions_agnostic(s, sl)) return; /* an XPU branch, or device-generic code */
    branch br[64];
    size_t nb = 0;
    uint32_t sib = 0;
    TSNode cond = an_py_field(n, "condition", 9), body = an_py_field(n, "consequence", 11);
    if (ts_node_is_null(cond) || ts_node_is_null(body)) return;
    br[nb++] = (branch){cond, body, ts_node_start_byte(cond)};
    uint32_t k = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < k; i++) {
        TSNode ch = ts_node_named_child(n, i);
        if (is(ch, "elif_clause")) {
            TSNode c = an_py_field(ch, "condition", 9), b = an_py_field(ch, "consequence", 11);
            if (!ts_node_is_null(c) && !ts_node_is_null(b) && nb < sizeof br / sizeof *br) br[nb++] = (branch){c, b, ts_node_start_byte(c)};
        } else if (is(ch, "else_clause")) {
            TSNode b = an_py_field(ch, "body", 4);
            if (!ts_node_is_null(b)) sib |= other_modules(src + ts_node_start_byte(b), ts_node_end_byte(b) - ts_node_start_byte(b));
        }
    }
    bool cuda[64] = {0};
    for (size_t i = 0; i < nb; i++) {
        const char *cs = src + ts_node_start_byte(br[i].cond);
        size_t cn = ts_node_end_byte(br[i].cond) - ts_node_start_byte(br[i].cond);
        uint32_t o = other_devices(cs, cn);
        const char *bs = src + ts_node_start_byte(br[i].body);
        if (o) sib |= o & other_modules(bs, ts_node_end_byte(br[i].body) - ts_node_start_byte(br[i].body));
        cuda[i] = !o && has_word(cs, cn, "cuda") && !is(br[i].cond, "not_operator");
    }
    if (!sib) return;
    for (size_t i = 0; i < nb; i++) {
        TSNode call;
        if (!cuda[i] || !cuda_use(br[i].body, src, &call)) continue;
        an_dispatch d = {0};
        d.test_start = ts_node_start_byte(br[i].cond), d.test_end = ts_node_end_byte(br[i].cond);
        d.branch_start = br[i].start, d.branch_end = ts_node_end_byte(br[i].body);
        if (!ts_node_is_null(call)) d.call_start = ts_node_start_byte(call), d.call_end = ts_node_end_byte(call);
        d.others = labels(sib);
        ut_vec_push(out, d);
    }
}

/* a string literal whose value is w (any case), with no prefix or an r/b prefix */
static bool string_is(const char *s, size_t n, const char *w) {
    size_t wl = strlen(w);
    while (n && strchr("rRbB", s[0])) s++, n--;
    return n == wl + 2 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0] && !strncasecmp(s + 1, w, wl);
}

/* `{"cuda": torch.cuda.empty_cache, "npu": torch.npu.empty_cache}` */
static void on_dictionary(an_dispatches *out, TSNode n, const char *src) {
    TSNode cuda = {0};
    uint32_t sib = 0;
    uint32_t k = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < k; i++) {
        TSNode p = ts_node_named_child(n, i);
        if (!is(p, "pair")) continue;
        TSNode key = an_py_field(p, "key", 3);
        if (!is(key, "string")) continue;
        const char *ks = src + ts_node_start_byte(key);
        size_t kn = ts_node_end_byte(key) - ts_node_start_byte(key);
        if (string_is(ks, kn, "xpu")) return;
        bool dev = false;
        if (string_is(ks, kn, "cuda")) cuda = p, dev = true;
        if (string_is(ks, kn, "cpu") || string_is(ks, kn, "meta") || string_is(ks, kn, "default")) dev = true;
        TSNode val = an_py_field(p, "value", 5);
        uint32_t calls = ts_node_is_null(val) ? 0 : other_modules(src + ts_node_start_byte(val), ts_node_end_byte(val) - ts_node_start_byte(val));
        for (int d = 0; others[d].word; d++)
            if (string_is(ks, kn, others[d].word)) sib |= calls & (1u << d), dev = true;
        if (!dev) return; /* a record with a "cuda" field ({"cell": ..., "cuda": ...}), not a table per device */
    }
    if (ts_node_is_null(cuda) || !sib) return;
    TSNode key = an_py_field(cuda, "key", 3);
    an_dispatch d = {0};
    d.test_start = ts_node_start_byte(key), d.test_end = ts_node_end_byte(key);
    d.branch_start = ts_node_start_byte(cuda), d.branch_end = ts_node_end_byte(cuda);
    d.dict = true;
    TSNode call;
    TSNode val = an_py_field(cuda, "value", 5);
    /* a table of CUDA calls; not one of classes, build names or options keyed by device */
    if (ts_node_is_null(val) || !cuda_use(val, src, &call)) return;
    if (!ts_node_is_null(call)) d.call_start = ts_node_start_byte(call), d.call_end = ts_node_end_byte(call);
    d.others = labels(sib);
    ut_vec_push(out, d);
}

/* whether the text the tree was parsed from names another accelerator: a test, key or body that names one lies
 * inside it (the ranges start at line starts: a word is never cut) */
static bool names_other_device(const char *src, const an_span *spans, size_t n) {
    size_t len = strlen(src);
    if (!n) return other_devices(src, len) != 0;
    for (size_t i = 0; i < n; i++) {
        size_t s = spans[i].start, e = spans[i].end < len ? spans[i].end : len;
        if (s < e && other_devices(src + s, e - s)) return true;
    }
    return false;
}

/* nothing to find in a file that names no other accelerator (most files): one pass over the text */
static bool may_dispatch(const char *src, const an_span *spans, size_t nspans) {
    return strstr(src, "cuda") && names_other_device(src, spans, nspans);
}

const TSLanguage *tree_sitter_python(void);
enum { D_IF = 1, D_DICT = 2 }; /* the names' positions + 1 */
static an_pykinds dkinds;
static pthread_once_t dkinds_once = PTHREAD_ONCE_INIT;
static void dkinds_init(void) {
    static const char *const names[] = {"if_statement", "dictionary", NULL};
    an_pykinds_init(&dkinds, tree_sitter_python(), names);
}

static void collect(an_dispatches *out, const an_pynodes *nodes, const char *src) {
    pthread_once(&dkinds_once, dkinds_init);
    bool py = nodes->len && ts_tree_language(nodes->items[0].node.tree) == dkinds.lang;
    for (uint32_t i = 0; i < nodes->len;) {
        const an_pynode *p = &nodes->items[i];
        TSNode n = p->node;
        uint8_t k = py ? an_pykind_of(&dkinds, p->sym) : (is(n, "if_statement") ? D_IF : is(n, "dictionary") ? D_DICT : 0);
        if (k == D_IF) on_if(out, n, src);
        else if (k == D_DICT) on_dictionary(out, n, src);
        i = p->depth < DISPATCH_MAX_DEPTH ? i + 1 : p->next;
    }
}

void an_dispatch_collect(an_dispatches *out, TSNode root, const char *src, const an_span *spans, size_t nspans) {
    memset(out, 0, sizeof *out);
    if (!may_dispatch(src, spans, nspans)) return;
    an_pynodes nodes;
    an_pynodes_build(&nodes, root);
    const an_pynodes *was = an_py_field_index(&nodes);
    collect(out, &nodes, src);
    an_py_field_index(was);
    an_pynodes_free(&nodes);
}

void an_dispatch_collect_nodes(an_dispatches *out, const an_pynodes *nodes, const char *src, const an_span *spans,
                               size_t nspans) {
    memset(out, 0, sizeof *out);
    if (may_dispatch(src, spans, nspans)) collect(out, nodes, src);
}

void an_dispatch_free(an_dispatches *v) {
    for (size_t i = 0; i < v->len; i++) ut_free(v->items[i].others);
    ut_vec_free(v);
}
