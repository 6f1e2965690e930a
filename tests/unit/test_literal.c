/* Unit tests for an_literal: which literals a trigger pattern's matches must contain (covers), the one-pass
 * scanner, and the property the prefilter rests on: wherever PCRE2 finds a match, the scan finds a cover literal
 * (checked for real rule patterns over every fixture file). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "tests/unit/unit_files.h"
#define PCRE2_CODE_UNIT_WIDTH 8
#include "analyzer/core/an_literal.h"
#include <ctype.h>
#include <dirent.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* true when scanning text finds one of re's cover literals */
static bool covered_in(const char *re, const char *text) {
    an_lits *l = an_lits_new();
    an_u32_vec ids = {0};
    assert_true(an_lits_cover(l, re, &ids));
    uint8_t found[256];
    an_lits_scan(l, text, strlen(text), found);
    bool r = an_lits_any(found, ids.items, ids.len);
    ut_vec_free(&ids);
    an_lits_free(l);
    return r;
}

static size_t ncover(const char *re) {
    an_lits *l = an_lits_new();
    an_u32_vec ids = {0};
    size_t n = an_lits_cover(l, re, &ids) ? ids.len : 0;
    ut_vec_free(&ids);
    an_lits_free(l);
    return n;
}

/* covered_in with the further sets of an_lits_cover_all */
static bool covered_all_in(const char *re, const char *text) {
    an_lits *l = an_lits_new();
    an_u32_vec ids = {0}, also = {0};
    assert_true(an_lits_cover_all(l, re, &ids, &also));
    uint8_t found[256];
    an_lits_scan(l, text, strlen(text), found);
    bool r = an_lits_any(found, ids.items, ids.len) && an_lits_all(found, also.items, also.len);
    ut_vec_free(&ids);
    ut_vec_free(&also);
    an_lits_free(l);
    return r;
}

static void covers_all(void **s) {
    (void)s;
    /* every required set must be there: class and one of the spellings of cuda */
    const char *cls = "\\bclass\\s+\\w*(?:CUDA|Cuda|cuda)";
    assert_false(covered_all_in(cls, "class Net(nn.Module): pass"));
    assert_true(covered_in(cls, "class Net(nn.Module): pass"));
    assert_false(covered_all_in(cls, "x = 'cuda'"));
    assert_true(covered_all_in(cls, "class X: pass\ny = 'cuda'")); /* a cover is a necessary condition only */
    assert_true(covered_all_in(cls, "class CudaBackend:"));
    const char *reg = "\\b(?:register\\w*|impl)\\([^)]*[\"']cuda[\"']";
    assert_false(covered_all_in(reg, "lib.impl(op, fn)"));
    assert_true(covered_all_in(reg, "lib.impl(op, fn, 'cuda')"));
    /* sets of one- and two-byte literals are not kept (the scan of every file would slow down) */
    an_lits *l = an_lits_new();
    an_u32_vec ids = {0}, also = {0};
    assert_true(an_lits_cover_all(l, "cudax\\s*\\(\\s*ab", &ids, &also));
    assert_int_equal(also.len, 0);
    /* alternatives at the top level: no further sets (each alternative needs its own) */
    assert_true(an_lits_cover_all(l, "class\\s+cuda|pynvml", &ids, &also));
    assert_int_equal(also.len, 0);
    ut_vec_free(&ids);
    ut_vec_free(&also);
    an_lits_free(l);
}

