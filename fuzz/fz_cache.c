/* fz_cache: libFuzzer target for the results cache file (.xpuify_cache/v1/NAME.bin), which is read from disk and so
 * is input: a damaged or tampered file must never crash xpuify or yield findings that do not fit the file.
 * Input: the blob of one entry. The target writes a cache file whose header and checksum are right and whose entry
 * has the key, content hash and MAC of a sample file, so the entry is decoded; then a second entry keyed by the
 * first 20 input bytes, and a raw copy of the input as a whole file (header checks); then the same entry with a MAC
 * made under another key, and with the input's last 32 bytes as its MAC (forgeries).
 * Properties: no crash, leak or undefined behaviour; a hit yields findings inside the file with UTF-8 texts that
 * every writer renders; storing a hit again and reading it back gives the same findings; an entry whose MAC was not
 * made with the cache's key is never a hit. */
#include "analyzer/core/an_cache.h"
#include "output/out.h"
#include "util/ut_hash.h"
#include "fuzz/fz_common.h"
#include <sys/stat.h>
#include <unistd.h>

static const uint8_t secret[AN_CACHEKEY_LEN] = "fz_cache: the machine key 32 by";
static const uint8_t other_secret[AN_CACHEKEY_LEN] = "fz_cache: another machine's key";

static an_cache *open_cache(const char *dir, const an_catalog *cat, const uint8_t *key) {
    char *why = NULL;
    an_cache *c = an_cache_open(dir, "fuzz", cat, key, &why);
    FZ_ASSERT(c, "cannot open the cache in %s: %s", dir, why ? why : "?");
    return c;
}

static const char sample_head[] = "import torch\nx = torch.zeros(3).cuda()\ntorch.cuda.synchronize()\n";
static char sample[4097]; /* the head, then comment lines: long enough for the positions of fixture entries (seeds) */

static void make_sample(void) {
    if (sample[0]) return;
    strcpy(sample, sample_head);
    for (size_t n = strlen(sample); n + 40 < sizeof sample; n = strlen(sample))
        strcat(sample, "# padding padding padding padding pad\n");
}

static void put(ut_buf *b, const void *p, size_t n) { ut_buf_append(b, (const char *)p, n); }

static void write_file(const char *path, const uint8_t *payload, size_t n, uint32_t count) {
    ut_buf b;
    ut_buf_init(&b);
    uint32_t bom = 0x01020304u;
    uint64_t plen = n;
    uint8_t sum[20];
    ut_hash20(payload, n, sum);
    put(&b, AN_CACHE_MAGIC, 8), put(&b, &bom, 4), put(&b, &count, 4), put(&b, &plen, 8), put(&b, sum, 20);
    put(&b, payload, n);
    FILE *f = fopen(path, "wb");
    FZ_ASSERT(f, "cannot write %s", path);
    fwrite(b.data, 1, b.len, f);
    fclose(f);
    ut_buf_free(&b);
}

static void render_all(const an_catalog *cat, const an_source *src, const an_diag_list *l) {
    an_file file = {src->path, AN_LANG_PYTHON, true, {0}};
    an_file_result fr = {0};
    fr.file = &file;
    fr.src = *src;
    fr.diags = *l;
    an_results res = {&fr, 1};
    out_report rep = {.cat = cat, .res = &res, .version = "0.0.0-fuzz"};
    for (int f = OUT_TEXT; f <= OUT_GITHUB; f++) {
        char *buf = NULL;
        size_t n = 0;
        FILE *fp = open_memstream(&buf, &n);
        out_write((out_format)f, &rep, fp);
        fclose(fp);
        FZ_ASSERT(an_utf8_invalid_at(buf, n) < 0, "format %d printed invalid UTF-8 from a cached entry", f);
        free(buf);
    }
}

