/**
 * hb_probe.h - before a run, check that the server accepts a TCP connection, so a
 * wrong --url is one clear line and exit 2 within 2 s, not a run of failures.
 */
#ifndef HB_PROBE_H
#define HB_PROBE_H

#include <stddef.h>

#include "hb_url.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HB_PROBE_TIMEOUT_MS 2000

/**
 * Connect to url->addr within timeout_ms, then close.
 * @return 0, or -1 with err = "cannot connect to HOST:PORT (<reason>); start bin/hft-server or pass --url".
 */
int hb_probe(const hb_url *url, int timeout_ms, char *err, size_t errlen);

/** hb_probe with HB_PROBE_TIMEOUT_MS; on failure print "PROG: <err>" and exit 2. */
void hb_probe_or_exit(const char *prog, const hb_url *url);

#ifdef __cplusplus
}
#endif
#endif
