/* hb_order.c - see hb_order.h; the stream is specified in clients/README.md. */
#include "hb_order.h"

#include <string.h>

#define GOLDEN UINT64_C(0x9E3779B97F4A7C15)

static const int SYMBOLS[8] = {2330, 2317, 2454, 2308, 2412, 2881, 2882, 1301};

uint64_t hb_order_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

void hb_order_make(uint64_t seed, uint64_t k, hb_order *out)
{
    uint64_t x = hb_order_mix(seed + (k + 1) * GOLDEN);
    uint64_t r = (x >> 32) % 100;
    out->x = x;
    out->symbol = SYMBOLS[x % 8];
    out->sell = (int)((x >> 8) & 1);
    out->price_cents = 10000 + 5 * ((int)((x >> 16) % 21) - 10);
    out->quantity = (int)((x >> 24) % 10 + 1) * 100;
    if (r < 5) {
        out->price_type = "market";
        out->time_in_force = "ioc";
    } else if (r < 75) {
        out->price_type = "limit";
        out->time_in_force = "rod";
    } else if (r < 95) {
        out->price_type = "limit";
        out->time_in_force = "ioc";
    } else {
        out->price_type = "limit";
        out->time_in_force = "fok";
    }
}

/* Append helpers: the caller guarantees room (HB_ORDER_BODY_MAX is far above the longest body). */
static char *put_str(char *p, const char *s)
{
    size_t n = strlen(s);
    /* The body is built piecewise and terminated once at the end. */
    memcpy(p, s, n); // NOLINT(bugprone-not-null-terminated-result)
    return p + n;
}

static char *put_uint(char *p, unsigned v)
{
    char tmp[12];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (n > 0) {
        *p++ = tmp[--n];
    }
    return p;
}

size_t hb_order_format(const hb_order *o, const char *timestamp, char *buf, size_t cap)
{
    if (cap < HB_ORDER_BODY_MAX) {
        return 0;
    }
    char *p = buf;
    p = put_str(p, o->sell ? "{\"buy_sell\":\"sell\",\"symbol\":" : "{\"buy_sell\":\"buy\",\"symbol\":");
    p = put_uint(p, (unsigned)o->symbol);
    p = put_str(p, ",\"price\":");
    p = put_uint(p, (unsigned)(o->price_cents / 100));
    *p++ = '.';
    *p++ = (char)('0' + o->price_cents % 100 / 10);
    *p++ = (char)('0' + o->price_cents % 10);
    p = put_str(p, ",\"quantity\":");
    p = put_uint(p, (unsigned)o->quantity);
    p = put_str(p, ",\"market_type\":\"common\",\"price_type\":\"");
    p = put_str(p, o->price_type);
    p = put_str(p, "\",\"time_in_force\":\"");
    p = put_str(p, o->time_in_force);
    p = put_str(p, "\",\"order_type\":\"stock\",\"user_def\":\"hftbench\",\"client_timestamp\":\"");
    memcpy(p, timestamp, HB_TS_LEN);
    p += HB_TS_LEN;
    *p++ = '"';
    *p++ = '}';
    *p = '\0';
    return (size_t)(p - buf);
}

void hb_ts_cache_init(hb_ts_cache *cache)
{
    cache->sec = (time_t)-1;
    memset(cache->text, 0, sizeof(cache->text));
}

void hb_ts_format(hb_ts_cache *cache, const struct timespec *wall, char *out)
{
    if (wall->tv_sec != cache->sec) {
        struct tm tm;
        (void)gmtime_r(&wall->tv_sec, &tm);
        (void)strftime(cache->text, sizeof(cache->text), "%Y-%m-%dT%H:%M:%S.000000Z", &tm);
        cache->sec = wall->tv_sec;
    }
    long us = wall->tv_nsec / 1000;
    for (int i = 25; i >= 20; i--) { /* the six digits between '.' (19) and 'Z' (26) */
        cache->text[i] = (char)('0' + us % 10);
        us /= 10;
    }
    memcpy(out, cache->text, HB_TS_LEN);
}
