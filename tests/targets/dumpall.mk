# e2e-dumpall targets: dumpall (glibc) and dumpall-musl (musl-gcc, when installed: musl's
# libc.so has no unwind tables, so the dump must say where its stacks stop).
T_PROGS += dumpall $(if $(shell command -v musl-gcc),dumpall-musl)

$(TARGETS_DIR)/dumpall: $(T_DIR)/dumpall_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(T_CFLAGS) -O1 -fno-omit-frame-pointer -o $@ $(filter %.c,$^) \
		$(T_LIBS) -lrt

$(TARGETS_DIR)/dumpall-musl: $(T_DIR)/dumpall_main.c $(T_COMMON) $(T_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)musl-gcc $(T_CFLAGS) -O1 -o $@ $(filter %.c,$^) -lpthread

# a Go program whose busy goroutines the runtime preempts with SIGURG all the time
T_PROGS += dumpall-go
$(TARGETS_DIR)/dumpall-go: $(T_DIR)/dumpall_go/main.go
	@mkdir -p $(dir $@)
	$(call msg,GO,$@)cd $(T_DIR)/dumpall_go && GOCACHE=$(abspath $(TARGETS_DIR))/go-cache \
		GO111MODULE=off GOPATH=$(abspath $(TARGETS_DIR))/go-path go build -o $(abspath $@) .

# Go calling C and C calling back into Go (cgo): Go's stack switches in both directions
T_PROGS += dumpall-cgo
$(TARGETS_DIR)/dumpall-cgo: $(T_DIR)/dumpall_cgo/main.go
	@mkdir -p $(dir $@)
	$(call msg,GO,$@)cd $(T_DIR)/dumpall_cgo && GOCACHE=$(abspath $(TARGETS_DIR))/go-cache \
		GO111MODULE=off CGO_ENABLED=1 GOPATH=$(abspath $(TARGETS_DIR))/go-path \
		go build -o $(abspath $@) .
