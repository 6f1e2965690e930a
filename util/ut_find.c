/* ut_find: substring search (see ut_find.h). */
#include "util/ut_find.h"
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

const char *ut_memmem(const char *hay, size_t hn, const char *needle, size_t nn) {
    if (!nn) return hay;
    if (nn > hn) return NULL;
    if (nn == 1) return memchr(hay, (unsigned char)needle[0], hn);
#if defined(__SSE2__)
    const unsigned char *h = (const unsigned char *)hay, *n = (const unsigned char *)needle;
    const __m128i first = _mm_set1_epi8((char)n[0]), last = _mm_set1_epi8((char)n[nn - 1]);
    size_t i = 0;
    /* blocks of 16 candidate starts whose last bytes lie inside the haystack */
    for (; i + nn - 1 + 16 <= hn; i += 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)(h + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(h + i + nn - 1));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(b, last)));
        while (m) {
            unsigned k = (unsigned)__builtin_ctz(m);
            if (nn == 2 || !memcmp(h + i + k + 1, n + 1, nn - 2)) return hay + i + k;
            m &= m - 1;
        }
    }
    for (; i + nn <= hn; i++)
        if (h[i] == n[0] && h[i + nn - 1] == n[nn - 1] && !memcmp(h + i, n, nn)) return hay + i;
    return NULL;
#else
    return memmem(hay, hn, needle, nn);
#endif
}
