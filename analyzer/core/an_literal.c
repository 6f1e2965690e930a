/* an_literal: required literals of trigger patterns (a small parser of the PCRE2 syntax rules use), and a scanner
 * that finds all of them in one pass over a file. */
#include "analyzer/core/an_literal.h"
#include "util/ut_find.h"
#include "util/ut_buf.h"
#include <ctype.h>
#include <string.h>

typedef struct {
    char *s;
    uint32_t n;
    bool nocase;
} lit;

typedef struct {
    uint32_t id;
    uint32_t next; /* 1 + index of the next entry with the same leading bytes, 0 at the end */
} link;

struct an_lits {
    UT_VEC(lit) lits;
    UT_VEC(link) chain;
    uint32_t head2[65536]; /* by the first two bytes: 1 + index into chain, 0 when none */
    uint64_t bits2[1024];  /* the same as a bitmap, which stays in the L1 cache */
    uint64_t next2[1024];  /* bytes 1-2 of every literal of 3 bytes or more (shorter ones: every pair) */
    uint64_t even2[1024];  /* bits2 | next2 of literals of 3 bytes or more: what a pair at an even offset can be */
    uint32_t head1[256];   /* one-byte literals */
    bool any1, any2;       /* some literal has one byte, two bytes */
};

an_lits *an_lits_new(void) { return ut_calloc(1, sizeof(an_lits)); }

void an_lits_free(an_lits *l) {
    if (!l) return;
    for (size_t i = 0; i < l->lits.len; i++) ut_free(l->lits.items[i].s);
    ut_vec_free(&l->lits);
    ut_vec_free(&l->chain);
    ut_free(l);
}

size_t an_lits_count(const an_lits *l) { return l ? l->lits.len : 0; }

static void link_in(an_lits *l, uint32_t *head, uint32_t id) {
    for (uint32_t c = *head; c; c = l->chain.items[c - 1].next)
        if (l->chain.items[c - 1].id == id) return;
    link k = {id, *head};
    ut_vec_push(&l->chain, k);
    *head = (uint32_t)l->chain.len;
}

static uint32_t add_lit(an_lits *l, const char *s, size_t n, bool nocase) {
    for (size_t i = 0; i < l->lits.len; i++)
        if (l->lits.items[i].n == n && l->lits.items[i].nocase == nocase && !memcmp(l->lits.items[i].s, s, n))
            return (uint32_t)i;
    uint32_t id = (uint32_t)l->lits.len;
    lit x = {ut_strndup(s, n), (uint32_t)n, nocase};
    ut_vec_push(&l->lits, x);
    unsigned char a = (unsigned char)s[0];
    unsigned char va[2] = {a, nocase ? (unsigned char)(isupper(a) ? tolower(a) : toupper(a)) : a};
    if (n == 1) {
        for (int i = 0; i < 2; i++) link_in(l, &l->head1[va[i]], id);
        l->any1 = true;
        return id;
    }
    unsigned char b = (unsigned char)s[1];
    unsigned char vb[2] = {b, nocase ? (unsigned char)(isupper(b) ? tolower(b) : toupper(b)) : b};
    if (n == 2) {
        memset(l->next2, 0xff, sizeof l->next2); /* a two-byte literal: the second filter cannot help */
        l->any2 = true;
    } else {
        unsigned char c = (unsigned char)s[2];
        unsigned char vc[2] = {c, nocase ? (unsigned char)(isupper(c) ? tolower(c) : toupper(c)) : c};
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) {
                uint32_t k = vb[i] | (uint32_t)vc[j] << 8;
                l->next2[k >> 6] |= 1ull << (k & 63);
                l->even2[k >> 6] |= 1ull << (k & 63);
            }
    }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            uint32_t k = va[i] | (uint32_t)vb[j] << 8;
            link_in(l, &l->head2[k], id);
            l->bits2[k >> 6] |= 1ull << (k & 63);
            l->even2[k >> 6] |= 1ull << (k & 63);
        }
    return id;
}

/* ---- covers ------------------------------------------------------------------------------------------------- */

