/**
 * hb_schedule.h - which orders a run sends and, in open loop, when and by whom: pure
 * arithmetic shared by the C-family clients and tested once.
 *
 * Connections are spread evenly over the workers (the first ones get the remainder).
 * Open loop: order i (warm-up included) is due at t0 + i / R and belongs to connection
 * slot i % C, so a worker owning slots [first, first + n) sends exactly the orders of
 * those slots, in increasing i, and every order of the run is sent exactly once.
 */
#ifndef HB_SCHEDULE_H
#define HB_SCHEDULE_H

#include <stdint.h>

#include "hb_args.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Orders of the whole run, warm-up included; UINT64_MAX for a closed loop with --duration. */
uint64_t hb_schedule_total(const hb_config *cfg);

/**
 * CPUs this process may run on: its affinity mask (taskset, cgroup cpusets, a runner that
 * pins the clients to isolated cores), not the CPUs online; at least 1.
 */
int hb_usable_cpus(void);

/** Worker threads for a run: one per usable CPU, never more than there are connections. */
int hb_schedule_workers(int connections, int usable_cpus);

/** Connections of worker w of n (n <= connections); *first_slot = its first slot. */
int hb_schedule_share(int connections, int workers, int w, int *first_slot);

/** The worker's order after i: the next of its slots, or its first slot of the next round. */
uint64_t hb_schedule_next(uint64_t i, uint64_t connections, uint64_t first_slot, uint64_t n_slots);

/** Intended send time of order i at rate orders/s. */
uint64_t hb_schedule_intended_ns(uint64_t t0_ns, uint64_t i, double rate);

#ifdef __cplusplus
}
#endif
#endif
