/* lk_link.c - see lk_link.h. */
#include "lk_link.h"

#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define LK_HIST_MAX_NS 60000000000LL /* 60 s: a retransmitted frame still fits */
#define LK_VNET_HDR_LEN 10            /* struct virtio_net_hdr: not counted in bytes */

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int open_socket(const char *ifname, char *err, size_t errlen) {
    unsigned idx = if_nametoindex(ifname);
    if (idx == 0) {
        snprintf(err, errlen, "no interface %s in this network namespace (%s); pass an existing one to --a/--b",
                 ifname, strerror(errno));
        return -1;
    }
    int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ALL));
    if (fd < 0) {
        snprintf(err, errlen, "cannot open a packet socket (%s); run as root (CAP_NET_RAW)", strerror(errno));
        return -1;
    }
    int one = 1, rcvbuf = 8 << 20;
    struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = (int)idx};
    if (setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof one) != 0 ||
        setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one) != 0 ||
        setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&sll, sizeof sll) != 0) {
        snprintf(err, errlen, "cannot set up the packet socket on %s (%s); needs Linux >= 4.20 and root", ifname,
                 strerror(errno));
        close(fd);
        return -1;
    }
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf); /* best effort */
    return fd;
}

static int direction_init(lk_direction *d, const char *name, int64_t delay_ns, int64_t jitter_ns,
                          double loss_ratio, uint64_t seed, char *err, size_t errlen) {
    d->name = name;
    if (lk_model_init(&d->model, delay_ns, jitter_ns, loss_ratio, seed) != 0) {
        snprintf(err, errlen, "the link model needs 0 <= jitter <= delay and 0 <= loss <= 100 %%");
        return -1;
    }
    if (lk_ring_init(&d->ring, LK_RING_BYTES) != 0 || hdr_init(1, LK_HIST_MAX_NS, 3, &d->delay) != 0 ||
        hdr_init(1, LK_HIST_MAX_NS, 3, &d->lateness) != 0) {
        snprintf(err, errlen, "out of memory for the delay line and its histograms");
        return -1;
    }
    return 0;
}

int lk_link_open(lk_link *l, const char *if_a, const char *if_b, int64_t delay_ns, int64_t jitter_ns,
                 double loss_ratio, uint64_t seed, int busy, int64_t spin_ns, char *err, size_t errlen) {
    memset(l, 0, sizeof *l);
    l->busy = busy;
    l->spin_ns = spin_ns;
    l->dir[0].in_fd = l->dir[0].out_fd = l->dir[1].in_fd = l->dir[1].out_fd = -1;
    if (direction_init(&l->dir[0], "a_to_b", delay_ns, jitter_ns, loss_ratio, seed, err, errlen) != 0 ||
        direction_init(&l->dir[1], "b_to_a", delay_ns, jitter_ns, loss_ratio, seed + 1, err, errlen) != 0)
        return -1;
    int fd_a = open_socket(if_a, err, errlen);
    if (fd_a < 0) return -1;
    int fd_b = open_socket(if_b, err, errlen);
    if (fd_b < 0) {
        close(fd_a);
        return -1;
    }
    l->dir[0].in_fd = l->dir[1].out_fd = fd_a;
    l->dir[1].in_fd = l->dir[0].out_fd = fd_b;
    /* ppoll's wake-up on time: the default 50 us slack would be larger than the lan delay. */
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    return 0;
}

/* Read every frame waiting on d's input into its delay line. */
static int drain_input(lk_direction *d, unsigned char *scratch, char *err, size_t errlen) {
    for (;;) {
        ssize_t n = recv(d->in_fd, scratch, LK_FRAME_MAX, MSG_TRUNC);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
            if (errno == EINTR) continue;
            snprintf(err, errlen, "reading %s failed (%s)", d->name, strerror(errno));
            return -1;
        }
        int64_t arrival = now_ns();
        if (n > LK_FRAME_MAX) { /* larger than any GSO frame: cannot be forwarded whole */
            d->send_errors++;
            continue;
        }
        int64_t release = lk_model_release(&d->model, arrival);
        if (release == LK_DROP) {
            d->lost++;
        } else if (lk_ring_push(&d->ring, scratch, (uint32_t)n, arrival, release) != 0) {
            d->ring_full++;
        } else if (d->ring.count > d->max_queued) {
            d->max_queued = d->ring.count;
        }
    }
}