typedef struct {
    ut_buf b;
    bool nocase;
} piece;
typedef UT_VEC(piece) pieces;
typedef UT_VEC(pieces) piece_sets;

typedef struct {
    const char *p, *start;
    bool nocase, fail;
    piece_sets req; /* the top level's sets of literals, each of which a match must hold one of */
    int top_alts;   /* alternatives at the top level: req holds for a match only when there is one */
} parser;

static void pieces_free(pieces *v) {
    for (size_t i = 0; i < v->len; i++) ut_buf_free(&v->items[i].b);
    ut_vec_free(v);
}

static void piece_sets_free(piece_sets *v) {
    for (size_t i = 0; i < v->len; i++) pieces_free(&v->items[i]);
    ut_vec_free(v);
}

static size_t score(const pieces *v) {
    size_t m = SIZE_MAX;
    for (size_t i = 0; i < v->len; i++)
        if (v->items[i].b.len < m) m = v->items[i].b.len;
    return v->len ? m : 0;
}

static pieces pieces_copy(const pieces *v) {
    pieces c = {0};
    for (size_t i = 0; i < v->len; i++) {
        piece x = {{0}, v->items[i].nocase};
        ut_buf_init(&x.b);
        ut_buf_append(&x.b, v->items[i].b.data, v->items[i].b.len);
        ut_vec_push(&c, x);
    }
    return c;
}

/* keeps the better of best and cand (longer shortest literal), freeing the other. At the top level every set is
 * also kept in ps->req when its literals are long enough to be worth a look-up (3 bytes: shorter ones would slow
 * the scan of every file). */
static void consider(parser *ps, int depth, pieces *best, pieces *cand) {
    if (!cand->len) return;
    if (depth == 0 && score(cand) >= 3) {
        pieces c = pieces_copy(cand);
        ut_vec_push(&ps->req, c);
    }
    if (score(cand) > score(best)) {
        pieces_free(best);
        *best = *cand;
    } else {
        pieces_free(cand);
    }
    memset(cand, 0, sizeof *cand);
}

/* the literals the text matched so far must hold (cur: each a way to spell it; empty: none) end here */
static void flush(parser *ps, int depth, pieces *cur, pieces *best) { consider(ps, depth, best, cur); }

/* cur followed by one character */
static void append(pieces *cur, char ch, bool nocase) {
    if (!cur->len) {
        piece x = {{0}, nocase};
        ut_buf_init(&x.b);
        ut_vec_push(cur, x);
    }
    for (size_t i = 0; i < cur->len; i++) ut_buf_putc(&cur->items[i].b, ch);
}

/* cur followed by one of sub's literals (every pairing; sub is a group of plain literals): false, with cur and sub
 * unchanged, when that would make too many or mix cases */
#define AN_LIT_CROSS_MAX 32
static bool cross(pieces *cur, const pieces *sub) {
    size_t n = cur->len ? cur->len : 1;
    if (!sub->len || n * sub->len > AN_LIT_CROSS_MAX) return false;
    for (size_t i = 0; i < cur->len; i++)
        for (size_t j = 0; j < sub->len; j++)
            if (cur->items[i].nocase != sub->items[j].nocase) return false;
    pieces out = {0};
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < sub->len; j++) {
            piece x = {{0}, sub->items[j].nocase};
            ut_buf_init(&x.b);
            if (cur->len) ut_buf_append(&x.b, cur->items[i].b.data, cur->items[i].b.len);
            ut_buf_append(&x.b, sub->items[j].b.data, sub->items[j].b.len);
            ut_vec_push(&out, x);
        }
    pieces_free(cur);
    *cur = out;
    return true;
}

/* A quantifier at p: 0 none, 1 optional (?, *, {0,...}), 2 required (+, {n,...} with n >= 1), -1 malformed. */
static int quantifier(parser *ps) {
    const char *p = ps->p;
    int kind;
    if (*p == '?' || *p == '*') kind = 1, p++;
    else if (*p == '+') kind = 2, p++;
    else if (*p == '{') {
        const char *q = p + 1;
        unsigned lo = 0;
        bool digits = false;
        while (isdigit((unsigned char)*q)) lo = lo * 10 + (unsigned)(*q++ - '0'), digits = true;
        if (!digits) return -1;
        if (*q == ',') {
            q++;
            while (isdigit((unsigned char)*q)) q++;
        }
        if (*q != '}') return -1;
        p = q + 1;
        kind = lo ? 2 : 1;
    } else {
        return 0;
    }
    if (*p == '?' || *p == '+') p++; /* lazy, possessive */
    ps->p = p;
    return kind;
}

