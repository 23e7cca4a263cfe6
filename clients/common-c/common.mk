# common.mk - build rules of the shared C client library (hb_*) and the vendored
# HdrHistogram_c, for every C-family client's Makefile:
#
#   HB_BUILD := /abs/obj/dir          # optional; default <repo>/build/common-c
#   include ../common-c/common.mk
#   my-binary: $(MY_OBJS) $(HB_LIB)   # link with $(HB_LIB) $(HB_LDLIBS)
#   CFLAGS += $(HB_CFLAGS)            # include paths for hb_*.h and hdr_*.h
#
# Our sources build with -Werror; the vendored library keeps its own flags.

HB_COMMON_DIR := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
HB_ROOT       := $(abspath $(HB_COMMON_DIR)/../..)
HB_HDR_DIR    := $(HB_ROOT)/third_party/HdrHistogram_c/src
HB_BUILD      ?= $(HB_ROOT)/build/common-c

HB_MODULES    := hb_args hb_url hb_order hb_clock hb_probe hb_signal hb_stats hb_interval hb_result hb_schedule
HB_SRCS       := $(addprefix $(HB_COMMON_DIR)/,$(addsuffix .c,$(HB_MODULES)))
HB_HDR_SRCS   := $(addprefix $(HB_HDR_DIR)/,hdr_histogram.c hdr_histogram_log.c hdr_encoding.c hdr_time.c)
HB_OBJS       := $(addprefix $(HB_BUILD)/,$(addsuffix .o,$(HB_MODULES)))
HB_HDR_OBJS   := $(addprefix $(HB_BUILD)/hdr/,$(notdir $(HB_HDR_SRCS:.c=.o)))
HB_LIB        := $(HB_BUILD)/libhbcommon.a

HB_CFLAGS     := -I$(HB_COMMON_DIR) -I$(HB_HDR_DIR)
HB_LDLIBS     := -lz -lm -lpthread
HB_WARN       := -Wall -Wextra -Werror
HB_CC_FLAGS   := -std=c11 -D_GNU_SOURCE -O2 -g -MMD -MP $(HB_WARN) $(HB_CFLAGS)

$(HB_BUILD)/%.o: $(HB_COMMON_DIR)/%.c | $(HB_BUILD)/hdr
	$(CC) $(HB_CC_FLAGS) -c $< -o $@

$(HB_BUILD)/hdr/%.o: $(HB_HDR_DIR)/%.c | $(HB_BUILD)/hdr
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -I$(HB_HDR_DIR) -c $< -o $@

$(HB_LIB): $(HB_OBJS) $(HB_HDR_OBJS)
	$(AR) rcs $@ $^

$(HB_BUILD)/hdr:
	mkdir -p $@

# Unit tests of the pure parts, and the order-vector printer the pytest drives.
HB_TEST_BIN   := $(HB_BUILD)/hb_test
HB_ORDER_BIN  := $(HB_BUILD)/hb_print

$(HB_TEST_BIN): $(HB_COMMON_DIR)/tests/hb_test.c $(HB_COMMON_DIR)/tests/hb_test_output.c $(HB_COMMON_DIR)/tests/hb_test.h $(HB_LIB)
	$(CC) $(HB_CC_FLAGS) $(filter %.c,$^) -o $@ $(HB_LIB) $(HB_LDLIBS)

$(HB_ORDER_BIN): $(HB_COMMON_DIR)/tests/hb_print.c $(HB_LIB)
	$(CC) $(HB_CC_FLAGS) $< -o $@ $(HB_LIB) $(HB_LDLIBS)

# Benchmark of the open loop's pacing (prints figures, asserts nothing).
HB_BENCH_SLEEP := $(HB_BUILD)/hb_bench_sleep
$(HB_BENCH_SLEEP): $(HB_COMMON_DIR)/tests/hb_bench_sleep.c $(HB_LIB)
	$(CC) $(HB_CC_FLAGS) $< -o $@ $(HB_LIB) $(HB_LDLIBS)

-include $(HB_OBJS:.o=.d)
