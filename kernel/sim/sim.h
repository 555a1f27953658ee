/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gpuvirt_sim private interfaces.
 */
#ifndef GPUVIRT_SIM_H
#define GPUVIRT_SIM_H

#include <linux/device.h>
#include <linux/list.h>

#include "compat.h"
#include "gpuvirt_backend.h"

#define GPUVIRT_SIM_DRV_NAME	"gpuvirt_sim"

/**
 * struct gpuvirt_sim_dev - one simulated GPU
 * @dev: device on the gpuvirt_sim bus, named sim<ID>
 * @list: entry in the bus's device list, under gpuvirt_sim_bus_lock
 * @gpu: what is registered with the core while the driver is bound
 * @probe_err: result of the last probe, read back by new_device
 * @debugfs: <debugfs>/gpuvirt_sim/sim<ID>/, the "hardware" state
 *
 * Everything but @list is set up before device_register() and only read
 * afterwards; the driver core serialises probe and remove.
 */
struct gpuvirt_sim_dev {
	struct device dev;
	struct list_head list;
	struct gpuvirt_gpu gpu;
	int probe_err;
	struct dentry *debugfs;
};

static inline struct gpuvirt_sim_dev *to_gpuvirt_sim_dev(struct device *dev)
{
	return container_of(dev, struct gpuvirt_sim_dev, dev);
}

extern struct dentry *gpuvirt_sim_debugfs_root;

int gpuvirt_sim_dev_probe(struct gpuvirt_sim_dev *sdev);
void gpuvirt_sim_dev_remove(struct gpuvirt_sim_dev *sdev);

#endif /* GPUVIRT_SIM_H */
