/* hb_signal.c - see hb_signal.h. */
#include "hb_signal.h"

#include <signal.h>
#include <stdatomic.h>
#include <string.h>

/* Lock-free atomics are async-signal-safe; workers read it with a relaxed load. */
static atomic_int stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    atomic_store_explicit(&stop_flag, 1, memory_order_relaxed);
}

int hb_signal_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    (void)sigemptyset(&sa.sa_mask);
    if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0) {
        return -1;
    }
    /* A server that dies mid-run must be counted, not kill the client. */
    sa.sa_handler = SIG_IGN;
    return sigaction(SIGPIPE, &sa, NULL);
}

bool hb_signal_stop_requested(void) { return atomic_load_explicit(&stop_flag, memory_order_relaxed) != 0; }

void hb_signal_request_stop(void) { atomic_store_explicit(&stop_flag, 1, memory_order_relaxed); }
