/**
 * lk_ring.h - the delay line of one direction: frames in arrival order, each with its
 * release time, in one buffer allocated at start (no allocation per frame). Records are
 * variable-length (a GSO frame can be 64 KiB, an order 400 bytes) and never split: a
 * record that does not fit before the end of the buffer starts again at offset 0.
 */
#ifndef LK_RING_H
#define LK_RING_H

#include <stddef.h>
#include <stdint.h>

typedef struct lk_frame {
    int64_t arrival_ns; /* when the emulator read it */
    int64_t release_ns; /* when the model lets it leave */
    uint32_t len;       /* bytes of data[] */
    uint32_t reserved;
    unsigned char data[]; /* virtio_net_hdr + Ethernet frame, as read */
} lk_frame;

typedef struct lk_ring {
    unsigned char *buf;
    size_t size;    /* bytes of buf, a multiple of 8 */
    size_t head;    /* offset of the oldest record */
    size_t tail;    /* offset where the next record goes */
    size_t end;     /* while wrapped: where the records before offset 0 stop */
    int wrapped;    /* the records run from head to end, then from 0 to tail */
    size_t count;   /* records held */
} lk_ring;

/** Allocate size bytes (rounded down to 8). @return 0, or -1 (out of memory, or too small). */
int lk_ring_init(lk_ring *r, size_t size);
void lk_ring_close(lk_ring *r);

/** Copy a frame in. @return 0, or -1 when the ring is full (the caller counts a drop). */
int lk_ring_push(lk_ring *r, const void *data, uint32_t len, int64_t arrival_ns, int64_t release_ns);

/** The oldest frame, or NULL when empty. Valid until the next lk_ring_pop. */
const lk_frame *lk_ring_peek(const lk_ring *r);

/** Drop the oldest frame (no-op when empty). */
void lk_ring_pop(lk_ring *r);

#endif
