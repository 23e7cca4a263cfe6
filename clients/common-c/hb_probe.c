/* hb_probe.c - see hb_probe.h. */
#include "hb_probe.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int fail(const hb_url *url, int error, char *err, size_t errlen)
{
    char reason[128];
    (void)snprintf(reason, sizeof(reason), "%s", error == ETIMEDOUT ? "no answer within 2 s" : strerror(error));
    reason[0] = (char)tolower((unsigned char)reason[0]); /* "(connection refused)", mid-sentence */
    (void)snprintf(err, errlen, "cannot connect to %s (%s); start bin/hft-server or pass --url", url->hostport,
                   reason);
    return -1;
}

int hb_probe(const hb_url *url, int timeout_ms, char *err, size_t errlen)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return fail(url, errno, err, errlen);
    }
    int error = 0;
    if (connect(fd, (const struct sockaddr *)&url->addr, sizeof(url->addr)) != 0) {
        error = errno;
        if (error == EINPROGRESS) {
            struct pollfd pfd = {.fd = fd, .events = POLLOUT, .revents = 0};
            int n = poll(&pfd, 1, timeout_ms);
            socklen_t len = sizeof(error);
            if (n == 0) {
                error = ETIMEDOUT;
            } else if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0) {
                error = errno;
            }
        }
    }
    (void)close(fd);
    return error == 0 ? 0 : fail(url, error, err, errlen);
}

void hb_probe_or_exit(const char *prog, const hb_url *url)
{
    char err[512];
    if (hb_probe(url, HB_PROBE_TIMEOUT_MS, err, sizeof(err)) != 0) {
        (void)fprintf(stderr, "%s: %s\n", prog, err);
        exit(2);
    }
}
