/* hb_url.c - see hb_url.h. */
#include "hb_url.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *text, const char *why)
{
    (void)snprintf(err, errlen, "--url %s (got \"%s\"); pass e.g. --url http://127.0.0.1:8080", why, text);
    return -1;
}

int hb_url_parse(const char *text, hb_url *out, char *err, size_t errlen)
{
    static const char scheme[] = "http://";
    memset(out, 0, sizeof(*out));
    if (strncmp(text, scheme, sizeof(scheme) - 1) != 0) {
        return fail(err, errlen, text, "must start with http://");
    }
    const char *host = text + sizeof(scheme) - 1;
    size_t host_len = strcspn(host, ":/");
    if (host_len == 0 || host_len >= sizeof(out->host)) {
        return fail(err, errlen, text, "needs a host");
    }
    memcpy(out->host, host, host_len);
    out->host[host_len] = '\0';

    const char *rest = host + host_len;
    unsigned long port = 80;
    if (*rest == ':') {
        char *end = NULL;
        if (rest[1] < '0' || rest[1] > '9') {
            return fail(err, errlen, text, "needs a port number after ':'");
        }
        port = strtoul(rest + 1, &end, 10);
        if (port < 1 || port > 65535 || (*end != '\0' && *end != '/')) {
            return fail(err, errlen, text, "needs a port in 1..65535");
        }
        rest = end;
    }
    out->port = (uint16_t)port;

    /* The base path, without a trailing slash; orders go to <path>/order. */
    size_t path_len = strlen(rest);
    while (path_len > 0 && rest[path_len - 1] == '/') {
        path_len--;
    }
    if (path_len + sizeof("/order") > sizeof(out->order_path) || strpbrk(rest, "?# ") != NULL) {
        return fail(err, errlen, text, "has a path that is too long or has a query");
    }
    memcpy(out->order_path, rest, path_len);
    memcpy(out->order_path + path_len, "/order", sizeof("/order"));

    const char *ip = strcmp(out->host, "localhost") == 0 ? "127.0.0.1" : out->host;
    out->addr.sin_family = AF_INET;
    out->addr.sin_port = htons(out->port);
    if (inet_pton(AF_INET, ip, &out->addr.sin_addr) != 1) {
        return fail(err, errlen, text, "host must be an IPv4 address or localhost");
    }
    (void)snprintf(out->hostport, sizeof(out->hostport), "%s:%u", out->host, (unsigned)out->port);
    int n = snprintf(out->order_url, sizeof(out->order_url), "http://%s%s", out->hostport, out->order_path);
    if (n < 0 || (size_t)n >= sizeof(out->order_url)) {
        return fail(err, errlen, text, "is too long");
    }
    return 0;
}
