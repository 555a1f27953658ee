// SPDX-License-Identifier: GPL-2.0-only
/*
 * Each simulated GPU is a PCI function, 00:00.0 in a PCI domain of its own
 * (0x8000 + the GPU's id), on a root bus whose configuration accessors are
 * ours: the PCI core enumerates it like any other function, lspci reads
 * its config space, and the gpuvirt core registers the mdev parent on it.
 * This is how the VMD driver gives its child devices a domain; here there
 * is no hardware behind the domain, so it works on any host, including one
 * without a spare PCI device.
 *
 * The function is a PCIe root complex integrated endpoint (no link to
 * train, no upstream bridge) of class 3D controller, with
 *   BAR0  64-bit, 16 MiB       registers
 *   BAR2  64-bit, prefetchable, 256 MiB   framebuffer aperture
 *   a PCI Express capability and a Device Serial Number capability.
 * The BARs take addresses in a window the sim reserves from the host's
 * free physical address space, marked busy and exclusive: nothing decodes
 * there, so the PCI core refuses to mmap the BARs through sysfs, and a
 * guest reaches the GPU only through its vGPUs.
 *
 * The window also keeps real devices away from those addresses while the
 * GPU exists; 512 MiB per GPU, taken above 64 GiB.
 */
#include <linux/debugfs.h>
#include <linux/ioport.h>
#include <linux/pci.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>

#include "sim.h"

#define SIM_PCI_BAR0_SIZE	SZ_16M
#define SIM_PCI_BAR2_SIZE	SZ_256M
#define SIM_PCI_WINDOW_SIZE	SZ_512M
#define SIM_PCI_WINDOW_MIN	(64ULL << 30)
#define SIM_PCI_WINDOW_MAX	((1ULL << 46) - 1)
#define SIM_PCI_EXP_CAP		0x40
#define SIM_PCI_DSN_CAP		PCI_CFG_SPACE_SIZE
#define SIM_PCI_SRIOV_CAP	(SIM_PCI_DSN_CAP + 0x10)

static void cfg_put(struct gpuvirt_sim_pci *sp, unsigned int off, u32 val,
		    u32 wmask, int size)
{
	int i;

	for (i = 0; i < size; i++) {
		sp->cfg[off + i] = val >> (8 * i);
		sp->wmask[off + i] = wmask >> (8 * i);
	}
}

/* Little-endian @size bytes of @val at @c + @off. */
static void put_le(u8 *c, unsigned int off, u32 val, int size)
{
	int i;

	for (i = 0; i < size; i++)
		c[off + i] = val >> (8 * i);
}

static u32 cfg_get(struct gpuvirt_sim_pci *sp, unsigned int off, int size)
{
	u32 val = 0;
	int i;

	for (i = 0; i < size; i++)
		val |= (u32)sp->cfg[off + i] << (8 * i);
	return val;
}

