/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gpuvirt_sim private interfaces.
 */
#ifndef GPUVIRT_SIM_H
#define GPUVIRT_SIM_H

#include <linux/device.h>
#include <linux/ioport.h>
#include <linux/list.h>
#include <linux/pci.h>

#include "compat.h"
#include "gpuvirt_backend.h"

#define GPUVIRT_SIM_DRV_NAME	"gpuvirt_sim"

/*
 * The simulated GPU's PCI identity (pci.c). 0xfffc is not a vendor id the
 * PCI-SIG assigns, so no other driver matches it.
 */
#define GPUVIRT_SIM_PCI_VENDOR		0xfffc
#define GPUVIRT_SIM_PCI_DEVICE		0x0001
#define GPUVIRT_SIM_PCI_VF_DEVICE	0x0002
/* SR-IOV: the VFs of each GPU (TotalVFs), functions 1.. of its domain */
#define GPUVIRT_SIM_PCI_VFS		16
#define GPUVIRT_SIM_PCI_REVISION	0x01
/* GPU <id> is function 00:00.0 of PCI domain GPUVIRT_SIM_PCI_DOMAIN_BASE + id */
#define GPUVIRT_SIM_PCI_DOMAIN_BASE	0x8000
#define GPUVIRT_SIM_ID_MAX		0x7ffe

/**
 * struct gpuvirt_sim_pci - a simulated GPU's PCI domain and function
 * @sysdata: x86's per-root-bus data, which names the domain; first, as the
 *	architecture reads it through the bus's sysdata pointer
 * @lock: protects @cfg and @vf_cfg, for the debugfs reader; config
 *	accesses through the PCI core are already serialised by its pci_lock
 * @cfg: the PF's config space
 * @wmask: which bits of @cfg a config write may change
 * @vf_cfg: each VF's config space, reset when VF Enable changes
 * @busn: the root bus's bus number range (0 only)
 * @window: the memory window the BARs take, reserved in iomem_resource
 * @bus: the root bus, while the domain exists
 *
 * Set up by gpuvirt_sim_pci_add() before the bus exists and torn down by
 * gpuvirt_sim_pci_del() after it is gone; in between only @cfg changes.
 */
struct gpuvirt_sim_pci {
#ifdef CONFIG_X86
	struct pci_sysdata sysdata;
#endif
	raw_spinlock_t lock;	/* see above */
	u8 cfg[PCI_CFG_SPACE_EXP_SIZE];
	u8 wmask[PCI_CFG_SPACE_EXP_SIZE];
	u8 vf_cfg[GPUVIRT_SIM_PCI_VFS][PCI_CFG_SPACE_SIZE];
	struct resource busn;
	struct resource window;
	struct pci_bus *bus;
};

/**
 * struct gpuvirt_sim_vram - a simulated GPU's framebuffer
 * @pages: host pages backing VRAM, by page index; only where backed. Entries
 *	are added and removed under the xarray's lock, which also covers
 *	@backed; lookups run under RCU and take a page reference.
 * @backed: number of pages in @pages
 * @fail_alloc: fault knob: fail this many page allocations (debugfs)
 */
struct gpuvirt_sim_vram {
	struct xarray pages;
	unsigned long backed;
	atomic_t fail_alloc;
};

/*
 * Work one context (vGPU) ran on the engines: the "hardware's" own count:
 * commands completed, modelled engine time, and compute steps run.
 */
struct gpuvirt_sim_ctx_stats {
	u64 cmds;
	u64 ns;
	u64 units;
};

/**
 * struct gpuvirt_sim_engine - a simulated GPU's engines
 * @lock: protects the counters, @owner_ctx and @ctx
 * @owner_ctx: context of the last command run, -1 before any
 * @cmds: commands completed
 * @busy_ns: modelled engine time spent
 * @faults: commands failed
 * @resets: engine resets
 * @gpu_resets: whole-GPU resets (MIG mode changes)
 * @ctx: per-context counters, by context id
 * @engine_ns: modelled busy time of each engine: a command's cost is
 *	charged to every engine of its context's mask
 * @fail_exec: fault knob: fail this many commands with -EIO (debugfs)
 * @hang: fault knob: the engine hangs at its next command until reset
 *	(debugfs hang_engine)
 * @hung: the engine is hung
 *
 * The core runs one command at a time per GPU; @lock is for the debugfs
 * readers.
 */
struct gpuvirt_sim_engine {
	spinlock_t lock;	/* see above */
	int owner_ctx;
	u64 cmds;
	u64 busy_ns;
	u64 faults;
	u64 resets;
	u64 gpu_resets;
	struct gpuvirt_sim_ctx_stats ctx[GPUVIRT_EXEC_CTX_MAX];
	u64 engine_ns[GPUVIRT_ENGINES_MAX];
	atomic_t fail_exec;
	bool hang;
	bool hung;
};

