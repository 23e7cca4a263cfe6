/**
 * hb_order.h - the order stream of clients/README.md: order k of seed s is a pure
 * function of (s, k), and its compact JSON body.
 *
 * Nothing here allocates: bodies go into caller buffers. The client_timestamp is
 * always the last field and has a fixed width, so a client that keeps a body can
 * rewrite just the timestamp (hb_order_body_ts_offset) for a resend.
 */
#ifndef HB_ORDER_H
#define HB_ORDER_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Largest body hb_order_format can produce, with room to spare. */
#define HB_ORDER_BODY_MAX 320
/** "YYYY-MM-DDTHH:MM:SS.ffffffZ" */
#define HB_TS_LEN 27

typedef struct hb_order {
    uint64_t x;                 /* splitmix64 output number k; every field is carved from it */
    int symbol;                 /* one of the 8 stock codes */
    int sell;                   /* 0 buy, 1 sell */
    int price_cents;            /* 9950 .. 10050 in steps of 5 */
    int quantity;               /* 100 .. 1000 */
    const char *price_type;     /* "market" or "limit" */
    const char *time_in_force;  /* "ioc", "rod" or "fok" */
} hb_order;

/** splitmix64's finalizer (mod 2^64). */
uint64_t hb_order_mix(uint64_t z);

/** Order k of the stream of seed. */
void hb_order_make(uint64_t seed, uint64_t k, hb_order *out);

/**
 * Write the compact JSON body of order o with the given 27-character timestamp into
 * buf (no NUL needed by HTTP, but one is written).
 * @return the body length, or 0 when cap < HB_ORDER_BODY_MAX.
 */
size_t hb_order_format(const hb_order *o, const char *timestamp, char *buf, size_t cap);

/** Offset of the timestamp text inside a body of length len: it ends with ts + "\"}". */
static inline size_t hb_order_body_ts_offset(size_t len) { return len - HB_TS_LEN - 2; }

/** Per-thread cache of the formatted date-time of one second (no locale, no lock). */
typedef struct hb_ts_cache {
    time_t sec;               /* the second the text was formatted for; -1 = empty */
    char text[HB_TS_LEN + 1]; /* "YYYY-MM-DDTHH:MM:SS.ffffffZ" */
} hb_ts_cache;

void hb_ts_cache_init(hb_ts_cache *cache);

/**
 * Write the UTC timestamp of wall into out[HB_TS_LEN] (not NUL-terminated):
 * gmtime once per second, then only the six microsecond digits are rewritten.
 */
void hb_ts_format(hb_ts_cache *cache, const struct timespec *wall, char *out);

#ifdef __cplusplus
}
#endif
#endif
