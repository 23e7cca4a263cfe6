/* hb_args.c - see hb_args.h. */
#include "hb_args.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void hb_config_defaults(hb_config *cfg)
{
    char err[HB_ERR_LEN];
    memset(cfg, 0, sizeof(*cfg));
    (void)snprintf(cfg->url_text, sizeof(cfg->url_text), "%s", "http://127.0.0.1:8080");
    (void)hb_url_parse(cfg->url_text, &cfg->url, err, sizeof(err));
    cfg->orders = 1000;
    cfg->connections = 10;
    cfg->warmup = 100;
    cfg->timeout_ms = 1000;
    (void)snprintf(cfg->scenario, sizeof(cfg->scenario), "%s", "adhoc");
    cfg->seed = 1;
}

/* Unsigned decimal integer, digits only (strtoull alone would accept "-5" and " 7"). */
static int parse_u64(const char *s, uint64_t *out)
{
    if (*s < '0' || *s > '9') {
        return -1;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0') {
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

/* Positive finite decimal number. */
static int parse_positive(const char *s, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno != 0 || !isfinite(v) || v <= 0.0) {
        return -1;
    }
    *out = v;
    return 0;
}

static int bad(char *err, size_t errlen, const char *flag, const char *want, const char *got,
               const char *example)
{
    (void)snprintf(err, errlen, "%s must be %s (got \"%s\"); pass e.g. %s %s", flag, want, got, flag,
                   example);
    return HB_ARGS_ERROR;
}

enum { F_URL, F_ORDERS, F_DURATION, F_CONNECTIONS, F_WARMUP, F_RATE, F_TIMEOUT, F_SCENARIO, F_SEED,
       F_OUTPUT, F_HELP, F_COUNT };

static const char *const FLAG_NAMES[F_COUNT] = {
    "--url", "--orders", "--duration", "--connections", "--warmup", "--rate",
    "--timeout-ms", "--scenario", "--seed", "--output", "--help",
};

/* Upper bounds keep a typo from allocating the machine away; far above any scenario. */
#define MAX_CONNECTIONS 100000
#define MAX_ORDERS (UINT64_C(1) << 40)

static int apply_flag(hb_config *cfg, int flag, const char *v, char *err, size_t errlen)
{
    const char *name = FLAG_NAMES[flag];
    uint64_t u = 0;
    switch (flag) {
    case F_URL:
        if (strlen(v) >= sizeof(cfg->url_text)) {
            return bad(err, errlen, name, "shorter than 512 characters", v, "http://127.0.0.1:8080");
        }
        if (hb_url_parse(v, &cfg->url, err, errlen) != 0) {
            return HB_ARGS_ERROR;
        }
        (void)snprintf(cfg->url_text, sizeof(cfg->url_text), "%s", v);
        return HB_ARGS_OK;
    case F_ORDERS:
        if (parse_u64(v, &u) != 0 || u < 1 || u > MAX_ORDERS) {
            return bad(err, errlen, name, "an integer >= 1", v, "1000");
        }
        cfg->orders = u;
        return HB_ARGS_OK;
    case F_DURATION:
        if (parse_positive(v, &cfg->duration_s) != 0 || cfg->duration_s > 1e6) {
            return bad(err, errlen, name, "a number of seconds > 0", v, "10");
        }
        return HB_ARGS_OK;
    case F_CONNECTIONS:
        if (parse_u64(v, &u) != 0 || u < 1 || u > MAX_CONNECTIONS) {
            return bad(err, errlen, name, "an integer >= 1", v, "10");
        }
        cfg->connections = (int)u;
        return HB_ARGS_OK;
    case F_WARMUP:
        if (parse_u64(v, &u) != 0 || u > MAX_ORDERS) {
            return bad(err, errlen, name, "an integer >= 0", v, "100");
        }
        cfg->warmup = u;
        return HB_ARGS_OK;
    case F_RATE:
        if (parse_positive(v, &cfg->rate) != 0 || cfg->rate > 1e9) {
            return bad(err, errlen, name, "a number of orders/s > 0", v, "5000");
        }
        return HB_ARGS_OK;
    case F_TIMEOUT:
        if (parse_u64(v, &u) != 0 || u < 1 || u > 3600000) {
            return bad(err, errlen, name, "an integer number of milliseconds >= 1", v, "1000");
        }
        cfg->timeout_ms = (long)u;
        return HB_ARGS_OK;
    case F_SCENARIO:
        if (*v == '\0' || strlen(v) >= sizeof(cfg->scenario)) {
            return bad(err, errlen, name, "a non-empty label under 128 characters", v, "adhoc");
        }
        (void)snprintf(cfg->scenario, sizeof(cfg->scenario), "%s", v);
        return HB_ARGS_OK;
    case F_SEED:
        if (parse_u64(v, &u) != 0) {
            return bad(err, errlen, name, "an integer in 0..18446744073709551615", v, "1");
        }
        cfg->seed = u;
        return HB_ARGS_OK;
    case F_OUTPUT:
        if (*v == '\0' || strlen(v) >= sizeof(cfg->output)) {
            return bad(err, errlen, name, "a file path", v, "result.json");
        }
        (void)snprintf(cfg->output, sizeof(cfg->output), "%s", v);
        return HB_ARGS_OK;
    default:
        return HB_ARGS_ERROR;
    }
}

/* Does arg name the flag `name`, as "--name" or "--name=value"? Sets *inline_value. */
static bool matches(const char *arg, const char *name, const char **inline_value)
{
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0 || (arg[n] != '\0' && arg[n] != '=')) {
        return false;
    }
    *inline_value = arg[n] == '=' ? arg + n + 1 : NULL;
    return true;
}

