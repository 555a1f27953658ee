/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/*
 * The guest-visible gpuvirt vGPU: a PCI device handed to a VM over VFIO.
 * Documentation/vgpu-abi.rst describes it in full; this header gives the
 * numbers. All registers are little-endian and 32 bits wide; 64-bit values
 * are split in _LO and _HI halves.
 */
#ifndef _UAPI_LINUX_GPUVIRT_VGPU_H
#define _UAPI_LINUX_GPUVIRT_VGPU_H

/*
 * PCI identity. 0x1234 is the vendor id that QEMU's emulated devices use and
 * that PCI-SIG has never assigned; the device id is ours within it.
 */
#define GPUVIRT_VGPU_PCI_VENDOR_ID	0x1234
#define GPUVIRT_VGPU_PCI_DEVICE_ID	0x6776
#define GPUVIRT_VGPU_PCI_CLASS		0x030200	/* 3D controller */
#define GPUVIRT_VGPU_PCI_REVISION	0x01		/* ABI version */

/* BARs: BAR0 registers, BAR2 (64-bit, prefetchable) the VRAM slice. */
#define GPUVIRT_VGPU_REGS_BAR		0
#define GPUVIRT_VGPU_REGS_SIZE		0x1000
#define GPUVIRT_VGPU_VRAM_BAR		2

/* BAR0 registers (byte offsets). RO: read-only, RW: read-write. */
#define GPUVIRT_VGPU_REG_MAGIC		0x000	/* RO: GPUVIRT_VGPU_MAGIC */
#define GPUVIRT_VGPU_REG_VERSION	0x004	/* RO: GPUVIRT_VGPU_VERSION */
#define GPUVIRT_VGPU_REG_VRAM_SIZE_LO	0x008	/* RO: slice size in bytes */
#define GPUVIRT_VGPU_REG_VRAM_SIZE_HI	0x00c
#define GPUVIRT_VGPU_REG_CAPS		0x010	/* RO: GPUVIRT_VGPU_CAP_* */
#define GPUVIRT_VGPU_REG_STATUS		0x014	/* RO: GPUVIRT_VGPU_STATUS_* */
#define GPUVIRT_VGPU_REG_SCRATCH	0x018	/* RW: free for the driver */
#define GPUVIRT_VGPU_REG_IRQ_STATUS	0x020	/* RW1C: GPUVIRT_VGPU_IRQ_* pending */
#define GPUVIRT_VGPU_REG_IRQ_RAISE	0x024	/* WO: raise GPUVIRT_VGPU_IRQ_SW */

#define GPUVIRT_VGPU_MAGIC		0x56555047	/* "GPUV" */
#define GPUVIRT_VGPU_VERSION		1

#define GPUVIRT_VGPU_CAP_VRAM		(1U << 0)	/* BAR2 VRAM slice */
#define GPUVIRT_VGPU_CAP_SWIRQ		(1U << 1)	/* IRQ_RAISE works */

/* Interrupt causes, in IRQ_STATUS. */
#define GPUVIRT_VGPU_IRQ_SW		(1U << 0)	/* raised through IRQ_RAISE */

#define GPUVIRT_VGPU_STATUS_READY	(1U << 0)

#endif /* _UAPI_LINUX_GPUVIRT_VGPU_H */