/* The function's config space as it comes out of reset. */
static void gpuvirt_sim_pci_cfg_init(struct gpuvirt_sim_dev *sdev)
{
	struct gpuvirt_sim_pci *sp = &sdev->pci;
	unsigned int x = SIM_PCI_EXP_CAP, d = SIM_PCI_DSN_CAP;
	u64 bar0 = sp->window.start + SIM_PCI_BAR2_SIZE;
	u64 bar2 = sp->window.start;

	memset(sp->cfg, 0, sizeof(sp->cfg));
	memset(sp->wmask, 0, sizeof(sp->wmask));

	cfg_put(sp, PCI_VENDOR_ID, GPUVIRT_SIM_PCI_VENDOR, 0, 2);
	cfg_put(sp, PCI_DEVICE_ID, GPUVIRT_SIM_PCI_DEVICE, 0, 2);
	cfg_put(sp, PCI_COMMAND, 0, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER |
		PCI_COMMAND_SERR | PCI_COMMAND_INTX_DISABLE, 2);
	cfg_put(sp, PCI_STATUS, PCI_STATUS_CAP_LIST, 0, 2);
	cfg_put(sp, PCI_CLASS_REVISION,
		PCI_CLASS_DISPLAY_3D << 16 | GPUVIRT_SIM_PCI_REVISION, 0, 4);
	cfg_put(sp, PCI_HEADER_TYPE, PCI_HEADER_TYPE_NORMAL, 0, 1);
	cfg_put(sp, PCI_CACHE_LINE_SIZE, 0, 0xff, 1);

	cfg_put(sp, PCI_BASE_ADDRESS_0, lower_32_bits(bar0) |
		PCI_BASE_ADDRESS_MEM_TYPE_64,
		(u32)~(SIM_PCI_BAR0_SIZE - 1), 4);
	cfg_put(sp, PCI_BASE_ADDRESS_1, upper_32_bits(bar0), ~0u, 4);
	cfg_put(sp, PCI_BASE_ADDRESS_2, lower_32_bits(bar2) |
		PCI_BASE_ADDRESS_MEM_TYPE_64 | PCI_BASE_ADDRESS_MEM_PREFETCH,
		(u32)~(SIM_PCI_BAR2_SIZE - 1), 4);
	cfg_put(sp, PCI_BASE_ADDRESS_3, upper_32_bits(bar2), ~0u, 4);

	cfg_put(sp, PCI_SUBSYSTEM_VENDOR_ID, GPUVIRT_SIM_PCI_VENDOR, 0, 2);
	cfg_put(sp, PCI_SUBSYSTEM_ID, GPUVIRT_SIM_PCI_DEVICE, 0, 2);
	cfg_put(sp, PCI_CAPABILITY_LIST, x, 0, 1);

	/* PCI Express v2, root complex integrated endpoint */
	cfg_put(sp, x + PCI_CAP_LIST_ID, PCI_CAP_ID_EXP, 0, 1);
	cfg_put(sp, x + PCI_EXP_FLAGS,
		2 | PCI_EXP_TYPE_RC_END << 4, 0, 2);
	cfg_put(sp, x + PCI_EXP_DEVCAP, 1 /* 256-byte payload */, 0, 4);
	cfg_put(sp, x + PCI_EXP_DEVCTL, PCI_EXP_DEVCTL_RELAX_EN |
		PCI_EXP_DEVCTL_NOSNOOP_EN | PCI_EXP_DEVCTL_READRQ_512B,
		PCI_EXP_DEVCTL_CERE | PCI_EXP_DEVCTL_NFERE |
		PCI_EXP_DEVCTL_FERE | PCI_EXP_DEVCTL_URRE |
		PCI_EXP_DEVCTL_RELAX_EN | PCI_EXP_DEVCTL_PAYLOAD |
		PCI_EXP_DEVCTL_NOSNOOP_EN | PCI_EXP_DEVCTL_READRQ, 2);

	/* Device Serial Number: the GPU id, then the vendor and device ids */
	cfg_put(sp, d, PCI_EXT_CAP_ID_DSN | 1 << 16 | SIM_PCI_SRIOV_CAP << 20,
		0, 4);
	cfg_put(sp, d + 4, sdev->gpu.id, 0, 4);
	cfg_put(sp, d + 8, GPUVIRT_SIM_PCI_VENDOR << 16 | GPUVIRT_SIM_PCI_DEVICE,
		0, 4);

	/*
	 * SR-IOV: GPUVIRT_SIM_PCI_VFS VFs at functions 1.., without BARs of
	 * their own (a VF vGPU's BARs are the VFIO device's, emulated by the
	 * core), so that enabling them needs no MMIO space.
	 */
	d = SIM_PCI_SRIOV_CAP;
	cfg_put(sp, d, PCI_EXT_CAP_ID_SRIOV | 1 << 16, 0, 4);
	cfg_put(sp, d + PCI_SRIOV_CTRL, 0, PCI_SRIOV_CTRL_VFE |
		PCI_SRIOV_CTRL_MSE | PCI_SRIOV_CTRL_ARI, 2);
	cfg_put(sp, d + PCI_SRIOV_INITIAL_VF, GPUVIRT_SIM_PCI_VFS, 0, 2);
	cfg_put(sp, d + PCI_SRIOV_TOTAL_VF, GPUVIRT_SIM_PCI_VFS, 0, 2);
	cfg_put(sp, d + PCI_SRIOV_NUM_VF, 0, 0xffff, 2);
	cfg_put(sp, d + PCI_SRIOV_VF_OFFSET, 1, 0, 2);
	cfg_put(sp, d + PCI_SRIOV_VF_STRIDE, 1, 0, 2);
	cfg_put(sp, d + PCI_SRIOV_VF_DID, GPUVIRT_SIM_PCI_VF_DEVICE, 0, 2);
	cfg_put(sp, d + PCI_SRIOV_SUP_PGSIZE, 0x553, 0, 4);
	cfg_put(sp, d + PCI_SRIOV_SYS_PGSIZE, 1, 0x553, 4);
}

