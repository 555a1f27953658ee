/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel API differences between the supported kernels (Debian 12's 6.1
 * and 6.12 lines, Debian 13's 6.12, and the newest 7.x from
 * trixie-backports). Each shim is fed by a compile probe in kernel/probes/,
 * whose result scripts/compat-probe.sh writes to compat-probed.h in the
 * per-kernel build tree. There are no version checks here: a kernel either has an API
 * or it does not.
 *
 * This is the one file where checkpatch's CONST_STRUCT check is waived: its
 * job is to name the writable types that old kernels still require.
 */
#ifndef GPUVIRT_COMPAT_H
#define GPUVIRT_COMPAT_H

#include <linux/netlink.h>

#include "compat-probed.h"

/*
 * 2026-12: bus attribute callbacks take a const struct bus_type since v6.3;
 * v6.1 passes a mutable one. Probe: bus_attr_const_bus.
 */
#ifdef GPUVIRT_HAVE_BUS_ATTR_CONST_BUS
#define gpuvirt_bus_type_cb	const struct bus_type
#else
#define gpuvirt_bus_type_cb	struct bus_type
#endif

/*
 * 2026-12: bus_register(), struct device and struct device_driver take a
 * const struct bus_type since v6.4/v6.5; v6.1 needs it writable. Define a
 * bus with GPUVIRT_DEFINE_BUS(name) so it is const where it can be.
 * Probe: const_bus_type.
 */
#ifdef GPUVIRT_HAVE_CONST_BUS_TYPE
#define GPUVIRT_DEFINE_BUS(name)	static const struct bus_type name
#else
#define GPUVIRT_DEFINE_BUS(name)	static struct bus_type name
#endif

/*
 * 2026-12: vfio_device_ops gained bind_iommufd, unbind_iommufd, attach_ioas
 * and detach_ioas, with the vfio_iommufd_physical_*() helpers for a physical
 * device, in v6.2; 6.1 has none. Use GPUVIRT_VFIO_IOMMUFD_PHYSICAL_OPS inside
 * a vfio_device_ops initializer (after including <linux/vfio.h>): it fills
 * those members where they exist (the helpers are NULL there when
 * CONFIG_IOMMUFD is off) and is empty on 6.1.
 * Probe: vfio_iommufd_physical_ops.
 */
#ifdef GPUVIRT_HAVE_VFIO_IOMMUFD_PHYSICAL_OPS
#define GPUVIRT_VFIO_IOMMUFD_PHYSICAL_OPS				\
	.bind_iommufd	= vfio_iommufd_physical_bind,			\
	.unbind_iommufd	= vfio_iommufd_physical_unbind,			\
	.attach_ioas	= vfio_iommufd_physical_attach_ioas,		\
	.detach_ioas	= vfio_iommufd_physical_detach_ioas,
#else
#define GPUVIRT_VFIO_IOMMUFD_PHYSICAL_OPS
#endif

/*
 * 2026-12: the same callbacks for emulated (mdev) devices use the
 * vfio_iommufd_emulated_*() helpers, also new in v6.2.
 * Probe: vfio_iommufd_emulated_ops.
 */
#ifdef GPUVIRT_HAVE_VFIO_IOMMUFD_EMULATED_OPS
#define GPUVIRT_VFIO_IOMMUFD_EMULATED_OPS				\
	.bind_iommufd	= vfio_iommufd_emulated_bind,			\
	.unbind_iommufd	= vfio_iommufd_emulated_unbind,			\
	.attach_ioas	= vfio_iommufd_emulated_attach_ioas,		\
	.detach_ioas	= vfio_iommufd_emulated_detach_ioas,
#else
#define GPUVIRT_VFIO_IOMMUFD_EMULATED_OPS
#endif

/*
 * 2026-12: vfio_device_ops gained pasid_attach_ioas and pasid_detach_ioas
 * in v6.15, with vfio_iommufd_physical_pasid_*() helpers that a physical
 * device uses as vfio-pci does. GPUVIRT_VFIO_IOMMUFD_PHYSICAL_PASID_OPS
 * goes inside a vfio_device_ops initializer; it is empty where the
 * members do not exist. Probe: vfio_iommufd_physical_pasid.
 */
#ifdef GPUVIRT_HAVE_VFIO_IOMMUFD_PHYSICAL_PASID
#define GPUVIRT_VFIO_IOMMUFD_PHYSICAL_PASID_OPS				\
	.pasid_attach_ioas = vfio_iommufd_physical_pasid_attach_ioas,	\
	.pasid_detach_ioas = vfio_iommufd_physical_pasid_detach_ioas,
#else
#define GPUVIRT_VFIO_IOMMUFD_PHYSICAL_PASID_OPS
#endif

