// SPDX-License-Identifier: GPL-2.0-only
/*
 * The engine under the scheduler: long commands are cut into chunks and
 * preempted without being lost or run twice, what the scheduler says it
 * ran matches what the simulated hardware ran, and engine faults and hangs
 * stop only the vGPU that caused them.
 *
 * Each check compares the core's debugfs (gpuvirt/gpus/sim0/vgpus/<uuid>/
 * sched) with the simulated GPU's own (gpuvirt_sim/sim0/engine).
 *
 * A doorbell rung while the engines are idle runs its vGPU's work itself
 * (engine.c, gpuvirt_sched_inline()): the inline tests check that it does,
 * that it never does while another vGPU holds the engines, and that work
 * longer than an inline turn passes to the engine thread whole.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "gpuvirt_test.h"
#include "vgpu_client.h"

#define TYPES	"/sys/bus/gpuvirt_sim/devices/sim0/gpu/mdev_supported_types/gpuvirt_sim-H200-35C"
#define UUID_A	"e1e10000-0000-4000-8000-00000000000a"
#define UUID_B	"e1e10000-0000-4000-8000-00000000000b"
#define ENGINE	GV_SIM_DEBUGFS "/sim0/engine"
#define MAP_LEN	(1u << 20)
#define RING	4096u
#define RESULTS	0x10000u	/* COMPUTE results, after the ring */

struct user {
	struct vfio_user vfio;
	void *map;
	struct vgpu_ring ring;
};

static int user_open(struct user *u, const char *uuid)
{
	int err = vgpu_client_open(&u->vfio, uuid);

	if (err)
		return err;
	u->map = mmap(NULL, MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
		      u->vfio.device, VGPU_REGION(VFIO_PCI_BAR2_REGION_INDEX));
	if (u->map == MAP_FAILED)
		return -errno;
	return vgpu_ring_setup(&u->ring, u->vfio.device, u->map, RING);
}

static void user_close(struct user *u)
{
	if (u->map && u->map != MAP_FAILED)
		munmap(u->map, MAP_LEN);
	u->map = NULL;
	vgpu_client_close(&u->vfio);
}

static void put_compute(struct user *u, uint32_t us, uint32_t idx,
			uint32_t seed)
{
	const uint32_t dw[] = {
		GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_COMPUTE, 5, 0), us,
		RESULTS + 8 * idx, 0, seed,
	};

	vgpu_ring_put(&u->ring, dw, 5);
}

static void put_nop(struct user *u)
{
	const uint32_t dw = GPUVIRT_VGPU_PKT(GPUVIRT_VGPU_OP_NOP, 1, 0);

	vgpu_ring_put(&u->ring, &dw, 1);
}

static uint64_t result(struct user *u, uint32_t idx)
{
	return ((volatile uint64_t *)((char *)u->map + RESULTS))[idx];
}

static uint32_t reg(struct user *u, unsigned int r)
{
	uint32_t v = ~0u;

	vgpu_reg_read(u->vfio.device, r, &v);
	return v;
}

#define GPU_SCHED	GV_DEBUGFS "/gpus/sim0/sched"

static unsigned long long inline_turns(void)
{
	return gv_kv_u64(GPU_SCHED, "inline_turns");
}

/* A vGPU's value of @key in the core's sched file. */
static unsigned long long sched_kv(const char *uuid, const char *key)
{
	char path[256];

	snprintf(path, sizeof(path), GV_DEBUGFS "/gpus/sim0/vgpus/%s/sched",
		 uuid);
	return gv_kv_u64(path, key);
}

/* The hardware's count for a context: "ctx N: cmds C ns T". */
static int hw_ctx(unsigned int ctx, unsigned long long *cmds,
		  unsigned long long *ns)
{
	char buf[4096], key[32], *p;

	if (gv_read(ENGINE, buf, sizeof(buf)) < 0)
		return -1;
	snprintf(key, sizeof(key), "\nctx %u: ", ctx);
	p = strstr(buf, key);
	if (!p)
		return -1;
	return sscanf(p + strlen(key), "cmds %llu ns %llu", cmds, ns) == 2 ?
	       0 : -1;
}

/* The same before any command: a context that never ran has no line. */
static void hw_ctx_before(unsigned int ctx, unsigned long long *cmds,
			  unsigned long long *ns)
{
	if (hw_ctx(ctx, cmds, ns))
		*cmds = *ns = 0;
}

