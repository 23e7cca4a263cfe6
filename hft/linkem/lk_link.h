/**
 * lk_link.h - the forwarding loop of hft-linkem: two interfaces, an AF_PACKET socket on
 * each, and one delay line (lk_ring) + link model (lk_model) per direction. A frame read
 * on one side is stamped, given its release time (or dropped), and written to the other
 * side when that time comes. The TCP connection stays end to end between client and
 * server: a lost frame is really lost and the kernels' TCP retransmits it.
 *
 * PACKET_VNET_HDR carries each frame's checksum-offload and GSO state across, so veths
 * keep their offloads (no ethtool needed) and a 64 KiB GSO frame crosses as one.
 */
#ifndef LK_LINK_H
#define LK_LINK_H

#include <signal.h>
#include <stdint.h>

#include "hdr_histogram.h"
#include "lk_model.h"
#include "lk_ring.h"

#define LK_RING_BYTES (8u << 20) /* per direction: ~20,000 order-sized frames in flight */
#define LK_FRAME_MAX 65600       /* virtio_net_hdr + the largest GSO frame */

typedef struct lk_direction {
    const char *name;      /* "a_to_b": for the stats */
    int in_fd, out_fd;     /* read here, write there */
    lk_model model;
    lk_ring ring;
    uint64_t frames;       /* forwarded */
    uint64_t bytes;        /* forwarded, virtio_net_hdr excluded */
    uint64_t lost;         /* dropped by the loss model */
    uint64_t ring_full;    /* dropped because the delay line was full */
    uint64_t send_errors;  /* the kernel refused the write (counted and dropped) */
    size_t max_queued;     /* most frames held at once */
    struct hdr_histogram *delay;    /* applied one-way delay: sent minus read, ns */
    struct hdr_histogram *lateness; /* sent minus scheduled release: the emulator's own error, ns */
} lk_direction;

typedef struct lk_link {
    lk_direction dir[2]; /* [0] a -> b, [1] b -> a */
    int busy;            /* spin instead of sleeping in ppoll */
    int64_t spin_ns;     /* sleep until this long before a release, then spin: timer wake-ups are late */
} lk_link;

/**
 * Open both packet sockets and the per-direction state. The model's parameters are the
 * same both ways; direction 1's random stream is seeded with seed + 1.
 * @return 0, or -1 with err = "<problem>; <fix>".
 */
int lk_link_open(lk_link *l, const char *if_a, const char *if_b, int64_t delay_ns, int64_t jitter_ns,
                 double loss_ratio, uint64_t seed, int busy, int64_t spin_ns, char *err, size_t errlen);

/**
 * Forward until *stop is set (by a SIGINT/SIGTERM handler; both are blocked outside
 * ppoll, so a signal never waits behind a sleep). Frames still queued are not sent.
 * @return 0, or -1 with err when a socket fails.
 */
int lk_link_run(lk_link *l, volatile sig_atomic_t *stop, char *err, size_t errlen);

void lk_link_close(lk_link *l);

#endif
