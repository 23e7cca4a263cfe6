/*
 * bin/hft-linkem: a user-space link emulator (this kernel has no netem). Bridges two
 * interfaces frame by frame, adding one-way delay, jitter and loss in both directions;
 * on SIGINT/SIGTERM writes what it did (frames, losses, the delay it applied as a
 * distribution) as JSON to --stats. README.md says why it is built this way.
 *
 *   hft-linkem --a IF --b IF [--delay-us D] [--jitter-us J] [--loss-pct P] [--seed N]
 *              [--stats PATH] [--spin-us S] [--busy]
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lk_link.h"

#define LK_VERSION "0.1.0"

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig) {
    (void)sig;
    stop_requested = 1;
}

typedef struct lk_args {
    const char *if_a, *if_b, *stats;
    double delay_us, jitter_us, loss_pct, spin_us;
    unsigned long long seed;
    int busy;
} lk_args;

static void usage(FILE *out) {
    fprintf(out,
            "usage: hft-linkem --a IF --b IF [options]\n"
            "  --a IF, --b IF    the two interfaces to bridge (in this network namespace)\n"
            "  --delay-us D      one-way delay each way, microseconds (default 0)\n"
            "  --jitter-us J     uniform jitter +-J around D, J <= D (default 0)\n"
            "  --loss-pct P      each frame lost with probability P %% (default 0)\n"
            "  --seed N          seed of the jitter and loss stream (default 1)\n"
            "  --stats PATH      write the JSON stats there at exit (default stdout)\n"
            "  --spin-us S       sleep until S us before a frame is due, then spin (default 0):\n"
            "                    timer wake-ups come late, on a VM tens of us\n"
            "  --busy            always spin, never sleep\n");
}

static int number(const char *flag, const char *v, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (*v == '\0' || *end != '\0' || errno || !(x >= lo && x <= hi)) {
        fprintf(stderr, "hft-linkem: %s must be a number %g..%g (got \"%s\"); pass e.g. %s %g\n", flag, lo, hi, v,
                flag, lo);
        return -1;
    }
    *out = x;
    return 0;
}

static int parse(lk_args *a, int argc, char **argv) {
    *a = (lk_args){.seed = 1};
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i];
        if (strcmp(f, "--help") == 0 || strcmp(f, "-h") == 0) {
            usage(stdout);
            exit(0);
        }
        if (strcmp(f, "--busy") == 0) {
            a->busy = 1;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "hft-linkem: %s needs a value (or is unknown); see hft-linkem --help\n", f);
            return -1;
        }
        const char *v = argv[++i];
        double seed;
        if (strcmp(f, "--a") == 0) a->if_a = v;
        else if (strcmp(f, "--b") == 0) a->if_b = v;
        else if (strcmp(f, "--stats") == 0) a->stats = v;
        else if (strcmp(f, "--delay-us") == 0) { if (number(f, v, 0, 1e7, &a->delay_us)) return -1; }
        else if (strcmp(f, "--jitter-us") == 0) { if (number(f, v, 0, 1e7, &a->jitter_us)) return -1; }
        else if (strcmp(f, "--loss-pct") == 0) { if (number(f, v, 0, 100, &a->loss_pct)) return -1; }
        else if (strcmp(f, "--spin-us") == 0) { if (number(f, v, 0, 1e6, &a->spin_us)) return -1; }
        else if (strcmp(f, "--seed") == 0) {
            if (number(f, v, 0, 9007199254740992.0, &seed)) return -1;
            a->seed = (unsigned long long)seed;
        } else {
            fprintf(stderr, "hft-linkem: unknown flag %s; see hft-linkem --help\n", f);
            return -1;
        }
    }
    if (a->if_a == NULL || a->if_b == NULL) {
        fprintf(stderr, "hft-linkem: --a IF and --b IF are required; pass the two interfaces to bridge\n");
        return -1;
    }
    if (a->jitter_us > a->delay_us) {
        fprintf(stderr, "hft-linkem: --jitter-us %g exceeds --delay-us %g; pass a jitter <= the delay\n",
                a->jitter_us, a->delay_us);
        return -1;
    }
    return 0;
}

static double us(int64_t ns) { return (double)ns / 1e3; }

static void write_hist(FILE *out, const char *name, const struct hdr_histogram *h, int with_min) {
    if (h->total_count == 0) {
        fprintf(out, "\"%s\": null", name);
        return;
    }
    fprintf(out, "\"%s\": {", name);
    if (with_min) fprintf(out, "\"min\": %.3f, \"mean\": %.3f, ", us(hdr_min(h)), hdr_mean(h) / 1e3);
    fprintf(out, "\"p50\": %.3f, \"p90\": %.3f, \"p99\": %.3f, \"p999\": %.3f, \"max\": %.3f}",
            us(hdr_value_at_percentile(h, 50)), us(hdr_value_at_percentile(h, 90)),
            us(hdr_value_at_percentile(h, 99)), us(hdr_value_at_percentile(h, 99.9)), us(hdr_max(h)));
}

static void write_stats(FILE *out, const lk_args *a, const lk_link *l) {
    fprintf(out,
            "{\"tool\": \"hft-linkem\", \"version\": \"%s\", \"unit\": \"us\",\n"
            " \"config\": {\"a\": \"%s\", \"b\": \"%s\", \"delay_us\": %g, \"jitter_us\": %g, \"loss_pct\": %g, "
            "\"seed\": %llu, \"wait\": \"%s\", \"spin_us\": %g}",
            LK_VERSION, a->if_a, a->if_b, a->delay_us, a->jitter_us, a->loss_pct, a->seed, a->busy ? "busy" : "ppoll",
            a->spin_us);
    for (int i = 0; i < 2; i++) {
        const lk_direction *d = &l->dir[i];
        fprintf(out,
                ",\n \"%s\": {\"frames\": %llu, \"bytes\": %llu, \"lost\": %llu, \"ring_full\": %llu, "
                "\"send_errors\": %llu, \"max_queued\": %zu, ",
                d->name, (unsigned long long)d->frames, (unsigned long long)d->bytes, (unsigned long long)d->lost,
                (unsigned long long)d->ring_full, (unsigned long long)d->send_errors, d->max_queued);
        write_hist(out, "delay_us", d->delay, 1);
        fputs(", ", out);
        write_hist(out, "lateness_us", d->lateness, 0);
        fputs("}", out);
    }
    fputs("}\n", out);
}

int main(int argc, char **argv) {
    lk_args a;
    if (parse(&a, argc, argv) != 0) return 2;
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    FILE *out = stdout;
    if (a.stats && (out = fopen(a.stats, "w")) == NULL) {
        fprintf(stderr, "hft-linkem: cannot write --stats %s (%s); pass a writable path\n", a.stats, strerror(errno));
        return 2;
    }
    lk_link link;
    char err[512];
    if (lk_link_open(&link, a.if_a, a.if_b, (int64_t)(a.delay_us * 1e3), (int64_t)(a.jitter_us * 1e3),
                     a.loss_pct / 100.0, a.seed, a.busy, (int64_t)(a.spin_us * 1e3), err, sizeof err) != 0) {
        fprintf(stderr, "hft-linkem: %s\n", err);
        lk_link_close(&link);
        return 2;
    }
    fprintf(stderr, "hft-linkem ready: %s <-> %s, delay %g us, jitter %g us, loss %g %%\n", a.if_a, a.if_b,
            a.delay_us, a.jitter_us, a.loss_pct);
    int rc = lk_link_run(&link, &stop_requested, err, sizeof err);
    if (rc != 0) fprintf(stderr, "hft-linkem: %s\n", err);
    write_stats(out, &a, &link);
    if (out != stdout && fclose(out) != 0) {
        fprintf(stderr, "hft-linkem: writing --stats %s failed (%s)\n", a.stats, strerror(errno));
        rc = -1;
    }
    lk_link_close(&link);
    return rc == 0 ? 0 : 1;
}
