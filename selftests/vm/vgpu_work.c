// SPDX-License-Identifier: GPL-2.0-only
/*
 * vgpu_work: run some work on one vGPU, as a guest driver would, and check
 * the results. Used by the demo; a small, complete example of the vGPU ABI.
 *
 * Usage: vgpu_work [-z] UUID | PCI-ADDRESS
 *
 * Opens the vGPU (an mdev by UUID, or an SR-IOV VF vGPU by its PCI address)
 * through the VFIO group API; with -z, first checks that the 8 MiB of VRAM
 * it works in read as zero, as a new tenant's must. Sets up a 4 KiB command ring at
 * the start of its VRAM, submits FILL, COPY, COMPUTE and a FENCE that raises
 * an interrupt, waits for the MSI, and checks the results in VRAM.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/vfio.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/gpuvirt_vgpu.h>

#include "vgpu_client.h"

#define REGION(i)	VGPU_REGION(i)
#define MAP_LEN		(8u << 20)

static int dev;

static void die(const char *what)
{
	fprintf(stderr, "vgpu_work: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint32_t rd(unsigned int reg)
{
	uint32_t v;

	if (pread(dev, &v, 4, REGION(VFIO_PCI_BAR0_REGION_INDEX) + reg) != 4)
		die("BAR0 read");
	return v;
}

static void wr(unsigned int reg, uint32_t v)
{
	if (pwrite(dev, &v, 4, REGION(VFIO_PCI_BAR0_REGION_INDEX) + reg) != 4)
		die("BAR0 write");
}

static int open_vgpu(const char *uuid)
{
	static struct vfio_user u;
	int err = vgpu_client_open_name(&u, uuid);

	if (err) {
		errno = -err;
		die(uuid);
	}
	return u.device;
}

int main(int argc, char **argv)
{
	struct pollfd pfd;
	uint32_t *vram, tail = 0, msi_on = 1, fence;
	uint64_t x, want, cnt;
	int32_t efd;
	unsigned int i;
	bool zero = false;
	const uint32_t pkts[] = {
		GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FILL, 6, 0),
		0x100000, 0, 0x100000, 0, 0x600dcafe,
		GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_COPY, 7, 0),
		0x300000, 0, 0x100000, 0, 0x1000, 0,
		GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_COMPUTE, 5, 0),
		5000, 0x400000, 0, 1234,
		GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_FENCE, 4, GPUVIRT_VGPU_PKT_FLAG_IRQ),
		1, 0x500000, 0,
	};

	if (argc == 3 && !strcmp(argv[1], "-z")) {
		zero = true;
		argv++;
		argc--;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: vgpu_work [-z] UUID | PCI-ADDRESS\n");
		return 2;
	}
	dev = open_vgpu(argv[1]);
	if (rd(GPUVIRT_VGPU_REG_MAGIC) != GPUVIRT_VGPU_MAGIC)
		die("not a gpuvirt vGPU");

	vram = mmap(NULL, MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, dev,
		    REGION(VFIO_PCI_BAR2_REGION_INDEX));
	if (vram == MAP_FAILED)
		die("map BAR2");
	for (i = 0; zero && i < MAP_LEN / 4; i++) {
		if (vram[i]) {
			printf("vgpu %s: VRAM not zero at %#x: %#x\n", argv[1],
			       i * 4, vram[i]);
			return 1;
		}
	}
	if (zero)
		printf("vgpu %s: VRAM reads zero\n", argv[1]);

	efd = eventfd(0, EFD_CLOEXEC);
	if (vgpu_client_set_irq(dev, VFIO_PCI_MSI_IRQ_INDEX, efd))
		die("set up MSI");
	if (pwrite(dev, &msi_on, 2, REGION(VFIO_PCI_CONFIG_REGION_INDEX) + 0x42) != 2)
		die("enable MSI");

	wr(GPUVIRT_VGPU_REG_RING_BASE_LO, 0);
	wr(GPUVIRT_VGPU_REG_RING_BASE_HI, 0);
	wr(GPUVIRT_VGPU_REG_RING_SIZE, 4096);
	for (i = 0; i < sizeof(pkts) / 4; i++) {
		vram[tail / 4] = pkts[i];
		tail += 4;
	}
	wr(GPUVIRT_VGPU_REG_RING_TAIL, tail);

	pfd.fd = efd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 10000) != 1 || read(efd, &cnt, 8) != 8)
		die("no completion interrupt");
	if (rd(GPUVIRT_VGPU_REG_ERROR))
		fprintf(stderr, "vgpu_work: engine error %u\n",
			rd(GPUVIRT_VGPU_REG_ERROR));

	x = 1234;
	for (i = 0; i < 5000; i++)
		x = x * GPUVIRT_VGPU_COMPUTE_MUL + GPUVIRT_VGPU_COMPUTE_ADD;
	memcpy(&want, &vram[0x400000 / 4], 8);
	fence = vram[0x500000 / 4];
	printf("vgpu %s: %u packets done, fence %u, fill %s, copy %s, compute %s\n",
	       argv[1], rd(GPUVIRT_VGPU_REG_DONE_LO), fence,
	       vram[0x100000 / 4 + 1000] == 0x600dcafe ? "ok" : "WRONG",
	       vram[0x300000 / 4 + 100] == 0x600dcafe ? "ok" : "WRONG",
	       want == x ? "ok" : "WRONG");
	return want == x && fence == 1 ? 0 : 1;
}