static void covers(void **s) {
    (void)s;
    /* a plain word, whole-word anchors, escapes, quantified characters */
    assert_int_equal(ncover("\\bcuda\\b"), 1);
    assert_true(covered_in("\\bcuda\\b", "x.cuda()"));
    assert_false(covered_in("\\bcuda\\b", "x.cpu()"));
    assert_true(covered_in("\\.cuda\\s*\\(", "x.cuda ()"));
    assert_false(covered_in("\\.cuda\\s*\\(", "x_cuda ()")); /* the literal is ".cuda", dot included */
    assert_true(covered_in("\\bp?nccl[A-Z]", "ncclSend"));
    assert_true(covered_in("colou?r", "color"));            /* the optional u splits the run: col, r */
    assert_true(covered_in("ab+c", "abbbc"));
    /* alternations: every branch must give a literal; the cover is their union */
    /* a group of plain literals between characters joins them: torch.cuda., torch.xpu. (not torch. alone) */
    assert_int_equal(ncover("torch\\.(?:cuda|xpu)\\.|pynvml"), 3);
    assert_true(covered_in("torch\\.(?:cuda|xpu)\\.|pynvml", "torch.xpu.synchronize()"));
    assert_false(covered_in("torch\\.(?:cuda|xpu)\\.|pynvml", "torch.mps.x = 'cuda.'"));
    assert_int_equal(ncover("\\b(?:cuda|xpu)\\b_(?:a|b|c)"), 6);
    assert_int_equal(ncover("(?:a|b|c|d|e|f)(?:g|h|i|j|k|l)(?:m|n)x"), 2); /* 36 spellings: the run restarts, mx or nx */
    assert_int_equal(ncover("(?:cuda|xpu)?_dev"), 1);                        /* optional: not joined */
    /* a class of a few plain characters, once, joins the literal as alternatives would */
    assert_int_equal(ncover("\\.cu[\"']"), 2); /* .cu" .cu' */
    assert_false(covered_in("\\.cu[\"']", "x = y.cuda()"));
    assert_true(covered_in("\\.cu[\"']", "load(sources=['k.cu'])"));
    assert_int_equal(ncover("[\"']cuda[\"']"), 4);
    assert_int_equal(ncover("a[-_.]b"), 3);
    assert_int_equal(ncover("ab[xy]+c"), 2);   /* required, repeated: abx or aby, then c on its own */
    assert_true(covered_in("ab[xy]+c", "abyyc"));
    assert_int_equal(ncover("abc[xy]?"), 1);   /* optional: abc alone */
    assert_int_equal(ncover("abc[a-z]d"), 1);  /* a range: not joined (abc) */
    assert_int_equal(ncover("abc[^x]def"), 1); /* negated: not joined; abc and def, the longest first */
    assert_int_equal(ncover("abc[\\w]"), 1);  /* an escaped class letter: not joined */
    assert_int_equal(ncover("ab[cdefghijk]"), 1); /* more than eight characters: not joined */
    /* a multi-byte character is one code point of a class (PCRE2_UTF), not its bytes: not joined */
    assert_int_equal(ncover("x[\xc3\xa9\xc3\xa8]yz"), 1);
    assert_true(covered_in("x[\xc3\xa9\xc3\xa8]yz", "a x\xc3\xa9yz b"));
    assert_true(covered_in("cuda[\xe2\x80\x9c\"]dev", "cuda\xe2\x80\x9c" "dev"));
    assert_int_equal(ncover("a[\\-_]b"), 2); /* an escaped - is a character, not a range */
    assert_true(covered_in("(?i:cu)(?:da)", "CUda"));                         /* cases differ: not joined */
    assert_true(covered_in("torch\\.(?:cuda|xpu)\\.|pynvml", "import pynvml"));
    assert_true(covered_in("(?:gpu|cuda)_x", "gpu_x"));
    assert_int_equal(ncover("a|\\s+"), 0);                 /* a branch with no literal: no cover */
    assert_int_equal(ncover("\\s+"), 0);
    assert_int_equal(ncover("(?:x)?y"), 1);                /* an optional group proves nothing; y does */
    /* case-insensitive: leading (?i) and scoped (?i:...) */
    assert_true(covered_in("(?i)cuda out of memory", "CUDA Out Of Memory"));
    assert_true(covered_in("(?i:\\bfind_package)\\s*\\(\\s*CUDA", "FIND_PACKAGE(CUDA)"));
    assert_false(covered_in("cuda", "CUDA"));
    /* named groups, branch reset, look-arounds (which consume nothing) */
    assert_true(covered_in("(?<![\\w/-])(?<report>nvidia-smi)(?![\\w-])", "run nvidia-smi -L"));
    assert_true(covered_in("(?|(?<report>--gpus)(?:[= ]+\\S+)?|\\bruntime\\s*:\\s*[\"']?(?<report>nvidia)\\b)",
                           "runtime: nvidia"));
    /* what the parser does not understand has no cover (the pattern then always runs) */
    assert_int_equal(ncover("\\x41"), 0);
    assert_int_equal(ncover("(?x) a b"), 0);
    assert_int_equal(ncover("(a)\\1"), 0);
    assert_int_equal(ncover("a{2"), 0);
    assert_int_equal(ncover("(abc"), 0);
    assert_int_equal(ncover("abc)"), 0);
}

