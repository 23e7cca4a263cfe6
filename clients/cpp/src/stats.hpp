// stats.hpp - the stats stage of the C++ client: each worker's record (hb_stats: its
// histograms and error counts) and the merge of those records after the join.
// Workers only record; the merge and the summary happen after the run (hb_stats, hb_result).
#pragma once

extern "C" {
#include "hb_stats.h"
}

namespace hb {

/** hb_stats with its histograms freed on scope exit. */
class Stats {
public:
    explicit Stats(bool open_loop);
    ~Stats() { hb_stats_close(&s_); }
    Stats(const Stats &) = delete;
    Stats &operator=(const Stats &) = delete;
    hb_stats *get() { return &s_; }
    const hb_stats *get() const { return &s_; }

    /** Adds one worker's record (histograms and counts) into this one. */
    void merge(const hb_stats *part) { hb_stats_merge(&s_, part); }

private:
    hb_stats s_{};
};

}  // namespace hb