static bool skip_class(parser *ps) {
    const char *p = ps->p + 1;
    if (*p == '^') p++;
    if (*p == ']') p++;
    for (; *p && *p != ']'; p++) {
        if (*p == '\\') {
            if (!p[1]) return false;
            p++;
        } else if (p[0] == '[' && p[1] == ':') {
            const char *e = strstr(p + 2, ":]");
            if (!e) return false;
            p = e + 1;
        }
    }
    if (*p != ']') return false;
    ps->p = p + 1;
    return true;
}

/* A class of a few plain ASCII characters at p (`["']`, `[-_]`: no negation, range, named class, escaped letter or
 * byte of a multi-byte character: patterns are compiled with PCRE2_UTF, where `[éè]` is two code points, not four
 * bytes) as one-character pieces, with p past it; false (p unchanged, out empty) for any other class. */
#define AN_LIT_CLASS_MAX 8
static bool plain_class(parser *ps, pieces *out) {
    const char *p = ps->p + 1;
    char set[AN_LIT_CLASS_MAX];
    int n = 0;
    if (*p == '^') return false;
    for (bool first = true; *p && (*p != ']' || first); p++, first = false) {
        char ch = *p;
        bool escaped = ch == '\\';
        if (escaped) {
            if (!p[1] || isalnum((unsigned char)p[1])) return false;
            ch = *++p;
        }
        if ((unsigned char)ch >= 0x80) return false;
        if (!escaped && (ch == '[' || (ch == '-' && !first && p[1] != ']')))
            return false; /* a named class ([:alpha:]) or a range */
        bool dup = false;
        for (int i = 0; i < n; i++) dup |= set[i] == ch;
        if (dup) continue;
        if (n == AN_LIT_CLASS_MAX) return false;
        set[n++] = ch;
    }
    if (*p != ']' || !n) return false;
    for (int i = 0; i < n; i++) {
        piece x = {{0}, ps->nocase};
        ut_buf_init(&x.b);
        ut_buf_putc(&x.b, set[i]);
        ut_vec_push(out, x);
    }
    ps->p = p + 1;
    return true;
}

/* skips a parenthesized group (a look-around) whole */
static bool skip_group(parser *ps) {
    int depth = 0;
    const char *p = ps->p;
    while (*p) {
        if (*p == '\\') {
            if (!p[1]) return false;
            p += 2;
            continue;
        }
        if (*p == '[') {
            ps->p = p;
            if (!skip_class(ps)) return false;
            p = ps->p;
            continue;
        }
        if (*p == '(') depth++;
        else if (*p == ')' && --depth == 0) {
            ps->p = p + 1;
            return true;
        }
        p++;
    }
    return false;
}

static bool parse_alt(parser *ps, int depth, pieces *out, bool *exact);

/* One alternative. best: the set of literals with the longest shortest member that a match must hold (empty when
 * none is proven). Consecutive characters, and groups of plain literals between them, make one run: `torch\.(?:cuda|xpu)\.`
 * must hold torch.cuda. or torch.xpu. (at most AN_LIT_CROSS_MAX spellings). exact: the alternative is nothing but
 * such a run (zero-width assertions aside), so that best is every way it can match. */
