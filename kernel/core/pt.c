// SPDX-License-Identifier: GPL-2.0-only
/*
 * Passthrough over netlink: pt-get reports what the kernel knows of a PCI
 * device that userspace cannot read for itself, or not as reliably: the
 * members of its IOMMU group as the IOMMU core has them, whether the PCI
 * core can reset it, whether it is the boot VGA device the VGA arbiter
 * picked, and, when it is bound to gpuvirt_vfio_pci, that driver's state
 * (open, quarantined, who opened it, its counters). gpuvirt_vfio_pci sends
 * its open, close and quarantine events through gpuvirt_pt_notify().
 *
 * gpuvirtctl's "pt check" makes the verdict from sysfs, where every fact
 * is also readable without this module; "pt show" adds this view.
 */
#include <linux/iommu.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/vgaarb.h>
#include <net/genetlink.h>

#include "gpuvirt.h"
#include "gpuvirt_pt.h"
#include "netlink-gen.h"

/*
 * The registered passthrough driver, or NULL. Its state op is called with
 * the lock held, so unregistering waits for calls in flight.
 */
static DEFINE_MUTEX(gpuvirt_pt_lock);
static const struct gpuvirt_pt_provider *gpuvirt_pt_provider;

/**
 * gpuvirt_pt_provider_register() - the passthrough driver is here
 * @p: its provider; stays valid until unregistered
 *
 * Return: 0, or -EBUSY when another provider is registered.
 */
int gpuvirt_pt_provider_register(const struct gpuvirt_pt_provider *p)
{
	int err = 0;

	mutex_lock(&gpuvirt_pt_lock);
	if (gpuvirt_pt_provider)
		err = -EBUSY;
	else
		gpuvirt_pt_provider = p;
	mutex_unlock(&gpuvirt_pt_lock);
	return err;
}
EXPORT_SYMBOL_GPL(gpuvirt_pt_provider_register);

/**
 * gpuvirt_pt_provider_unregister() - the passthrough driver is going
 * @p: the provider registered before
 *
 * On return the core no longer calls @p.
 */
void gpuvirt_pt_provider_unregister(const struct gpuvirt_pt_provider *p)
{
	mutex_lock(&gpuvirt_pt_lock);
	if (gpuvirt_pt_provider == p)
		gpuvirt_pt_provider = NULL;
	mutex_unlock(&gpuvirt_pt_lock);
}
EXPORT_SYMBOL_GPL(gpuvirt_pt_provider_unregister);

/* The name of the driver bound to @dev, a snapshot; NULL when none. */
static const char *gpuvirt_pt_driver(struct device *dev)
{
	struct device_driver *drv = READ_ONCE(dev->driver);

	return drv ? drv->name : NULL;
}

static int gpuvirt_pt_put_member(struct device *dev, void *data)
{
	const char *drv = gpuvirt_pt_driver(dev);
	struct sk_buff *skb = data;
	struct pci_dev *pdev;
	struct nlattr *nest;

	nest = nla_nest_start(skb, GPUVIRT_A_PT_MEMBERS);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_string(skb, GPUVIRT_A_PT_MEMBER_BDF, dev_name(dev)) ||
	    (drv && nla_put_string(skb, GPUVIRT_A_PT_MEMBER_DRIVER, drv)))
		goto err_cancel;
	if (dev_is_pci(dev)) {
		pdev = to_pci_dev(dev);
		if (nla_put_u32(skb, GPUVIRT_A_PT_MEMBER_CLASS, pdev->class) ||
		    nla_put_u8(skb, GPUVIRT_A_PT_MEMBER_BRIDGE,
			       pci_is_bridge(pdev)))
			goto err_cancel;
	}
	nla_nest_end(skb, nest);
	return 0;

err_cancel:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

