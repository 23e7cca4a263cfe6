/* hb_allocator.h - which allocator really serves malloc, for a result's extra.allocator.
 * A client built against mimalloc (Debian's libmimalloc-dev, linked first so it serves every
 * malloc of the process, libcurl's too) defines HB_MIMALLOC; otherwise it is glibc's. */
#ifndef HB_ALLOCATOR_H
#define HB_ALLOCATOR_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef HB_MIMALLOC
#include <mimalloc.h>
#endif

/* The allocator's name as a JSON string, e.g. "\"mimalloc 2.0.9\"", into out[cap]. */
static inline void hb_allocator_name(char *out, size_t cap)
{
#ifdef HB_MIMALLOC
    void *probe = malloc(64);
    bool mimalloc = probe != NULL && mi_is_in_heap_region(probe);
    free(probe);
    if (mimalloc) {
        int v = mi_version(); /* e.g. 209 = 2.0.9 */
        (void)snprintf(out, cap, "\"mimalloc %d.%d.%d\"", v / 100, (v / 10) % 10, v % 10);
        return;
    }
#endif
    (void)snprintf(out, cap, "\"glibc malloc\"");
}

#endif
