/* hft_duet.c - the duet's flags, refusals and two results (see hft_duet.h). */
#include "hft_duet.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hb_probe.h"
#include "hb_url.h"
#include "hft_duet_worker.h"

static int opt_duet_url(void *ctx, const char *v, char *err, size_t errlen) {
    hft_duet_flags *d = ctx;
    char why[HB_ERR_LEN];
    if (strlen(v) >= sizeof d->url_text || hb_url_parse(v, &d->url, why, sizeof why) != 0) {
        snprintf(err, errlen,
                 "--duet-url must be http://HOST[:PORT][/PATH], HOST an IPv4 address or localhost (got \"%.200s\"); "
                 "pass e.g. --duet-url http://127.0.0.1:8081",
                 v);
        return -1;
    }
    snprintf(d->url_text, sizeof d->url_text, "%s", v);
    d->on = true;
    return 0;
}

static int opt_duet_output(void *ctx, const char *v, char *err, size_t errlen) {
    hft_duet_flags *d = ctx;
    if (*v == '\0' || strlen(v) >= sizeof d->output) {
        snprintf(err, errlen, "--duet-output must be a file path (got \"%.200s\"); pass e.g. --duet-output b.json", v);
        return -1;
    }
    snprintf(d->output, sizeof d->output, "%s", v);
    return 0;
}

void hft_duet_options(hft_duet_flags *d, hb_extra_option out[HFT_DUET_N_OPTIONS]) {
    memset(d, 0, sizeof *d);
    const hb_extra_option o[HFT_DUET_N_OPTIONS] = {
        {"--duet-url", true,
         "--duet-url URL     a duet: a second server; --connections lanes (default 1), each a connection to both "
         "servers sending the same orders in pairs, the first of each pair drawn at random; with --rate, --connections to each and the schedule's orders in pairs, one to "
         "each side, which first drawn at random (needs --duet-output)",
         opt_duet_url, d},
        {"--duet-output", true, "--duet-output PATH the --duet-url side's result JSON (its .hlog beside it)",
         opt_duet_output, d},
    };
    memcpy(out, o, sizeof o);
}

bool hft_duet_connections_given(int argc, char *const argv[]) {
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--connections") == 0 || strncmp(argv[i], "--connections=", 14) == 0) return true;
    return false;
}

int hft_duet_resolve(hb_config *cfg, const hft_duet_flags *d, bool connections_given, char *err, size_t errlen) {
    if (!d->on) {
        if (d->output[0] == '\0') return 0;
        snprintf(err, errlen, "--duet-output is side b's result of a duet; pass --duet-url URL too, or drop --duet-output");
        return -1;
    }
    if (!hb_config_open_loop(cfg) && !connections_given) cfg->connections = 1; /* the closed-loop duet: one lane */
    if (d->output[0] == '\0') {
        snprintf(err, errlen, "--duet-url needs --duet-output PATH for side b's result; pass e.g. --duet-output b.json");
        return -1;
    }
    if (strcmp(d->output, cfg->output) == 0) {
        snprintf(err, errlen, "--duet-output is the same file as --output (%.200s); pass another path", d->output);
        return -1;
    }
    if (d->url.addr.sin_addr.s_addr == cfg->url.addr.sin_addr.s_addr && d->url.port == cfg->url.port) {
        snprintf(err, errlen, "--duet-url is the server of --url (%s); pass the second server's URL, e.g. another port",
                 cfg->url.hostport);
        return -1;
    }
    return 0;
}

void hft_duet_config_b(const hb_config *a, const hft_duet_flags *d, hb_config *b) {
    *b = *a;
    snprintf(b->url_text, sizeof b->url_text, "%s", d->url_text);
    b->url = d->url;
    snprintf(b->output, sizeof b->output, "%s", d->output);
}

/* s as a JSON string literal into out (a URL: quotes and backslashes escaped, controls dropped). */
static void json_string(const char *s, char *out, size_t cap) {
    size_t n = 0;
    if (cap < 3) return;
    out[n++] = '"';
    for (; *s != '\0' && n + 3 < cap; s++) {
        if (*s == '"' || *s == '\\') out[n++] = '\\';
        if ((unsigned char)*s >= 0x20) out[n++] = *s;
    }
    out[n++] = '"';
    out[n] = '\0';
}