static bool parse_seq(parser *ps, int depth, pieces *best, bool *exact) {
    pieces cur = {0};
    bool ok = true;
    *exact = true;
    while (ok) {
        char c = *ps->p;
        if (!c || c == '|' || c == ')') break;
        char ch;
        if (c == '\\') {
            char e = ps->p[1];
            if (!e) { ok = false; break; }
            if (isalnum((unsigned char)e)) {
                ps->p += 2;
                if (strchr("bBAzZG", e)) continue; /* zero-width: the text around it is contiguous */
                if (strchr("dDwWsShHvVNR", e)) {   /* a class */
                    flush(ps, depth, &cur, best);
                    *exact = false;
                    ok = quantifier(ps) >= 0;
                    continue;
                }
                ok = false; /* \x, \Q, \p, back-references, ...: not worth understanding */
                break;
            }
            ch = e;
            ps->p += 2;
        } else if (c == '.') {
            ps->p++;
            flush(ps, depth, &cur, best);
            *exact = false;
            ok = quantifier(ps) >= 0;
            continue;
        } else if (c == '^' || c == '$') {
            ps->p++; /* zero-width */
            continue;
        } else if (c == '[') {
            /* a class of a few plain characters, once: each of them after the literal so far (`\.cu["']`: `.cu"` or
             * `.cu'`), as a group of alternatives would be */
            const char *at = ps->p;
            pieces cls = {0};
            if (plain_class(ps, &cls)) {
                int q = quantifier(ps);
                if (q >= 0 && q != 1 && cross(&cur, &cls)) {
                    pieces_free(&cls);
                    if (q == 2) flush(ps, depth, &cur, best), *exact = false;
                    continue;
                }
                pieces_free(&cls);
                ps->p = at;
            }
            flush(ps, depth, &cur, best);
            *exact = false;
            ok = skip_class(ps) && quantifier(ps) >= 0;
            continue;
        } else if (c == '(') {
            const char *p = ps->p;
            bool inner_nocase = false;
            if (p[1] == '?') {
                if (p[2] == 'i' && p[3] == ')' && p == ps->start) { /* (?i) leading the whole pattern */
                    ps->nocase = true;
                    ps->p += 4;
                    continue;
                }
                if (p[2] == '=' || p[2] == '!' || (p[2] == '<' && (p[3] == '=' || p[3] == '!'))) {
                    flush(ps, depth, &cur, best);
                    *exact = false;
                    ok = skip_group(ps) && quantifier(ps) >= 0; /* a look-around consumes nothing */
                    continue;
                }
                if (p[2] == ':' || p[2] == '|') {
                    ps->p += 3; /* non-capturing, branch reset */
                } else if (p[2] == 'i' && p[3] == ':') {
                    ps->p += 4; /* (?i:...): case-insensitive inside */
                    inner_nocase = true;
                } else if ((p[2] == '<' && (isalpha((unsigned char)p[3]) || p[3] == '_')) || (p[2] == 'P' && p[3] == '<') ||
                           p[2] == '\'') {
                    const char *e = strchr(p + 3, p[2] == '\'' ? '\'' : '>'); /* a named group */
                    if (!e) { ok = false; break; }
                    ps->p = e + 1;
                } else {
                    ok = false;
                    break;
                }
            } else {
                ps->p += 1;
            }
            pieces sub = {0};
            bool outer = ps->nocase, sub_exact = false;
            ps->nocase |= inner_nocase;
            bool inner_ok = parse_alt(ps, depth + 1, &sub, &sub_exact);
            ps->nocase = outer;
            if (!inner_ok || *ps->p != ')') {
                pieces_free(&sub);
                ok = false;
                break;
            }
            ps->p++;
            int q = quantifier(ps);
            if (q < 0) ok = false;
            if (q == 0 && sub_exact && cross(&cur, &sub)) {
                pieces_free(&sub);
                continue;
            }
            flush(ps, depth, &cur, best);
            *exact = false;
            if (q == 1) pieces_free(&sub); /* optional: proves nothing */
            else consider(ps, depth, best, &sub);
            continue;
        } else if (c == '*' || c == '+' || c == '?' || c == '{') {
            ok = false;
            break;
        } else {
            ch = c;
            ps->p++;
        }
        /* an ordinary character, maybe quantified */
        int q = quantifier(ps);
        if (q < 0) ok = false;
        else if (q == 1) flush(ps, depth, &cur, best), *exact = false;
        else {
            append(&cur, ch, ps->nocase);
            if (q == 2) flush(ps, depth, &cur, best), *exact = false;
        }
    }
    if (ok) flush(ps, depth, &cur, best);
    pieces_free(&cur);
    return ok; /* best may be empty: a sequence of classes proves no literal */
}

