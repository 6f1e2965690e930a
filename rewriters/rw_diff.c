/* rw_diff: Myers' O(ND) line diff, then hunks with three lines of context. */
#include "rewriters/rw_diff.h"
#include "util/ut_mem.h"
#include <stdbool.h>
#include <stdint.h>

typedef struct {
    const char *s;
    size_t n; /* with its newline, if any */
} line;

typedef UT_VEC(line) lines;

static void split(const char *t, size_t len, lines *out) {
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        while (j < len && t[j] != '\n') j++;
        line l = {t + i, (j < len ? j + 1 : j) - i};
        ut_vec_push(out, l);
        i = j < len ? j + 1 : j;
    }
}

static bool eqline(line a, line b) { return a.n == b.n && !memcmp(a.s, b.s, a.n); }

typedef enum { OP_EQ, OP_DEL, OP_INS } op_kind;
typedef struct { op_kind k; size_t ai, bi; } op;
typedef UT_VEC(op) op_vec;

/* Myers with the part of V each step reads saved per step (diagonals -d-1..d+1 at step d: O(D^2) in all, not
 * O(D * (n + m)), which for a fix touching every line of a 1 MB file was 7 GB and 38 s); falls back to
 * delete-all/insert-all beyond max_d. */
static void diff_ops(const lines *A, const lines *B, op_vec *ops) {
    long n = (long)A->len, m = (long)B->len, max = n + m, max_d = 4000;
    long off = max + 1;
    long *v = ut_calloc((size_t)(2 * max + 3), sizeof(long));
    UT_VEC(long *) trace = {0}; /* trace.items[d][k + d + 1]: V[k] before step d, for k in -d-1..d+1 */
    long dfound = -1;
    for (long d = 0; d <= max && d <= max_d; d++) {
        long *copy = ut_malloc(sizeof(long) * (size_t)(2 * d + 3));
        memcpy(copy, v + off - d - 1, sizeof(long) * (size_t)(2 * d + 3));
        ut_vec_push(&trace, copy);
        for (long k = -d; k <= d; k += 2) {
            long x;
            if (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) x = v[off + k + 1];
            else x = v[off + k - 1] + 1;
            long y = x - k;
            while (x < n && y < m && eqline(A->items[x], B->items[y])) x++, y++;
            v[off + k] = x;
            if (x >= n && y >= m) { dfound = d; goto found; }
        }
    }
found:
    if (dfound < 0) {
        for (long i = 0; i < n; i++) { op o = {OP_DEL, (size_t)i, 0}; ut_vec_push(ops, o); }
        for (long j = 0; j < m; j++) { op o = {OP_INS, (size_t)n, (size_t)j}; ut_vec_push(ops, o); }
    } else {
        /* backtrack */
        UT_VEC(op) rev = {0};
        long x = n, y = m;
        for (long d = dfound; d > 0; d--) {
            long *vd = trace.items[d] + d + 1; /* vd[k]: V[k] before step d */
            long k = x - y, pk;
            if (k == -d || (k != d && vd[k - 1] < vd[k + 1])) pk = k + 1;
            else pk = k - 1;
            long px = vd[pk], py = px - pk;
            while (x > px && y > py) { x--, y--; op o = {OP_EQ, (size_t)x, (size_t)y}; ut_vec_push(&rev, o); }
            if (x == px) { y--; op o = {OP_INS, (size_t)x, (size_t)y}; ut_vec_push(&rev, o); }
            else { x--; op o = {OP_DEL, (size_t)x, (size_t)y}; ut_vec_push(&rev, o); }
        }
        while (x > 0 && y > 0) { x--, y--; op o = {OP_EQ, (size_t)x, (size_t)y}; ut_vec_push(&rev, o); }
        for (size_t i = rev.len; i > 0; i--) ut_vec_push(ops, rev.items[i - 1]);
        ut_vec_free(&rev);
    }
    for (size_t i = 0; i < trace.len; i++) ut_free(trace.items[i]);
    ut_vec_free(&trace);
    ut_free(v);
}

static void put_line(ut_buf *out, char c, line l) {
    ut_buf_putc(out, c);
    ut_buf_append(out, l.s, l.n);
    if (!l.n || l.s[l.n - 1] != '\n') ut_buf_puts(out, "\n\\ No newline at end of file\n");
}

void rw_diff_unified(const char *path, const char *a, size_t alen, const char *b, size_t blen, ut_buf *out) {
    lines A = {0}, B = {0};
    split(a, alen, &A);
    split(b, blen, &B);
    op_vec ops = {0};
    diff_ops(&A, &B, &ops);
    const size_t ctx = 3;
    bool header = false;
    size_t i = 0;
    while (i < ops.len) {
        while (i < ops.len && ops.items[i].k == OP_EQ) i++;
        if (i >= ops.len) break;
        /* a hunk: from ctx lines before this change to ctx lines after the last change within 2*ctx */
        size_t start = i >= ctx ? i - ctx : 0;
        size_t end = i;
        for (;;) {
            while (end < ops.len && ops.items[end].k != OP_EQ) end++;
            size_t run = end;
            while (run < ops.len && ops.items[run].k == OP_EQ) run++;
            if (run < ops.len && run - end <= 2 * ctx) { end = run; continue; }
            end = end + ctx < ops.len ? end + ctx : ops.len;
            if (end > run) end = run;
            break;
        }
        size_t as = 0, bs = 0, ac = 0, bc = 0;
        /* first line numbers of the hunk */
        const op *f = &ops.items[start];
        as = f->k == OP_INS ? f->ai : f->ai;
        bs = f->k == OP_DEL ? f->bi : f->bi;
        if (f->k == OP_DEL) { /* bi of a deletion is the next B line */
            bs = 0;
            for (size_t k = 0; k < start; k++) if (ops.items[k].k != OP_DEL) bs = ops.items[k].bi + 1;
        }
        if (f->k == OP_INS) {
            as = 0;
            for (size_t k = 0; k < start; k++) if (ops.items[k].k != OP_INS) as = ops.items[k].ai + 1;
        }
        for (size_t k = start; k < end; k++) {
            if (ops.items[k].k != OP_INS) ac++;
            if (ops.items[k].k != OP_DEL) bc++;
        }
        if (!header) {
            const char *shown = path[0] == '/' ? path + 1 : path; /* as git shows absolute paths */
            ut_buf_printf(out, "--- a/%s\n+++ b/%s\n", shown, shown);
            header = true;
        }
        ut_buf_printf(out, "@@ -%zu,%zu +%zu,%zu @@\n", ac ? as + 1 : as, ac, bc ? bs + 1 : bs, bc);
        for (size_t k = start; k < end; k++) {
            const op *o = &ops.items[k];
            if (o->k == OP_EQ) put_line(out, ' ', A.items[o->ai]);
            else if (o->k == OP_DEL) put_line(out, '-', A.items[o->ai]);
            else put_line(out, '+', B.items[o->bi]);
        }
        i = end;
    }
    ut_vec_free(&ops);
    ut_vec_free(&A);
    ut_vec_free(&B);
}

void rw_diff_new_file(const char *path, const char *text, size_t len, ut_buf *out) {
    lines B = {0};
    split(text, len, &B);
    ut_buf_printf(out, "--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%zu @@\n", path[0] == '/' ? path + 1 : path, B.len);
    for (size_t i = 0; i < B.len; i++) put_line(out, '+', B.items[i]);
    ut_vec_free(&B);
}
