/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/*
 * The guest-visible gpuvirt vGPU: a PCI device handed to a VM over VFIO.
 * Documentation/vgpu/vgpu-abi.rst describes it in full; this header gives the
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

/* The command ring (see "Command ring" in the ABI document). */
#define GPUVIRT_VGPU_REG_RING_BASE_LO	0x040	/* RW: ring offset in the slice */
#define GPUVIRT_VGPU_REG_RING_BASE_HI	0x044
#define GPUVIRT_VGPU_REG_RING_SIZE	0x048	/* RW: bytes, power of 2; 0 = off */
#define GPUVIRT_VGPU_REG_RING_HEAD	0x04c	/* RO: next byte the engine reads */
#define GPUVIRT_VGPU_REG_RING_TAIL	0x050	/* RW: doorbell: end of new work */
#define GPUVIRT_VGPU_REG_FENCE		0x054	/* RO: last completed fence seqno */
#define GPUVIRT_VGPU_REG_ERROR		0x058	/* RO: GPUVIRT_VGPU_ERR_* */
#define GPUVIRT_VGPU_REG_ERROR_HEAD	0x05c	/* RO: ring offset of the bad packet */
#define GPUVIRT_VGPU_REG_CONTROL	0x060	/* WO: GPUVIRT_VGPU_CTRL_* */
#define GPUVIRT_VGPU_REG_DONE_LO	0x068	/* RO: packets completed */
#define GPUVIRT_VGPU_REG_DONE_HI	0x06c

/*
 * Display (CAP_DISPLAY; see "Display heads" in the ABI document). The
 * global registers say what the vGPU's type offers; each head has a block
 * of registers at GPUVIRT_VGPU_REG_HEAD(n). The mode registers are staged
 * and take effect when HEAD_CONTROL is written.
 */
#define GPUVIRT_VGPU_REG_DISP_HEADS	0x080	/* RO: heads offered */
#define GPUVIRT_VGPU_REG_DISP_MAX_WIDTH	0x084	/* RO: widest mode, pixels */
#define GPUVIRT_VGPU_REG_DISP_MAX_HEIGHT 0x088	/* RO: tallest mode, lines */
#define GPUVIRT_VGPU_REG_DISP_FRL	0x08c	/* RO: vblanks per second */
#define GPUVIRT_VGPU_REG_DISP_STATUS	0x090	/* RO: GPUVIRT_VGPU_DISP_* */

/* DISP_STATUS bits. */
#define GPUVIRT_VGPU_DISP_FRL_ON	(1U << 0)	/* flips wait for vblank */

#define GPUVIRT_VGPU_HEADS_MAX		4	/* head register blocks */
#define GPUVIRT_VGPU_REG_HEAD(n)	(0x100 + (n) * 0x40)
#define GPUVIRT_VGPU_HEAD_CONTROL	0x00	/* RW: commit, HEAD_CTRL_* */
#define GPUVIRT_VGPU_HEAD_BASE_LO	0x04	/* RW: scanout offset in slice */
#define GPUVIRT_VGPU_HEAD_BASE_HI	0x08
#define GPUVIRT_VGPU_HEAD_WIDTH		0x0c	/* RW: pixels */
#define GPUVIRT_VGPU_HEAD_HEIGHT	0x10	/* RW: lines */
#define GPUVIRT_VGPU_HEAD_STRIDE	0x14	/* RW: bytes from line to line */
#define GPUVIRT_VGPU_HEAD_FORMAT	0x18	/* RW: GPUVIRT_VGPU_FMT_* */
#define GPUVIRT_VGPU_HEAD_ERROR		0x1c	/* RO: GPUVIRT_VGPU_DERR_* */
#define GPUVIRT_VGPU_HEAD_VBLANK	0x20	/* RO: vblanks while enabled */
#define GPUVIRT_VGPU_HEAD_FLIPS		0x24	/* RO: commits that took effect */

/* HEAD_CONTROL bits. */
#define GPUVIRT_VGPU_HEAD_CTRL_ENABLE	(1U << 0)	/* scan out */
#define GPUVIRT_VGPU_HEAD_CTRL_VBLANK_IRQ (1U << 1)	/* raise IRQ_VBLANK */

/* Pixel formats: DRM fourcc codes. */
#define GPUVIRT_VGPU_FMT_XRGB8888	0x34325258	/* "XR24", 4 bytes */

/* Scanout base alignment, and the largest stride. */
#define GPUVIRT_VGPU_SCANOUT_ALIGN	0x1000
#define GPUVIRT_VGPU_STRIDE_MAX		0x10000

/* HEAD_ERROR: why the last commit was refused; the head is then off. */
#define GPUVIRT_VGPU_DERR_NONE		0
#define GPUVIRT_VGPU_DERR_HEAD		1	/* head not offered by the type */
#define GPUVIRT_VGPU_DERR_MODE		2	/* width/height 0 or too large */
#define GPUVIRT_VGPU_DERR_FORMAT	3	/* unknown pixel format */
#define GPUVIRT_VGPU_DERR_STRIDE	4	/* too small, too large, unaligned */
#define GPUVIRT_VGPU_DERR_RANGE		5	/* scanout outside the slice */
#define GPUVIRT_VGPU_DERR_ALIGN		6	/* base not SCANOUT_ALIGN-aligned */

