/**
 * hft_http.h - HTTP/1.1 keep-alive on raw sockets, the two halves the hot path needs:
 * a request pre-formatted once into an aligned buffer (per order only the body and the
 * Content-Length digits are rewritten), and an incremental parser of a response head.
 *
 * Pure functions over caller buffers: no allocation, no system call, tested in
 * tests/test_unit.c and fuzzed by fuzz/fuzz_reply.c (a server's replies are untrusted
 * input). Pipelining is not used, so a response is complete when its head and
 * Content-Length body bytes have arrived, and any byte beyond that is an error.
 */
#ifndef HFT_HTTP_H
#define HFT_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HFT_CACHE_LINE 64
/** Request buffer: head (< 200 bytes) + the largest order body, rounded to cache lines. */
#define HFT_REQ_CAP 640
/** Width of the Content-Length value: space-padded, so the head never moves. */
#define HFT_CLEN_WIDTH 5

typedef struct hft_request {
    _Alignas(HFT_CACHE_LINE) char buf[HFT_REQ_CAP]; /* head, then body */
    size_t head_len;  /* bytes up to and including the blank line; the body starts here */
    size_t clen_off;  /* offset of the HFT_CLEN_WIDTH Content-Length characters */
    size_t len;       /* head_len + body length: the bytes to write */
} hft_request;

/**
 * Format the constant head "POST path HTTP/1.1 ... Content-Length: ....." once.
 * @return 0, or -1 when path/host do not fit (the caller names the flag).
 */
int hft_request_init(hft_request *r, const char *path, const char *hostport);

/** The body area (capacity hft_request_body_cap) where the order body is formatted. */
static inline char *hft_request_body(hft_request *r) { return r->buf + r->head_len; }
static inline size_t hft_request_body_cap(const hft_request *r) { return HFT_REQ_CAP - r->head_len; }

/** After writing n body bytes: rewrite the Content-Length digits and the total length. */
void hft_request_set_body_len(hft_request *r, size_t n);

/** What a response (or request) head says. */
typedef struct hft_head {
    size_t head_len;        /* bytes of the head, blank line included */
    uint64_t content_length; /* body bytes that follow */
    int status;             /* response status code; 0 for a request head */
    bool close;             /* "Connection: close": reconnect before the next order */
} hft_head;

#define HFT_HEAD_INCOMPLETE 0
#define HFT_HEAD_DONE 1
#define HFT_HEAD_MALFORMED (-1)

/**
 * Parse a response head in buf[0..len). INCOMPLETE until the blank line has arrived;
 * MALFORMED for a bad status line (a status outside 100..599 too), a missing or bad
 * Content-Length (or two that differ), chunked encoding (hft-server always sends a
 * length), or a head larger than max_head.
 */
int hft_parse_response_head(const char *buf, size_t len, size_t max_head, hft_head *out);

/** The same for a request head (used by the floor's echo server): status is 0. */
int hft_parse_request_head(const char *buf, size_t len, size_t max_head, hft_head *out);

/**
 * A response being read off one connection: what hft_conn keeps between read(2)s. The
 * bytes land in the caller's buffer of cap bytes; the head must fit in it, and the body
 * bytes after the head are counted, never kept (the buffer is reused for them).
 */
typedef struct hft_reply {
    size_t fill;       /* bytes in the buffer: the next read goes to buf + fill, at most cap - fill */
    bool head_done;    /* the head has been parsed into head */
    hft_head head;     /* what it said */
    uint64_t body_got; /* body bytes seen (also those dropped) */
} hft_reply;

#define HFT_REPLY_PENDING 0
#define HFT_REPLY_DONE 1
#define HFT_REPLY_MALFORMED (-1)

/** Start reading a new response (after sending a request). */
void hft_reply_start(hft_reply *r);

/**
 * Account for n > 0 bytes just read into buf[r->fill .. r->fill + n), buf holding cap bytes
 * (n <= cap - r->fill). @return PENDING (read more; then r->fill < cap), DONE (complete:
 * exactly head.head_len + head.content_length bytes since hft_reply_start, status in
 * 100..599), or MALFORMED
 * (a bad head, one larger than cap, or a byte beyond the response).
 */
int hft_reply_absorb(hft_reply *r, const char *buf, size_t cap, size_t n);

/**
 * Build a complete 200 response of exactly total bytes (JSON body padded with spaces),
 * the floor's stand-in for hft-server's answer. @return total, or 0 if it cannot fit.
 */
size_t hft_canned_response(char *buf, size_t cap, size_t total);

#endif
