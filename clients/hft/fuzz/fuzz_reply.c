/*
 * fuzz_reply.c - libFuzzer harness of client-hft's reply parser: hft_reply_absorb (and
 * hft_parse_response_head under it) fed as hft_conn_read feeds it, with the invariants
 * the client relies on checked after every step. A server's replies are untrusted input:
 * a pull request's server answers client-hft outside any sandbox.
 *
 * The input is what one connection receives, cut into the reads that deliver it: every
 * "~~" (FUZZ_SPLIT) ends a read, so "HTTP/1.1 2~~00 OK..." arrives in two. ('~' means
 * nothing to the parser, so leaving "~~" out of the bytes loses no branch.) As in
 * hft_conn_read, a read takes at most the room left in the buffer (cap - fill) and the rest
 * waits for the next read; after a complete reply the next reply starts on the same
 * connection (keep-alive: bytes already in the socket become its first bytes); after a
 * malformed one or "Connection: close" the socket is closed, so the rest of that read is
 * lost and the next read belongs to a new connection. Every input runs twice: with the
 * client's buffer (HFT_RBUF, 16 KiB) and with a 256-byte one, which reaches a full buffer
 * with short inputs. Each buffer is malloc'ed at its exact size, so AddressSanitizer sees
 * any access past it.
 *
 * Invariants (a failed one aborts, which libFuzzer reports as a crash):
 *  - PENDING leaves room to read (fill < cap); with the head parsed, fewer bytes than
 *    head_len + content_length have arrived;
 *  - DONE means status 100..599, exactly head_len + content_length bytes since the reply
 *    started, a head that fits the buffer and ends in a blank line, no Transfer-Encoding
 *    and no Content-Length line that says another length (a second, simpler scan of the
 *    header lines: two that differ are refused, RFC 9112 6.3), and a result that does not depend on the split: the same bytes in one
 *    piece parse to the same head, and the head minus its last byte is still incomplete;
 *  - MALFORMED after the head was parsed only for a byte beyond the reply.
 * The floor's request-head parser (same header code) gets the whole input too.
 *
 * Built and run by `make -C clients/hft fuzz` (and, bounded, by `make test`); replayed over
 * fuzz/corpus by fuzz_replay.c in the sanitized gcc build. fuzz/README.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hft_conn.h"
#include "hft_http.h"

#define FUZZ_SPLIT "~~"
#define FUZZ_SMALL_CAP 256

#define FUZZ_CHECK(cond)                                                                 \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "fuzz_reply: invariant failed: %s (%s:%d)\n", #cond, __FILE__, \
                    __LINE__);                                                           \
            abort();                                                                     \
        }                                                                                \
    } while (0)

static bool same_head(const hft_head *a, const hft_head *b) {
    return a->head_len == b->head_len && a->content_length == b->content_length && a->status == b->status &&
           a->close == b->close;
}

/* The head's header lines (each ends in CRLF; a bare CR or LF inside one is a byte of it)
 * read again by a second and simpler scan: no Transfer-Encoding, and every Content-Length
 * line says exactly the length the parser took. */
static void check_headers(const char *head, size_t head_len, uint64_t content_length) {
    const char *p = (const char *)memmem(head, head_len, "\r\n", 2) + 2, *end = head + head_len - 2;
    while (p < end) {
        const char *eol = memmem(p, (size_t)(end - p) + 2, "\r\n", 2);
        FUZZ_CHECK(eol != NULL);
        const char *colon = memchr(p, ':', (size_t)(eol - p));
        FUZZ_CHECK(colon != NULL && colon > p);
        size_t n = (size_t)(colon - p);
        FUZZ_CHECK(!(n == 17 && strncasecmp(p, "transfer-encoding", n) == 0));
        if (n == 14 && strncasecmp(p, "content-length", n) == 0) {
            uint64_t v = 0;
            for (const char *c = colon + 1; c < eol; c++)
                if (*c >= '0' && *c <= '9') v = v * 10 + (uint64_t)(*c - '0');
            FUZZ_CHECK(v == content_length);
        }
        p = eol + 2;
    }
}

/* The reply's bytes in reads as large as the buffer allows: DONE at the last byte only,
 * with the same head as the split run found. */