/**
 * struct gpuvirt_sim_vfs - what each VF was provisioned with (SR-IOV)
 * @lock: protects the rest
 * @vf: per VF: its type (empty when released) and resources
 * @provisions: VFs provisioned since the GPU was created
 * @releases: VFs released since then
 * @fail_provision: fault knob: fail this many provisions with -EIO
 */
struct gpuvirt_sim_vfs {
	struct mutex lock;	/* see above */
	struct {
		char type[32];
		struct gpuvirt_vf_config cfg;
	} vf[GPUVIRT_SIM_PCI_VFS];
	u64 provisions;
	u64 releases;
	atomic_t fail_provision;
};

/**
 * struct gpuvirt_sim_dev - one simulated GPU
 * @dev: device on the gpuvirt_sim bus, named sim<ID>; parent of the PCI
 *	domain whose function is the GPU
 * @list: entry in the bus's device list, under gpuvirt_sim_bus_lock
 * @gpu: what is registered with the core while the PCI function is bound
 * @probe_err: result of the last probe of the PCI function, read back by
 *	the sim device's probe
 * @pci: the PCI domain
 * @pdev: the PCI function, while bound to the gpuvirt_sim PCI driver
 * @debugfs: <debugfs>/gpuvirt_sim/sim<ID>/, the "hardware" state
 * @vram: the framebuffer
 * @engine: the engines
 * @vfs: the VFs' provisioning
 *
 * @id, the model and sizes in @gpu are set before device_register() and
 * only read afterwards; @pci by the sim device's probe and remove; @pdev,
 * @debugfs and the rest of @gpu by the PCI function's probe and remove,
 * which the driver core serialises. @list is under gpuvirt_sim_bus_lock.
 */
struct gpuvirt_sim_dev {
	struct device dev;
	struct list_head list;
	struct gpuvirt_gpu gpu;
	int probe_err;
	struct gpuvirt_sim_pci pci;
	struct pci_dev *pdev;
	struct dentry *debugfs;
	struct gpuvirt_sim_vram vram;
	struct gpuvirt_sim_engine engine;
	struct gpuvirt_sim_vfs vfs;
};

static inline struct gpuvirt_sim_dev *to_gpuvirt_sim_dev(struct device *dev)
{
	return container_of(dev, struct gpuvirt_sim_dev, dev);
}

extern struct dentry *gpuvirt_sim_debugfs_root;

extern struct pci_driver gpuvirt_sim_pci_driver;
extern struct pci_driver gpuvirt_sim_vf_driver;

int gpuvirt_sim_dev_probe(struct gpuvirt_sim_dev *sdev, struct pci_dev *pdev);
int gpuvirt_sim_pci_add(struct gpuvirt_sim_dev *sdev);
void gpuvirt_sim_pci_del(struct gpuvirt_sim_dev *sdev);
struct gpuvirt_sim_dev *gpuvirt_sim_pci_sdev(struct pci_dev *pdev);
void gpuvirt_sim_pci_debugfs_init(struct gpuvirt_sim_dev *sdev);
void gpuvirt_sim_vram_init(struct gpuvirt_sim_dev *sdev);
void gpuvirt_sim_vram_fini(struct gpuvirt_sim_dev *sdev);
struct page *gpuvirt_sim_vram_page(struct gpuvirt_gpu *gpu, u64 offset,
				   bool alloc);
void gpuvirt_sim_vram_zero(struct gpuvirt_gpu *gpu, u64 offset, u64 size);
void gpuvirt_sim_vram_discard(struct gpuvirt_gpu *gpu, u64 offset, u64 size);
u64 gpuvirt_sim_vram_next(struct gpuvirt_gpu *gpu, u64 offset, u64 end);
void gpuvirt_sim_debugfs_knob(const char *name, struct dentry *dir,
			      atomic_t *knob);
void gpuvirt_sim_engine_init(struct gpuvirt_sim_dev *sdev);
int gpuvirt_sim_exec(struct gpuvirt_gpu *gpu, const struct gpuvirt_exec_ctx *ctx,
		     struct gpuvirt_cmd *cmd, u64 budget_ns, u64 *cost_ns);
void gpuvirt_sim_engine_reset(struct gpuvirt_gpu *gpu, u64 engines);
void gpuvirt_sim_reset(struct gpuvirt_gpu *gpu);
void gpuvirt_sim_dev_remove(struct gpuvirt_sim_dev *sdev);

#endif /* GPUVIRT_SIM_H */
