# Targets of tests/e2e/check_dwarf.c (debug information and names).
# stripped: hot_unnamed() without any symbol (strip --strip-all keeps .dynsym and .eh_frame);
# stripped.full is the same link with its symbols, where the test reads the function's address.
T_PROGS += stripped stripped.full

$(TARGETS_DIR)/stripped.full: $(T_DIR)/stripped_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) -O2 -o $@ $(filter %.c,$^) $(T_LIBS)

$(TARGETS_DIR)/stripped: $(TARGETS_DIR)/stripped.full
	$(call msg,STRIP,$@)strip --strip-all -o $@ $<

# tailcall: fixtures/elf/tailcall/tail.c at -O2, where calls at the end of a function are jumps;
# `tailcall VARIANT block` waits in sem_wait() at the end of a chain of tail calls.
T_PROGS += tailcall

$(TARGETS_DIR)/tailcall: fixtures/elf/tailcall/tail.c
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) -O2 -o $@ $< $(T_LIBS)
