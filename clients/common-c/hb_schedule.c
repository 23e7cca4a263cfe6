/* hb_schedule.c - see hb_schedule.h. */
#include "hb_schedule.h"

#include <math.h>
#include <sched.h>
#include <unistd.h>

int hb_usable_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) {
        return CPU_COUNT(&set);
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online < 1 ? 1 : (int)online;
}

int hb_schedule_workers(int connections, int usable_cpus)
{
    int n = usable_cpus < 1 ? 1 : usable_cpus;
    return connections < n ? (connections < 1 ? 1 : connections) : n;
}

uint64_t hb_schedule_total(const hb_config *cfg)
{
    if (cfg->duration_s <= 0) {
        return cfg->warmup + cfg->orders;
    }
    if (hb_config_open_loop(cfg)) { /* the schedule of S seconds at R orders/s */
        return cfg->warmup + (uint64_t)ceil(cfg->duration_s * cfg->rate);
    }
    return UINT64_MAX; /* closed loop: until the deadline */
}

int hb_schedule_share(int connections, int workers, int w, int *first_slot)
{
    int base = connections / workers;
    int extra = connections % workers;
    *first_slot = w * base + (w < extra ? w : extra);
    return base + (w < extra ? 1 : 0);
}

uint64_t hb_schedule_next(uint64_t i, uint64_t connections, uint64_t first_slot, uint64_t n_slots)
{
    uint64_t slot = i % connections;
    if (slot + 1 < first_slot + n_slots) {
        return i + 1;
    }
    return i - slot + connections + first_slot;
}

uint64_t hb_schedule_intended_ns(uint64_t t0_ns, uint64_t i, double rate)
{
    return t0_ns + (uint64_t)((double)i * 1e9 / rate);
}
