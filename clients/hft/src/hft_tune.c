/* hft_tune.c - process tunings (see hft_tune.h). */
#include "hft_tune.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#ifdef HFT_HAVE_NUMA
#include <numa.h>
#endif

#define HUGE_2M ((size_t)2 * 1024 * 1024)

static const char *const KEYS[HFT_T_COUNT] = {"mlockall", "affinity", "numa", "rt_priority", "hugepages"};
static const char NOT_REQUESTED[] = "unavailable: not requested";

static void set(hft_tuning *t, int i, const char *fmt, const char *a) {
    snprintf(t->item[i].text, HFT_TUNE_LEN, fmt, a);
}

void hft_tuning_init(hft_tuning *t) {
    for (int i = 0; i < HFT_T_COUNT; i++) {
        t->item[i].key = KEYS[i];
        set(t, i, "%s", "unavailable: not attempted");
    }
}

void hft_tune_mlockall(hft_tuning *t) {
#if defined(__SANITIZE_ADDRESS__)
    /* ASan's shadow memory is terabytes of reserved address space: locking it fails or worse. */
    set(t, HFT_T_MLOCKALL, "%s", "unavailable: AddressSanitizer build (its shadow memory cannot be locked)");
    return;
#endif
    if (mlockall(MCL_CURRENT | MCL_FUTURE) == 0) set(t, HFT_T_MLOCKALL, "%s", "applied");
    else set(t, HFT_T_MLOCKALL, "refused: %s (raise ulimit -l or grant CAP_IPC_LOCK)", strerror(errno));
}

void hft_tune_thread(hft_tuning *t, int cpu, int rt_priority) {
    cpu_set_t set1;
    CPU_ZERO(&set1);
    CPU_SET(cpu, &set1);
    int rc = pthread_setaffinity_np(pthread_self(), sizeof set1, &set1);
    if (rc == 0) set(t, HFT_T_AFFINITY, "%s", "applied");
    else set(t, HFT_T_AFFINITY, "refused: %s", strerror(rc));

    if (rt_priority <= 0) {
        snprintf(t->item[HFT_T_RT].text, HFT_TUNE_LEN, "%s (pass --rt-priority N)", NOT_REQUESTED);
    } else {
        struct sched_param sp = {.sched_priority = rt_priority};
        rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
        if (rc == 0) snprintf(t->item[HFT_T_RT].text, HFT_TUNE_LEN, "applied: SCHED_FIFO %d", rt_priority);
        else set(t, HFT_T_RT, "refused: %s (needs root or CAP_SYS_NICE)", strerror(rc));
    }

#ifdef HFT_HAVE_NUMA
    if (numa_available() < 0) {
        set(t, HFT_T_NUMA, "%s", "unavailable: the kernel has no NUMA support");
    } else {
        numa_set_localalloc(); /* this thread's pages come from its CPU's node */
        snprintf(t->item[HFT_T_NUMA].text, HFT_TUNE_LEN, "applied: local allocation, %d node(s)",
                 numa_num_configured_nodes());
    }
#else
    set(t, HFT_T_NUMA, "%s", "unavailable: built without libnuma (install libnuma-dev and rebuild)");
#endif
}

void *hft_mem_alloc(size_t size, size_t *mapped, hft_tuning *t) {
    size_t huge = (size + HUGE_2M - 1) / HUGE_2M * HUGE_2M;
    void *p = mmap(NULL, huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE,
                   -1, 0);
    if (p != MAP_FAILED) {
        *mapped = huge;
        set(t, HFT_T_HUGEPAGES, "%s", "applied: MAP_HUGETLB 2 MiB pages");
        return p;
    }
    int e = errno;
    size_t page = 4096, normal = (size + page - 1) / page * page;
    p = mmap(NULL, normal, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) return NULL;
    (void)madvise(p, normal, MADV_HUGEPAGE); /* a hint; THP may still back it */
    *mapped = normal;
    if (e == ENOMEM)
        set(t, HFT_T_HUGEPAGES, "%s",
            "unavailable: no free 2 MiB pages reserved (vm.nr_hugepages); run hft/scripts/setup_hft_system.sh --apply");
    else
        set(t, HFT_T_HUGEPAGES, "unavailable: MAP_HUGETLB failed (%s); 4 KiB pages used", strerror(e));
    return p;
}

void hft_mem_free(void *p, size_t mapped) {
    if (p != NULL) munmap(p, mapped);
}

static bool applied(const char *s) { return strncmp(s, "applied", 7) == 0; }
static bool not_requested(const char *s) { return strncmp(s, NOT_REQUESTED, sizeof NOT_REQUESTED - 1) == 0; }

void hft_tuning_merge(hft_tuning *into, const hft_tuning *from) {
    for (int i = 0; i < HFT_T_COUNT; i++)
        /* "applied" alone is the caller's placeholder: take the worker's detail over it. */
        if (strcmp(into->item[i].text, "applied") == 0 || (applied(into->item[i].text) && !applied(from->item[i].text)))
            memcpy(into->item[i].text, from->item[i].text, HFT_TUNE_LEN);
}

bool hft_tuning_all_applied(const hft_tuning *t, char *first_bad, size_t cap) {
    for (int i = 0; i < HFT_T_COUNT; i++) {
        const char *s = t->item[i].text;
        if (!applied(s) && !not_requested(s)) {
            snprintf(first_bad, cap, "%s: %s", t->item[i].key, s);
            return false;
        }
    }
    return true;
}

void hft_tuning_json(const hft_tuning *t, char *buf, size_t cap) {
    size_t used = 0;
    used += (size_t)snprintf(buf, cap, "{");
    for (int i = 0; i < HFT_T_COUNT && used < cap; i++) {
        /* The texts are ours: no quotes or backslashes to escape, but be safe. */
        char clean[HFT_TUNE_LEN];
        size_t j = 0;
        for (const char *s = t->item[i].text; *s && j + 1 < sizeof clean; s++)
            clean[j++] = (char)((*s == '"' || *s == '\\' || (unsigned char)*s < 0x20) ? '\'' : *s);
        clean[j] = '\0';
        used += (size_t)snprintf(buf + used, cap - used, "%s\"%s\": \"%s\"", i ? ", " : "", t->item[i].key, clean);
    }
    if (used < cap) snprintf(buf + used, cap - used, "}");
}

void hft_tuning_warn(const hft_tuning *t, const char *prog) {
    for (int i = 0; i < HFT_T_COUNT; i++)
        if (!applied(t->item[i].text) && !not_requested(t->item[i].text))
            fprintf(stderr, "%s: warning: tuning %s: %s\n", prog, t->item[i].key, t->item[i].text);
}