/* False when the syntax is not understood. out stays empty when some alternative has no literal; exact: every
 * alternative is one run of literals (parse_seq), out then every way the group can match. */
static bool parse_alt(parser *ps, int depth, pieces *out, bool *exact) {
    if (depth > 16) return false;
    bool covered = true;
    *exact = true;
    for (;;) {
        pieces s = {0};
        bool ex = false;
        if (depth == 0) ps->top_alts++;
        if (!parse_seq(ps, depth, &s, &ex)) {
            pieces_free(&s);
            pieces_free(out);
            return false;
        }
        covered &= s.len > 0;
        *exact &= ex && s.len > 0;
        for (size_t i = 0; i < s.len; i++) ut_vec_push(out, s.items[i]);
        ut_vec_free(&s);
        if (*ps->p != '|') break;
        ps->p++;
    }
    if (!covered) pieces_free(out), *exact = false;
    return true;
}

static uint32_t piece_id(an_lits *l, const piece *x) { return add_lit(l, x->b.data, x->b.len, x->nocase); }

bool an_lits_cover_all(an_lits *l, const char *re, an_u32_vec *ids, an_u32_vec *also) {
    parser ps = {re, re, false, false, {0}, 0};
    pieces all = {0};
    bool exact = false;
    bool ok = parse_alt(&ps, 0, &all, &exact) && !*ps.p && all.len;
    if (ok) {
        for (size_t i = 0; i < all.len; i++) {
            uint32_t id = piece_id(l, &all.items[i]);
            bool dup = false;
            for (size_t k = 0; k < ids->len && !dup; k++) dup = ids->items[k] == id;
            if (!dup) ut_vec_push(ids, id);
        }
        /* one alternative: every set it must hold besides the best one, each as its count and its ids */
        for (size_t r = 0; also && ps.top_alts == 1 && r < ps.req.len; r++) {
            const pieces *set = &ps.req.items[r];
            size_t at = also->len;
            ut_vec_push(also, (uint32_t)set->len);
            bool same = set->len == all.len;
            for (size_t i = 0; i < set->len; i++) {
                uint32_t id = piece_id(l, &set->items[i]);
                ut_vec_push(also, id);
                bool in = false;
                for (size_t k = 0; k < ids->len && !in; k++) in = ids->items[k] == id;
                same &= in;
            }
            if (same) also->len = at; /* the best set itself */
        }
    }
    pieces_free(&all);
    piece_sets_free(&ps.req);
    return ok;
}

bool an_lits_cover(an_lits *l, const char *re, an_u32_vec *ids) { return an_lits_cover_all(l, re, ids, NULL); }

bool an_lits_all(const uint8_t *found, const uint32_t *also, size_t n) {
    for (size_t i = 0; i < n;) {
        uint32_t k = also[i++];
        bool any = false;
        for (uint32_t j = 0; j < k; j++) any |= found[also[i + j]] != 0;
        if (!any) return false;
        i += k;
    }
    return true;
}

/* ---- scanning ----------------------------------------------------------------------------------------------- */

static bool eq_at(const lit *x, const unsigned char *t, size_t avail) {
    if (x->n > avail) return false;
    if (!x->nocase) return !memcmp(t, x->s, x->n);
    for (uint32_t i = 0; i < x->n; i++)
        if (tolower(t[i]) != tolower((unsigned char)x->s[i])) return false;
    return true;
}

/* t[0] | t[1] << 8, as the tables are keyed, in one 16-bit load */
static inline uint16_t pair(const unsigned char *t) {
    uint16_t k;
    memcpy(&k, t, 2);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    k = (uint16_t)(k >> 8 | k << 8);
#endif
    return k;
}

