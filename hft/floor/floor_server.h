/**
 * floor_server.h - the floor's loopback echo server: for every request (an order
 * request, read whole by its Content-Length) it writes one canned 200 response of
 * response_bytes. One thread per connection waits in a blocking read(2), as a real
 * server waits in epoll: the floor includes the kernel's wake-up, nothing else.
 */
#ifndef FLOOR_SERVER_H
#define FLOOR_SERVER_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#define FLOOR_MAX_CONNS 1024
#define FLOOR_RESPONSE_MAX 65536

typedef struct floor_server {
    int lfd;                                /* listening socket on 127.0.0.1:port */
    struct sockaddr_in addr;                /* where it listens */
    char *response;                         /* the canned answer */
    size_t response_len;
    pthread_t acceptor;
    pthread_t conn_threads[FLOOR_MAX_CONNS];
    int conn_fds[FLOOR_MAX_CONNS];
    atomic_int n_conns;                     /* threads started (joined by floor_server_stop) */
} floor_server;

/**
 * Listen on bind_addr (NULL: 127.0.0.1 on a free port) and start accepting.
 * @return 0, or -1 with err = "<problem>; <fix>".
 */
int floor_server_start(floor_server *s, const struct sockaddr_in *bind_addr, size_t response_bytes, char *err,
                       size_t errlen);

/** Stop accepting, wait for every connection to close (the client closes them), free. */
void floor_server_stop(floor_server *s);

#endif
