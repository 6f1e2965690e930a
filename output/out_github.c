/* out_github: GitHub Actions workflow commands (`::error file=...,line=...::message`), one per finding, and one per
 * path the run did not check (error when named on the command line, else warning). */
#include "output/out.h"

/* data escaping per the workflow-command spec; properties also escape ':' and ',' */
static void esc(FILE *fp, const char *s, bool prop) {
    for (; *s; s++) {
        switch (*s) {
        case '%': fputs("%25", fp); break;
        case '\r': fputs("%0D", fp); break;
        case '\n': fputs("%0A", fp); break;
        case ':': prop ? fputs("%3A", fp) : fputc(':', fp); break;
        case ',': prop ? fputs("%2C", fp) : fputc(',', fp); break;
        default: fputc(*s, fp);
        }
    }
}

void out_github(const out_report *r, FILE *fp) {
    for (size_t i = 0; i < r->res->len; i++) {
        const an_file_result *f = &r->res->items[i];
        for (size_t j = 0; j < f->diags.len; j++) {
            const an_diag *d = &f->diags.items[j];
            const char *level = d->severity == AN_SEV_ERROR ? "error" : d->severity == AN_SEV_WARNING ? "warning" : "notice";
            fprintf(fp, "::%s file=", level);
            esc(fp, f->file->path, true);
            fprintf(fp, ",line=%u,col=%u,endLine=%u,endColumn=%u,title=", d->line, d->col, d->end_line, d->end_col);
            char title[256];
            snprintf(title, sizeof title, "%s %s", d->rule->code, d->rule->name);
            esc(fp, title, true);
            fputs("::", fp);
            char head[64];
            snprintf(head, sizeof head, "%s ", d->rule->code);
            esc(fp, head, false);
            esc(fp, d->message, false);
            fputc('\n', fp);
        }
    }
    out_skip *sk;
    size_t n = out_skips(r, &sk);
    for (size_t i = 0; i < n; i++) {
        fprintf(fp, "::%s file=", sk[i].error ? "error" : "warning");
        esc(fp, sk[i].path, true);
        fputs(",title=", fp);
        esc(fp, "xpuify: not checked", true);
        fputs("::", fp);
        esc(fp, sk[i].path, false);
        esc(fp, ": not checked: ", false);
        esc(fp, sk[i].why, false);
        fputc('\n', fp);
    }
    ut_free(sk);
}