/* the literals that start at t[i] (i + 1 < len) */
static inline void scan_at(const an_lits *l, const unsigned char *t, size_t len, size_t i, uint8_t *found) {
    uint16_t k = pair(t + i);
    if (!(l->bits2[k >> 6] >> (k & 63) & 1)) return;
    if (i + 2 < len) { /* the next pair too: most common pairs ("in", "de") are not followed as a literal is */
        uint16_t k2 = pair(t + i + 1);
        if (!(l->next2[k2 >> 6] >> (k2 & 63) & 1)) return;
    }
    for (uint32_t c = l->head2[k]; c; c = l->chain.items[c - 1].next) {
        uint32_t id = l->chain.items[c - 1].id;
        if (!found[id] && eq_at(&l->lits.items[id], t + i, len - i)) found[id] = 1;
    }
}

void an_lits_scan(const an_lits *l, const char *text, size_t len, uint8_t *found) {
    if (!l) return;
    memset(found, 0, l->lits.len);
    const unsigned char *t = (const unsigned char *)text;
    if (!l->any2) {
        /* every literal has 3 bytes or more, so each occurrence puts its first or its second pair at an even
         * offset: look at every other pair, and at the two starts it can belong to */
        for (size_t i = 0; i + 1 < len; i += 2) {
            uint16_t k = pair(t + i);
            if (!(l->even2[k >> 6] >> (k & 63) & 1)) continue;
            if (i) scan_at(l, t, len, i - 1, found);
            scan_at(l, t, len, i, found);
        }
    } else {
        for (size_t i = 0; i + 1 < len; i++) scan_at(l, t, len, i, found);
    }
    if (l->any1)
        for (size_t i = 0; i < len; i++)
            for (uint32_t c = l->head1[t[i]]; c; c = l->chain.items[c - 1].next) found[l->chain.items[c - 1].id] = 1;
}

bool an_lits_any(const uint8_t *found, const uint32_t *ids, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (found[ids[i]]) return true;
    return false;
}

/* ---- patterns that are literals only ------------------------------------------------------------------------- */

static bool word_byte(unsigned char c) { return isalnum(c) || c == '_'; }

/* ASCII lower case of every byte (the C locale's tolower, without a call per byte) */
static const unsigned char *fold_table(void) {
    static unsigned char t[256];
    static bool done;
    if (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
        for (int c = 0; c < 256; c++) t[c] = (unsigned char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
        __atomic_store_n(&done, true, __ATOMIC_RELEASE);
    }
    return t;
}

static bool starts(const char *s, const char *w) { return !strncmp(s, w, strlen(w)); }

/* a boundary at *s (advanced past it): AN_PLAIN_* (ahead: a lookahead, else a lookbehind) */
static uint8_t guard(const char **s, bool ahead) {
    const char *la = ahead ? "(?![a-z0-9])" : "(?<![a-z0-9])";
    if (starts(*s, "\\b")) return *s += 2, AN_PLAIN_WB;
    if (starts(*s, la)) return *s += strlen(la), AN_PLAIN_NOT_ALNUM;
    return AN_PLAIN_ANY;
}

/* one literal at *s up to `|`, `)` (when grouped), a `\b` or the end: its bytes into lit; false when something else */
static bool literal(const char **s, bool grouped, ut_buf *lit) {
    const char *p = *s;
    for (; *p && *p != '|' && !(grouped && *p == ')'); p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '\\') {
            unsigned char e = (unsigned char)p[1];
            if (e == 'b') break; /* a boundary after the literal */
            if (!e || isalnum(e) || e >= 0x80 || e < 0x21) return false; /* \s, \d, \x41...: not one byte */
            ut_buf_putc(lit, (char)e);
            p++;
            continue;
        }
        if (c >= 0x80 || c < 0x20 || strchr("^$.?*+()[]{}", c)) return false;
        ut_buf_putc(lit, (char)c);
    }
    *s = p;
    return lit->len > 0;
}

static void add_alt(an_plain *out, ut_buf *lit, uint8_t before, uint8_t after) {
    out->alts = ut_realloc(out->alts, (out->nalt + 1) * sizeof *out->alts);
    out->alts[out->nalt++] = (an_plain_alt){ut_strndup(lit->data, lit->len), lit->len, before, after, 0};
    ut_buf_free(lit);
    ut_buf_init(lit);
}

