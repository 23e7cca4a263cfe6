/* cc_conn.c - see cc_conn.h. */
#include "cc_conn.h"

#include <string.h>

#include "hb_clock.h"

/* Takes the answer body and drops it: the outcome needs the status code alone. (Without a
 * write function libcurl would print the body to stdout.) */
static size_t on_data(char *data, size_t size, size_t nmemb, void *userdata)
{
    (void)data;
    (void)userdata;
    return size * nmemb;
}

int cc_conn_init(cc_conn *c, const hb_config *cfg)
{
    memset(c, 0, sizeof(*c));
    c->easy = curl_easy_init();
    if (c->easy == NULL) {
        return -1;
    }
    /* "Accept:" with no value removes libcurl's default. (No "Expect:" needed: libcurl 7.88 asks
     * for 100-continue only above 1 MiB.) Every entry here is scanned several times per order. */
    const char *const lines[] = {"Content-Type: application/json", "Accept:"};
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        struct curl_slist *next = curl_slist_append(c->headers, lines[i]);
        if (next == NULL) {
            return -1;
        }
        c->headers = next;
    }
    CURL *e = c->easy;
    int bad = 0;
    /* Parsed once here: libcurl copies a CURLU per transfer instead of parsing the text again. */
    c->url = curl_url();
    if (c->url == NULL || curl_url_set(c->url, CURLUPART_URL, cfg->url.order_url, 0) != CURLUE_OK) {
        return -1;
    }
    bad |= curl_easy_setopt(e, CURLOPT_CURLU, c->url) != CURLE_OK;
    /* never a proxy from the environment, and no getenv("no_proxy") per order */
    bad |= curl_easy_setopt(e, CURLOPT_NOPROXY, "*") != CURLE_OK;
    /* the address never changes: no DNS cache pruning walk per order */
    bad |= curl_easy_setopt(e, CURLOPT_DNS_CACHE_TIMEOUT, -1L) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_HTTPHEADER, c->headers) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_POSTFIELDS, c->body) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, 0L) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_PRIVATE, c) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L) != CURLE_OK; /* threads: no SIGALRM timeouts */
    /* No CURLOPT_TIMEOUT_MS: it arms a libcurl timer per transfer (splay tree insert and removal,
     * timer callbacks, ~1k instructions per order); the worker sweeps its in-flight orders instead
     * (cc_worker.c, sweep_timeouts). */
    return bad ? -1 : 0;
}

void cc_conn_close(cc_conn *c)
{
    if (c->easy != NULL) {
        curl_easy_cleanup(c->easy);
    }
    curl_slist_free_all(c->headers);
    curl_url_cleanup(c->url);
    c->url = NULL;
    c->easy = NULL;
    c->headers = NULL;
}

void cc_conn_prepare(cc_conn *c, const hb_config *cfg, hb_ts_cache *ts, uint64_t k, uint64_t intended_ns,
                     uint64_t now_ns)
{
    hb_order order;
    char stamp[HB_TS_LEN];
    struct timespec wall;
    hb_order_make(cfg->seed, k, &order);
    hb_wall_now(&wall);
    hb_ts_format(ts, &wall, stamp);
    size_t len = hb_order_format(&order, stamp, c->body, sizeof(c->body));
    (void)curl_easy_setopt(c->easy, CURLOPT_POSTFIELDSIZE, (long)len);
    c->measured = k >= cfg->warmup;
    c->in_flight = true;
    c->sent_ns = now_ns;
    c->intended_ns = intended_ns == 0 ? c->sent_ns : intended_ns;
}

int cc_conn_outcome(const cc_conn *c, CURLcode result)
{
    long status = 0;
    switch (result) {
    case CURLE_OK:
        (void)curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &status);
        return hb_error_kind_of_status(status);
    case CURLE_OPERATION_TIMEDOUT:
        return HB_ERR_TIMEOUT;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
        return HB_ERR_CONNECT;
    default: /* reset mid-answer, empty reply, malformed response */
        return HB_ERR_OTHER;
    }
}
