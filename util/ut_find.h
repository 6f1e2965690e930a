/* ut_find: substring search for the analyzers' text scans. glibc's memmem steps through the haystack a byte (or a
 * hashed pair) at a time; the scans of every analyzed file for short needles (`cuda`, `import`, a name) call it
 * hundreds of thousands of times per run. */
#ifndef UT_FIND_H
#define UT_FIND_H
#include <stddef.h>

/* The first occurrence of needle[0, nn) in hay[0, hn), as memmem returns it (an empty needle: hay). Compares 16
 * positions at a time by the needle's first and last bytes (SSE2 on x86-64; elsewhere memmem itself). */
const char *ut_memmem(const char *hay, size_t hn, const char *needle, size_t nn);

#endif
