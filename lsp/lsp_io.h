/* lsp_io: the base protocol: messages framed by `Content-Length` headers on a byte stream. The reader survives
 * bad input: a malformed or missing header, a message over the size limit, a Content-Length that is too short
 * (the rest is skipped up to the next header) or too long (the message is salvaged once the stream stays idle). */
#ifndef LSP_IO_H
#define LSP_IO_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int fd;
    char *buf;
    size_t len, cap; /* bytes buffered (from buf[0]) */
    size_t max_message;
    size_t skip;     /* body bytes of an oversized message still to drop */
    size_t want;     /* Content-Length of the message being read (0: reading headers) */
    size_t hdr;      /* its headers' length */
    bool eof;
} lsp_reader;

typedef enum {
    LSP_MORE = 0,  /* no complete message yet */
    LSP_MESSAGE,   /* *body (heap, NUL-terminated) of *len bytes */
    LSP_PROBLEM,   /* bad input was skipped: *problem (heap) says what */
} lsp_read_result;

void lsp_reader_init(lsp_reader *r, int fd, size_t max_message);
void lsp_reader_free(lsp_reader *r);
/* One read(2) into the buffer: bytes read, 0 at end of input, -1 on error (errno). */
long lsp_reader_fill(lsp_reader *r);
/* Appends bytes that were read elsewhere (lsp_server_input) to the buffer, as lsp_reader_fill would. */
void lsp_reader_push(lsp_reader *r, const char *data, size_t n);
/* The next message or problem from what is buffered. Call until LSP_MORE. */
lsp_read_result lsp_reader_next(lsp_reader *r, char **body, size_t *len, char **problem);
/* True while a message body is incomplete (its Content-Length not yet reached). */
bool lsp_reader_waiting(const lsp_reader *r);
/* The input stayed idle while a body was incomplete: a Content-Length too long. Takes the JSON value the partial
 * body holds as the message (LSP_MESSAGE plus *problem), or skips to the next header (LSP_PROBLEM), or LSP_MORE
 * when neither is possible yet. */
lsp_read_result lsp_reader_salvage(lsp_reader *r, char **body, size_t *len, char **problem);

/* Puts bytes back in front of the buffer (what followed a message's JSON inside its Content-Length). Only
 * between messages. */
void lsp_reader_unread(lsp_reader *r, const char *data, size_t n);

/* Writes one framed message; false when the output is gone. */
bool lsp_write_message(int fd, const char *json, size_t len);
#endif