static void scanner(void **s) {
    (void)s;
    an_lits *l = an_lits_new();
    an_u32_vec a = {0}, b = {0}, c = {0};
    assert_true(an_lits_cover(l, "device_count", &a));
    assert_true(an_lits_cover(l, "device_ids", &b));
    assert_true(an_lits_cover(l, "x", &c)); /* a one-byte literal */
    assert_int_equal(an_lits_count(l), 3);
    uint8_t f[3];
    const char *t = "n = torch.cuda.device_count()";
    an_lits_scan(l, t, strlen(t), f);
    assert_true(an_lits_any(f, a.items, a.len));
    assert_false(an_lits_any(f, b.items, b.len));
    assert_false(an_lits_any(f, c.items, c.len));
    an_lits_scan(l, "device_ids=[0]; x", 17, f); /* a literal at the very end, one byte long */
    assert_false(an_lits_any(f, a.items, a.len));
    assert_true(an_lits_any(f, b.items, b.len));
    assert_true(an_lits_any(f, c.items, c.len));
    an_lits_scan(l, "device_coun", 11, f); /* cut short: no match past the end */
    assert_false(an_lits_any(f, a.items, a.len));
    an_lits_scan(l, "", 0, f);
    assert_false(an_lits_any(f, a.items, a.len));
    ut_vec_free(&a);
    ut_vec_free(&b);
    ut_vec_free(&c);
    an_lits_free(l);
}

/* The scan finds exactly what a naive search finds: literals of 3+ bytes (scanned at every other offset), with a
 * two-byte one (every offset), case-insensitive ones, at every offset of texts of every length up to 12. */
static bool naive_has(const char *t, size_t n, const char *w, bool nocase) {
    size_t m = strlen(w);
    for (size_t i = 0; i + m <= n; i++) {
        size_t k = 0;
        while (k < m && (nocase ? tolower((unsigned char)t[i + k]) == tolower((unsigned char)w[k]) : t[i + k] == w[k])) k++;
        if (k == m) return true;
    }
    return false;
}

static void scanner_matches_naive_search(void **s) {
    (void)s;
    static const char *const sets[2][4] = {{"cud", "nccl", "(?i)xpu", "abab"}, {"cud", "(?i)nccl", "ab", "dab"}};
    static const char alphabet[] = "abcdnuxpCUDXP_l";
    for (int set = 0; set < 2; set++) {
        an_lits *l = an_lits_new();
        an_u32_vec ids[4] = {{0}};
        for (int w = 0; w < 4; w++) assert_true(an_lits_cover(l, sets[set][w], &ids[w]));
        uint8_t f[8];
        unsigned seed = 12345;
        char t[16];
        for (int round = 0; round < 20000; round++) {
            size_t n = (size_t)(round % 13);
            for (size_t i = 0; i < n; i++) {
                seed = seed * 1103515245u + 12345u;
                t[i] = alphabet[(seed >> 16) % (sizeof alphabet - 1)];
            }
            an_lits_scan(l, t, n, f);
            for (int w = 0; w < 4; w++) {
                const char *word = sets[set][w];
                bool nocase = !strncmp(word, "(?i)", 4);
                bool want = naive_has(t, n, nocase ? word + 4 : word, nocase);
                if (an_lits_any(f, ids[w].items, ids[w].len) != want) {
                    fprintf(stderr, "set %d, `%s` in \"%.*s\": expected %d\n", set, word, (int)n, t, want);
                    fail();
                }
            }
        }
        for (int w = 0; w < 4; w++) ut_vec_free(&ids[w]);
        an_lits_free(l);
    }
}

/* ---- the property, over the fixtures -------------------------------------------------------------------------- */

typedef UT_VEC(char *) paths;

static void walk(const char *dir, paths *out) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st)) continue;
        if (S_ISDIR(st.st_mode)) walk(p, out);
        else if (S_ISREG(st.st_mode) && st.st_size < (4 << 20)) ut_vec_push(out, strdup(p));
    }
    closedir(d);
}

