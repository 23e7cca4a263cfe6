/**
 * hft_duet.h - client-hft --duet-url: one client measures two servers side by side in time
 * (a base and a head build), so a change of the host's speed hits both alike.
 *
 * The closed-loop duet (no --rate, hft_duet_worker.h):
 * one worker thread (pinned, tuned and busy-polling as a normal one: hft_tune_thread,
 * hft_busy_poll_resolve) holds --connections C lanes (default 1), each a keep-alive connection
 * to --url (side "a") and one to --duet-url (side "b"); closed loop, one order in flight per
 * lane, so each server has up to C orders at once. Orders go in pairs: pair k sends order k
 * of the seeded stream (what a normal run sends as order k) to both sides on one lane, one
 * after the other; which side goes first is drawn per pair from a splitmix64 seeded with
 * --seed (hft_pair_rng), and an idle lane takes the next pair. --warmup W pairs are sent and
 * not recorded, then --orders N pairs or --duration S seconds of pairs are measured.
 *
 * The open-loop duet (--rate R, --connections C, hft_run_sides): the normal client's
 * schedule (order i intended at t0 + i / R, slot i % C, warm-up first, late never skipped,
 * one worker per --cpus CPU owning its slots), each slot holding one keep-alive connection
 * to each side; orders 2k and 2k+1 go one to each side, which first drawn per pair
 * (hft_order_side(--seed, i)), each on its slot's connection to that side. Both servers carry
 * R/2 orders/s at the same time, and every stretch of the schedule half each.
 *
 * Each side records into its own hb_stats and gets a complete result: side a at --output,
 * side b at --duet-output (each with its .hlog), extra.duet = {"role", "peer_url", "pairs",
 * "order", "seed"} (open loop: {"role", "peer_url", "orders", "order", "seed", "mode"}).
 * With --interval-s one collector closes both sides' intervals at the same tick
 * (hb_interval_log_start_peer): interval i of the two .hlog files covers the same span.
 *
 * Refused (exit 2, one stderr line): no --duet-output, the same server as --url, the same path as
 * --output, --duet-output without --duet-url.
 */
#ifndef HFT_DUET_H
#define HFT_DUET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hb_args.h"
#include "hft_app.h"

#define HFT_DUET_N_OPTIONS 2

/** The duet's flags, as the hb_extra_option table fills them. */
typedef struct hft_duet_flags {
    bool on;                   /* --duet-url was given: run a duet */
    char url_text[HB_URL_MAX]; /* --duet-url as given: side a's extra.duet.peer_url, messages */
    hb_url url;                /* --duet-url parsed: side b's server */
    char output[HB_PATH_MAX];  /* --duet-output: side b's result; "" when absent */
} hft_duet_flags;

/** Empty flags, and the two options (--duet-url, --duet-output) writing into d. */
void hft_duet_options(hft_duet_flags *d, hb_extra_option out[HFT_DUET_N_OPTIONS]);

/**
 * After parsing: the refusals above. connections_given says whether --connections was on
 * the command line; when it was not, a closed-loop duet sets cfg->connections to 1 (one
 * lane; an open-loop one keeps the common default).
 * @return 0, or -1 with err = "<problem>; <fix>".
 */
int hft_duet_resolve(hb_config *cfg, const hft_duet_flags *d, bool connections_given, char *err, size_t errlen);

/** True when argv holds --connections (as "--connections" or "--connections=C"). */
bool hft_duet_connections_given(int argc, char *const argv[]);

/** Side b's config: app's flags with --duet-url and --duet-output. */
void hft_duet_config_b(const hb_config *a, const hft_duet_flags *d, hb_config *b);

/**
 * The duet after its flags: probe both servers, run, write both results.
 * @return the exit status: 0 every measured order of both sides succeeded, 1 some failed
 * (both results written), 2 it could not run (one stderr line).
 */
int hft_duet_main(hft_app *app, const hft_duet_flags *d);

/* ---- which side goes first: a small seeded PRNG (splitmix64), no libc rand ---- */

typedef struct hft_pair_rng {
    uint64_t state;
} hft_pair_rng;

/** Seed from --seed (mixed with a constant, so seed 0 is as good as any). */
static inline void hft_pair_rng_init(hft_pair_rng *r, uint64_t seed) { r->state = seed ^ HFT_DUET_SEED_MIX; }

/** splitmix64's next value. */
static inline uint64_t hft_pair_rng_next(hft_pair_rng *r) {
    uint64_t z = (r->state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/** The next pair's order: true = side b first. */
static inline bool hft_pair_b_first(hft_pair_rng *r) { return (hft_pair_rng_next(r) >> 63) != 0; }

#endif
