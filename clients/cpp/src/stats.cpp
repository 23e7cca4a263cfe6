// stats.cpp - see stats.hpp.
#include "stats.hpp"

#include <new>

namespace hb {

Stats::Stats(bool open_loop)
{
    if (hb_stats_init(&s_, open_loop) != 0) {
        throw std::bad_alloc();
    }
}

}  // namespace hb