/* patterns of the built-in rules (triggers and localities), the trickier the better */
static const char *const real[] = {
    "\\bclass\\s+\\w*(?:CUDA|Cuda|cuda)", "\\b(?:register\\w*|impl)\\([^)]*[\"']cuda[\"']", "\\.cu[\"']",
    "double|float64", "cuda|device|\\.to\\b", "\\bexcept\\b",
    "\\.cuda\\s*\\(", "is_cuda", "\\bcuda\\b", "\\bxpu\\b", "\\bis_available\\b", "ccl", "\\bhip\\b",
    "(?i)cuda out of memory", "accelerator\\s*=\\s*.(?:gpu|cuda|xpu)\\b", "\\bdouble\\b", "\\bfloat64\\b",
    "torch\\.(?:cuda|xpu|mps|accelerator|backends)\\.|\\b(?:cuda|xpu)\\.|nvidia-smi|pynvml|intel_extension_for_pytorch|"
    "get_device_(?:name|properties|capability)",
    "\\bxpu\\b|torch\\.accelerator", "\\bcuda[A-Z]", "\\bCUDA_(SUCCESS|ERROR_)", "\\bCUSOLVER(DN)?_[A-Z]",
    "\\b__[a-z0-9]+f\\b", "\\b(u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4]\\b",
    "\\bh2?(exp|log|sqrt|rsqrt|rcp|sin|cos|ceil|floor|trunc|rint)", "<<<", "\\bcg::",
    "\\b__(?:popc|clz|ffs|brev|byte_perm|funnelshift|u?mul24|u?mulhi|u?mul64hi|u?sad|u?r?hadd|dp[24]a|saturatef)",
    "(?<![\\w/-])(?<report>nvidia-smi)(?![\\w-])", "\\b(?<report>CUDA_VISIBLE_DEVICES)\\b",
    "(?i:\\bfind_package)\\s*\\(\\s*(?<report>CUDA|CUDAToolkit|NCCL|CUDNN|cuDNN|TensorRT|CUB|Thrust)\\b",
    "download\\.pytorch\\.org/whl/(?:(?:nightly|test)/)?(?<report>cu\\d+)\\b",
    "\\b(?:torch|torchvision|torchaudio|pytorch)\\s*(?:===?|>=|<=|~=|@|\\s)\\s*v?[\\d.]+(?:[a-z]+\\d*)?\\+(?<report>cu\\d+)\\b",
    NULL};

static void property_on_fixtures(void **s) {
    (void)s;
    paths files = {0};
    walk("fixtures", &files);
    walk("examples", &files);
    assert_true(files.len > 50);
    an_lits *l = an_lits_new();
    an_u32_vec ids[64] = {{0}}, also[64] = {{0}};
    pcre2_code *re[64];
    size_t n = 0;
    for (; real[n]; n++) {
        assert_true(an_lits_cover_all(l, real[n], &ids[n], &also[n]));
        int ec;
        PCRE2_SIZE eo;
        re[n] = pcre2_compile((PCRE2_SPTR)real[n], PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_MULTILINE, &ec, &eo, NULL);
        assert_non_null(re[n]);
    }
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    uint8_t *found = malloc(an_lits_count(l));
    size_t matched = 0;
    for (size_t i = 0; i < files.len; i++) {
        size_t len;
        char *t = slurp(files.items[i], &len);
        if (!t) continue;
        an_lits_scan(l, t, len, found);
        for (size_t k = 0; k < n; k++) {
            bool m = pcre2_match(re[k], (PCRE2_SPTR)t, len, 0, 0, md, NULL) >= 0;
            matched += m;
            if (m && !(an_lits_any(found, ids[k].items, ids[k].len) && an_lits_all(found, also[k].items, also[k].len)))
                fail_msg("%s matches `%s` but the scan found none of its literals", files.items[i], real[k]);
        }
        free(t);
        free(files.items[i]);
    }
    assert_true(matched > 100); /* the fixtures do exercise these patterns */
    free(found);
    pcre2_match_data_free(md);
    for (size_t k = 0; k < n; k++) {
        pcre2_code_free(re[k]);
        ut_vec_free(&ids[k]);
        ut_vec_free(&also[k]);
    }
    an_lits_free(l);
    ut_vec_free(&files);
}

/* The same property on generated texts: each a random sequence of fragments of the patterns (their literals, cut
 * anywhere) and of punctuation, so that matches and near misses are frequent. */
