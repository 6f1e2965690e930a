/* an_encoding: PEP 263 source encodings. A file whose first or second line declares `coding: NAME` (`# -*- coding:
 * latin-1 -*-`, `# vim: set fileencoding=cp1252 :`) is decoded as Python decodes it, into UTF-8 for analysis: its
 * lines and columns (code points) are those of the original. Decoding goes through the C library's iconv. */
#ifndef AN_ENCODING_H
#define AN_ENCODING_H
#include <stdbool.h>
#include <stddef.h>

/* The encoding a coding cookie in buf declares, normalized to an iconv name ("ISO-8859-1", "CP1252", ...), into
 * name; false when there is no cookie or it names UTF-8 (nothing to decode). A UTF-8 BOM wins over any cookie. */
bool an_encoding_cookie(const char *buf, size_t n, char *name, size_t namesz);
/* buf decoded from enc into UTF-8 (heap, NUL-terminated, *outn bytes); NULL with *why (heap) when enc is unknown
 * or buf is not valid in it. */
char *an_encoding_decode(const char *enc, const char *buf, size_t n, size_t *outn, char **why);
#endif