static bool same(const an_diag_list *a, const an_diag_list *b) {
    if (a->len != b->len) return false;
    for (size_t i = 0; i < a->len; i++) {
        const an_diag *x = &a->items[i], *y = &b->items[i];
        if (x->rule != y->rule || x->entry != y->entry || x->start != y->start || x->end != y->end ||
            x->line != y->line || x->col != y->col || strcmp(x->message, y->message) || !x->fix != !y->fix)
            return false;
        if (x->fix && (x->fix->edits.len != y->fix->edits.len || x->fix->applicability != y->fix->applicability))
            return false;
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char dir[] = "/tmp/fz_cache.XXXXXX";
    static bool made;
    if (!made) {
        FZ_ASSERT(mkdtemp(dir), "mkdtemp");
        made = true;
    }
    const an_catalog *cat = fz_builtin_catalog();
    make_sample();
    an_source src;
    an_source_init_mem(&src, "a.py", sample, strlen(sample));

    an_cache *c = open_cache(dir, cat, secret);
    char vdir[4096];
    snprintf(vdir, sizeof vdir, "%s/v1", dir);
    mkdir(vdir, 0777);
    char *path = ut_strdup(an_cache_file(c));
    an_cache_run run;
    an_cache_run_key(c, cat, NULL, NULL, true, &run);
    an_cache *forger = open_cache(dir, cat, other_secret); /* the same build under another machine's key */
    uint8_t key[20], content[20], mac[32], forged_mac[32];
    an_cache_key(&run, "a.py", NULL, key);
    an_cache_content(sample, strlen(sample), content);
    an_cache_entry_mac(c, key, content, data, (uint32_t)size, mac);
    an_cache_entry_mac(forger, key, content, data, (uint32_t)size, forged_mac);
    an_cache_free(forger);
    an_cache_free(c);

    /* 1: the input as a whole cache file (header, count, checksum checks) */
    FILE *f = fopen(path, "wb");
    FZ_ASSERT(f, "cannot write %s", path);
    fwrite(data, 1, size, f);
    fclose(f);
    c = open_cache(dir, cat, secret);
    an_diag_list l = {0};
    bool parsed;
    uint8_t text_hash[20];
    an_cache_content(src.text, src.len, text_hash);
    if (an_cache_get(c, cat, &run, "a.py", NULL, text_hash, src.len, &l, &parsed)) render_all(cat, &src, &l);
    an_diag_list_free(&l);
    an_cache_free(c);

    /* 2: the input as the entry of a.py in a well-formed file, plus an entry under another key */
    ut_buf payload;
    ut_buf_init(&payload);
    uint32_t n = (uint32_t)size;
    /* 3 first: forged MACs (another key's; the input's own last bytes) never give a hit */
    for (int k = 0; k < 2; k++) {
        const uint8_t *m = forged_mac;
        uint8_t tail[32] = {0};
        if (k) {
            memcpy(tail, data + (size > 32 ? size - 32 : 0), size < 32 ? size : 32);
            if (!memcmp(tail, mac, 32)) tail[0] ^= 1;
            m = tail;
        }
        ut_buf_clear(&payload);
        put(&payload, key, 20), put(&payload, content, 20), put(&payload, m, 32), put(&payload, &n, 4);
        put(&payload, data, size);
        write_file(path, (const uint8_t *)payload.data, payload.len, 1);
        c = open_cache(dir, cat, secret);
        FZ_ASSERT(!an_cache_get(c, cat, &run, "a.py", NULL, text_hash, src.len, &l, &parsed),
                  "an entry with a forged MAC was a hit");
        FZ_ASSERT(an_cache_forged(c) == 1, "a forged entry was not counted");
        an_cache_free(c);
    }
    ut_buf_clear(&payload);
    put(&payload, key, 20), put(&payload, content, 20), put(&payload, mac, 32), put(&payload, &n, 4);
    put(&payload, data, size);
    uint8_t other[20] = {0};
    memcpy(other, data, size < 20 ? size : 20);
    other[19] ^= 0x5a;
    put(&payload, other, 20), put(&payload, content, 20), put(&payload, mac, 32), put(&payload, &n, 4);
    put(&payload, data, size);
    write_file(path, (const uint8_t *)payload.data, payload.len, 2);
    ut_buf_free(&payload);

    c = open_cache(dir, cat, secret);
    if (an_cache_get(c, cat, &run, "a.py", NULL, text_hash, src.len, &l, &parsed)) {
        render_all(cat, &src, &l);
        /* round trip: store what was read, save, read it back */
        an_cache_put(c, cat, &run, "b.py", NULL, text_hash, &l, parsed);
        char *why;
        FZ_ASSERT(an_cache_save(c, &why) == 0, "save: %s", why);
        an_cache *c2 = open_cache(dir, cat, secret);
        an_diag_list l2 = {0};
        bool parsed2;
        FZ_ASSERT(an_cache_get(c2, cat, &run, "b.py", NULL, text_hash, src.len, &l2, &parsed2),
                  "an entry stored from a hit does not read back");
        FZ_ASSERT(parsed2 == parsed && same(&l, &l2), "an entry read back differs from what was stored");
        an_diag_list_free(&l2);
        an_cache_free(c2);
    }
    an_diag_list_free(&l);
    an_cache_free(c);
    unlink(path);
    ut_free(path);
    an_source_free(&src);
    return 0;
}
