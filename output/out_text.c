/* out_text: the human formats: `path:line:col: CODE [name] message` with the source line and carets (text), or
 * the first line alone (concise); a summary line closes both. */
#include "output/out.h"

static void frame(const an_diag *d, const an_source *src, FILE *fp, bool color) {
    uint32_t ls, le;
    an_source_line_span(src, d->line, &ls, &le);
    int w = snprintf(NULL, 0, "%u", d->line);
    fprintf(fp, " %*u | %.*s\n", w, d->line, (int)(le - ls), src->text + ls);
    fprintf(fp, " %*s | ", w, "");
    /* reproduce tabs so the carets line up; one column per code point otherwise */
    uint32_t i = ls;
    uint32_t start = d->start < ls ? ls : d->start;
    for (; i < start && i < le; i++) {
        unsigned char ch = (unsigned char)src->text[i];
        if ((ch & 0xC0) == 0x80) continue;
        fputc(ch == '\t' ? '\t' : ' ', fp);
    }
    uint32_t end = d->end_line == d->line ? d->end : le;
    if (end > le) end = le;
    int n = 0;
    for (; i < end; i++)
        if (((unsigned char)src->text[i] & 0xC0) != 0x80) n++;
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