FIXTURE(engine) {
	struct user a, b;
};

FIXTURE_SETUP(engine)
{
	if (!getenv("GPUVIRT_KO_DIR"))
		SKIP(return, "GPUVIRT_KO_DIR is not set: not in the test VM");
	ASSERT_EQ(0, gv_setup_h200());
	ASSERT_EQ(0, gv_write(TYPES "/create", UUID_A));
	ASSERT_EQ(0, gv_write(TYPES "/create", UUID_B));
	ASSERT_EQ(0, user_open(&self->a, UUID_A));
	ASSERT_EQ(0, user_open(&self->b, UUID_B));
}

FIXTURE_TEARDOWN(engine)
{
	user_close(&self->a);
	user_close(&self->b);
	gv_write(VGPU_MDEVS "/" UUID_A "/remove", "1");
	gv_write(VGPU_MDEVS "/" UUID_B "/remove", "1");
	gv_unload_all();
}

/*
 * A 50 ms COMPUTE on A against a stream of 5 ms ones on B, with 2 ms
 * slices: A's command must be cut and resumed many times, and still give
 * the right result, with exactly its modelled cost charged once: 50000
 * steps of 1 us plus the 1 us per-command cost, in the core's books and
 * in the hardware's.
 */
TEST_F(engine, long_command_is_preempted_not_lost)
{
	unsigned long long cmds, ns, ctx_a = sched_kv(UUID_A, "ctx");
	unsigned int i;

	put_compute(&self->a, 50000, 0, 7);
	for (i = 0; i < 20; i++)
		put_compute(&self->b, 5000, i, 100 + i);
	ASSERT_EQ(0, vgpu_ring_kick(&self->a.ring));
	ASSERT_EQ(0, vgpu_ring_kick(&self->b.ring));
	ASSERT_EQ(0, vgpu_ring_idle(&self->a.ring, 60000));
	ASSERT_EQ(0, vgpu_ring_idle(&self->b.ring, 60000));

	EXPECT_EQ(0, reg(&self->a, GPUVIRT_VGPU_REG_ERROR));
	EXPECT_EQ(0, reg(&self->b, GPUVIRT_VGPU_REG_ERROR));
	EXPECT_EQ(vgpu_compute_ref(7, 50000), result(&self->a, 0));
	for (i = 0; i < 20; i++)
		EXPECT_EQ(vgpu_compute_ref(100 + i, 5000), result(&self->b, i));

	/* 50 ms in slices of 2 ms while B was busy: cut at least 10 times */
	EXPECT_LE(10, sched_kv(UUID_A, "preemptions"));
	EXPECT_LE(10, sched_kv(UUID_B, "preemptions"));
	EXPECT_EQ(1, sched_kv(UUID_A, "packets"));
	EXPECT_EQ(50001000ULL, sched_kv(UUID_A, "work_ns"));
	ASSERT_EQ(0, hw_ctx(ctx_a, &cmds, &ns));
	EXPECT_EQ(1, cmds);
	EXPECT_EQ(50001000ULL, ns);
	EXPECT_EQ(20 * 5001000ULL, sched_kv(UUID_B, "work_ns"));
}

/* An engine fault stops the vGPU that hit it, and only that one. */
TEST_F(engine, engine_fault_stops_only_its_vgpu)
{
	unsigned long long faults = gv_kv_u64(ENGINE, "faults");

	ASSERT_EQ(0, gv_write(GV_SIM_DEBUGFS "/sim0/fail_exec", "1"));
	put_nop(&self->a);
	ASSERT_EQ(0, vgpu_ring_kick(&self->a.ring));
	ASSERT_EQ(0, vgpu_ring_idle(&self->a.ring, 10000));
	EXPECT_EQ(GPUVIRT_VGPU_ERR_ENGINE, reg(&self->a, GPUVIRT_VGPU_REG_ERROR));
	EXPECT_TRUE(reg(&self->a, GPUVIRT_VGPU_REG_IRQ_STATUS) &
		    GPUVIRT_VGPU_IRQ_ERROR);
	EXPECT_EQ(faults + 1, gv_kv_u64(ENGINE, "faults"));

	put_compute(&self->b, 100, 0, 5);
	ASSERT_EQ(0, vgpu_ring_kick(&self->b.ring));
	ASSERT_EQ(0, vgpu_ring_idle(&self->b.ring, 10000));
	EXPECT_EQ(0, reg(&self->b, GPUVIRT_VGPU_REG_ERROR));
	EXPECT_EQ(vgpu_compute_ref(5, 100), result(&self->b, 0));

	/* A works again once the driver clears the error */
	ASSERT_EQ(0, vgpu_reg_write(self->a.vfio.device, GPUVIRT_VGPU_REG_CONTROL,
				    GPUVIRT_VGPU_CTRL_CLEAR_ERROR));
	put_compute(&self->a, 100, 1, 6);
	ASSERT_EQ(0, vgpu_ring_kick(&self->a.ring));
	ASSERT_EQ(0, vgpu_ring_idle(&self->a.ring, 10000));
	EXPECT_EQ(0, reg(&self->a, GPUVIRT_VGPU_REG_ERROR));
	EXPECT_EQ(vgpu_compute_ref(6, 100), result(&self->a, 1));
}