/* A VF's config space as it comes out of VF Enable: RO but for a few bits. */
static void gpuvirt_sim_pci_vf_cfg_init(struct gpuvirt_sim_pci *sp,
					unsigned int vf)
{
	u8 *c = sp->vf_cfg[vf];
	unsigned int x = SIM_PCI_EXP_CAP;

	memset(c, 0, PCI_CFG_SPACE_SIZE);
	/* a VF's vendor and device ids read as all ones (PCIe 9.3.4.1.1) */
	put_le(c, PCI_VENDOR_ID, 0xffff, 2);
	put_le(c, PCI_DEVICE_ID, 0xffff, 2);
	put_le(c, PCI_STATUS, PCI_STATUS_CAP_LIST, 2);
	put_le(c, PCI_CLASS_REVISION,
	       PCI_CLASS_DISPLAY_3D << 16 | GPUVIRT_SIM_PCI_REVISION, 4);
	put_le(c, PCI_SUBSYSTEM_VENDOR_ID, GPUVIRT_SIM_PCI_VENDOR, 2);
	put_le(c, PCI_SUBSYSTEM_ID, GPUVIRT_SIM_PCI_VF_DEVICE, 2);
	c[PCI_CAPABILITY_LIST] = x;
	c[x + PCI_CAP_LIST_ID] = PCI_CAP_ID_EXP;
	put_le(c, x + PCI_EXP_FLAGS, 2 | PCI_EXP_TYPE_RC_END << 4, 2);
	put_le(c, x + PCI_EXP_DEVCAP, 1, 4);
}

/* VF Enable changed: the VFs appear or vanish, reset. */
static void gpuvirt_sim_pci_vfs_reset(struct gpuvirt_sim_pci *sp)
{
	unsigned int i;

	for (i = 0; i < GPUVIRT_SIM_PCI_VFS; i++)
		gpuvirt_sim_pci_vf_cfg_init(sp, i);
}

/* The VF at @devfn, or -1: present while VF Enable is set, up to NumVFs. */
static int gpuvirt_sim_pci_vf(struct gpuvirt_sim_pci *sp, unsigned int devfn)
{
	u16 ctrl = cfg_get(sp, SIM_PCI_SRIOV_CAP + PCI_SRIOV_CTRL, 2);
	u16 num = cfg_get(sp, SIM_PCI_SRIOV_CAP + PCI_SRIOV_NUM_VF, 2);

	if (!(ctrl & PCI_SRIOV_CTRL_VFE) || !devfn || devfn > num ||
	    devfn > GPUVIRT_SIM_PCI_VFS)
		return -1;
	return devfn - 1;
}

/* Writable in a VF: the command register's Bus Master, INTx disable. */
static u8 gpuvirt_sim_pci_vf_wmask(unsigned int off)
{
	if (off == PCI_COMMAND)
		return PCI_COMMAND_MASTER;
	if (off == PCI_COMMAND + 1)
		return PCI_COMMAND_INTX_DISABLE >> 8;
	return 0;
}

/*
 * Writable in the PF: its write mask, but NumVFs is read-only while VF
 * Enable is set, as the PCIe spec's SR-IOV capability has it, so that the
 * VFs the PCI core enumerated stay while they are enabled.
 */
static u8 gpuvirt_sim_pci_wmask(struct gpuvirt_sim_pci *sp, unsigned int off,
				bool vfe)
{
	unsigned int num = SIM_PCI_SRIOV_CAP + PCI_SRIOV_NUM_VF;

	if (vfe && off >= num && off < num + 2)
		return 0;
	return sp->wmask[off];
}