/*
 * 2026-12: since v6.19 the VFIO core answers VFIO_DEVICE_GET_REGION_INFO
 * itself: it copies the request in, calls vfio_device_ops'
 * get_region_info_caps with the region's info and an empty capability
 * chain, and copies both out. The ioctl no longer reaches ops->ioctl, and
 * a driver without the op answers -EINVAL. Before, each driver did all of
 * it in its ioctl op. The vGPU (vgpu.c) sets the op where
 * GPUVIRT_HAVE_VFIO_GET_REGION_INFO_CAPS says it exists and calls it from
 * its ioctl op elsewhere. GPUVIRT_VFIO_PCI_REGION_INFO_OPS, inside a
 * vfio_device_ops initializer, sets it to vfio-pci-core's
 * vfio_pci_ioctl_get_region_info(); it is empty on older kernels, where
 * vfio_pci_core_ioctl() answers the ioctl. Probe: vfio_get_region_info_caps.
 */
#ifdef GPUVIRT_HAVE_VFIO_GET_REGION_INFO_CAPS
#define GPUVIRT_VFIO_PCI_REGION_INFO_OPS				\
	.get_region_info_caps = vfio_pci_ioctl_get_region_info,
#else
#define GPUVIRT_VFIO_PCI_REGION_INFO_OPS
#endif

/*
 * 2026-12: since v6.17 vfio_pci_core_match() checks the VF token through
 * vfio_device_ops' match_token_uuid, which it calls without checking
 * that it is set; vfio-pci-core exports vfio_pci_core_match_token_uuid()
 * for it. A variant driver that uses vfio_pci_core_match() puts
 * GPUVIRT_VFIO_PCI_MATCH_TOKEN_OPS in its ops; it is empty on older
 * kernels, where the match op checks the token itself.
 * Probe: vfio_match_token_uuid.
 */
#ifdef GPUVIRT_HAVE_VFIO_MATCH_TOKEN_UUID
#define GPUVIRT_VFIO_PCI_MATCH_TOKEN_OPS				\
	.match_token_uuid = vfio_pci_core_match_token_uuid,
#else
#define GPUVIRT_VFIO_PCI_MATCH_TOKEN_OPS
#endif

/*
 * 2026-12: a VFIO driver's release callback must end with
 * vfio_free_device() on v6.1; since v6.4 the core frees the device and the
 * function is gone. Call gpuvirt_vfio_release_done() at the end of release.
 * Probe: vfio_free_device.
 */
#ifdef GPUVIRT_HAVE_VFIO_FREE_DEVICE
#define gpuvirt_vfio_release_done(vdev)	vfio_free_device(vdev)
#else
#define gpuvirt_vfio_release_done(vdev)	((void)(vdev))
#endif

/*
 * 2026-12: VFIO migration pre-copy (the PRE_COPY states, the precopy info
 * ioctl and migration_get_data_size) came in v6.2; v6.1 has STOP_COPY and
 * P2P only. GPUVIRT_HAVE_VFIO_MIG_PRE_COPY gates that code in migration.c.
 * Probe: vfio_mig_pre_copy.
 */

/*
 * 2026-12: the VFIO core reports a device's DMA log only where it has
 * iova_bitmap: always from v6.1 to v6.9, from v6.10 with
 * CONFIG_IOMMUFD_DRIVER only (Debian's 6.12 and 7.x kernels have none).
 * vgpu.c offers the log (vfio_device.log_ops) only where a report can
 * succeed: a VMM that started a log whose reports fail fails the
 * migration, where without one it is told up front. Probe:
 * vfio_dma_log_report.
 */

/*
 * 2026-12: eventfd_signal() lost its count argument in v6.8; v6.1 takes
 * (ctx, 1). Probe: eventfd_signal_one_arg.
 */
#ifdef GPUVIRT_HAVE_EVENTFD_SIGNAL_ONE_ARG
#define gpuvirt_eventfd_signal(ctx)	eventfd_signal(ctx)
#else
#define gpuvirt_eventfd_signal(ctx)	eventfd_signal(ctx, 1)
#endif

/*
 * 2026-12: vma->vm_flags is written through vm_flags_set() since v6.3,
 * where the field became read-only; v6.1 writes it directly (under the
 * mmap lock, as in an mmap handler). Probe: vm_flags_set.
 */
#ifdef GPUVIRT_HAVE_VM_FLAGS_SET
#define gpuvirt_vm_flags_set(vma, flags)	vm_flags_set(vma, flags)
#define gpuvirt_vm_flags_clear(vma, flags)	vm_flags_clear(vma, flags)
#else
#define gpuvirt_vm_flags_set(vma, flags)	((vma)->vm_flags |= (flags))
#define gpuvirt_vm_flags_clear(vma, flags)	((vma)->vm_flags &= ~(flags))
#endif

/*
 * 2026-12: a dump's parsed request attributes moved into the genl_info
 * embedded in struct genl_dumpit_info in v6.2; v6.1 has them as its attrs.
 * Probe: genl_dumpit_info_info.
 */
#ifdef GPUVIRT_HAVE_GENL_DUMPIT_INFO_INFO
#define gpuvirt_genl_dump_attrs(cb)	(genl_dumpit_info(cb)->info.attrs)
#else
#define gpuvirt_genl_dump_attrs(cb)	(genl_dumpit_info(cb)->attrs)
#endif