static void property_generated(void **s) {
    (void)s;
    static const char *const frag[] = {"class", " ", "Cuda", "cuda", "CUDA", "xpu", "torch", ".", "(", ")", "'", "\"",
                                       "register", "impl", "_", "X", "\n", "except", "double", "float64", "to", "cu",
                                       "da", "torch.", "mps", "backends", "nvidia-smi", "is_available", "=", "gpu",
                                       "accelerator", "get_device_", "name", "hip", "__", "f", "ccl", "<<<", "cg::", "1"};
    const size_t nfrag = sizeof frag / sizeof *frag;
    an_lits *l = an_lits_new();
    an_u32_vec ids[64] = {{0}}, also[64] = {{0}};
    pcre2_code *re[64];
    size_t n = 0;
    for (; real[n]; n++) {
        assert_true(an_lits_cover_all(l, real[n], &ids[n], &also[n]));
        int ec;
        PCRE2_SIZE eo;
        re[n] = pcre2_compile((PCRE2_SPTR)real[n], PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_MULTILINE, &ec, &eo, NULL);
        assert_non_null(re[n]);
    }
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    uint8_t *found = malloc(an_lits_count(l));
    srand(11);
    size_t matched = 0;
    char text[400];
    for (int round = 0; round < 30000; round++) {
        size_t len = 0;
        for (int k = rand() % 24; k > 0; k--) {
            const char *f = frag[(size_t)rand() % nfrag];
            size_t fl = strlen(f), cut = rand() % 4 ? fl : (size_t)rand() % (fl + 1);
            if (len + cut >= sizeof text) break;
            memcpy(text + len, f, cut);
            len += cut;
        }
        an_lits_scan(l, text, len, found);
        for (size_t k = 0; k < n; k++) {
            bool m = pcre2_match(re[k], (PCRE2_SPTR)text, len, 0, 0, md, NULL) >= 0;
            matched += m;
            if (m && !(an_lits_any(found, ids[k].items, ids[k].len) && an_lits_all(found, also[k].items, also[k].len)))
                fail_msg("`%.*s` matches `%s` but its cover does not hold", (int)len, text, real[k]);
        }
    }
    assert_true(matched > 10000);
    free(found);
    pcre2_match_data_free(md);
    for (size_t k = 0; k < n; k++) {
        pcre2_code_free(re[k]);
        ut_vec_free(&ids[k]);
        ut_vec_free(&also[k]);
    }
    an_lits_free(l);
}

/* ---- an_plain: patterns of literals only, matched without PCRE2 ---- */

static const char *const plain_ok[] = {
    "xpu", "\\bcuda\\b", "torch\\.backends\\.", "\\bxpu\\b|torch\\.accelerator", "NCCL_", "nvidia-smi",
    "\\.cuda\\b", "\\bcu", "a\\\\b", "(?i)cuda out of memory",
    "(?i)(?<![a-z0-9])(?:npu|mps|hip|hipx|sk|privateuseone)(?![a-z0-9])",
    "(?<![a-z0-9])(?:mps|hip)(?![a-z0-9])", "(?i)(?<![a-z0-9])(?:_cu|\\.xpu|npu)(?![a-z0-9])",
    "\\b(?:xpu|cuda)", "(?:cu|cuda)\\b", NULL};
static const char *const plain_not[] = {
    "\\.cuda\\s*\\(", "\\.cu[\"']", "cuda|", "(?:cuda", "\\bcu\\bda", "cuda.", "\\bclass\\s+\\w*(?:CUDA|Cuda|cuda)",
    "(?i)(?<![a-z])(?:npu)", "\\d", "", "(?:)", "caf\xc3\xa9", NULL};

/* every match from successive offsets (as region selection steps through them), and from each offset of a prefix
 * of the text, the same as PCRE2's */