static int gpuvirt_pt_put_state(struct sk_buff *skb,
				const struct gpuvirt_pt_state *st)
{
	if (nla_put_u8(skb, GPUVIRT_A_PT_BOUND, 1) ||
	    nla_put_u8(skb, GPUVIRT_A_PT_OPEN, st->open) ||
	    nla_put_u8(skb, GPUVIRT_A_PT_QUARANTINED, st->quarantined) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_PT_OPENS, st->opens,
			      GPUVIRT_A_PT_PAD) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_PT_CLOSES, st->closes,
			      GPUVIRT_A_PT_PAD) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_PT_REFUSED, st->refused,
			      GPUVIRT_A_PT_PAD) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_PT_RESETS, st->resets,
			      GPUVIRT_A_PT_PAD) ||
	    nla_put_u64_64bit(skb, GPUVIRT_A_PT_FAILURES, st->failures,
			      GPUVIRT_A_PT_PAD))
		return -EMSGSIZE;
	if (st->opener_pid &&
	    (nla_put_u32(skb, GPUVIRT_A_PT_OPENER_PID, st->opener_pid) ||
	     nla_put_string(skb, GPUVIRT_A_PT_OPENER_COMM, st->opener_comm)))
		return -EMSGSIZE;
	if (st->quarantined &&
	    nla_put_string(skb, GPUVIRT_A_PT_REASON, st->reason))
		return -EMSGSIZE;
	return 0;
}

/* What a pt message is of: a device, its state, and whether its group's. */
struct gpuvirt_pt_msg {
	struct pci_dev *pdev;
	const struct gpuvirt_pt_state *st;
	bool members;
};

/*
 * One pt message for @pdev. With @members, the IOMMU group's devices too
 * (taking the group's lock); @st is the driver's state, NULL when the
 * device is not bound to it.
 */
static int gpuvirt_pt_fill(struct sk_buff *skb, void *obj,
			   const struct gpuvirt_nl_msg *m)
{
	const struct gpuvirt_pt_msg *pt = obj;
	const struct gpuvirt_pt_state *st = pt->st;
	struct pci_dev *pdev = pt->pdev;
	const char *drv = gpuvirt_pt_driver(&pdev->dev);
	struct iommu_group *group;
	void *hdr;
	int err;

	hdr = gpuvirt_nl_put_hdr(skb, m);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_string(skb, GPUVIRT_A_PT_BDF, pci_name(pdev)) ||
	    nla_put_u32(skb, GPUVIRT_A_PT_VENDOR, pdev->vendor) ||
	    nla_put_u32(skb, GPUVIRT_A_PT_DEVICE, pdev->device) ||
	    nla_put_u32(skb, GPUVIRT_A_PT_CLASS, pdev->class) ||
	    (drv && nla_put_string(skb, GPUVIRT_A_PT_DRIVER, drv)) ||
	    nla_put_u8(skb, GPUVIRT_A_PT_BOOT_VGA,
		       vga_default_device() == pdev) ||
	    nla_put_u8(skb, GPUVIRT_A_PT_RESET, !!pdev->reset_methods[0]))
		goto err_cancel;

	group = iommu_group_get(&pdev->dev);
	if (group) {
		err = nla_put_u32(skb, GPUVIRT_A_PT_IOMMU_GROUP,
				  iommu_group_id(group));
		if (!err && pt->members)
			err = iommu_group_for_each_dev(group, skb,
						       gpuvirt_pt_put_member);
		iommu_group_put(group);
		if (err)
			goto err_cancel;
	}
	if (st ? gpuvirt_pt_put_state(skb, st) :
	    nla_put_u8(skb, GPUVIRT_A_PT_BOUND, 0))
		goto err_cancel;
	genlmsg_end(skb, hdr);
	return 0;

err_cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* "DDDD:BB:DD.F", or "BB:DD.F" in domain 0; a referenced device. */
static struct pci_dev *gpuvirt_pt_lookup(const char *bdf)
{
	unsigned int dom = 0, bus, dev, fn;
	int n = 0;

