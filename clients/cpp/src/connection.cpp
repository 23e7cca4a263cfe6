// connection.cpp - see connection.hpp; the same handle setup as clients/c/src/cc_conn.c.
#include "connection.hpp"

#include <ctime>
#include <stdexcept>

extern "C" {
#include "hb_clock.h"
}

namespace hb {

Connection::Connection(const hb_config &cfg, std::size_t index) : cfg_(cfg), index_(index), url_(make_url(cfg.url.order_url)), easy_(make_easy())
{
    // "Accept:" with no value removes libcurl's default. (No "Expect:" needed: libcurl 7.88 asks
    // for 100-continue only above 1 MiB.) Every entry here is scanned several times per order.
    for (const char *line : {"Content-Type: application/json", "Accept:"}) {
        curl_slist *next = curl_slist_append(headers_.get(), line);
        if (next == nullptr) {
            throw std::runtime_error("curl_slist_append failed");
        }
        (void)headers_.release();  // next now owns the list
        headers_.reset(next);
    }
    CURL *e = easy_.get();
    setopt(e, CURLOPT_CURLU, url_.get(), "CURLU");
    // never a proxy from the environment, and no getenv("no_proxy") per order
    setopt(e, CURLOPT_NOPROXY, "*", "NOPROXY");
    // the address never changes: no DNS cache pruning walk per order
    setopt(e, CURLOPT_DNS_CACHE_TIMEOUT, -1L, "DNS_CACHE_TIMEOUT");
    setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1), "HTTP_VERSION");
    setopt(e, CURLOPT_HTTPHEADER, headers_.get(), "HTTPHEADER");
    setopt(e, CURLOPT_POSTFIELDS, body_.data(), "POSTFIELDS");
    setopt(e, CURLOPT_POSTFIELDSIZE, 0L, "POSTFIELDSIZE");
    setopt(e, CURLOPT_WRITEFUNCTION, &Connection::on_data, "WRITEFUNCTION");
    setopt(e, CURLOPT_PRIVATE, this, "PRIVATE");
    setopt(e, CURLOPT_TCP_NODELAY, 1L, "TCP_NODELAY");
    setopt(e, CURLOPT_NOSIGNAL, 1L, "NOSIGNAL");  // threads: no SIGALRM timeouts
    setopt(e, CURLOPT_TIMEOUT_MS, cfg.timeout_ms, "TIMEOUT_MS");
    setopt(e, CURLOPT_CONNECTTIMEOUT_MS, cfg.timeout_ms, "CONNECTTIMEOUT_MS");
}

// Takes the answer body and drops it: the outcome needs the status code alone. (Without a
// write function libcurl would print the body to stdout.)
std::size_t Connection::on_data(char * /*data*/, std::size_t size, std::size_t nmemb, void * /*self*/)
{
    return size * nmemb;
}

void Connection::prepare(hb_ts_cache &ts, std::uint64_t k, std::uint64_t intended_ns)
{
    hb_order order;
    char stamp[HB_TS_LEN];
    timespec wall{};
    hb_order_make(cfg_.seed, k, &order);
    hb_wall_now(&wall);
    hb_ts_format(&ts, &wall, stamp);
    std::size_t len = hb_order_format(&order, stamp, body_.data(), body_.size());
    (void)curl_easy_setopt(easy_.get(), CURLOPT_POSTFIELDSIZE, static_cast<long>(len));
    measured_ = k >= cfg_.warmup;
    sent_ns_ = hb_now_ns();
    intended_ns_ = intended_ns == 0 ? sent_ns_ : intended_ns;
}

int Connection::outcome(CURLcode result) const
{
    switch (result) {
    case CURLE_OK: {
        long status = 0;
        (void)curl_easy_getinfo(easy_.get(), CURLINFO_RESPONSE_CODE, &status);
        return hb_error_kind_of_status(status);
    }
    case CURLE_OPERATION_TIMEDOUT:
        return HB_ERR_TIMEOUT;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
        return HB_ERR_CONNECT;
    default:  // reset mid-answer, empty reply, malformed response
        return HB_ERR_OTHER;
    }
}

}  // namespace hb
