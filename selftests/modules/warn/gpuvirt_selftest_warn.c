// SPDX-License-Identifier: GPL-2.0-only
/*
 * Test-only module for the VM runner's self-test (selftests/runner-selftest.sh):
 * its init issues a WARN() and succeeds, so that the kernel log of the guest
 * holds a WARNING the runner must report as a failure. Never load it anywhere
 * else: it taints the kernel (W).
 */
#include <linux/bug.h>
#include <linux/init.h>
#include <linux/module.h>

static int __init gpuvirt_selftest_warn_init(void)
{
	WARN(1, "gpuvirt_selftest_warn: deliberate warning for the runner self-test\n");
	return 0;
}

static void __exit gpuvirt_selftest_warn_exit(void)
{
}

module_init(gpuvirt_selftest_warn_init);
module_exit(gpuvirt_selftest_warn_exit);

MODULE_DESCRIPTION("gpuvirt runner self-test: WARN() on load");
MODULE_LICENSE("GPL");
