// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness of the scheduler core (kernel/core/sched_policy.c), in
 * userspace with ASan and UBSan (make fuzz).
 *
 * Input: a program of 4-byte steps over one struct gpuvirt_sp in virtual
 * time: add/remove slots, open/close, runnable, policy, slice, weight,
 * limits, and pick + charge. Checked: a pick names a runnable slot in use
 * or -1; a slot's slice is positive; refused configuration changes return
 * -EINVAL or -ENOSPC; the PPM telemetry stays within 0..1e6; virtual time
 * only moves forward.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/sched_policy.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_sched: %s failed at %s:%d\n", #c, __FILE__, __LINE__); abort(); } } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gpuvirt_sp sp;
	bool live[GPUVIRT_SP_SLOTS] = { 0 }, open[GPUVIRT_SP_SLOTS] = { 0 },
	     run[GPUVIRT_SP_SLOTS] = { 0 };
	u64 now = 1000;
	size_t i;

	gpuvirt_sp_init(&sp, now);
	for (i = 0; i + 4 <= size; i += 4) {
		uint8_t op = data[i], a = data[i + 1];
		uint16_t v = data[i + 2] | data[i + 3] << 8;
		int slot = a % GPUVIRT_SP_SLOTS, ret;
		struct gpuvirt_sp_pick pick;

		now += v;	/* time moves on between events */
		switch (op % 10) {
		case 0:
			ret = gpuvirt_sp_add(&sp, 1 + a % GPUVIRT_SP_SLOTS, now);
			CHECK(ret == -ENOSPC || (ret >= 0 && ret < GPUVIRT_SP_SLOTS && !live[ret]));
			if (ret >= 0) {
				live[ret] = true;
				open[ret] = run[ret] = false;
			}
			break;
		case 1:
			if (live[slot]) {
				gpuvirt_sp_remove(&sp, slot, now);
				live[slot] = false;
			}
			break;
		case 2:
			if (live[slot]) {
				open[slot] = v & 1;
				gpuvirt_sp_set_open(&sp, slot, open[slot], now);
			}
			break;
		case 3:
			if (live[slot]) {
				run[slot] = v & 1;
				gpuvirt_sp_set_runnable(&sp, slot, run[slot], now);
			}
			break;
		case 4:
			ret = gpuvirt_sp_set_policy(&sp, a % 6, now);
			CHECK(ret == 0 || ret == -EINVAL);
			break;
		case 5:
			ret = gpuvirt_sp_set_slice(&sp, (u64)v * (1 + a) * 1000, now);
			CHECK(ret == 0 || ret == -EINVAL);
			break;
		case 6:
			if (live[slot]) {
				ret = gpuvirt_sp_set_weight(&sp, slot, v, now);
				CHECK(ret == 0 || ret == -EINVAL);
			}
			break;
		case 7:
			if (live[slot]) {
				ret = gpuvirt_sp_set_limits(&sp, slot, v % 128, (v >> 7) % 128, now);
				CHECK(ret == 0 || ret == -EINVAL || ret == -ENOSPC);
				CHECK(gpuvirt_sp_max_ppm(&sp, slot) <= GPUVIRT_SP_PPM);
				CHECK(gpuvirt_sp_min_ppm(&sp, slot) <= GPUVIRT_SP_PPM);
			}
			break;
		default:
			gpuvirt_sp_pick(&sp, now, &pick);
			CHECK(pick.slot >= -1 && pick.slot < GPUVIRT_SP_SLOTS);
			if (pick.slot >= 0) {
				u64 ran = pick.ns;

				CHECK(live[pick.slot] && run[pick.slot]);
				CHECK(pick.ns > 0);
				/* ran dry early, or overran the slice a little */
				if (v & 1)
					ran = ran / (1 + (v >> 8));
				else
					ran += v >> 4;
				now += ran;
				gpuvirt_sp_charge(&sp, pick.slot, ran, now);
			}
			break;
		}
		CHECK(gpuvirt_sp_slice(&sp) > 0);
	}
	return 0;
}