/* Send every frame of d whose time has come; returns the next release time or INT64_MAX. */
static int64_t release_due(lk_direction *d, int64_t now) {
    const lk_frame *f;
    while ((f = lk_ring_peek(&d->ring)) != NULL) {
        if (f->release_ns > now) return f->release_ns;
        /* Stamped before the write: on a veth the write also runs the receiver's stack,
         * which is the path's cost, not the emulator's. */
        int64_t sent = now_ns();
        ssize_t w = send(d->out_fd, f->data, f->len, 0);
        if (w == (ssize_t)f->len) {
            d->frames++;
            d->bytes += f->len > LK_VNET_HDR_LEN ? f->len - LK_VNET_HDR_LEN : 0;
            hdr_record_value(d->delay, sent - f->arrival_ns);
            hdr_record_value(d->lateness, sent > f->release_ns ? sent - f->release_ns : 0);
        } else {
            d->send_errors++;
        }
        lk_ring_pop(&d->ring);
        now = now_ns();
    }
    return INT64_MAX;
}

int lk_link_run(lk_link *l, volatile sig_atomic_t *stop, char *err, size_t errlen) {
    static unsigned char scratch[LK_FRAME_MAX];
    sigset_t blocked, during_wait;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGINT);
    sigaddset(&blocked, SIGTERM);
    sigprocmask(SIG_BLOCK, &blocked, &during_wait);
    sigdelset(&during_wait, SIGINT);
    sigdelset(&during_wait, SIGTERM);
    struct pollfd fds[2] = {{.fd = l->dir[0].in_fd, .events = POLLIN}, {.fd = l->dir[1].in_fd, .events = POLLIN}};
    int rc = 0;
    while (!*stop) {
        int64_t now = now_ns();
        int64_t next0 = release_due(&l->dir[0], now), next1 = release_due(&l->dir[1], now);
        int64_t next = next0 < next1 ? next0 : next1;
        struct timespec wait = {0, 0}, *timeout = &wait;
        if (!l->busy) {
            if (next == INT64_MAX) {
                timeout = NULL;
            } else {
                int64_t left = next - now_ns() - l->spin_ns;
                if (left > 0) wait = (struct timespec){left / 1000000000LL, left % 1000000000LL};
            }
        }
        int ready = ppoll(fds, 2, timeout, &during_wait);
        if (ready < 0) {
            if (errno == EINTR) continue;
            snprintf(err, errlen, "ppoll failed (%s)", strerror(errno));
            rc = -1;
            break;
        }
        for (int i = 0; i < 2 && ready > 0; i++) {
            if (fds[i].revents & (POLLERR | POLLNVAL)) {
                snprintf(err, errlen, "the interface of %s went away", l->dir[i].name);
                rc = -1;
                break;
            }
            if ((fds[i].revents & POLLIN) && drain_input(&l->dir[i], scratch, err, errlen) != 0) {
                rc = -1;
                break;
            }
        }
        if (rc != 0) break;
    }
    sigprocmask(SIG_UNBLOCK, &blocked, NULL);
    return rc;
}

void lk_link_close(lk_link *l) {
    for (int i = 0; i < 2; i++) {
        lk_direction *d = &l->dir[i];
        if (d->in_fd >= 0) close(d->in_fd);
        lk_ring_close(&d->ring);
        free(d->delay); /* this HdrHistogram_c allocates a histogram in one block */
        free(d->lateness);
        d->delay = d->lateness = NULL;
        d->in_fd = d->out_fd = -1;
    }
}
