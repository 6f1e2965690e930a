/* out_junit: JUnit XML, as CI test-report viewers read it: one testsuite per file with findings, one failing
 * testcase per finding; a run without findings is one passing testcase; the paths the run did not check are a
 * testsuite "xpuify: not checked" of testcases in error. */
#include "output/out.h"

/* attr: inside an attribute value, where XML normalizes a raw line break or tab to a space (XML 1.0 3.3.3):
 * written as character references they survive */
static void esc_in(FILE *fp, const char *s, bool attr) {
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (attr && (*p == '\n' || *p == '\r' || *p == '\t')) {
            fprintf(fp, "&#%d;", *p);
            continue;
        }
        switch (*p) {
        case '&': fputs("&amp;", fp); break;
        case '<': fputs("&lt;", fp); break;
        case '>': fputs("&gt;", fp); break;
        case '"': fputs("&quot;", fp); break;
        case '\'': fputs("&apos;", fp); break;
        default:
            if (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r') break; /* not allowed in XML 1.0 */
            fputc(*p, fp);
        }
    }
}

static void esc(FILE *fp, const char *s) { esc_in(fp, s, true); }

void out_junit(const out_report *r, FILE *fp) {
    size_t total = out_count(r->res);
    out_skip *sk;
    size_t nskip = out_skips(r, &sk);
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", fp);
    fprintf(fp, "<testsuites name=\"xpuify\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\">\n",
            (total ? total : 1) + nskip, total, nskip);
    if (!total) {
        fprintf(fp, "  <testsuite name=\"xpuify\" tests=\"1\" failures=\"0\" errors=\"0\">\n"
                    "    <testcase name=\"no findings\" classname=\"xpuify\"/>\n  </testsuite>\n");
    }
    for (size_t i = 0; i < r->res->len; i++) {
        const an_file_result *f = &r->res->items[i];
        if (!f->diags.len) continue;
        fputs("  <testsuite name=\"", fp);
        esc(fp, f->file->path);
        fprintf(fp, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\">\n", f->diags.len, f->diags.len);
        for (size_t j = 0; j < f->diags.len; j++) {
            const an_diag *d = &f->diags.items[j];
            fprintf(fp, "    <testcase name=\"%s %s (%u:%u)\" classname=\"", d->rule->code, d->rule->name, d->line, d->col);
            esc(fp, f->file->path);
            fputs("\" file=\"", fp);
            esc(fp, f->file->path);
            fprintf(fp, "\" line=\"%u\">\n      <failure type=\"%s\" message=\"", d->line, d->rule->code);
            esc(fp, d->message);
            fputs("\">", fp);
            esc(fp, f->file->path);
            fprintf(fp, ":%u:%u: %s [%s] %s: ", d->line, d->col, d->rule->code, d->rule->name, an_severity_name(d->severity));
            esc_in(fp, d->message, false);
            fputs("</failure>\n    </testcase>\n", fp);
        }
        fputs("  </testsuite>\n", fp);
    }
    if (nskip) {
        fprintf(fp, "  <testsuite name=\"xpuify: not checked\" tests=\"%zu\" failures=\"0\" errors=\"%zu\">\n", nskip, nskip);
        for (size_t i = 0; i < nskip; i++) {
            fputs("    <testcase name=\"not checked: ", fp);
            esc(fp, sk[i].path);
            fputs("\" classname=\"", fp);
            esc(fp, sk[i].path);
            fputs("\" file=\"", fp);
            esc(fp, sk[i].path);
            fputs("\">\n      <error type=\"not-checked\" message=\"", fp);
            esc(fp, sk[i].why);
            fputs("\">", fp);
            esc(fp, sk[i].path);
            fputs(": not checked: ", fp);
            esc(fp, sk[i].why);
            fputs("</error>\n    </testcase>\n", fp);
        }
        fputs("  </testsuite>\n", fp);
    }
    ut_free(sk);
    fputs("</testsuites>\n", fp);
}
