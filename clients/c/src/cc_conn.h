/**
 * cc_conn.h - one keep-alive connection of the C client: a libcurl easy handle with
 * its pre-built headers, pre-allocated request buffer, and the times of the order
 * in flight. Nothing here allocates per request.
 */
#ifndef CC_CONN_H
#define CC_CONN_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stdint.h>

#include "hb_args.h"
#include "hb_order.h"
#include "hb_stats.h"

typedef struct cc_conn {
    CURL *easy;                     /* reused for every order: libcurl keeps the connection alive */
    CURLU *url;                     /* the order URL, parsed once */
    struct curl_slist *headers;     /* Content-Type, and no Expect: / Accept: */
    char body[HB_ORDER_BODY_MAX];   /* the order in flight; CURLOPT_POSTFIELDS points here */
    uint64_t intended_ns;           /* open loop: its scheduled send time; closed loop: = sent_ns */
    uint64_t sent_ns;               /* when it was handed to libcurl */
    bool measured;                  /* false for warm-up orders: sent, not recorded */
    bool in_flight;                 /* added to the multi and not finished: subject to the timeout sweep */
} cc_conn;

/** Create the easy handle for cfg's URL (the timeout is the worker's sweep). @return 0, or -1. */
int cc_conn_init(cc_conn *c, const hb_config *cfg);
void cc_conn_close(cc_conn *c);

/**
 * Fill the body with order k (timestamp now) and stamp the times; the caller adds it to its multi.
 * now_ns: the caller's monotonic clock read just before (one read serves a whole refill round).
 */
void cc_conn_prepare(cc_conn *c, const hb_config *cfg, hb_ts_cache *ts, uint64_t k, uint64_t intended_ns,
                     uint64_t now_ns);

/**
 * Classify a finished transfer.
 * @return -1 for HTTP 200, else the hb_error_kind.
 */
int cc_conn_outcome(const cc_conn *c, CURLcode result);

#endif