/*
 * The PCI core serialises config accesses with its pci_lock, a raw
 * spinlock; sp->lock (also raw) orders them against the debugfs reader.
 * Function 0 is the PF; functions 1.. are its VFs while enabled; the bus
 * has nothing else.
 */
static int gpuvirt_sim_pci_read(struct pci_bus *bus, unsigned int devfn,
				int where, int size, u32 *val)
{
	struct gpuvirt_sim_pci *sp = bus->sysdata;
	int ret = PCIBIOS_SUCCESSFUL, vf, i;
	unsigned long flags;

	*val = ~0u;
	if (bus->number || where < 0 || where + size > PCI_CFG_SPACE_EXP_SIZE)
		return PCIBIOS_DEVICE_NOT_FOUND;
	raw_spin_lock_irqsave(&sp->lock, flags);
	if (!devfn) {
		*val = cfg_get(sp, where, size);
	} else {
		vf = gpuvirt_sim_pci_vf(sp, devfn);
		if (vf < 0) {
			ret = PCIBIOS_DEVICE_NOT_FOUND;
		} else {
			*val = 0;	/* no extended capabilities */
			for (i = 0; i < size && where + i < PCI_CFG_SPACE_SIZE;
			     i++)
				*val |= (u32)sp->vf_cfg[vf][where + i] << (8 * i);
		}
	}
	raw_spin_unlock_irqrestore(&sp->lock, flags);
	return ret;
}

static int gpuvirt_sim_pci_write(struct pci_bus *bus, unsigned int devfn,
				 int where, int size, u32 val)
{
	struct gpuvirt_sim_pci *sp = bus->sysdata;
	int ret = PCIBIOS_SUCCESSFUL, vf, i;
	unsigned long flags;
	u16 vfe;

	if (bus->number || where < 0 || where + size > PCI_CFG_SPACE_EXP_SIZE)
		return PCIBIOS_DEVICE_NOT_FOUND;
	raw_spin_lock_irqsave(&sp->lock, flags);
	if (!devfn) {
		vfe = cfg_get(sp, SIM_PCI_SRIOV_CAP + PCI_SRIOV_CTRL, 2) &
		      PCI_SRIOV_CTRL_VFE;
		for (i = 0; i < size; i++) {
			u8 m = gpuvirt_sim_pci_wmask(sp, where + i, vfe),
			   b = val >> (8 * i);

			sp->cfg[where + i] = (sp->cfg[where + i] & ~m) | (b & m);
		}
		if (vfe != (cfg_get(sp, SIM_PCI_SRIOV_CAP + PCI_SRIOV_CTRL, 2) &
			    PCI_SRIOV_CTRL_VFE))
			gpuvirt_sim_pci_vfs_reset(sp);
	} else {
		vf = gpuvirt_sim_pci_vf(sp, devfn);
		if (vf < 0)
			ret = PCIBIOS_DEVICE_NOT_FOUND;
		for (i = 0; vf >= 0 && i < size && where + i < PCI_CFG_SPACE_SIZE;
		     i++) {
			u8 m = gpuvirt_sim_pci_vf_wmask(where + i);
			u8 *c = &sp->vf_cfg[vf][where + i];

			*c = (*c & ~m) | ((u8)(val >> (8 * i)) & m);
		}
	}
	raw_spin_unlock_irqrestore(&sp->lock, flags);
	return ret;
}

static struct pci_ops gpuvirt_sim_pci_ops = {
	.read	= gpuvirt_sim_pci_read,
	.write	= gpuvirt_sim_pci_write,
};

/* The sim device behind a function of one of our buses, or NULL. */
struct gpuvirt_sim_dev *gpuvirt_sim_pci_sdev(struct pci_dev *pdev)
{
	if (pdev->bus->ops != &gpuvirt_sim_pci_ops)
		return NULL;
	return container_of((struct gpuvirt_sim_pci *)pdev->bus->sysdata,
			    struct gpuvirt_sim_dev, pci);
}

