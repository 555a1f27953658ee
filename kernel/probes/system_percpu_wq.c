// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probe: the per-CPU system workqueue is named system_percpu_wq (v6.17;
 * Debian's 6.12 has it from stable). The kernels that have it mark
 * system_wq deprecated, and v7.x warns once when work is queued on it.
 */
#include <linux/workqueue.h>

struct workqueue_struct *probe_wq(void);

struct workqueue_struct *probe_wq(void)
{
	return system_percpu_wq;
}