/*
 * A client that waits for each command before it rings the next, alone on
 * the GPU: its doorbells find the engines idle and run the command before
 * the register write returns. A host that stalls the engine thread may
 * leave it unparked at a doorbell now and then (the thread then runs that
 * command), so at least half of the twenty must be inline; every inline
 * one has completed when its doorbell returns; and each ran exactly once,
 * in the core's books and in the hardware's.
 */
TEST_F(engine, idle_doorbell_runs_inline)
{
	unsigned long long turns = inline_turns(), cmds0, ns0, cmds, ns;
	unsigned long long ctx_a = sched_kv(UUID_A, "ctx");
	unsigned int i, done_at_return = 0;

	hw_ctx_before(ctx_a, &cmds0, &ns0);
	for (i = 0; i < 20; i++) {
		usleep(5000);
		put_compute(&self->a, 1, i, 50 + i);
		ASSERT_EQ(0, vgpu_ring_kick(&self->a.ring));
		done_at_return += reg(&self->a, GPUVIRT_VGPU_REG_RING_HEAD) ==
				  self->a.ring.tail;
		ASSERT_EQ(0, vgpu_ring_idle(&self->a.ring, 10000));
	}
	turns = inline_turns() - turns;
	TH_LOG("%llu of 20 doorbells ran inline, %u had completed at return",
	       turns, done_at_return);
	EXPECT_LE(10, turns);
	EXPECT_GE(20, turns);
	EXPECT_LE(turns, done_at_return);
	EXPECT_EQ(0, reg(&self->a, GPUVIRT_VGPU_REG_ERROR));
	for (i = 0; i < 20; i++)
		EXPECT_EQ(vgpu_compute_ref(50 + i, 1), result(&self->a, i));
	EXPECT_EQ(20, sched_kv(UUID_A, "packets"));
	EXPECT_EQ(20 * 2000ULL, sched_kv(UUID_A, "work_ns"));
	ASSERT_EQ(0, hw_ctx(ctx_a, &cmds, &ns));
	EXPECT_EQ(20, cmds - cmds0);
	EXPECT_EQ(20 * 2000ULL, ns - ns0);
}

/*
 * While B's 40 commands of 5 ms hold the engines, A's doorbells never run
 * inline: the engine thread is never idle, and A gets its turns from the
 * policy like any vGPU.
 */
TEST_F(engine, busy_engine_is_never_run_inline)
{
	unsigned long long turns;
	unsigned int i;
	uint32_t st = 0;

	for (i = 0; i < 40; i++)
		put_compute(&self->b, 5000, i, 200 + i);
	ASSERT_EQ(0, vgpu_ring_kick(&self->b.ring));
	usleep(10000);
	turns = inline_turns();
	for (i = 0; i < 10; i++) {
		put_compute(&self->a, 1, i, 300 + i);
		ASSERT_EQ(0, vgpu_ring_kick(&self->a.ring));
		ASSERT_EQ(0, vgpu_ring_idle(&self->a.ring, 10000));
	}
	/* B must still be busy, or the engine may have gone idle meanwhile */
	ASSERT_EQ(0, vgpu_reg_read(self->b.vfio.device,
				   GPUVIRT_VGPU_REG_STATUS, &st));
	ASSERT_TRUE(st & GPUVIRT_VGPU_STATUS_BUSY);
	EXPECT_EQ(turns, inline_turns());
	ASSERT_EQ(0, vgpu_ring_idle(&self->b.ring, 60000));
	EXPECT_EQ(0, reg(&self->a, GPUVIRT_VGPU_REG_ERROR));
	EXPECT_EQ(0, reg(&self->b, GPUVIRT_VGPU_REG_ERROR));
	for (i = 0; i < 10; i++)
		EXPECT_EQ(vgpu_compute_ref(300 + i, 1), result(&self->a, i));
	for (i = 0; i < 40; i++)
		EXPECT_EQ(vgpu_compute_ref(200 + i, 5000), result(&self->b, i));
}

