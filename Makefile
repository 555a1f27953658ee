# SPDX-License-Identifier: GPL-2.0-only
#
# gpuvirt top-level build.
#
#   make                  modules for KVER plus gpuvirtctl and the tests
#   make modules          kernel modules only, into build/$(KVER)/
#   make test-modules     the test-only kernel modules of the VM suite
#   make skew-modules     the modules of the commit before vgpu-get's omit, into
#                         build/skew/$(KVER)/ko/, for the VM test of gpuvirtctl
#                         against an older module (needs the clone's history)
#   make user             gpuvirtctl, into build/user/
#   make check            every test, each VM test on the kernels selftests/vm/LANES
#                         gives it; a step table in build/check-times.txt
#   make check-full       every VM test on 6.1, 6.12 and the debug kernel, full
#                         fail-nth sweeps, races and fuzzers (before a kernel change)
#   make check-debug      the debug lane alone (KASAN/lockdep/kmemleak kernel from
#                         linux-source-6.12): lifetime tests, a fail-nth sample
#                         (FAILNTH_SEED=N replays one), races
#   make fuzz             libFuzzer runs of the MIG planner, scheduler, config parser
#   make demo             boot a VM, load the modules, create a GPU, show it
#   make deps             install the Debian packages the above need (root)
#
# KVER is the kernel release to build for; it defaults to the newest installed
# 6.1 kernel, the one the VM boots by default. KDIR follows from it.

SRC := $(CURDIR)
KVER ?= $(shell $(SRC)/scripts/kver.sh 6.1 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
KBUILD := $(SRC)/build/$(KVER)

# Extra kbuild arguments, e.g. W=1 C=1 for the warning and sparse gates.
KARGS ?=

export SRC

.PHONY: all modules test-modules user check check-full check-package demo deps clean ynl help \
	mdev-samples skew-modules

all: modules user vm-tests

deps:
	@$(SRC)/scripts/deps.sh

# The compile probes (scripts/compat-probe.sh) run again only when a probe,
# the script or the kernel's headers changed: they cost more than a
# no-op build.
modules:
	@test -n "$(KVER)" || { echo "no supported kernel headers found; run 'make deps' as root" >&2; exit 1; }
	@test -e "$(KDIR)/Makefile" || { echo "no kernel headers at $(KDIR); run 'make deps' as root" >&2; exit 1; }
	@mkdir -p $(KBUILD)
	@cd $(SRC) && cp -rsf $(SRC)/Kbuild $(SRC)/kernel $(SRC)/include $(KBUILD)/
	@find $(KBUILD) -xtype l -delete
	@key=$$(cat $(SRC)/kernel/probes/*.c $(SRC)/scripts/compat-probe.sh | sha256sum | cut -c1-16); \
	key="$$key $$(stat -L -c '%n %s %Y' $(KDIR)/Makefile $(KDIR)/include/generated/autoconf.h \
		$(KDIR)/Module.symvers 2>/dev/null | sha256sum | cut -c1-16)"; \
	if [ ! -e $(KBUILD)/kernel/compat-probed.h ] || \
	   [ "$$key" != "$$(cat $(KBUILD)/kernel/compat-probed.key 2>/dev/null)" ]; then \
		$(SRC)/scripts/compat-probe.sh $(KDIR) $(KBUILD)/kernel/compat-probed.h.new || exit 1; \
		cmp -s $(KBUILD)/kernel/compat-probed.h.new $(KBUILD)/kernel/compat-probed.h || \
			mv $(KBUILD)/kernel/compat-probed.h.new $(KBUILD)/kernel/compat-probed.h; \
		rm -f $(KBUILD)/kernel/compat-probed.h.new; \
		echo "$$key" >$(KBUILD)/kernel/compat-probed.key; \
	fi
	$(MAKE) -C $(KDIR) M=$(KBUILD) $(KARGS) modules

# Test-only modules of the VM suite (selftests/modules/backend), built for
# KVER against the modules above; never installed.
TEST_MODULE_DIR := $(KBUILD)/selftests/modules/backend
test-modules: modules
	@mkdir -p $(TEST_MODULE_DIR)
	@ln -sf $(SRC)/selftests/modules/backend/Kbuild \
		$(SRC)/selftests/modules/backend/gpuvirt_selftest_backend.c $(TEST_MODULE_DIR)/
	$(MAKE) -C $(KDIR) M=$(TEST_MODULE_DIR) KBUILD_EXTRA_SYMBOLS=$(KBUILD)/Module.symvers \
		ccflags-y="-I$(KBUILD)/kernel -I$(KBUILD)/include" $(KARGS) modules

# The kernel's mdev samples (mtty, mdpy, mbochs) for KVER, from its own
# linux-source package, for the VM test of the other vGPU stacks.
mdev-samples:
	@$(SRC)/scripts/mdev-samples.sh $(KVER) $(KBUILD)/mdev-samples

# gpuvirt's modules as they were before vgpu-get's omit, built for KVER from
# the clone's history (scripts/skew-modules.sh): a host whose package was
# upgraded runs the old module until it reloads it, and the VM test
# gpuvirtctl_skew.sh runs today's gpuvirtctl against them.
skew-modules:
	@$(SRC)/scripts/skew-modules.sh $(KVER) $(KDIR) $(SRC)/build/skew/$(KVER) $(KBUILD)/kernel

-include user/Makefile.inc

# Every test; see scripts/check.sh for the steps and
# Documentation/testing.rst for the tiers and budgets.
check:
	@$(SRC)/scripts/check.sh

# Every test on every kernel, and every fail-nth point.
check-full:
	@$(SRC)/scripts/check.sh --full

# The Debian packages, end to end (root): build, lintian, install with DKMS
# for both kernels, modprobe and apply in the VM, purge. Also a step of check.
check-package:
	@$(SRC)/scripts/check-package.sh

# The main job: a VM with the modules loaded and GPUs shown by gpuvirtctl.
demo:
	@$(SRC)/scripts/demo.sh

# Regenerate the uapi header and netlink tables from the YAML spec.
ynl:
	@$(SRC)/scripts/ynl-gen.sh

clean:
	rm -rf $(SRC)/build

help:
	@sed -n '3,25p' $(SRC)/Makefile | sed 's/^# \{0,1\}//'
-include selftests/Makefile.inc
-include selftests/debug/Makefile.inc
-include fuzz/Makefile.inc