/*
 * The VFIO region a VMM reads the primary plane (head 0) from; see
 * "Display region" in the ABI document.
 */
#define GPUVIRT_VGPU_DISPLAY_REGION	9	/* VFIO_PCI_NUM_REGIONS */
#define GPUVIRT_VGPU_DISPLAY_REGION_SUBTYPE 1

#define GPUVIRT_VGPU_RING_SIZE_MIN	0x1000
#define GPUVIRT_VGPU_RING_SIZE_MAX	0x100000

/* CONTROL bits. */
#define GPUVIRT_VGPU_CTRL_CLEAR_ERROR	(1U << 0)	/* resume at RING_TAIL */

/* ERROR codes; the engine stops at the bad packet until CLEAR_ERROR. */
#define GPUVIRT_VGPU_ERR_NONE		0
#define GPUVIRT_VGPU_ERR_OPCODE		1	/* unknown opcode */
#define GPUVIRT_VGPU_ERR_LENGTH		2	/* wrong length for the opcode */
#define GPUVIRT_VGPU_ERR_ADDRESS	3	/* an address outside the slice */
#define GPUVIRT_VGPU_ERR_ALIGN		4	/* a misaligned address or size */
#define GPUVIRT_VGPU_ERR_RING		5	/* bad ring base, size or tail */
#define GPUVIRT_VGPU_ERR_MEMORY		6	/* the host could not back VRAM */
#define GPUVIRT_VGPU_ERR_ARG		7	/* an argument out of range */
#define GPUVIRT_VGPU_ERR_ENGINE		8	/* the engine faulted running it */
#define GPUVIRT_VGPU_ERR_HANG		9	/* it hung the engine; engine reset */

/*
 * Packets: a header dword, then arguments, all little-endian dwords; 64-bit
 * arguments are two dwords, low first. Offsets are in the vGPU's slice.
 */
#define GPUVIRT_VGPU_PKT_OPCODE(h)	((h) & 0xff)
#define GPUVIRT_VGPU_PKT_DWORDS(h)	(((h) >> 8) & 0xff)
#define GPUVIRT_VGPU_PKT_FLAGS(h)	((h) >> 16)
#define GPUVIRT_VGPU_PKT(op, dwords, flags) \
	((op) | ((dwords) << 8) | ((flags) << 16))

#define GPUVIRT_VGPU_PKT_FLAG_IRQ	(1U << 0)	/* FENCE: raise IRQ_FENCE */

#define GPUVIRT_VGPU_OP_NOP		0x00	/* 1 dword */
#define GPUVIRT_VGPU_OP_FENCE		0x01	/* 4: seqno, addr lo/hi (~0: none) */
#define GPUVIRT_VGPU_OP_FILL		0x02	/* 6: dst lo/hi, len lo/hi, pattern */
#define GPUVIRT_VGPU_OP_COPY		0x03	/* 7: dst lo/hi, src lo/hi, len lo/hi */
#define GPUVIRT_VGPU_OP_COMPUTE		0x04	/* 5: cost_us, dst lo/hi, seed */

#define GPUVIRT_VGPU_MAGIC		0x56555047	/* "GPUV" */
#define GPUVIRT_VGPU_VERSION		1

#define GPUVIRT_VGPU_CAP_VRAM		(1U << 0)	/* BAR2 VRAM slice */
#define GPUVIRT_VGPU_CAP_SWIRQ		(1U << 1)	/* IRQ_RAISE works */
#define GPUVIRT_VGPU_CAP_RING		(1U << 2)	/* the command ring */
#define GPUVIRT_VGPU_CAP_DISPLAY	(1U << 3)	/* display heads */

/* Interrupt causes, in IRQ_STATUS. */
#define GPUVIRT_VGPU_IRQ_SW		(1U << 0)	/* raised through IRQ_RAISE */
#define GPUVIRT_VGPU_IRQ_FENCE		(1U << 1)	/* a FENCE with FLAG_IRQ ran */
#define GPUVIRT_VGPU_IRQ_ERROR		(1U << 2)	/* the engine stopped */
#define GPUVIRT_VGPU_IRQ_VBLANK		(1U << 3)	/* a head's vblank */

/*
 * COMPUTE result: the 64-bit value written at dst is x after cost_us rounds
 * of x = x * GPUVIRT_VGPU_COMPUTE_MUL + GPUVIRT_VGPU_COMPUTE_ADD, from
 * x = seed.
 */
#define GPUVIRT_VGPU_COMPUTE_MAX_US	100000	/* longest COMPUTE: 100 ms */
#define GPUVIRT_VGPU_COMPUTE_MUL	6364136223846793005ULL
#define GPUVIRT_VGPU_COMPUTE_ADD	1442695040888963407ULL

#define GPUVIRT_VGPU_STATUS_READY	(1U << 0)
#define GPUVIRT_VGPU_STATUS_BUSY	(1U << 1)	/* HEAD != TAIL */
#define GPUVIRT_VGPU_STATUS_ERROR	(1U << 2)	/* stopped; see ERROR */

#endif /* _UAPI_LINUX_GPUVIRT_VGPU_H */
