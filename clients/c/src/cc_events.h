/**
 * cc_events.h - a worker's bridge between libcurl's socket API and its own epoll.
 *
 * libcurl tells the worker which sockets it waits on (CURLMOPT_SOCKETFUNCTION) and when
 * its next timeout is due (CURLMOPT_TIMERFUNCTION); the worker waits in its own epoll and
 * hands libcurl only the sockets that are ready (curl_multi_socket_action), instead of
 * curl_multi_perform walking every transfer and poll()ing each one on every wake-up.
 * The state lives in cc_worker (epoll_fd, timer_fd, fd_state, curl_due_ns).
 */
#ifndef CC_EVENTS_H
#define CC_EVENTS_H

#include <curl/curl.h>

#include "cc_worker.h"

/** Route w->multi's socket and timer callbacks to w. @return 0, or -1. */
int cc_events_attach(cc_worker *w);

/** Route easy's socket closes to w (the epoll forgets the socket). @return 0, or -1. */
int cc_events_attach_conn(cc_worker *w, CURL *easy);

/** Run libcurl's due timeouts: the transfers just added (due at once) and its own timeouts. */
void cc_events_run_due(cc_worker *w);

/**
 * Wait up to timeout_ms (less if libcurl has a timeout due sooner) for ready sockets or
 * the pacing timer; hand each ready socket to libcurl, then run its due timeouts.
 */
void cc_events_wait(cc_worker *w, int timeout_ms);

#endif
