// connection.hpp - one keep-alive connection of the C++ client: an easy handle with its
// pre-built headers and pre-allocated request buffer, and the times of the
// order in flight. Nothing here allocates per request.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "curl_handles.hpp"

extern "C" {
#include "hb_args.h"
#include "hb_order.h"
#include "hb_stats.h"
}

namespace hb {

class Connection {
public:
    Connection(const hb_config &cfg, std::size_t index);
    Connection(const Connection &) = delete;
    Connection &operator=(const Connection &) = delete;

    /** Fill the body with order k (timestamp now) and stamp the times; the worker adds it to its multi. */
    void prepare(hb_ts_cache &ts, std::uint64_t k, std::uint64_t intended_ns);

    /** -1 for HTTP 200, else the hb_error_kind of the finished transfer. */
    int outcome(CURLcode result) const;

    CURL *easy() const { return easy_.get(); }
    std::size_t index() const { return index_; }
    bool measured() const { return measured_; }
    std::uint64_t intended_ns() const { return intended_ns_; }
    std::uint64_t sent_ns() const { return sent_ns_; }

private:
    static std::size_t on_data(char *data, std::size_t size, std::size_t nmemb, void *self);

    const hb_config &cfg_;
    std::size_t index_;                           // position in its worker, for the idle stack
    UrlHandle url_;                               // the order URL, parsed once
    EasyHandle easy_;                             // reused: libcurl keeps the connection alive
    HeaderList headers_;                          // Content-Type, and no Accept:
    std::array<char, HB_ORDER_BODY_MAX> body_{};  // CURLOPT_POSTFIELDS points here
    std::uint64_t intended_ns_ = 0;               // open loop: scheduled send; closed: = sent_ns_
    std::uint64_t sent_ns_ = 0;
    bool measured_ = false;                       // warm-up orders are sent, not recorded
};

}  // namespace hb
