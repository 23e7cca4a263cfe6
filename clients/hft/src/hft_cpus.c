/* hft_cpus.c - CPU lists (see hft_cpus.h). */
#include "hft_cpus.h"

#include <ctype.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(char *err, size_t errlen, const char *text, const char *why) {
    snprintf(err, errlen, "--cpus must be a CPU list like 0-3,6 (got \"%s\": %s); pass e.g. --cpus 1", text, why);
    return -1;
}

static bool read_num(const char **p, long *out) {
    if (!isdigit((unsigned char)**p)) return false;
    char *end;
    *out = strtol(*p, &end, 10);
    *p = end;
    return true;
}

int hft_cpus_parse(const char *text, hft_cpus *out, char *err, size_t errlen) {
    bool seen[HFT_MAX_CPUS] = {false};
    out->n = 0;
    const char *p = text;
    if (*p == '\0') return fail(err, errlen, text, "empty");
    for (;;) {
        long lo, hi;
        if (!read_num(&p, &lo)) return fail(err, errlen, text, "expected a CPU number");
        hi = lo;
        if (*p == '-') {
            p++;
            if (!read_num(&p, &hi)) return fail(err, errlen, text, "expected the end of a range");
        }
        if (lo > hi) return fail(err, errlen, text, "range runs backwards");
        if (hi >= HFT_MAX_CPUS) return fail(err, errlen, text, "CPU number too large");
        for (long c = lo; c <= hi; c++) {
            if (seen[c]) return fail(err, errlen, text, "a CPU is listed twice");
            seen[c] = true;
            out->cpu[out->n++] = (int)c;
        }
        if (*p == '\0') return 0;
        if (*p != ',') return fail(err, errlen, text, "unexpected character");
        p++;
    }
}

int hft_cpus_default(hft_cpus *out) {
    cpu_set_t set;
    out->n = 0;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    for (int c = HFT_MAX_CPUS - 1; c >= 0; c--)
        if (c < CPU_SETSIZE && CPU_ISSET(c, &set)) out->cpu[out->n++] = c;
    return out->n > 0 ? 0 : -1;
}

void hft_cpus_format(const hft_cpus *c, char *buf, size_t cap) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < c->n && used < cap; i++) {
        int n = snprintf(buf + used, cap - used, i ? ",%d" : "%d", c->cpu[i]);
        if (n < 0) break;
        used += (size_t)n;
    }
}

int hft_cpus_allowed(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
    return (int)sysconf(_SC_NPROCESSORS_ONLN);
}
