# The tree's layers (issue 33): src/README.md's folder table gives the order from the commands
# down to base, and no #include may point up it. check-layers reads every include line of
# src/, include/perch/ and arch/ (tests/layout/check_layers.py), after checking itself on a
# small tree with one upward include; and no function is longer than 150 lines
# (tests/layout/check_function_size.py).
.PHONY: check-layers
CHECK_EXTRA += check-layers

check-layers:
	$(Q)python3 tests/layout/check_layers.py --self-test
	$(Q)python3 tests/layout/check_layers.py
	$(Q)python3 tests/layout/check_function_size.py --self-test
	$(Q)python3 tests/layout/check_function_size.py
