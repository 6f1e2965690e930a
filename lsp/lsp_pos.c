/* lsp_pos: conversions between byte offsets and LSP positions. */
#include "lsp/lsp_pos.h"

const char *lsp_encoding_name(lsp_encoding e) {
    return e == LSP_ENC_UTF8 ? "utf-8" : e == LSP_ENC_UTF32 ? "utf-32" : "utf-16";
}

/* Length in bytes of the UTF-8 sequence at s (1 for an invalid byte), not past end. */
static uint32_t seq_len(const unsigned char *s, const unsigned char *end) {
    unsigned char c = *s;
    uint32_t n = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 1;
    if ((uint32_t)(end - s) < n) return 1;
    for (uint32_t k = 1; k < n; k++)
        if ((s[k] & 0xC0) != 0x80) return 1;
    return n;
}

static uint32_t units(lsp_encoding enc, uint32_t seq) {
    if (enc == LSP_ENC_UTF8) return seq;
    if (enc == LSP_ENC_UTF16) return seq == 4 ? 2 : 1;
    return 1;
}

static uint32_t line_index(const an_source *src, uint32_t byte) {
    uint32_t lo = 0, hi = src->nlines;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (src->line_starts[mid] <= byte) lo = mid;
        else hi = mid;
    }
    return lo;
}

void lsp_line_bytes(const an_source *src, uint32_t line, uint32_t *start, uint32_t *end) {
    if (line >= src->nlines) { *start = *end = src->len; return; }
    uint32_t s = src->line_starts[line];
    uint32_t e = line + 1 < src->nlines ? src->line_starts[line + 1] : src->len;
    while (e > s && (src->text[e - 1] == '\n' || src->text[e - 1] == '\r')) e--;
    *start = s, *end = e;
}

void lsp_pos_from_byte(const an_source *src, lsp_encoding enc, uint32_t byte, uint32_t *line, uint32_t *character) {
    if (byte > src->len) byte = src->len;
    uint32_t li = line_index(src, byte);
    const unsigned char *p = (const unsigned char *)src->text + src->line_starts[li];
    const unsigned char *target = (const unsigned char *)src->text + byte, *end = (const unsigned char *)src->text + src->len;
    uint32_t ch = 0;
    /* an all-ASCII text: one unit per byte in every encoding (no walk along a long line per position) */
    if (enc == LSP_ENC_UTF8 || src->ascii) ch = (uint32_t)(target - p);
    else
        while (p < target) {
            uint32_t n = seq_len(p, end);
            ch += units(enc, n);
            p += n;
        }
    *line = li, *character = ch;
}

uint32_t lsp_pos_to_byte(const an_source *src, lsp_encoding enc, uint32_t line, uint32_t character) {
    if (line >= src->nlines) return src->len;
    uint32_t s, e;
    lsp_line_bytes(src, line, &s, &e);
    if (src->ascii) return s + (character < e - s ? character : e - s);
    const unsigned char *p = (const unsigned char *)src->text + s, *le = (const unsigned char *)src->text + e;
    uint32_t ch = 0;
    while (p < le && ch < character) {
        uint32_t n = seq_len(p, le);
        ch += units(enc, n);
        p += n;
    }
    return (uint32_t)((const char *)p - src->text);
}