/* The value of a flag: inline after '=', or the next argument. */
static const char *take_value(int argc, char *const argv[], int *i, const char *inline_value)
{
    if (inline_value != NULL) {
        return inline_value;
    }
    if (*i + 1 >= argc) {
        return NULL;
    }
    *i += 1;
    return argv[*i];
}

static int missing(char *err, size_t errlen, const char *flag, const char *prog)
{
    (void)snprintf(err, errlen, "%s needs a value; run %s --help for the flags", flag, prog);
    return HB_ARGS_ERROR;
}

static int parse_extra(const char *arg, int argc, char *const argv[], int *i, const char *prog,
                       const hb_extra_option *extra, size_t n_extra, char *err, size_t errlen)
{
    for (size_t e = 0; e < n_extra; e++) {
        const char *inline_value = NULL;
        if (!matches(arg, extra[e].name, &inline_value)) {
            continue;
        }
        const char *value = NULL;
        if (extra[e].takes_value) {
            value = take_value(argc, argv, i, inline_value);
            if (value == NULL) {
                return missing(err, errlen, extra[e].name, prog);
            }
        } else if (inline_value != NULL) {
            (void)snprintf(err, errlen, "%s takes no value (got \"%s\"); pass just %s", extra[e].name,
                           inline_value, extra[e].name);
            return HB_ARGS_ERROR;
        }
        return extra[e].apply(extra[e].ctx, value, err, errlen) == 0 ? HB_ARGS_OK : HB_ARGS_ERROR;
    }
    (void)snprintf(err, errlen, "unknown flag \"%s\"; run %s --help for the flags", arg, prog);
    return HB_ARGS_ERROR;
}

int hb_args_parse(hb_config *cfg, int argc, char *const argv[], const char *prog,
                  const hb_extra_option *extra, size_t n_extra, char *err, size_t errlen)
{
    bool seen_orders = false;
    bool seen_duration = false;
    hb_config_defaults(cfg);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int flag = F_COUNT;
        const char *inline_value = NULL;
        for (int f = 0; f < F_COUNT; f++) {
            if (matches(arg, FLAG_NAMES[f], &inline_value)) {
                flag = f;
                break;
            }
        }
        if (flag == F_HELP) {
            return HB_ARGS_HELP;
        }
        if (flag == F_COUNT) {
            int rc = parse_extra(arg, argc, argv, &i, prog, extra, n_extra, err, errlen);
            if (rc != HB_ARGS_OK) {
                return rc;
            }
            continue;
        }
        const char *value = take_value(argc, argv, &i, inline_value);
        if (value == NULL) {
            return missing(err, errlen, FLAG_NAMES[flag], prog);
        }
        int rc = apply_flag(cfg, flag, value, err, errlen);
        if (rc != HB_ARGS_OK) {
            return rc;
        }
        seen_orders |= flag == F_ORDERS;
        seen_duration |= flag == F_DURATION;
    }
    if (seen_orders && seen_duration) {
        (void)snprintf(err, errlen, "--orders and --duration are mutually exclusive; pass only one of them");
        return HB_ARGS_ERROR;
    }
    if (seen_duration) {
        cfg->orders = 0;
    }
    return HB_ARGS_OK;
}

void hb_args_usage(FILE *out, const char *prog, const hb_extra_option *extra, size_t n_extra)
{
    (void)fprintf(out,
                  "usage: %s [flags]\n"
                  "Sends a stream of orders to POST URL/order and writes one result JSON.\n\n"
                  "  --url URL          server base URL (default http://127.0.0.1:8080)\n"
                  "  --orders N         measured orders after warm-up, N >= 1 (default 1000)\n"
                  "  --duration S       instead of --orders: measure for S seconds\n"
                  "  --connections C    concurrent keep-alive connections (default 10)\n"
                  "  --warmup W         orders sent first and not recorded (default 100)\n"
                  "  --rate R           open loop: total target orders/s; absent = closed loop\n"
                  "  --timeout-ms T     per-request timeout in ms (default 1000)\n"
                  "  --scenario NAME    label copied into the result (default adhoc)\n"
                  "  --seed N           seed of the order stream (default 1)\n"
                  "  --output PATH      result JSON, .hlog beside it (default stdout, no .hlog)\n"
                  "  --help             this text\n",
                  prog);
    for (size_t e = 0; e < n_extra; e++) {
        (void)fprintf(out, "  %s\n", extra[e].help);
    }
    (void)fprintf(out, "\nExit status: 0 all orders OK, 1 some failed, 2 could not run.\n");
}

void hb_args_parse_or_exit(hb_config *cfg, int argc, char *const argv[], const char *prog,
                           const hb_extra_option *extra, size_t n_extra)
{
    char err[HB_ERR_LEN];
    int rc = hb_args_parse(cfg, argc, argv, prog, extra, n_extra, err, sizeof(err));
    if (rc == HB_ARGS_HELP) {
        hb_args_usage(stdout, prog, extra, n_extra);
        exit(0);
    }
    if (rc != HB_ARGS_OK) {
        (void)fprintf(stderr, "%s: %s\n", prog, err);
        exit(2);
    }
}
