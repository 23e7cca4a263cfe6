// curl_handles.hpp - RAII owners of the libcurl handles: each is released exactly once,
// also on an early return, and cannot be copied.
#pragma once

#include <curl/curl.h>

#include <memory>
#include <stdexcept>
#include <string>

namespace hb {

struct EasyDeleter {
    void operator()(CURL *e) const noexcept { curl_easy_cleanup(e); }
};
struct MultiDeleter {
    void operator()(CURLM *m) const noexcept { curl_multi_cleanup(m); }
};
struct UrlDeleter {
    void operator()(CURLU *u) const noexcept { curl_url_cleanup(u); }
};
struct SlistDeleter {
    void operator()(curl_slist *l) const noexcept { curl_slist_free_all(l); }
};

using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;
using MultiHandle = std::unique_ptr<CURLM, MultiDeleter>;
using HeaderList = std::unique_ptr<curl_slist, SlistDeleter>;
using UrlHandle = std::unique_ptr<CURLU, UrlDeleter>;

inline EasyHandle make_easy()
{
    EasyHandle e(curl_easy_init());
    if (!e) {
        throw std::runtime_error("curl_easy_init failed");
    }
    return e;
}

inline MultiHandle make_multi()
{
    MultiHandle m(curl_multi_init());
    if (!m) {
        throw std::runtime_error("curl_multi_init failed");
    }
    return m;
}

/** A parsed URL, so libcurl copies it per transfer instead of parsing the text again. */
inline UrlHandle make_url(const char *text)
{
    UrlHandle u(curl_url());
    if (!u || curl_url_set(u.get(), CURLUPART_URL, text, 0) != CURLUE_OK) {
        throw std::runtime_error(std::string("cannot parse URL ") + text);
    }
    return u;
}

/** curl_global_init for the life of the process's run; cleanup on scope exit. */
class CurlGlobal {
public:
    CurlGlobal()
    {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
            throw std::runtime_error("curl_global_init failed");
        }
    }
    ~CurlGlobal() { curl_global_cleanup(); }
    CurlGlobal(const CurlGlobal &) = delete;
    CurlGlobal &operator=(const CurlGlobal &) = delete;
};

/** Set an option, turning a failure into an exception naming it (setup only, never per request). */
template <typename T> void setopt(CURL *e, CURLoption opt, T value, const char *name)
{
    if (curl_easy_setopt(e, opt, value) != CURLE_OK) {
        throw std::runtime_error(std::string("curl_easy_setopt ") + name + " failed");
    }
}

}  // namespace hb
