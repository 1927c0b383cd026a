# Test targets: small programs the e2e suites profile (owned by the e2e tests).
# Each target gets its own flags on purpose; the user's CFLAGS and SAN= do not apply to them.
TARGETS_DIR := $(O)/targets
CXX ?= c++

T_DIR := tests/targets
T_WARN := -Wall -Wextra -Wshadow $(if $(filter 1,$(DEVELOPER)),-Werror)
T_CFLAGS := -std=gnu11 -D_GNU_SOURCE -g $(T_WARN)
T_CXXFLAGS := -std=gnu++17 -D_GNU_SOURCE -g $(T_WARN)
# Known stacks: frame pointers everywhere and no sibling calls (libunwind's tests do the same).
T_FP := -O0 -fno-omit-frame-pointer -fno-optimize-sibling-calls
T_HDRS := $(wildcard $(T_DIR)/*.h)
T_COMMON := $(T_DIR)/target_common.c
T_LIBS := -lpthread

T_PROGS := chain-fp chain-o2 threads4 cpp dlopen libplugin.so dump signals lifecycle waits
# More targets live in their own tests/targets/*.mk files (T_PROGS += NAME, plus their rules).
-include $(filter-out $(T_DIR)/targets.mk,$(wildcard $(T_DIR)/*.mk))
targets: $(addprefix $(TARGETS_DIR)/,$(T_PROGS))

CHAIN_SRCS := $(addprefix $(T_DIR)/,chain_main.c chain_f0.c chain_f1.c chain_f2.c chain_f3.c \
	chain_spin.c) $(T_COMMON)

$(TARGETS_DIR)/chain-fp: $(CHAIN_SRCS) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) $(T_FP) -o $@ $(filter %.c,$^) $(T_LIBS)

$(TARGETS_DIR)/chain-o2: $(CHAIN_SRCS) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) -O2 -fomit-frame-pointer -o $@ $(filter %.c,$^) $(T_LIBS)

$(TARGETS_DIR)/threads4: $(T_DIR)/threads4_main.c $(T_DIR)/threads4_burn.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) -O1 -fno-omit-frame-pointer -o $@ $(filter %.c,$^) \
		$(T_LIBS)

$(TARGETS_DIR)/cpp: $(T_DIR)/cpp_main.cpp $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CXX,$@)$(CXX) $(T_CXXFLAGS) -O2 -x c++ $(T_DIR)/cpp_main.cpp $(T_COMMON) \
		-o $@ $(T_LIBS)

$(TARGETS_DIR)/dlopen: $(T_DIR)/dlopen_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) -O1 -fno-omit-frame-pointer -o $@ $(filter %.c,$^) \
		$(T_LIBS) -ldl

$(TARGETS_DIR)/libplugin.so: $(T_DIR)/plugin.c
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) -O1 -shared -fPIC -o $@ $<

$(TARGETS_DIR)/dump: $(T_DIR)/dump_main.c $(T_DIR)/dump_wait.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) $(T_FP) -o $@ $(filter %.c,$^) $(T_LIBS)

$(TARGETS_DIR)/signals: $(T_DIR)/signals_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) -O1 -fno-omit-frame-pointer -o $@ $(filter %.c,$^) \
		$(T_LIBS)

$(TARGETS_DIR)/lifecycle: $(T_DIR)/lifecycle_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) -O1 -fno-omit-frame-pointer -o $@ $(filter %.c,$^) \
		$(T_LIBS)

$(TARGETS_DIR)/waits: $(T_DIR)/waits_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) -O1 -fno-omit-frame-pointer -o $@ $(filter %.c,$^) \
		$(T_LIBS)