	if (sscanf(bdf, "%x:%x:%x.%x%n", &dom, &bus, &dev, &fn, &n) != 4 ||
	    bdf[n]) {
		dom = 0;
		n = 0;
		if (sscanf(bdf, "%x:%x.%x%n", &bus, &dev, &fn, &n) != 3 ||
		    bdf[n])
			return ERR_PTR(-EINVAL);
	}
	if (dom > 0xffff || bus > 0xff || dev > 0x1f || fn > 7)
		return ERR_PTR(-EINVAL);
	return pci_get_domain_bus_and_slot(dom, bus, PCI_DEVFN(dev, fn)) ?:
	       ERR_PTR(-ENODEV);
}

int gpuvirt_nl_pt_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *bdf = info->attrs[GPUVIRT_A_PT_BDF];
	struct gpuvirt_nl_msg m = {
		.portid = info->snd_portid,
		.seq = info->snd_seq,
		.cmd = GPUVIRT_CMD_PT_GET,
	};
	struct gpuvirt_pt_msg pt = { .members = true };
	struct gpuvirt_pt_state st;
	struct pci_dev *pdev;
	struct sk_buff *msg;
	bool bound = false;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, GPUVIRT_A_PT_BDF)) {
		NL_SET_ERR_MSG(info->extack, "PCI address (bdf) is required");
		return -EINVAL;
	}
	pdev = gpuvirt_pt_lookup(nla_data(bdf));
	if (IS_ERR(pdev)) {
		if (PTR_ERR(pdev) == -EINVAL)
			NL_SET_ERR_MSG_ATTR(info->extack, bdf,
					    "not a PCI address: use DDDD:BB:DD.F");
		else
			NL_SET_ERR_MSG_ATTR(info->extack, bdf,
					    "no PCI device at this address");
		return PTR_ERR(pdev);
	}

	mutex_lock(&gpuvirt_pt_lock);
	if (gpuvirt_pt_provider) {
		memset(&st, 0, sizeof(st));
		bound = !gpuvirt_pt_provider->state(pdev, &st);
	}
	mutex_unlock(&gpuvirt_pt_lock);

	pt.pdev = pdev;
	pt.st = bound ? &st : NULL;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg) {
		err = -ENOMEM;
		goto out_put_pdev;
	}
	err = gpuvirt_pt_fill(msg, &pt, &m);
	if (err) {
		NL_SET_ERR_MSG(info->extack, "the device's IOMMU group does not fit in a message");
		nlmsg_free(msg);
		goto out_put_pdev;
	}
	err = genlmsg_reply(msg, info);
out_put_pdev:
	pci_dev_put(pdev);
	return err;
}

/**
 * gpuvirt_pt_notify() - tell the monitor group about a passthrough event
 * @pdev: a device bound to the passthrough driver
 * @event: what happened
 * @st: the driver's state of @pdev after it
 *
 * The message leaves out the group's members: the caller may hold VFIO's
 * locks, and the group's lock is not to be taken under them.
 */
void gpuvirt_pt_notify(struct pci_dev *pdev, enum gpuvirt_pt_event event,
		       const struct gpuvirt_pt_state *st)
{
	static const u8 cmds[] = {
		[GPUVIRT_PT_EVENT_OPEN]		= GPUVIRT_CMD_PT_OPEN_NTF,
		[GPUVIRT_PT_EVENT_CLOSE]	= GPUVIRT_CMD_PT_CLOSE_NTF,
		[GPUVIRT_PT_EVENT_QUARANTINE]	= GPUVIRT_CMD_PT_QUARANTINE_NTF,
	};
	struct gpuvirt_pt_msg pt = { .pdev = pdev, .st = st };

	if (event < ARRAY_SIZE(cmds))
		gpuvirt_nl_notify(gpuvirt_pt_fill, &pt, cmds[event]);
}
EXPORT_SYMBOL_GPL(gpuvirt_pt_notify);