static void same_as_pcre(const char *re, const char *text, size_t len) {
    an_plain p;
    an_plain_parse(re, &p);
    assert_non_null(p.alts);
    int ec;
    PCRE2_SIZE eo;
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_DUPNAMES, &ec, &eo, NULL);
    assert_non_null(code);
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    for (size_t cut = 0; cut < 4 && cut < len; cut++) { /* the whole text, then shorter subjects */
        size_t sub = len - cut;
        if (sub < len && ((unsigned char)text[sub] & 0xC0) == 0x80) continue; /* not inside a character */
        for (size_t from = 0; from <= sub; from++) {
            size_t end = 0;
            long at = an_plain_find(&p, text, sub, from, &end);
            /* a start inside a character is no offset PCRE2 takes */
            if (from < sub && ((unsigned char)text[from] & 0xC0) == 0x80) continue;
            int rc = pcre2_match(code, (PCRE2_SPTR)text, sub, from, 0, md, NULL);
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            if (rc < 0) {
                if (at >= 0) fail_msg("`%s` in \"%.*s\" from %zu: found at %ld, PCRE2 none", re, (int)sub, text, from, at);
            } else if (at != (long)ov[0] || end != ov[1]) {
                fail_msg("`%s` in \"%.*s\" from %zu: [%ld, %zu), PCRE2 [%zu, %zu)", re, (int)sub, text, from, at, end,
                         (size_t)ov[0], (size_t)ov[1]);
            }
        }
    }
    pcre2_match_data_free(md);
    pcre2_code_free(code);
    an_plain_free(&p);
}

static void plain_parses(void **s) {
    (void)s;
    for (size_t i = 0; plain_ok[i]; i++) {
        an_plain p;
        an_plain_parse(plain_ok[i], &p);
        if (!p.alts) fail_msg("`%s` is literals only", plain_ok[i]);
        an_plain_free(&p);
    }
    for (size_t i = 0; plain_not[i]; i++) {
        an_plain p;
        an_plain_parse(plain_not[i], &p);
        if (p.alts) fail_msg("`%s` is not literals only", plain_not[i]);
    }
    an_plain p;
    an_plain_parse("(?i)(?<![a-z0-9])(?:npu|mps)(?![a-z0-9])", &p);
    assert_true(p.nocase);
    assert_int_equal(p.nalt, 2);
    assert_int_equal(p.alts[1].before, AN_PLAIN_NOT_ALNUM);
    assert_int_equal(p.alts[1].after, AN_PLAIN_NOT_ALNUM);
    an_plain_free(&p);
    an_plain_parse("a\\\\b", &p); /* an escaped backslash, then the letter b */
    assert_string_equal(p.alts[0].lit, "a\\b");
    assert_int_equal(p.alts[0].after, AN_PLAIN_ANY);
    an_plain_free(&p);
}

static void plain_matches_pcre(void **s) {
    (void)s;
    /* texts of fragments around every boundary the patterns test: words, digits, dots, upper case, non-ASCII */
    static const char *const frag[] = {"cuda", "CUDA", "xpu", "Xpu", "_", "a", "1", " ", ".", "torch", ".backends.",
                                       "mps", "MPS", "hip", "hipx", "sk", "SK", "npu", "\xc3\xa9", "\n", "\\", "b",
                                       "nvidia-smi", "out of memory", "accelerator", "privateuseone", "cu"};
    size_t nf = sizeof frag / sizeof *frag;
    unsigned seed = 12345;
    char text[200];
    for (int round = 0; round < 400; round++) {
        size_t len = 0;
        while (len < 120) {
            seed = seed * 1103515245u + 12345u;
            const char *f = frag[(seed >> 16) % nf];
            memcpy(text + len, f, strlen(f));
            len += strlen(f);
        }
        text[len] = 0;
        assert_true(an_plain_caseless_safe(text, len));
        for (size_t i = 0; plain_ok[i]; i++) same_as_pcre(plain_ok[i], text, len);
    }
    /* the characters caseless PCRE2 matches to ASCII letters: such texts go to PCRE2 */
    assert_false(an_plain_caseless_safe("mp\xc5\xbf", 4));         /* the long s */
    assert_false(an_plain_caseless_safe("s\xe2\x84\xaa", 4));      /* the Kelvin sign */
    assert_true(an_plain_caseless_safe("caf\xc3\xa9 \xe2\x84", 8)); /* other non-ASCII, a cut character */
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(covers), cmocka_unit_test(covers_all), cmocka_unit_test(property_generated), cmocka_unit_test(scanner),
                                       cmocka_unit_test(scanner_matches_naive_search),
                                       cmocka_unit_test(property_on_fixtures), cmocka_unit_test(plain_parses),
                                       cmocka_unit_test(plain_matches_pcre)};
    return cmocka_run_group_tests_name("literal", tests, NULL, NULL);
}