/*
 * A 2 ms command rung into idle engines: the inline turn runs a piece of
 * it, the engine thread the rest, and it is charged and run exactly once.
 */
TEST_F(engine, long_inline_command_passes_to_the_engine)
{
	unsigned long long turns, cmds0, ns0, cmds, ns;
	unsigned long long ctx_a = sched_kv(UUID_A, "ctx");

	hw_ctx_before(ctx_a, &cmds0, &ns0);
	usleep(5000);
	turns = inline_turns();
	put_compute(&self->a, 2000, 0, 77);
	ASSERT_EQ(0, vgpu_ring_kick(&self->a.ring));
	ASSERT_EQ(0, vgpu_ring_idle(&self->a.ring, 10000));
	turns = inline_turns() - turns;
	EXPECT_GE(1, turns);
	EXPECT_EQ(0, reg(&self->a, GPUVIRT_VGPU_REG_ERROR));
	EXPECT_EQ(vgpu_compute_ref(77, 2000), result(&self->a, 0));
	EXPECT_EQ(1, sched_kv(UUID_A, "packets"));
	EXPECT_EQ(2001000ULL, sched_kv(UUID_A, "work_ns"));
	/* an inline turn that ran a piece: a second turn ran the rest */
	if (turns)
		EXPECT_LE(2, sched_kv(UUID_A, "slices"));
	ASSERT_EQ(0, hw_ctx(ctx_a, &cmds, &ns));
	EXPECT_EQ(1, cmds - cmds0);
	EXPECT_EQ(2001000ULL, ns - ns0);
}

/*
 * A hung engine: the core gives up on the command, stops that vGPU with
 * ERR_HANG and resets the engines; the other vGPU runs on, and the hung
 * one runs again after clearing its error.
 */
TEST_F(engine, hang_is_detected_and_engine_reset)
{
	unsigned long long resets = gv_kv_u64(ENGINE, "resets");
	char knob[16];

	ASSERT_EQ(0, gv_write(GV_SIM_DEBUGFS "/sim0/hang_engine", "1"));
	put_compute(&self->a, 1000, 0, 9);
	ASSERT_EQ(0, vgpu_ring_kick(&self->a.ring));
	ASSERT_EQ(0, vgpu_ring_idle(&self->a.ring, 20000));
	EXPECT_EQ(GPUVIRT_VGPU_ERR_HANG, reg(&self->a, GPUVIRT_VGPU_REG_ERROR));
	EXPECT_EQ(0, result(&self->a, 0));	/* never completed */
	EXPECT_EQ(resets + 1, gv_kv_u64(ENGINE, "resets"));
	EXPECT_EQ(0, gv_kv_u64(ENGINE, "hung"));
	ASSERT_LT(0, gv_read(GV_SIM_DEBUGFS "/sim0/hang_engine", knob,
			     sizeof(knob)));
	EXPECT_EQ('N', knob[0]);

	put_compute(&self->b, 100, 0, 3);
	ASSERT_EQ(0, vgpu_ring_kick(&self->b.ring));
	ASSERT_EQ(0, vgpu_ring_idle(&self->b.ring, 10000));
	EXPECT_EQ(0, reg(&self->b, GPUVIRT_VGPU_REG_ERROR));
	EXPECT_EQ(vgpu_compute_ref(3, 100), result(&self->b, 0));

	ASSERT_EQ(0, vgpu_reg_write(self->a.vfio.device, GPUVIRT_VGPU_REG_CONTROL,
				    GPUVIRT_VGPU_CTRL_CLEAR_ERROR));
	put_compute(&self->a, 1000, 1, 4);
	ASSERT_EQ(0, vgpu_ring_kick(&self->a.ring));
	ASSERT_EQ(0, vgpu_ring_idle(&self->a.ring, 10000));
	EXPECT_EQ(0, reg(&self->a, GPUVIRT_VGPU_REG_ERROR));
	EXPECT_EQ(vgpu_compute_ref(4, 1000), result(&self->a, 1));
}

TEST_HARNESS_MAIN
