/**
 * hft_conn.h - one keep-alive connection and its request in flight: a non-blocking
 * socket, the pre-formatted request, and the response being read. The steps below are
 * the whole hot path: format + write, then read until the response is complete. Only
 * read(2) and write(2) are called, except to (re)connect after a failure.
 */
#ifndef HFT_CONN_H
#define HFT_CONN_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include "hb_order.h"
#include "hb_stats.h"
#include "hft_http.h"

/** Read buffer: a response head must fit; body bytes beyond it are counted and dropped. */
#define HFT_RBUF 16384

typedef enum { HFT_DOWN, HFT_IDLE, HFT_SENDING, HFT_RECEIVING } hft_conn_state;

/** Outcome of one step. */
typedef enum {
    HFT_STEP_PENDING, /* nothing finished yet */
    HFT_STEP_DONE,    /* the response is complete: see status */
    HFT_STEP_FAILED,  /* the order failed with kind; the socket is closed */
} hft_step;

typedef struct hft_conn {
    hft_request req;                        /* aligned; the head is formatted once */
    _Alignas(HFT_CACHE_LINE) char rbuf[HFT_RBUF];
    int fd;                                 /* -1 when down */
    hft_conn_state state;
    size_t sent;          /* request bytes written so far */
    hft_reply reply;      /* the response being read into rbuf (fill, head, body bytes seen) */
    uint64_t t_start;     /* ticks: request start (before formatting) */
    uint64_t t_intended;  /* ticks: open loop's intended send time; = t_start in closed loop */
    uint64_t k;           /* index of the order in flight */
    bool measured;        /* record it (false during warm-up) */
    uint64_t next_i;      /* open loop: the next order index this connection sends */
    hb_error_kind fail;   /* kind of the last HFT_STEP_FAILED */
    int status;           /* HTTP status of the last HFT_STEP_DONE */
    int side;             /* HFT_SIDE_A, or HFT_SIDE_B in an open-loop duet: its server and its hb_stats */
} hft_conn;

/** Set up the request head for path/hostport; the connection starts down. @return 0 or -1. */
int hft_conn_init(hft_conn *c, const char *path, const char *hostport);

/**
 * Connect (blocking, bounded by timeout_ms), then make the socket non-blocking with
 * TCP_NODELAY. @return 0, or -1 with errno set.
 */
int hft_conn_connect(hft_conn *c, const struct sockaddr_in *addr, long timeout_ms);

void hft_conn_close(hft_conn *c);

/**
 * Start order k: format its body (wall-clock timestamp via ts), then write as much as
 * the socket takes. t_start must be set by the caller. Returns PENDING (now SENDING or
 * RECEIVING) or FAILED.
 */
hft_step hft_conn_send(hft_conn *c, uint64_t seed, uint64_t k, hb_ts_cache *ts);

/** Continue a partial write. */
hft_step hft_conn_write_more(hft_conn *c);

/** Read what has arrived; DONE when the response is complete (status in c->status). */
hft_step hft_conn_read(hft_conn *c);

#endif