/*
 * 2026-12: the YNL generator emits NLA_POLICY_FULL_RANGE() with a pointer
 * to a const range; v6.1's struct nla_policy has a non-const pointer
 * there, though the kernel only ever reads through it. Give v6.1 a
 * version that drops the qualifier. Probe: nla_const_range.
 */
#if !defined(GPUVIRT_HAVE_NLA_CONST_RANGE) && defined(NLA_POLICY_FULL_RANGE)
#undef NLA_POLICY_FULL_RANGE
#define NLA_POLICY_FULL_RANGE(tp, _range) {				\
	.type = NLA_ENSURE_UINT_TYPE(tp),				\
	.validation_type = NLA_VALIDATE_RANGE_PTR,			\
	.range = (struct netlink_range_validation *)(_range),		\
}
#endif

/*
 * 2026-12: joining a multicast group can require CAP_NET_ADMIN since v6.6
 * (GENL_MCAST_CAP_NET_ADMIN); Debian's 6.1 has it from stable. Without it
 * anyone may listen. Probe: genl_mcast_cap.
 */
#ifdef GPUVIRT_HAVE_GENL_MCAST_CAP
#define GPUVIRT_GENL_MCAST_ADMIN	GENL_MCAST_CAP_NET_ADMIN
#else
#define GPUVIRT_GENL_MCAST_ADMIN	0
#endif

/*
 * 2026-12: formatted extack messages (NL_SET_ERR_MSG_FMT, into an 80-byte
 * buffer in the extack) came in v6.2. v6.1 can only point the extack at
 * a string that outlives the request, so there the message is @fixed, a
 * string constant that says the same without the details. Probe:
 * nl_set_err_msg_fmt.
 */
static inline void gpuvirt_nl_err_str(struct netlink_ext_ack *extack,
				      const char *fixed, const char *msg)
{
#ifdef GPUVIRT_HAVE_NL_SET_ERR_MSG_FMT
	/* the buffer holds 79 characters */
	NL_SET_ERR_MSG_FMT(extack, "%.79s", msg);
#else
	/* what NL_SET_ERR_MSG() does, for a string chosen at run time */
	if (extack)
		extack->_msg = fixed;
#endif
}

/*
 * 2026-12: generic netlink takes split do/dump operations, each with its
 * own policy and its own pre_doit/post_doit or start/done hooks, since
 * v6.2 (struct genl_split_ops); v6.1 has only struct genl_ops, one per
 * command, and one pre_doit/post_doit for the whole family. The YNL
 * generator emits a split table (netlink-gen.c) whose hooks take a
 * struct genl_split_ops. v6.1 gets the type here, with the members the
 * generator fills, and netlink.c turns the table into genl_ops at init,
 * calling each command's hooks from the family's. Probe: genl_split_ops.
 */
#ifndef GPUVIRT_HAVE_GENL_SPLIT_OPS
struct genl_info;
struct netlink_callback;
struct nla_policy;
struct sk_buff;

struct genl_split_ops {
	int (*pre_doit)(const struct genl_split_ops *ops, struct sk_buff *skb,
			struct genl_info *info);
	int (*doit)(struct sk_buff *skb, struct genl_info *info);
	void (*post_doit)(const struct genl_split_ops *ops,
			  struct sk_buff *skb, struct genl_info *info);
	int (*start)(struct netlink_callback *cb);
	int (*dumpit)(struct sk_buff *skb, struct netlink_callback *cb);
	int (*done)(struct netlink_callback *cb);
	const struct nla_policy *policy;
	unsigned int maxattr;
	u8 cmd;
	u8 internal_flags;
	u8 flags;
	u8 validate;
};
#endif

/*
 * 2026-12: NL_ASSERT_CTX_FITS() checks at build time that a dump's state
 * fits in struct netlink_callback's ctx. It is called that since after
 * v6.12 (7.3 has only this name); v6.3 to v6.12 call it
 * NL_ASSERT_DUMP_CTX_FITS(), and v6.1 has the ctx but not the check.
 * Probe: none needed, the macros are tested directly.
 */
#ifndef NL_ASSERT_CTX_FITS
#define NL_ASSERT_CTX_FITS(type_name)					\
	BUILD_BUG_ON(sizeof(type_name) >				\
		     sizeof_field(struct netlink_callback, ctx))
#endif

/*
 * 2026-12: the per-CPU system workqueue is system_percpu_wq since v6.17
 * (Debian's 6.12 has it from stable); system_wq is its old name, which
 * those kernels mark deprecated and v7.x warns about once, when work is
 * first queued on it. Queue on gpuvirt_system_wq. Probe: system_percpu_wq.
 */
#ifdef GPUVIRT_HAVE_SYSTEM_PERCPU_WQ
#define gpuvirt_system_wq	system_percpu_wq
#else
#define gpuvirt_system_wq	system_wq
#endif

#endif /* GPUVIRT_COMPAT_H */