void an_plain_parse(const char *re, an_plain *out) {
    memset(out, 0, sizeof *out);
    const char *s = re;
    ut_buf lit;
    ut_buf_init(&lit);
    if (starts(s, "(?i)")) out->nocase = true, s += 4;
    uint8_t before = guard(&s, false);
    if (starts(s, "(?:")) { /* [(?i)] [guard] (?:a|b|c) [guard] */
        s += 3;
        size_t first = out->nalt;
        for (;;) {
            if (!literal(&s, true, &lit) || (*s != '|' && *s != ')')) goto no;
            add_alt(out, &lit, before, AN_PLAIN_ANY);
            if (*s++ == ')') break;
        }
        uint8_t after = guard(&s, true);
        if (*s) goto no;
        for (size_t k = first; k < out->nalt; k++) out->alts[k].after = after;
    } else { /* [guard] a [guard] | [guard] b [guard] ... */
        for (;;) {
            if (!literal(&s, false, &lit)) goto no;
            uint8_t after = guard(&s, true);
            add_alt(out, &lit, before, after);
            if (!*s) break;
            if (*s++ != '|') goto no;
            before = guard(&s, false);
        }
    }
    if (out->nalt >= UINT16_MAX) goto no;
    out->before = out->alts[0].before;
    for (size_t k = 1; k < out->nalt; k++)
        if (out->alts[k].before != out->before) out->before = AN_PLAIN_ANY;
    for (size_t k = out->nalt; k-- > 0;) { /* chained in the pattern's order */
        unsigned char c = (unsigned char)out->alts[k].lit[0];
        if (out->nocase) c = fold_table()[c];
        out->alts[k].next = out->head[c];
        out->head[c] = (uint16_t)(k + 1);
    }
    if (out->nalt > 1 || out->nocase) { /* the loops of an_plain_find test a pair before trying the alternatives */
        const unsigned char *fold = fold_table();
        out->pairs = ut_calloc(1024, sizeof *out->pairs);
        for (size_t k = 0; k < out->nalt; k++) {
            unsigned char a = (unsigned char)out->alts[k].lit[0];
            if (out->nocase) a = fold[a];
            for (unsigned b = 0; b < 256; b++) {
                if (out->alts[k].n > 1 && b != (out->nocase ? fold[(unsigned char)out->alts[k].lit[1]]
                                                            : (unsigned char)out->alts[k].lit[1]))
                    continue;
                uint16_t key = (uint16_t)(a | b << 8);
                out->pairs[key >> 6] |= 1ull << (key & 63);
            }
        }
        for (int c = 0; c < 256; c++) {
            unsigned char f = out->nocase ? fold[c] : (unsigned char)c;
            out->cls[c] = (unsigned char)(((f >= '0' && f <= '9') || (f >= 'a' && f <= 'z')) | (out->head[f] ? 2 : 0));
        }
    }
    ut_buf_free(&lit);
    return;
no:
    ut_buf_free(&lit);
    an_plain_free(out);
}

void an_plain_free(an_plain *p) {
    for (size_t k = 0; k < p->nalt; k++) ut_free(p->alts[k].lit);
    ut_free(p->alts);
    ut_free(p->pairs);
    memset(p, 0, sizeof *p);
}

static bool alnum_at(const unsigned char *t, size_t len, size_t i, bool nocase) {
    return i < len && (isdigit(t[i]) || islower(t[i]) || (nocase && isupper(t[i])));
}

/* whether the boundary g holds between t[at - 1] and t[at] (either may be outside [0, len)); inner: the byte of
 * the literal beside it */
static bool holds(uint8_t g, const unsigned char *t, size_t len, size_t at, bool before, unsigned char inner,
                  bool nocase) {
    if (g == AN_PLAIN_ANY) return true;
    size_t o = before ? at - 1 : at; /* the byte outside the literal (at - 1 wraps when at is 0: not < len) */
    bool outside_in = before && at == 0 ? false : o < len;
    if (g == AN_PLAIN_WB) return (outside_in && word_byte(t[o])) != word_byte(inner);
    return !(outside_in && alnum_at(t, len, o, nocase));
}

