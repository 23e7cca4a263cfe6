/* hft_http.c - request template and response-head parser (see hft_http.h). */
#include "hft_http.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

int hft_request_init(hft_request *r, const char *path, const char *hostport) {
    memset(r, 0, sizeof *r);
    int n = snprintf(r->buf, sizeof r->buf,
                     "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                     "Connection: keep-alive\r\nContent-Length: %*s\r\n\r\n",
                     path, hostport, HFT_CLEN_WIDTH, "0");
    /* The body must still fit after the head: the order body is < 320 bytes. */
    if (n < 0 || (size_t)n + 320 > sizeof r->buf) return -1;
    r->head_len = (size_t)n;
    r->clen_off = r->head_len - 4 - HFT_CLEN_WIDTH;
    r->len = r->head_len;
    return 0;
}

void hft_request_set_body_len(hft_request *r, size_t n) {
    /* Right-aligned, space-padded: "Content-Length:   219" (leading OWS is allowed). */
    char *d = r->buf + r->clen_off;
    size_t v = n;
    for (int i = HFT_CLEN_WIDTH - 1; i >= 0; i--) {
        if (v == 0 && i < HFT_CLEN_WIDTH - 1) {
            d[i] = ' ';
        } else {
            d[i] = (char)('0' + v % 10);
            v /= 10;
        }
    }
    r->len = r->head_len + n;
}

/* A header value with leading and trailing spaces / tabs removed. */
static void trim(const char **v, const char **end) {
    while (*v < *end && (**v == ' ' || **v == '\t')) (*v)++;
    while (*end > *v && ((*end)[-1] == ' ' || (*end)[-1] == '\t')) (*end)--;
}

static bool name_is(const char *name, size_t n, const char *want) {
    return strlen(want) == n && strncasecmp(name, want, n) == 0;
}

static bool value_has_token(const char *v, const char *end, const char *tok) {
    size_t n = strlen(tok);
    for (const char *p = v; p + n <= end; p++)
        if (strncasecmp(p, tok, n) == 0) return true;
    return false;
}

/* Header lines from first (just after the start line) to the blank line at head_end. */
static int parse_headers(const char *p, const char *head_end, hft_head *out) {
    bool have_length = false;
    while (p < head_end) {
        const char *eol = memmem(p, (size_t)(head_end - p) + 2, "\r\n", 2);
        if (eol == NULL) return HFT_HEAD_MALFORMED;
        const char *colon = memchr(p, ':', (size_t)(eol - p));
        if (colon == NULL || colon == p) return HFT_HEAD_MALFORMED;
        const char *v = colon + 1, *vend = eol;
        trim(&v, &vend);
        size_t nlen = (size_t)(colon - p);
        if (name_is(p, nlen, "content-length")) {
            if (v == vend || vend - v > 12) return HFT_HEAD_MALFORMED;
            uint64_t n = 0;
            for (const char *c = v; c < vend; c++) {
                if (*c < '0' || *c > '9') return HFT_HEAD_MALFORMED;
                n = n * 10 + (uint64_t)(*c - '0');
            }
            if (have_length && n != out->content_length) return HFT_HEAD_MALFORMED; /* RFC 9112 6.3 */
            out->content_length = n;
            have_length = true;
        } else if (name_is(p, nlen, "transfer-encoding")) {
            return HFT_HEAD_MALFORMED; /* chunked bodies are not spoken here */
        } else if (name_is(p, nlen, "connection")) {
            out->close = value_has_token(v, vend, "close");
        }
        p = eol + 2;
    }
    return have_length ? HFT_HEAD_DONE : HFT_HEAD_MALFORMED;
}

/* Find the blank line; fills head_len. */
static int find_head(const char *buf, size_t len, size_t max_head, hft_head *out, const char **end) {
    memset(out, 0, sizeof *out);
    const char *e = memmem(buf, len < max_head ? len : max_head, "\r\n\r\n", 4);
    if (e == NULL) return len >= max_head ? HFT_HEAD_MALFORMED : HFT_HEAD_INCOMPLETE;
    out->head_len = (size_t)(e - buf) + 4;
    *end = e + 2; /* the CRLF that ends the last header line stays inside */
    return HFT_HEAD_DONE;
}

int hft_parse_response_head(const char *buf, size_t len, size_t max_head, hft_head *out) {
    const char *end;
    int rc = find_head(buf, len, max_head, out, &end);
    if (rc != HFT_HEAD_DONE) return rc;
    /* "HTTP/1.x NNN reason" */
    if (out->head_len < 16 || memcmp(buf, "HTTP/1.", 7) != 0 || buf[8] != ' ') return HFT_HEAD_MALFORMED;
    int status = 0;
    for (int i = 9; i < 12; i++) {
        if (buf[i] < '0' || buf[i] > '9') return HFT_HEAD_MALFORMED;
        status = status * 10 + (buf[i] - '0');
    }
    if (buf[12] != ' ' && buf[12] != '\r') return HFT_HEAD_MALFORMED;
    if (status < 100 || status > 599) return HFT_HEAD_MALFORMED; /* RFC 9110 15: not a status code */
    out->status = status;
    if (buf[7] == '0') out->close = true; /* HTTP/1.0 closes unless told otherwise */
    const char *first = memmem(buf, out->head_len, "\r\n", 2) + 2;
    return parse_headers(first, end - 2, out) == HFT_HEAD_DONE ? HFT_HEAD_DONE : HFT_HEAD_MALFORMED;
}

int hft_parse_request_head(const char *buf, size_t len, size_t max_head, hft_head *out) {
    const char *end;
    int rc = find_head(buf, len, max_head, out, &end);
    if (rc != HFT_HEAD_DONE) return rc;
    const char *first = memmem(buf, out->head_len, "\r\n", 2) + 2;
    if (memmem(buf, (size_t)(first - buf), " HTTP/1.", 8) == NULL) return HFT_HEAD_MALFORMED;
    return parse_headers(first, end - 2, out);
}

void hft_reply_start(hft_reply *r) { memset(r, 0, sizeof *r); }

int hft_reply_absorb(hft_reply *r, const char *buf, size_t cap, size_t n) {
    r->fill += n;
    if (!r->head_done) {
        int rc = hft_parse_response_head(buf, r->fill, cap, &r->head);
        if (rc == HFT_HEAD_INCOMPLETE) return r->fill < cap ? HFT_REPLY_PENDING : HFT_REPLY_MALFORMED;
        if (rc == HFT_HEAD_MALFORMED) return HFT_REPLY_MALFORMED;
        r->head_done = true;
        r->body_got = r->fill - r->head.head_len;
    } else {
        r->body_got += n;
    }
    if (r->body_got > r->head.content_length) return HFT_REPLY_MALFORMED; /* bytes nobody asked for */
    if (r->body_got < r->head.content_length) {
        r->fill = 0; /* the head is parsed: the body is only counted, so reuse the buffer */
        return HFT_REPLY_PENDING;
    }
    return HFT_REPLY_DONE;
}

size_t hft_canned_response(char *buf, size_t cap, size_t total) {
    static const char fmt[] = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %5zu\r\n\r\n";
    char head[128];
    int h = snprintf(head, sizeof head, fmt, (size_t)0);
    if (h < 0 || total > cap || total < (size_t)h + 2) return 0;
    size_t body = total - (size_t)h;
    snprintf(buf, cap, fmt, body);
    memset(buf + h, ' ', body);
    buf[h] = '{';
    buf[total - 1] = '}';
    return total;
}
