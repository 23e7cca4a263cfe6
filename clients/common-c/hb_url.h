/**
 * hb_url.h - parse the --url of a client: "http://HOST[:PORT][/PATH]".
 *
 * HOST is an IPv4 address or "localhost" (the benchmark is loopback only), so the
 * HFT client's raw sockets and the connect probe need no resolver.
 */
#ifndef HB_URL_H
#define HB_URL_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HB_URL_MAX 512

typedef struct hb_url {
    char host[64];                 /* as written: "127.0.0.1" or "localhost" */
    uint16_t port;                 /* 80 when absent */
    char hostport[80];             /* "HOST:PORT", for messages and the Host header */
    char order_path[HB_URL_MAX];   /* base path + "/order", e.g. "/order" */
    char order_url[HB_URL_MAX];    /* "http://HOST:PORT/order", for libcurl */
    struct sockaddr_in addr;       /* resolved IPv4 address and port */
} hb_url;

/**
 * @return 0, or -1 with err = "<problem>; <fix>" naming the --url value.
 */
int hb_url_parse(const char *text, hb_url *out, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
