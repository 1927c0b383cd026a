# Dex fixtures for the dex unit suite (check_dex) and the ART test targets: every
# fixtures/dex/NAME.smali assembled alone by smali (Debian libsmali-java) into $(O)/dex/NAME.dex
# (dex 035), plus variants: Hello at api 24/26 (dex 037/038), all of the suite's classes in one
# dex 039 (multi.dex), that one as compact dex (multi.cdex) and Hello + multi as a dex 041
# container (container.dex), Hello + multi as compact dex files sharing one data section the way
# a vdex holds them (shared.vdex, each owned range padded to 64 KiB), the last three written by
# scripts/dex-convert.py.
DEX_DIR := $(O)/dex
DEX_SMALI := $(wildcard fixtures/dex/*.smali)
DEX_MULTI_SRCS := fixtures/dex/Hello.smali fixtures/dex/Shapes.smali fixtures/dex/Shapes_Square.smali
DEX_FIXTURES := $(patsubst fixtures/dex/%.smali,$(DEX_DIR)/%.dex,$(DEX_SMALI)) \
	$(DEX_DIR)/Hello-037.dex $(DEX_DIR)/Hello-038.dex $(DEX_DIR)/multi.dex \
	$(DEX_DIR)/multi.cdex $(DEX_DIR)/container.dex $(DEX_DIR)/shared.vdex

$(DEX_DIR)/%.dex: fixtures/dex/%.smali
	@mkdir -p $(dir $@)
	$(call msg,SMALI,$@)smali assemble -j 1 -o $@ $<

$(DEX_DIR)/Hello-037.dex: fixtures/dex/Hello.smali
	@mkdir -p $(dir $@)
	$(call msg,SMALI,$@)smali assemble -j 1 -a 24 -o $@ $<

$(DEX_DIR)/Hello-038.dex: fixtures/dex/Hello.smali
	@mkdir -p $(dir $@)
	$(call msg,SMALI,$@)smali assemble -j 1 -a 26 -o $@ $<

$(DEX_DIR)/multi.dex: $(DEX_MULTI_SRCS)
	@mkdir -p $(dir $@)
	$(call msg,SMALI,$@)smali assemble -j 1 -a 28 -o $@ $^

$(DEX_DIR)/multi.cdex: $(DEX_DIR)/multi.dex scripts/dex-convert.py
	$(call msg,GEN,$@)python3 scripts/dex-convert.py cdex $< $@

$(DEX_DIR)/container.dex: $(DEX_DIR)/Hello.dex $(DEX_DIR)/multi.dex scripts/dex-convert.py
	$(call msg,GEN,$@)python3 scripts/dex-convert.py container $(DEX_DIR)/Hello.dex \
		$(DEX_DIR)/multi.dex $@

$(DEX_DIR)/shared.vdex: $(DEX_DIR)/Hello.dex $(DEX_DIR)/multi.dex scripts/dex-convert.py
	$(call msg,GEN,$@)python3 scripts/dex-convert.py vdex 65536 $(DEX_DIR)/Hello.dex \
		$(DEX_DIR)/multi.dex $@

dex-fixtures: $(DEX_FIXTURES)
.PHONY: dex-fixtures

# The unit suite reads them from $(O)/dex; without smali it says SKIP instead.
ifneq ($(shell command -v smali 2>/dev/null),)
$(O)/tests/unit/run: | $(DEX_FIXTURES)
endif