static bool same(const unsigned char *t, const char *lit, size_t n, bool nocase) {
    if (!nocase) return !memcmp(t, lit, n);
    const unsigned char *fold = fold_table();
    for (size_t i = 0; i < n; i++)
        if (fold[t[i]] != fold[(unsigned char)lit[i]]) return false;
    return true;
}

/* whether the bytes at `at` (the last byte: alone) can begin an alternative (p->pairs) */
static inline bool pair_ok(const an_plain *p, const unsigned char *fold, const unsigned char *t, size_t len, size_t at) {
    if (at + 1 >= len) return true;
    unsigned a = t[at], b = t[at + 1];
    if (p->nocase) a = fold[a], b = fold[b];
    unsigned key = a | b << 8;
    return p->pairs[key >> 6] >> (key & 63) & 1;
}

/* the first alternative that matches at, its end in *end */
static bool match_at(const an_plain *p, const unsigned char *t, size_t len, size_t at, size_t *end) {
    unsigned char c = p->nocase ? fold_table()[t[at]] : t[at];
    for (uint16_t k = p->head[c]; k; k = p->alts[k - 1].next) {
        const an_plain_alt *a = &p->alts[k - 1];
        if (len - at < a->n || !same(t + at, a->lit, a->n, p->nocase)) continue;
        if (!holds(a->before, t, len, at, true, (unsigned char)a->lit[0], p->nocase)) continue;
        if (!holds(a->after, t, len, at + a->n, false, (unsigned char)a->lit[a->n - 1], p->nocase)) continue;
        *end = at + a->n;
        return true;
    }
    return false;
}

long an_plain_find(const an_plain *p, const char *text, size_t len, size_t from, size_t *end) {
    if (!p->alts || from > len) return -1;
    const unsigned char *t = (const unsigned char *)text;
    if (p->nalt == 1 && !p->nocase) { /* one literal: memmem */
        const an_plain_alt *a = &p->alts[0];
        for (const char *q = text + from; (size_t)(text + len - q) >= a->n; q++) {
            q = ut_memmem(q, (size_t)(text + len - q), a->lit, a->n);
            if (!q) return -1;
            if (match_at(p, t, len, (size_t)(q - text), end)) return q - text;
        }
        return -1;
    }
    const unsigned char *fold = fold_table();
    const unsigned char *cls = p->cls; /* a start is tried only where its pair (this byte and the next) can begin */
    if (p->before == AN_PLAIN_NOT_ALNUM) {
        /* a match starts where the byte before is no letter or digit: the first letters and digits of runs of them,
         * and every other byte (an alternative may start with `_` or `.`) */
        bool prev = from > 0 && (cls[t[from - 1]] & 1);
        for (size_t at = from; at < len; at++) {
            unsigned char k = cls[t[at]];
            if (!prev && (k & 2) && pair_ok(p, fold, t, len, at) && match_at(p, t, len, at, end)) return (long)at;
            prev = k & 1;
        }
        return -1;
    }
    for (size_t at = from; at < len; at++)
        if ((cls[t[at]] & 2) && pair_ok(p, fold, t, len, at) && match_at(p, t, len, at, end)) return (long)at;
    return -1;
}

bool an_plain_caseless_safe(const char *text, size_t len) {
    const unsigned char *t = (const unsigned char *)text;
    size_t i = 0;
    uint64_t high = 0; /* most files are ASCII: an OR over every byte, eight at a time, says so */
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, t + i, 8);
        high |= w;
    }
    for (; i < len; i++) high |= t[i];
    if (!(high & 0x8080808080808080ull)) return true;
    for (i = 0; i + 1 < len; i++) {
        if (t[i] < 0xC4) continue;
        if ((t[i] == 0xC4 && (t[i + 1] == 0xB0 || t[i + 1] == 0xB1)) || (t[i] == 0xC5 && t[i + 1] == 0xBF) ||
            (t[i] == 0xE2 && t[i + 1] == 0x84 && i + 2 < len && t[i + 2] == 0xAA))
            return false;
    }
    return true;
}
