# The bundled demo workload behind `make demo` (README quickstart).
$(O)/demo/perch-demo: tests/demo/demo.c
	@mkdir -p $(dir $@)
	$(call msg,CC,$<)$(CC) -O2 -g -fno-omit-frame-pointer -pthread -o $@ $<

demo-build: $(O)/perch $(O)/demo/perch-demo
.PHONY: demo-build
