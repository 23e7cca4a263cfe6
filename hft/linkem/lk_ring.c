/* lk_ring.c - see lk_ring.h. */
#include "lk_ring.h"

#include <stdlib.h>
#include <string.h>

static size_t record_size(uint32_t len) { return (sizeof(lk_frame) + len + 7u) & ~(size_t)7u; }

int lk_ring_init(lk_ring *r, size_t size) {
    memset(r, 0, sizeof *r);
    size &= ~(size_t)7u;
    if (size < 2 * sizeof(lk_frame)) return -1;
    r->buf = aligned_alloc(8, size);
    if (r->buf == NULL) return -1;
    memset(r->buf, 0, size); /* touch every page now, not on the hot path */
    r->size = size;
    return 0;
}

void lk_ring_close(lk_ring *r) {
    free(r->buf);
    memset(r, 0, sizeof *r);
}

int lk_ring_push(lk_ring *r, const void *data, uint32_t len, int64_t arrival_ns, int64_t release_ns) {
    size_t need = record_size(len);
    size_t at;
    if (r->count == 0) {
        r->head = r->tail = 0;
        r->wrapped = 0;
    }
    if (r->wrapped) {
        if (r->head - r->tail < need) return -1;
        at = r->tail;
    } else if (r->size - r->tail >= need) {
        at = r->tail;
    } else if (r->count > 0 && r->head >= need) {
        r->end = r->tail; /* the records before the wrap stop here */
        r->wrapped = 1;
        at = 0;
    } else {
        return -1;
    }
    lk_frame *f = (lk_frame *)(r->buf + at);
    f->arrival_ns = arrival_ns;
    f->release_ns = release_ns;
    f->len = len;
    memcpy(f->data, data, len);
    r->tail = at + need;
    r->count++;
    return 0;
}

const lk_frame *lk_ring_peek(const lk_ring *r) { return r->count ? (const lk_frame *)(r->buf + r->head) : NULL; }

void lk_ring_pop(lk_ring *r) {
    if (r->count == 0) return;
    r->head += record_size(((const lk_frame *)(r->buf + r->head))->len);
    r->count--;
    if (r->wrapped && r->head == r->end) {
        r->head = 0;
        r->wrapped = 0;
    }
}
