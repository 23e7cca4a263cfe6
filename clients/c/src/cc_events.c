/* cc_events.c - see cc_events.h. */
#include "cc_events.h"

#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "hb_clock.h"

/* Ready sockets taken from the epoll per wait; more are simply taken by the next wait. */
#define MAX_EVENTS 64

/* fd_state bits. A socket libcurl stops waiting on (CURL_POLL_REMOVE: its connection
 * went back to the cache between two orders) stays registered, so the next order on it
 * costs no epoll_ctl; it is dropped only if it fires while unwanted or is closed. */
enum { CC_FD_IN = 1, CC_FD_OUT = 2, CC_FD_REGISTERED = 4, CC_FD_WANTED = 8 };

static int grow_fd_state(cc_worker *w, int fd)
{
    int cap = w->fd_cap == 0 ? 256 : w->fd_cap;
    while (cap <= fd) {
        cap *= 2;
    }
    uint8_t *grown = realloc(w->fd_state, (size_t)cap); /* only when a new socket has a higher fd */
    if (grown == NULL) {
        return -1;
    }
    memset(grown + w->fd_cap, 0, (size_t)(cap - w->fd_cap));
    w->fd_state = grown;
    w->fd_cap = cap;
    return 0;
}

/* CURLMOPT_SOCKETFUNCTION: libcurl says what it waits for on socket s. */
static int on_socket(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
    (void)easy;
    (void)socketp;
    cc_worker *w = userp;
    if (what == CURL_POLL_REMOVE) {
        if (s < w->fd_cap) {
            w->fd_state[s] &= (uint8_t)~CC_FD_WANTED;
        }
        return 0;
    }
    if (s >= w->fd_cap && grow_fd_state(w, s) != 0) {
        return -1;
    }
    uint8_t ev = (uint8_t)(what & (CURL_POLL_IN | CURL_POLL_OUT)); /* == CC_FD_IN | CC_FD_OUT */
    uint8_t st = w->fd_state[s];
    if ((st & CC_FD_REGISTERED) != 0 && (st & (CC_FD_IN | CC_FD_OUT)) == ev) {
        w->fd_state[s] = st | CC_FD_WANTED;
        return 0;
    }
    struct epoll_event e = {.events = ((ev & CC_FD_IN) != 0 ? EPOLLIN : 0u) | ((ev & CC_FD_OUT) != 0 ? EPOLLOUT : 0u),
                            .data.fd = s};
    int op = (st & CC_FD_REGISTERED) != 0 ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (epoll_ctl(w->epoll_fd, op, s, &e) != 0) { /* a stale record: try the other operation */
        op = op == EPOLL_CTL_ADD ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
        if (epoll_ctl(w->epoll_fd, op, s, &e) != 0) {
            return -1;
        }
    }
    w->fd_state[s] = (uint8_t)(CC_FD_REGISTERED | CC_FD_WANTED | ev);
    return 0;
}

/* CURLOPT_CLOSESOCKETFUNCTION: close() drops the socket from the epoll; forget it here too. */
static int on_close_socket(void *clientp, curl_socket_t s)
{
    cc_worker *w = clientp;
    if (s >= 0 && s < w->fd_cap) {
        w->fd_state[s] = 0;
    }
    return close(s);
}

/* CURLMOPT_TIMERFUNCTION: libcurl's next timeout (per-order timeouts, new transfers to start). */
static int on_timer(CURLM *multi, long timeout_ms, void *userp)
{
    (void)multi;
    cc_worker *w = userp;
    if (timeout_ms <= 0) { /* 0, the usual case (a transfer just added): due now, no clock read */
        w->curl_due_ns = timeout_ms < 0 ? 0 : 1;
        return 0;
    }
    w->curl_due_ns = hb_now_ns() + (uint64_t)timeout_ms * 1000000u;
    return 0;
}

int cc_events_attach(cc_worker *w)
{
    int bad = curl_multi_setopt(w->multi, CURLMOPT_SOCKETFUNCTION, on_socket) != CURLM_OK;
    bad |= curl_multi_setopt(w->multi, CURLMOPT_SOCKETDATA, w) != CURLM_OK;
    bad |= curl_multi_setopt(w->multi, CURLMOPT_TIMERFUNCTION, on_timer) != CURLM_OK;
    bad |= curl_multi_setopt(w->multi, CURLMOPT_TIMERDATA, w) != CURLM_OK;
    return bad ? -1 : 0;
}

int cc_events_attach_conn(cc_worker *w, CURL *easy)
{
    int bad = curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, on_close_socket) != CURLE_OK;
    bad |= curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, w) != CURLE_OK;
    return bad ? -1 : 0;
}

void cc_events_run_due(cc_worker *w)
{
    int running = 0;
    if (w->curl_due_ns == 1 || (w->curl_due_ns != 0 && w->curl_due_ns <= hb_now_ns())) {
        uint64_t before = w->curl_due_ns;
        (void)curl_multi_socket_action(w->multi, CURL_SOCKET_TIMEOUT, 0, &running);
        if (w->curl_due_ns == before) {
            /* libcurl 7.88 skips the timer callback when its timer tree empties, so a due
             * time already passed would stay here and the loop would spin on it: ask. */
            long ms = -1;
            (void)curl_multi_timeout(w->multi, &ms);
            (void)on_timer(w->multi, ms, w);
        }
    }
}

void cc_events_wait(cc_worker *w, int timeout_ms)
{
    if (w->curl_due_ns == 1) {
        timeout_ms = 0;
    } else if (w->curl_due_ns != 0) {
        uint64_t now = hb_now_ns();
        uint64_t left_ms = w->curl_due_ns <= now ? 0 : (w->curl_due_ns - now + 999999u) / 1000000u;
        timeout_ms = left_ms < (uint64_t)timeout_ms ? (int)left_ms : timeout_ms;
    }
    struct epoll_event evs[MAX_EVENTS];
    int n = epoll_wait(w->epoll_fd, evs, MAX_EVENTS, timeout_ms);
    int running = 0;
    for (int i = 0; i < n; i++) {
        int fd = evs[i].data.fd;
        uint32_t e = evs[i].events;
        if (fd == w->timer_fd) {
            uint64_t expirations = 0;
            (void)!read(w->timer_fd, &expirations, sizeof(expirations));
            continue;
        }
        if (fd < w->fd_cap && (w->fd_state[fd] & CC_FD_WANTED) == 0) {
            /* an idle connection in libcurl's cache (the server closed it): stop watching it;
             * libcurl checks a cached connection before it reuses it */
            (void)epoll_ctl(w->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
            w->fd_state[fd] = 0;
            continue;
        }
        int mask = (e & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0 ? CURL_CSELECT_IN : 0;
        mask |= (e & EPOLLOUT) != 0 ? CURL_CSELECT_OUT : 0;
        mask |= (e & EPOLLERR) != 0 ? CURL_CSELECT_ERR : 0;
        (void)curl_multi_socket_action(w->multi, fd, mask, &running);
    }
    cc_events_run_due(w);
}
