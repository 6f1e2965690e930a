/* an_cache: the results cache (.xpuify_cache/): each file's findings, with their fixes, keyed by
 *   - the build (xpuify's version and a hash of the running executable),
 *   - the effective configuration (rule catalog fingerprint, enabled rules, fix target and options, and the
 *     per-file helper import),
 *   - the file's path and the hash of its content.
 * One cache file per build under DIR/v1/, read once at start, written at the end (temporary file + rename: a
 * concurrent run sees the old or the new file, never a torn one; the last writer wins, an entry lost that way is
 * only recomputed). A cache file that does not check out (header, checksum) is ignored and rewritten.
 * Beside the findings, the cache keeps each file's stamp (an_stamp: device, inode, size, modification and change
 * times) with the outcome of the last run that read it (rejected by the prefilter, or passed with this content
 * hash), so that a run over an unchanged tree trusts stat instead of reading and hashing every file, as git's index
 * and ruff's cache do. A stamp is only stored when the file had not changed for a while before the run began
 * (git's "racy" entries: a write in the same clock tick as the stat would leave the times as they were).
 * Lookups and stores are thread-safe. Diagnostics handed out keep pointers into the catalog and the cache's own
 * strings: free the results before the cache.
 * The cache directory may be one a checked-out tree controls (.xpuify_cache/ in it): every entry carries an
 * HMAC-SHA-256 under the machine's secret key (an_cachekey), and one that does not match is a miss, so a committed
 * or forged cache can cost time, never change a report. The directory and what is written in it are opened without
 * following symbolic links (ut_safedir). */
#ifndef AN_CACHE_H
#define AN_CACHE_H
#include "analyzer/core/an_cachekey.h"
#include "analyzer/core/an_deps.h"
#include "analyzer/core/an_diag.h"
#include "analyzer/core/an_rule.h"

typedef struct an_cache an_cache;

/* The run-wide part of an entry's key: what selects rules and shapes fixes. */
typedef struct {
    uint8_t h[20];
} an_cache_run;

/* Opens the cache under dir (created at save time) for this build and catalog, its entries authenticated with
 * secret. A missing, broken or forged cache file gives an empty cache; NULL with *why (heap) only when dir or dir/v1
 * exists as a symbolic link or as something else than a directory (the run goes on without a cache). */
an_cache *an_cache_open(const char *dir, const char *version, const an_catalog *cat,
                        const uint8_t secret[AN_CACHEKEY_LEN], char **why);
void an_cache_free(an_cache *c);
/* enabled: by rule index (NULL = all); fix: the run's fix options (NULL = none); regions: Python is parsed by
 * regions (not --whole-files) */
void an_cache_run_key(const an_cache *c, const an_catalog *cat, const bool *enabled, const an_fix_options *fix,
                      bool regions, an_cache_run *out);
/* The hash of a file's content that get and put compare (computed once per file by the caller). */
void an_cache_content(const char *text, size_t len, uint8_t out[20]);
/* The findings of a file: true on a hit (out filled, *parsed set). fix: this file's own fix options; content:
 * an_cache_content of its text, len its length. */
bool an_cache_get(an_cache *c, const an_catalog *cat, const an_cache_run *run, const char *path,
                  const an_fix_options *fix, const uint8_t content[20], size_t len, an_diag_list *out, bool *parsed);
void an_cache_put(an_cache *c, const an_catalog *cat, const an_cache_run *run, const char *path,
                  const an_fix_options *fix, const uint8_t content[20], const an_diag_list *diags, bool parsed);
/* The same for findings that depend on other files too (an_deps: a guard's callees in other modules): a later get
 * hits only while each of them still has the content noted (it is read and hashed again). */
void an_cache_put_deps(an_cache *c, const an_catalog *cat, const an_cache_run *run, const char *path,
                       const an_fix_options *fix, const uint8_t content[20], const an_diag_list *diags, bool parsed,
                       const an_deps *deps);
/* Stamps. Nothing is stored until the run says when it began: files changed less than a few seconds before
 * began_ns (CLOCK_REALTIME) are not trusted. */
void an_cache_trust_stamps(an_cache *c, int64_t began_ns);
typedef enum {
    AN_CACHE_STAMP_UNKNOWN = 0, /* no stamp, or the file's differs: read it */
    AN_CACHE_STAMP_REJECTED,    /* unchanged, and the prefilter rejected it */
    AN_CACHE_STAMP_PASSED,      /* unchanged, passed the prefilter; content receives its hash */
} an_cache_stamp_state;
an_cache_stamp_state an_cache_stamp_get(an_cache *c, const an_cache_run *run, const char *path, const an_stamp *st,
                                        uint8_t content[20]);
/* content: NULL when the prefilter rejected the file. Ignored for a stamp that is not valid or too recent. */
void an_cache_stamp_put(an_cache *c, const an_cache_run *run, const char *path, const an_stamp *st,
                        const uint8_t *content);
/* Side entries of other modules (the project model's per-file import summaries): an opaque blob under (kind, path),
 * valid while the file keeps the stamp st (the stamps' racy rule applies to put). get: a heap copy in *blob. */
bool an_cache_side_get(an_cache *c, const char *kind, const char *path, const an_stamp *st, uint8_t **blob,
                       size_t *len);
void an_cache_side_put(an_cache *c, const char *kind, const char *path, const an_stamp *st, const void *blob,
                       size_t len);
/* Writes the cache file when something changed. 0, or -1 with *why (heap). */
int an_cache_save(an_cache *c, char **why);
/* The key of one file's entry, and the cache file's path (for tests and the fz_cache fuzzer, which write cache
 * files of their own). */
void an_cache_key(const an_cache_run *run, const char *path, const an_fix_options *fix, uint8_t out[20]);
/* The cache file's first 8 bytes (its checksum and every key are ut_hash20; the MACs HMAC-SHA-256). */
#define AN_CACHE_MAGIC "XPUIFYC4"
/* The MAC an entry must carry (for tests and the fuzzer, which write entries of their own). */
void an_cache_entry_mac(const an_cache *c, const uint8_t key[20], const uint8_t content[20], const uint8_t *blob,
                        uint32_t len, uint8_t out[32]);
/* Entries read whose MAC did not match so far (XPUIFY_CACHE_STATS=1 prints them). */
size_t an_cache_forged(const an_cache *c);
const char *an_cache_file(const an_cache *c);
/* Lookups that hit and missed so far (for tests and benchmarks: XPUIFY_CACHE_STATS=1 prints them). */
void an_cache_stats(const an_cache *c, size_t *hits, size_t *misses);
/* Files found unchanged by their stamp so far (not read, or read without hashing). */
size_t an_cache_stamp_hits(const an_cache *c);
#endif
