/* out_text: the human formats: `path:line:col: CODE [name] message` with the source line and carets (text), or
 * the first line alone (concise); a summary line closes both. */
#include "output/out.h"

/* A source line longer than FRAME_MAX code points is shown as a window around the finding: FRAME_CONTEXT code
 * points before it, up to FRAME_MAX in all, with "..." where the line goes on. Printing whole lines made the text
 * report of a 1 MB one-line file with 40,000 findings 80 GB (the line and its caret line once per finding). */
#define FRAME_MAX 160
#define FRAME_CONTEXT 40

static bool continuation(const char *t, uint32_t i) { return ((unsigned char)t[i] & 0xC0) == 0x80; }

/* pos moved back by n code points, not below lo */
static uint32_t back_cps(const char *t, uint32_t lo, uint32_t pos, int n) {
    for (; pos > lo && n > 0; n--)
        for (pos--; pos > lo && continuation(t, pos);) pos--;
    return pos;
}

/* pos moved forward by n code points, not past hi */
static uint32_t fwd_cps(const char *t, uint32_t hi, uint32_t pos, int n) {
    for (; pos < hi && n > 0; n--)
        for (pos++; pos < hi && continuation(t, pos);) pos++;
    return pos;
}

static void frame(const an_diag *d, const an_source *src, FILE *fp, bool color) {
    const char *t = src->text;
    uint32_t ls, le;
    an_source_line_span(src, d->line, &ls, &le);
    uint32_t start = d->start < ls ? ls : d->start > le ? le : d->start;
    uint32_t end = d->end_line == d->line ? d->end : le;
    if (end > le) end = le;
    if (end < start) end = start;
    uint32_t ws = ls, we = le;
    if (fwd_cps(t, le, ls, FRAME_MAX) < le) {
        ws = back_cps(t, ls, start, FRAME_CONTEXT);
        uint32_t most = fwd_cps(t, le, ws, FRAME_MAX), after = fwd_cps(t, le, end, FRAME_CONTEXT);
        we = after < most ? after : most;
    }
    const char *pre = ws > ls ? "..." : "", *post = we < le ? "..." : "";
    int w = snprintf(NULL, 0, "%u", d->line);
    fprintf(fp, " %*u | %s%.*s%s\n", w, d->line, pre, (int)(we - ws), t + ws, post);
    fprintf(fp, " %*s | %*s", w, "", (int)strlen(pre), "");
    /* reproduce tabs so the carets line up; one column per code point otherwise */
    uint32_t i = ws;
    for (; i < start; i++) {
        if (continuation(t, i)) continue;
        fputc(t[i] == '\t' ? '\t' : ' ', fp);
    }
    if (end > we) end = we;
    int n = 0;
    for (; i < end; i++)
        if (!continuation(t, i)) n++;
    if (n < 1) n = 1;
    if (color) fputs("\033[31m", fp);
    for (int k = 0; k < n; k++) fputc('^', fp);
    if (color) fputs("\033[0m", fp);
    fputc('\n', fp);
}

/* A message on the finding's one line: a line break in it (a user rule's template, a compiler's text) becomes a
 * space, so that every finding stays one line for grep, editors' error parsers and `concise`. */
static void one_line(FILE *fp, const char *m) {
    for (; *m; m++) {
        if (*m == '\r' && m[1] == '\n') continue;
        fputc(*m == '\n' || *m == '\r' ? ' ' : *m, fp);
    }
}

void out_text_findings(const out_report *r, FILE *fp, bool concise) {
    for (size_t i = 0; i < r->res->len; i++) {
        const an_file_result *f = &r->res->items[i];
        for (size_t j = 0; j < f->diags.len; j++) {
            const an_diag *d = &f->diags.items[j];
            if (r->color)
                fprintf(fp, "\033[1m%s\033[0m:%u:%u: \033[1;31m%s\033[0m [%s] %s", f->file->path, d->line, d->col,
                        d->rule->code, d->rule->name, d->fix && d->fix->applicability == AN_FIX_SAFE ? "[*] " : "");
            else
                fprintf(fp, "%s:%u:%u: %s [%s] %s", f->file->path, d->line, d->col, d->rule->code, d->rule->name,
                        d->fix && d->fix->applicability == AN_FIX_SAFE ? "[*] " : "");
            one_line(fp, d->message);
            fputc('\n', fp);
            if (!concise) frame(d, &f->src, fp, r->color);
        }
    }
}

void out_text(const out_report *r, FILE *fp, bool concise) {
    size_t files = 0, total = 0, fixable = 0;
    for (size_t i = 0; i < r->res->len; i++) {
        const an_file_result *f = &r->res->items[i];
        if (f->diags.len) files++;
        for (size_t j = 0; j < f->diags.len; j++) {
            total++;
            if (f->diags.items[j].fix && f->diags.items[j].fix->applicability == AN_FIX_SAFE) fixable++;
        }
    }
    out_text_findings(r, fp, concise);
    out_skip *sk;
    size_t nskip = out_skips(r, &sk), unread = 0;
    for (size_t i = 0; i < nskip; i++) {
        fprintf(fp, "%s: not checked: %s\n", sk[i].path, sk[i].why);
        unread += i < nskip - (r->skipped ? r->skipped->len : 0);
    }
    ut_free(sk);
    size_t checked = r->res->len - unread;
    char tail[96] = "";
    if (nskip) snprintf(tail, sizeof tail, ", %zu not checked", nskip);
    if (total) {
        fprintf(fp, "Found %zu finding%s in %zu file%s (%zu file%s checked%s).", total, total == 1 ? "" : "s", files,
                files == 1 ? "" : "s", checked, checked == 1 ? "" : "s", tail);
        if (fixable) fprintf(fp, " [*] %zu fixable with `xpuify fix`.", fixable);
        fputc('\n', fp);
    } else if (nskip || r->failed) {
        /* a run that skipped something or failed has not passed, whatever it found */
        fprintf(fp, "No findings in %zu file%s checked%s%s.\n", checked, checked == 1 ? "" : "s", tail,
                r->failed ? "; the run had errors (see above)" : "");
    } else {
        fprintf(fp, "All checks passed (%zu file%s checked).\n", checked, checked == 1 ? "" : "s");
    }
}
