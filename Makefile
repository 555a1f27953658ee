# SPDX-License-Identifier: GPL-2.0-only
#
# gpuvirt top-level build.
#
#   make                  modules for KVER plus gpuvirtctl and the tests
#   make modules          kernel modules only, into build/$(KVER)/
#   make test-modules     the test-only kernel modules of the VM suite
#   make user             gpuvirtctl, into build/user/
#   make check            every test: unit, style, VM suite on 6.1 and 6.12, DKMS
#   make check-debug      VM suite + fault-injection sweeps on a KASAN/lockdep/
#                         kmemleak kernel built from linux-source-6.12
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

.PHONY: all modules test-modules user check check-package demo deps clean ynl help mdev-samples

all: modules user vm-tests

deps:
	@$(SRC)/scripts/deps.sh

modules:
	@test -n "$(KVER)" || { echo "no supported kernel headers found; run 'make deps' as root" >&2; exit 1; }
	@test -e "$(KDIR)/Makefile" || { echo "no kernel headers at $(KDIR); run 'make deps' as root" >&2; exit 1; }
	@mkdir -p $(KBUILD)
	@cd $(SRC) && cp -rsf $(SRC)/Kbuild $(SRC)/kernel $(SRC)/include $(KBUILD)/
	@find $(KBUILD) -xtype l -delete
	@$(SRC)/scripts/compat-probe.sh $(KDIR) $(KBUILD)/kernel/compat-probed.h.new
	@cmp -s $(KBUILD)/kernel/compat-probed.h.new $(KBUILD)/kernel/compat-probed.h || \
		mv $(KBUILD)/kernel/compat-probed.h.new $(KBUILD)/kernel/compat-probed.h
	@rm -f $(KBUILD)/kernel/compat-probed.h.new
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

-include user/Makefile.inc

# Every test; see scripts/check.sh for the steps.
check:
	@$(SRC)/scripts/check.sh

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
	@sed -n '3,17p' $(SRC)/Makefile | sed 's/^# \{0,1\}//'
-include selftests/Makefile.inc
-include selftests/debug/Makefile.inc
-include fuzz/Makefile.inc