static int gpuvirt_sim_pci_config_show(struct seq_file *m, void *v)
{
	struct gpuvirt_sim_pci *sp = m->private;
	unsigned long flags;
	unsigned int off;
	u8 line[16];

	/* the standard header, the PCIe, DSN and SR-IOV capabilities */
	for (off = 0; off < SIM_PCI_SRIOV_CAP + PCI_SRIOV_VFM; off += 16) {
		if (off >= 0x80 && off < SIM_PCI_DSN_CAP)
			continue;
		raw_spin_lock_irqsave(&sp->lock, flags);
		memcpy(line, &sp->cfg[off], sizeof(line));
		raw_spin_unlock_irqrestore(&sp->lock, flags);
		seq_printf(m, "%03x: %16ph\n", off, line);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gpuvirt_sim_pci_config);

/* <debugfs>/gpuvirt_sim/sim<ID>/config: the config space as emulated */
void gpuvirt_sim_pci_debugfs_init(struct gpuvirt_sim_dev *sdev)
{
	debugfs_create_file("config", 0400, sdev->debugfs, &sdev->pci,
			    &gpuvirt_sim_pci_config_fops);
}

/**
 * gpuvirt_sim_pci_add() - create the GPU's PCI domain and its function
 * @sdev: the simulated GPU, with its id and model set
 *
 * Reserves the BAR window, creates the root bus, enumerates and claims the
 * function and adds it, which binds the gpuvirt_sim PCI driver to it
 * (gpuvirt_sim_pci_probe(), through gpuvirt_sim_dev_probe()). Called from
 * the probe of the sim bus device.
 *
 * Return: 0, or -errno: -EBUSY if no window or domain is free, the probe's
 * error if the function's driver failed to bind.
 */
int gpuvirt_sim_pci_add(struct gpuvirt_sim_dev *sdev)
{
	struct gpuvirt_sim_pci *sp = &sdev->pci;
	int domain = GPUVIRT_SIM_PCI_DOMAIN_BASE + sdev->gpu.id;
	struct resource_entry *entry;
	struct pci_bus *bus;
	LIST_HEAD(resources);
	int err, n = 0;

	raw_spin_lock_init(&sp->lock);
	sp->busn.name = "gpuvirt_sim bus";
	sp->busn.start = 0;
	sp->busn.end = 0;
	sp->busn.flags = IORESOURCE_BUS;
	sp->window.name = dev_name(&sdev->dev);
	sp->window.flags = IORESOURCE_MEM | IORESOURCE_MEM_64 |
			   IORESOURCE_BUSY | IORESOURCE_EXCLUSIVE;
	err = allocate_resource(&iomem_resource, &sp->window,
				SIM_PCI_WINDOW_SIZE, SIM_PCI_WINDOW_MIN,
				SIM_PCI_WINDOW_MAX, SIM_PCI_BAR2_SIZE, NULL,
				NULL);
	if (err) {
		dev_err(&sdev->dev, "no free %u MiB of physical address space for the BARs\n",
			SIM_PCI_WINDOW_SIZE >> 20);
		return -EBUSY;
	}
	gpuvirt_sim_pci_cfg_init(sdev);
	gpuvirt_sim_pci_vfs_reset(sp);

#ifdef CONFIG_X86
	sp->sysdata.domain = domain;
	sp->sysdata.node = NUMA_NO_NODE;
#endif

	pci_lock_rescan_remove();
	if (pci_find_bus(domain, 0)) {
		dev_err(&sdev->dev, "PCI domain %04x is taken\n", domain);
		err = -EBUSY;
		goto err_unlock;
	}

	/* pci_add_resource() says nothing when it cannot allocate: count */
	pci_add_resource(&resources, &sp->busn);
	pci_add_resource(&resources, &sp->window);
	resource_list_for_each_entry(entry, &resources)
		n++;
	if (n != 2) {
		pci_free_resource_list(&resources);
		err = -ENOMEM;
		goto err_unlock;
	}
	bus = pci_create_root_bus(&sdev->dev, 0, &gpuvirt_sim_pci_ops, sp,
				  &resources);
	if (!bus) {
		pci_free_resource_list(&resources);
		err = -ENOMEM;
		goto err_unlock;
	}
	sp->bus = bus;
	pci_scan_child_bus(bus);
	pci_bus_claim_resources(bus);

	/* Binding is synchronous, so probe_err is final when this returns. */
	sdev->probe_err = -ENODEV;
	pci_bus_add_devices(bus);
	err = sdev->probe_err;
	if (err)
		goto err_remove_bus;
	pci_unlock_rescan_remove();
	return 0;

err_remove_bus:
	pci_stop_root_bus(bus);
	pci_remove_root_bus(bus);
	sp->bus = NULL;
err_unlock:
	pci_unlock_rescan_remove();
	release_resource(&sp->window);
	return err;
}

/**
 * gpuvirt_sim_pci_del() - remove the GPU's function and its PCI domain
 * @sdev: the simulated GPU
 *
 * Unbinding the function unregisters the GPU from the core, which waits
 * for its vGPUs' users.
 */
void gpuvirt_sim_pci_del(struct gpuvirt_sim_dev *sdev)
{
	struct gpuvirt_sim_pci *sp = &sdev->pci;

	pci_lock_rescan_remove();
	pci_stop_root_bus(sp->bus);
	pci_remove_root_bus(sp->bus);
	pci_unlock_rescan_remove();
	sp->bus = NULL;
	release_resource(&sp->window);
}

static int gpuvirt_sim_pci_probe(struct pci_dev *pdev,
				 const struct pci_device_id *id)
{
	struct gpuvirt_sim_dev *sdev = gpuvirt_sim_pci_sdev(pdev);
	int err;

	/* only the PFs of our own domains */
	if (!sdev || pdev->is_virtfn)
		return -ENODEV;

	err = pci_enable_device_mem(pdev);
	if (err)
		goto out;
	err = gpuvirt_sim_dev_probe(sdev, pdev);
	if (err)
		goto err_disable;
	goto out;

err_disable:
	pci_disable_device(pdev);
out:
	sdev->probe_err = err;
	return err;
}

static void gpuvirt_sim_pci_remove(struct pci_dev *pdev)
{
	struct gpuvirt_sim_dev *sdev = gpuvirt_sim_pci_sdev(pdev);

	gpuvirt_sim_dev_remove(sdev);
	pci_disable_device(pdev);
}

static int gpuvirt_sim_pci_sriov_configure(struct pci_dev *pdev, int num_vfs)
{
	return gpuvirt_sriov_configure(&gpuvirt_sim_pci_sdev(pdev)->gpu,
				       num_vfs);
}

static const struct pci_device_id gpuvirt_sim_pci_ids[] = {
	{ PCI_DEVICE(GPUVIRT_SIM_PCI_VENDOR, GPUVIRT_SIM_PCI_DEVICE) },
	{ }
};

struct pci_driver gpuvirt_sim_pci_driver = {
	.name		= GPUVIRT_SIM_DRV_NAME,
	.id_table	= gpuvirt_sim_pci_ids,
	.probe		= gpuvirt_sim_pci_probe,
	.remove		= gpuvirt_sim_pci_remove,
	.sriov_configure = gpuvirt_sim_pci_sriov_configure,
	/* the core's files, so that they exist when udev hears of the bind */
	.dev_groups	= gpuvirt_gpu_groups,
	.driver.suppress_bind_attrs = true,
};

/* A VF of one of our PFs: the core makes it typeable (SR-IOV vGPUs). */
static int gpuvirt_sim_vf_probe(struct pci_dev *pdev,
				const struct pci_device_id *id)
{
	if (!pdev->is_virtfn || !gpuvirt_sim_pci_sdev(pdev))
		return -ENODEV;
	return gpuvirt_vf_add(pdev);
}

static void gpuvirt_sim_vf_remove(struct pci_dev *pdev)
{
	gpuvirt_vf_del(pdev);
}

static const struct pci_device_id gpuvirt_sim_vf_ids[] = {
	{ PCI_DEVICE(GPUVIRT_SIM_PCI_VENDOR, GPUVIRT_SIM_PCI_VF_DEVICE) },
	{ }
};

struct pci_driver gpuvirt_sim_vf_driver = {
	.name		= GPUVIRT_SIM_DRV_NAME "_vf",
	.id_table	= gpuvirt_sim_vf_ids,
	.probe		= gpuvirt_sim_vf_probe,
	.remove		= gpuvirt_sim_vf_remove,
	.dev_groups	= gpuvirt_vf_groups,
	.driver.suppress_bind_attrs = true,
};
