/* fz_lsp: libFuzzer target for the language server's base protocol and dispatch: Content-Length framing (headers
 * malformed, missing, too long; lengths too short or too long), JSON-RPC (junk, batches, ids of every type,
 * responses to the server's own requests, cancellations) and every method (initialize with any capabilities,
 * didOpen/didChange/didClose of Python and C documents, codeAction, hover, pull diagnostics, executeCommand,
 * settings, shutdown, exit), through the server's own code path (lsp_server_input: what `xpuify lsp` runs on
 * each read of its input).
 * Input: an option byte, then the client's byte stream. Option bits 0-1: the stream arrives whole or in chunks of
 * 1, 7 or 97 bytes; bit 2: the debounced work (analysis, publishDiagnostics, settling) runs after every chunk; bit
 * 3: the input goes idle after every chunk (a body shorter than its Content-Length is salvaged). At the end the
 * input goes idle, everything pending runs, and the input ends.
 * Properties: no crash, leak or undefined behaviour; bounded work (libFuzzer's -timeout); everything the server
 * writes is a sequence of well-formed frames, each a JSON-RPC 2.0 object (a request or notification with a
 * method, or a response with an id and exactly one of result and error, an error with a numeric code and a
 * message), in UTF-8 whenever the input was; no message says the fixer broke a file ("a bug in xpuify").
 * The server writes no file (lsp_server_options.no_writes) and reads no project configuration.
 * FZ_LSP_DUMP=1 prints what the server wrote for each input (to read a crash input's session). */
#include "lsp/lsp_server.h"
#include "fuzz/fz_common.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <sys/mman.h>
#include <unistd.h>

static int out_fd = -1;
static FILE *log_sink;
/* the input itself holds the phrase: the server echoes what clients send (an unknown method's name), so its
 * output may too without any bug of the server's */
static bool input_says_bug;

static bool no_project_config(void *ctx, const char *path, lsp_settings *out, char **origin, char **error) {
    *origin = NULL, *error = NULL;
    return true;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    out_fd = memfd_create("fz_lsp-output", MFD_CLOEXEC);
    log_sink = fopen("/dev/null", "w");
    if (out_fd < 0 || !log_sink) {
        perror("fz_lsp: memfd_create or /dev/null");
        abort();
    }
    return 0;
}

static bool digits(const char *s, size_t n) {
    if (!n) return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return false;
    return true;
}

static void check_message(const char *body, size_t n, bool utf8) {
    FZ_ASSERT(!utf8 || an_utf8_invalid_at(body, n) < 0, "a message that is not UTF-8 (byte %ld): %.*s",
              an_utf8_invalid_at(body, n), (int)n, body);
    const char *end = NULL;
    cJSON *m = cJSON_ParseWithLengthOpts(body, n, &end, false);
    FZ_ASSERT(m && end == body + n, "a message that is not one JSON value: %.*s", (int)n, body);
    FZ_ASSERT(cJSON_IsObject(m), "a message that is not an object: %.*s", (int)n, body);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "jsonrpc");
    FZ_ASSERT(cJSON_IsString(v) && !strcmp(v->valuestring, "2.0"), "no \"jsonrpc\": \"2.0\": %.*s", (int)n, body);
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(m, "method");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
    const cJSON *result = cJSON_GetObjectItemCaseSensitive(m, "result");
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(m, "error");
    if (method) {
        FZ_ASSERT(cJSON_IsString(method) && !result && !error, "a malformed request or notification: %.*s", (int)n, body);
        FZ_ASSERT(!id || cJSON_IsNumber(id), "a request of ours with a non-numeric id: %.*s", (int)n, body);
    } else {
        FZ_ASSERT(id && (cJSON_IsNumber(id) || cJSON_IsString(id) || cJSON_IsNull(id)), "a response without an id: %.*s",
                  (int)n, body);
        FZ_ASSERT(!result != !error, "a response needs exactly one of result and error: %.*s", (int)n, body);
        if (error) {
            FZ_ASSERT(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(error, "code")) &&
                          cJSON_IsString(cJSON_GetObjectItemCaseSensitive(error, "message")),
                      "an error without a numeric code and a message: %.*s", (int)n, body);
        }
    }
    cJSON_Delete(m);
    FZ_ASSERT(input_says_bug || !memmem(body, n, "a bug in xpuify", 15), "the server reports a bug of its own: %.*s",
              (int)n, body);
}

/* Everything the server wrote: frames `Content-Length: N\r\n\r\n` + N bytes, nothing else. */
static void check_output(bool utf8) {
    off_t size = lseek(out_fd, 0, SEEK_END);
    FZ_ASSERT(size >= 0, "lseek");
    char *out = ut_malloc((size_t)size + 1);
    FZ_ASSERT(pread(out_fd, out, (size_t)size, 0) == size, "pread");
    out[size] = 0;
    if (getenv("FZ_LSP_DUMP")) fprintf(stderr, "%s\n", out); /* to read what an input makes the server say */
    static const char head[] = "Content-Length: ";
    size_t at = 0, n = (size_t)size;
    while (at < n) {
        FZ_ASSERT(n - at > sizeof head - 1 && !memcmp(out + at, head, sizeof head - 1), "output at byte %zu is not a "
                  "frame header: %.*s", at, (int)(n - at > 80 ? 80 : n - at), out + at);
        size_t d = at + sizeof head - 1, e = d;
        while (e < n && out[e] >= '0' && out[e] <= '9') e++;
        FZ_ASSERT(digits(out + d, e - d) && e - d < 10 && n - e >= 4 && !memcmp(out + e, "\r\n\r\n", 4),
                  "a malformed frame header at byte %zu", at);
        size_t len = (size_t)strtoul(out + d, NULL, 10), body = e + 4;
        FZ_ASSERT(len <= n - body, "a frame of %zu bytes with %zu left", len, n - body);
        check_message(out + body, len, utf8);
        at = body + len;
    }
    ut_free(out);
    FZ_ASSERT(ftruncate(out_fd, 0) == 0 && lseek(out_fd, 0, SEEK_SET) == 0, "ftruncate");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    static const size_t chunks[4] = {0, 1, 7, 97};
    size_t chunk = chunks[data[0] & 3];
    bool due_each = data[0] & 4, idle_each = data[0] & 8;
    const char *in = (const char *)data + 1;
    size_t len = size - 1;
    bool utf8 = an_utf8_invalid_at(in, len) < 0;
    input_says_bug = memmem(in, len, "a bug in xpuify", 15) != NULL;

    lsp_server_options o = {0};
    o.in_fd = -1, o.out_fd = out_fd;
    o.cat = fz_builtin_catalog();
    o.config = no_project_config;
    o.log = log_sink;
    o.max_message = 1 << 20;
    o.version = "0.0.0-fuzz";
    o.no_writes = true;
    lsp_server *s = lsp_server_new(&o);
    for (size_t at = 0; at < len && !lsp_server_done(s);) {
        size_t n = chunk && chunk < len - at ? chunk : len - at;
        lsp_server_input(s, in + at, n);
        at += n;
        if (idle_each) lsp_server_input_idle(s);
        if (due_each) lsp_server_due(s, INFINITY);
    }
    lsp_server_input_idle(s);
    lsp_server_due(s, INFINITY);
    lsp_server_free(s, true);
    check_output(utf8);
    return 0;
}
