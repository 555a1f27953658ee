/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Between the gpuvirt core and gpuvirt_vfio_pci, the passthrough driver.
 *
 * The core answers the netlink "pt" requests and sends the passthrough
 * notifications; what only the driver knows (whether a device is open,
 * who opened it, its counters, its quarantine) it asks the driver for
 * through a provider the driver registers. Calls go one way: the driver
 * calls the core, and the core calls the driver only through the provider,
 * under gpuvirt_pt's own lock.
 */
#ifndef GPUVIRT_PT_H
#define GPUVIRT_PT_H

#include <linux/pci.h>
#include <linux/sched.h>

#define GPUVIRT_PT_REASON_MAX	128

/**
 * struct gpuvirt_pt_state - what gpuvirt_vfio_pci knows of a device
 * @open: a user (a VMM) has it open now
 * @quarantined: opens are refused until the administrator clears it
 * @opens: successful opens
 * @closes: closes
 * @refused: opens refused by the driver's checks
 * @resets: resets after a close
 * @failures: failed resets and failed post-close checks
 * @opener_pid: thread group id of the last opener, 0 before any
 * @opener_comm: its command name
 * @reason: why it is quarantined, empty when it is not
 */
struct gpuvirt_pt_state {
	bool open;
	bool quarantined;
	u64 opens;
	u64 closes;
	u64 refused;
	u64 resets;
	u64 failures;
	pid_t opener_pid;
	char opener_comm[TASK_COMM_LEN];
	char reason[GPUVIRT_PT_REASON_MAX];
};

/**
 * struct gpuvirt_pt_provider - the passthrough driver, as the core sees it
 * @state: fill in @st for @pdev; 0, or -ENODEV when @pdev is not bound to
 *	the driver. May sleep; must not call back into the core.
 */
struct gpuvirt_pt_provider {
	int (*state)(struct pci_dev *pdev, struct gpuvirt_pt_state *st);
};

int gpuvirt_pt_provider_register(const struct gpuvirt_pt_provider *p);
void gpuvirt_pt_provider_unregister(const struct gpuvirt_pt_provider *p);

/* What happened to a device bound to the passthrough driver. */
enum gpuvirt_pt_event {
	GPUVIRT_PT_EVENT_OPEN,
	GPUVIRT_PT_EVENT_CLOSE,
	GPUVIRT_PT_EVENT_QUARANTINE,
};

void gpuvirt_pt_notify(struct pci_dev *pdev, enum gpuvirt_pt_event event,
		       const struct gpuvirt_pt_state *st);

#endif /* GPUVIRT_PT_H */