/* extra.duet of one side: closed loop, n = the measured pairs; open loop, n = its measured orders. */
static void duet_json(bool open_loop, const char *role, const char *peer_url, uint64_t n, uint64_t seed, char *out,
                      size_t cap) {
    char peer[2 * HB_URL_MAX + 3];
    json_string(peer_url, peer, sizeof peer);
    if (open_loop)
        snprintf(out, cap,
                 "{\"role\": \"%s\", \"peer_url\": %s, \"orders\": %" PRIu64
                 ", \"order\": \"orders in pairs, one to each side, which first drawn at random\", \"seed\": %" PRIu64 ", \"mode\": \"open\"}",
                 role, peer, n, seed);
    else
        snprintf(out, cap,
                 "{\"role\": \"%s\", \"peer_url\": %s, \"pairs\": %" PRIu64
                 ", \"order\": \"random within each pair\", \"seed\": %" PRIu64 "}",
                 role, peer, n, seed);
}

/* Probe a side's server before the run: exit-2 material, named by its flag. */
static int probe(const hft_app *app, const hb_url *url, const char *flag) {
    char err[HB_ERR_LEN];
    if (hb_probe(url, HB_PROBE_TIMEOUT_MS, err, sizeof err) == 0) return 0;
    char *tail = strstr(err, "pass --url");
    if (tail != NULL) snprintf(tail, sizeof err - (size_t)(tail - err), "pass %s", flag);
    fprintf(stderr, "%s: %s\n", app->prog, err);
    return 2;
}

int hft_duet_main(hft_app *app, const hft_duet_flags *d) {
    hb_config cfg_b;
    hft_duet_config_b(&app->cfg, d, &cfg_b);
    const hb_config *cfg[HFT_SIDES] = {&app->cfg, &cfg_b};
    if (probe(app, &app->cfg.url, "--url") != 0 || probe(app, &cfg_b.url, "--duet-url") != 0) return 2;
    hb_result_out out[HFT_SIDES];
    if (hft_app_open(app, cfg[HFT_SIDE_A], &out[HFT_SIDE_A]) != 0) return 2;
    if (hft_app_open(app, cfg[HFT_SIDE_B], &out[HFT_SIDE_B]) != 0) {
        hb_result_close(&out[HFT_SIDE_A]);
        return 2;
    }
    if (hft_app_start(app) != 0) {
        for (int side = 0; side < HFT_SIDES; side++) hb_result_close(&out[side]);
        return 2;
    }
    app->opt.interval_hlog = out[HFT_SIDE_A].hlog;
    char err[HB_ERR_LEN];
    hft_outcome res[HFT_SIDES];
    uint64_t pairs = 0;
    bool open_loop = hb_config_open_loop(&app->cfg);
    int rc = open_loop ? hft_run_sides(cfg, HFT_SIDES, &app->opt, out[HFT_SIDE_B].hlog, res, err, sizeof err)
                       : hft_duet_run(cfg, &app->opt, out[HFT_SIDE_B].hlog, res, &pairs, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", app->prog, err);
        for (int side = 0; side < HFT_SIDES; side++) hb_result_close(&out[side]);
        return 2;
    }
    hft_tuning_warn(&res[HFT_SIDE_A].tuning, app->prog);
    int code = 0;
    for (int side = 0; side < HFT_SIDES; side++) {
        char duet[3 * HB_URL_MAX];
        const hb_stats *st = &res[side].merged;
        duet_json(open_loop, side == HFT_SIDE_A ? "a" : "b", cfg[HFT_SIDES - 1 - side]->url_text,
                  open_loop ? st->ok + hb_stats_error_total(st) : pairs, app->cfg.seed, duet, sizeof duet);
        const hb_kv more[1] = {{"duet", duet}};
        rc = hft_app_write(app, cfg[side], &out[side], &res[side], more, 1);
        if (rc > code) code = rc;
        hft_outcome_close(&res[side]);
    }
    return code;
}