static void check_unsplit(const char *bytes, size_t len, size_t cap, const hft_head *want) {
    char *buf = malloc(cap);
    FUZZ_CHECK(buf != NULL);
    hft_reply r;
    hft_reply_start(&r);
    size_t off = 0;
    int rc = HFT_REPLY_PENDING;
    while (off < len) {
        FUZZ_CHECK(rc == HFT_REPLY_PENDING && r.fill < cap);
        size_t n = len - off < cap - r.fill ? len - off : cap - r.fill;
        memcpy(buf + r.fill, bytes + off, n);
        off += n;
        rc = hft_reply_absorb(&r, buf, cap, n);
    }
    FUZZ_CHECK(rc == HFT_REPLY_DONE && same_head(&r.head, want));
    free(buf);
}

/* A reply reported complete: bytes[0..len) is every byte it was given. */
static void check_done(const hft_reply *r, const char *bytes, size_t len, size_t cap) {
    const hft_head *h = &r->head;
    FUZZ_CHECK(h->status >= 100 && h->status <= 599);
    FUZZ_CHECK(h->head_len >= 4 && h->head_len <= cap && h->head_len <= len);
    FUZZ_CHECK(memcmp(bytes + h->head_len - 4, "\r\n\r\n", 4) == 0);
    FUZZ_CHECK(r->body_got == h->content_length && len - h->head_len == h->content_length);
    hft_head again;
    FUZZ_CHECK(hft_parse_response_head(bytes, h->head_len, cap, &again) == HFT_HEAD_DONE && same_head(&again, h));
    FUZZ_CHECK(hft_parse_response_head(bytes, h->head_len - 1, cap, &again) == HFT_HEAD_INCOMPLETE);
    check_headers(bytes, h->head_len, h->content_length);
    check_unsplit(bytes, len, cap, h);
}

/* One connection's worth of reads through a buffer of cap bytes, as hft_conn_read does. */
static void run(const uint8_t *data, size_t size, size_t cap) {
    char *buf = malloc(cap);        /* the connection's rbuf, exactly cap bytes */
    char *stream = malloc(size + 1); /* every byte the current reply was given, in order */
    FUZZ_CHECK(buf != NULL && stream != NULL);
    hft_reply r;
    hft_reply_start(&r);
    size_t got = 0; /* bytes of stream */
    const char *p = (const char *)data, *end = p + size;
    while (p < end) {
        const char *cut = memmem(p, (size_t)(end - p), FUZZ_SPLIT, 2);
        const char *read_end = cut != NULL ? cut : end;
        while (p < read_end) { /* one read(2); a read never returns 0 bytes but at EOF */
            FUZZ_CHECK(r.fill < cap);
            size_t room = cap - r.fill, left = (size_t)(read_end - p);
            size_t n = left < room ? left : room;
            memcpy(buf + r.fill, p, n);
            memcpy(stream + got, p, n);
            got += n;
            p += n;
            int rc = hft_reply_absorb(&r, buf, cap, n);
            if (rc == HFT_REPLY_PENDING) {
                FUZZ_CHECK(r.fill < cap);
                if (r.head_done) FUZZ_CHECK(got < r.head.head_len + r.head.content_length);
                else FUZZ_CHECK(r.fill == got);
                continue;
            }
            bool closed = rc == HFT_REPLY_MALFORMED;
            if (rc == HFT_REPLY_DONE) {
                check_done(&r, stream, got, cap);
                closed = r.head.close;
            } else if (r.head_done) {
                FUZZ_CHECK(got > r.head.head_len + r.head.content_length);
            }
            hft_reply_start(&r); /* the next order's reply, on this connection or a new one */
            got = 0;
            if (closed) p = read_end; /* the socket is closed: the rest of this read is lost */
        }
        p = cut != NULL ? cut + 2 : end;
    }
    free(stream);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    run(data, size, HFT_RBUF);
    run(data, size, FUZZ_SMALL_CAP);
    hft_head h; /* the floor's request parser shares the header code; it must not fault either */
    if (hft_parse_request_head((const char *)data, size, HFT_RBUF, &h) == HFT_HEAD_DONE)
        FUZZ_CHECK(h.head_len <= size && h.status == 0);
    return 0;
}
