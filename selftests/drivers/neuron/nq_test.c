// SPDX-License-Identifier: GPL-2.0
/*
 * kselftests of the neuron driver's first-light ABI against the emulated
 * device: device info, NQ init/destroy with every bad input, mmap rules
 * (rings, doorbells, the file's status page),
 * records flowing from the engines through mapped host and device rings
 * (order, types, debug_hint, phase across wraps), teardown on release.
 *
 * Expected values come from the UAPI docstrings (include/uapi/linux/neuron.h),
 * the record layouts of docs/hardware.md#rec-format and the device contract
 * (docs/device-model.md), not from the driver's own code.
 */
#include "neuron_lib.h"
#include "kselftest_harness.h"

#define CORE 0

TEST(device_info)
{
	struct neuron_device_info info;
	int fd = neuron_open();

	ASSERT_LE(0, fd) TH_LOG("open %s: %s", NEURON_DEV, strerror(errno));
	memset(&info, 0xa5, sizeof(info));
	ASSERT_EQ(0, neuron_ioctl(fd, NEURON_IOC_DEVICE_INFO, &info));
	EXPECT_EQ(NEURON_ABI_VERSION, info.abi_version);
	EXPECT_EQ(0x1d0f, info.vendor);
	EXPECT_EQ(NEURON_PCI_DEVICE_ID, info.device);
	EXPECT_EQ(2, info.num_cores);		/* the VM's default cores=2 */
	EXPECT_EQ(5, info.engines_per_core);	/* PE ACT POOL DVE SP */
	EXPECT_EQ(10, info.queues_per_core);	/* docs/hardware.md#nq-mask */
	EXPECT_EQ(NEURON_GEN_CAYMAN, info.gen);
	EXPECT_EQ(64ull << 20, info.mem_size);
	EXPECT_EQ(NEURON_NQ_SIZE_MIN, info.nq_size_min);
	EXPECT_EQ(NEURON_NQ_SIZE_MAX, info.nq_size_max);
	EXPECT_EQ(NEURON_MAX_PROGRAM_INSNS, info.max_program_insns);
	EXPECT_EQ(1000, info.timestamp_inc_ps);
	/* docs/decisions/0003-choices.md#device-memory: tenants get [0, mem_size / 2) */
	EXPECT_EQ(32ull << 20, info.mem_alloc_limit);
	/* the VM's x86-64 kernel: 4 KiB pages, one doorbell per page
	 * (docs/decisions/0011-reset-and-recovery.md#page-size)
	 */
	EXPECT_EQ(4096, info.page_size);
	EXPECT_EQ(4096, info.doorbell_size);
	EXPECT_TRUE(info.capabilities & NEURON_CAP_PAGE_SIZE);
	/* /dev/nnq0 may name both cores (docs/decisions/0017-core-nodes.md) */
	EXPECT_EQ(0x3ull, info.file_cores);
	close(fd);
}

TEST(unknown_ioctl_is_enotty)
{
	int fd = neuron_open();
	__u64 arg = 0;

	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOTTY, neuron_ioctl(fd, _IOW(NEURON_IOCTL_MAGIC, 0x7f, __u64), &arg));
	EXPECT_EQ(-ENOTTY, neuron_ioctl(fd, _IOW('x', 0x01, struct neuron_nq_init), &arg));
	close(fd);
}

FIXTURE(nq)
{
	int fd;
};

FIXTURE_SETUP(nq)
{
	self->fd = neuron_open();
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", NEURON_DEV, strerror(errno));
}

FIXTURE_TEARDOWN(nq)
{
	close(self->fd);
}

TEST_F(nq, init_info_destroy)
{
	struct neuron_nq_init init;
	struct neuron_nq_info info = { .core = CORE, .queue = 3 };

	ASSERT_EQ(0, neuron_nq_create(self->fd, CORE, 3, 4096, 0, &init));
	EXPECT_NE(0, init.ring_offset);
	EXPECT_NE(0, init.doorbell_offset);
	EXPECT_NE(init.ring_offset, init.doorbell_offset);
	EXPECT_EQ(0, init.ring_offset % 4096);
	EXPECT_EQ(0, init.doorbell_offset % 4096);

	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_NQ_INFO, &info));
	EXPECT_EQ(0, info.head);
	EXPECT_EQ(0, info.tail);
	EXPECT_EQ(1, info.phase);	/* first pass writes phase 1 */
	EXPECT_EQ(4096, info.size);
	EXPECT_EQ(0, info.flags);
	EXPECT_EQ(0, info.overflow_count);
	EXPECT_EQ(0, info.drop_count);

	EXPECT_EQ(0, neuron_nq_destroy(self->fd, CORE, 3));
	EXPECT_EQ(-ENOENT, neuron_nq_destroy(self->fd, CORE, 3));
	EXPECT_EQ(-ENOENT, neuron_ioctl(self->fd, NEURON_IOC_NQ_INFO, &info));
}

TEST_F(nq, init_all_sizes_and_device_memory)
{
	for (__u32 size = NEURON_NQ_SIZE_MIN; size <= NEURON_NQ_SIZE_MAX; size <<= 1) {
		ASSERT_EQ(0, neuron_nq_create(self->fd, 1, 9, size, 0, NULL))
			TH_LOG("host ring of %u bytes", size);
		ASSERT_EQ(0, neuron_nq_destroy(self->fd, 1, 9));
		ASSERT_EQ(0, neuron_nq_create(self->fd, 1, 9, size,
					      NEURON_NQ_F_DEVICE_MEM, NULL))
			TH_LOG("device ring of %u bytes", size);
		ASSERT_EQ(0, neuron_nq_destroy(self->fd, 1, 9));
	}
}

TEST_F(nq, init_bad_inputs)
{
	struct neuron_nq_init init;

	/* core and queue out of range */
	EXPECT_EQ(-EINVAL, neuron_nq_create(self->fd, 2, 0, 4096, 0, NULL));
	EXPECT_EQ(-EINVAL, neuron_nq_create(self->fd, 0xffffffff, 0, 4096, 0, NULL));
	EXPECT_EQ(-EINVAL, neuron_nq_create(self->fd, 0, 10, 4096, 0, NULL));
	/* size: zero, not a power of two, below the minimum, above the maximum */
	EXPECT_EQ(-EINVAL, neuron_nq_create(self->fd, 0, 0, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, neuron_nq_create(self->fd, 0, 0, 4095, 0, NULL));
	EXPECT_EQ(-EINVAL, neuron_nq_create(self->fd, 0, 0, 3 * 4096, 0, NULL));
	EXPECT_EQ(-EINVAL, neuron_nq_create(self->fd, 0, 0, NEURON_NQ_SIZE_MIN / 2, 0, NULL));
	EXPECT_EQ(-EINVAL, neuron_nq_create(self->fd, 0, 0, NEURON_NQ_SIZE_MAX * 2, 0, NULL));
	/* unknown flag */
	EXPECT_EQ(-EINVAL, neuron_nq_create(self->fd, 0, 0, 4096, 1u << 31, NULL));
	EXPECT_EQ(-EINVAL, neuron_nq_create(self->fd, 0, 0, 4096, NEURON_NQ_F_ALL + 1, NULL));

	/* threshold above the ring's record count */
	memset(&init, 0, sizeof(init));
	init.size = 4096;
	init.threshold = 4096 / 16 + 1;
	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_NQ_INIT, &init));
	/* coalescing time limit above 10 ms (NEURON_NQ_COALESCE_NS_MAX) */
	init.threshold = 0;
	init.coalesce_ns = 10000001;
	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_NQ_INIT, &init));

	/* every reserved field */
	memset(&init, 0, sizeof(init));
	init.size = 4096;
	init.reserved0 = 1;
	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_NQ_INIT, &init));
	init.reserved0 = 0;
	init.reserved1 = 1;
	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_NQ_INIT, &init));
	init.reserved1 = 0;
	init.reserved = 1ull << 63;
	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_NQ_INIT, &init));
	/* out fields given as input are ignored, not rejected */
	init.reserved = 0;
	init.ring_offset = 123;
	init.doorbell_offset = 456;
	EXPECT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_NQ_INIT, &init));
	EXPECT_EQ(0, neuron_nq_destroy(self->fd, 0, 0));

	/* nothing above left a queue behind */
	for (__u32 q = 0; q < 10; q++)
		EXPECT_EQ(-ENOENT, neuron_nq_destroy(self->fd, 0, q));
}

TEST_F(nq, double_init_is_ebusy)
{
	int other = neuron_open();
	struct neuron_cores cores = { .cores = 1u << CORE };

	ASSERT_LE(0, other);
	ASSERT_EQ(0, neuron_nq_create(self->fd, CORE, 2, 4096, 0, NULL));
	EXPECT_EQ(-EBUSY, neuron_nq_create(self->fd, CORE, 2, 4096, 0, NULL));
	/*
	 * the first queue made the core this file's (docs/decisions/0005-tenancy.md):
	 * another file may neither take the queue nor destroy it
	 */
	EXPECT_EQ(-EPERM, neuron_nq_create(other, CORE, 2, 4096, 0, NULL));
	EXPECT_EQ(-ENOENT, neuron_nq_destroy(other, CORE, 2));
	EXPECT_EQ(-EBUSY, neuron_ioctl(self->fd, NEURON_IOC_CORE_RELEASE, &cores));
	EXPECT_EQ(0, neuron_nq_destroy(self->fd, CORE, 2));
	/* destroying the queue leaves the core this file's */
	EXPECT_EQ(-EPERM, neuron_nq_create(other, CORE, 2, 4096, 0, NULL));
	EXPECT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_CORE_RELEASE, &cores));
	EXPECT_EQ(0, cores.owned);
	/* once destroyed and the core released it is free for anyone */
	EXPECT_EQ(0, neuron_nq_create(other, CORE, 2, 4096, 0, NULL));
	close(other);
}

TEST_F(nq, destroy_bad_inputs)
{
	struct neuron_nq_id id = { .core = 0, .queue = 0, .reserved = 1 };

	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_NQ_DESTROY, &id));
	EXPECT_EQ(-EINVAL, neuron_nq_destroy(self->fd, 2, 0));
	EXPECT_EQ(-EINVAL, neuron_nq_destroy(self->fd, 0, 10));
	EXPECT_EQ(-ENOENT, neuron_nq_destroy(self->fd, 0, 0));	/* never made */
}

TEST_F(nq, mmap_ring_is_read_only)
{
	struct neuron_nq_init init;
	struct neuron_ring ring = { 0 };
	void *p;

	ASSERT_EQ(0, neuron_nq_create(self->fd, CORE, 4, 8192, 0, &init));
	p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 (off_t)init.ring_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);

	ASSERT_EQ(0, neuron_ring_map(self->fd, &init, &ring));
	/* a fresh ring holds no record of the first pass (phase 1) */
	EXPECT_EQ(0, neuron_rec_phase(&ring.slots[0]));
	/* and cannot be made writable later */
	EXPECT_NE(0, mprotect((void *)ring.slots, 8192, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	/* destroy is refused while the ring is mapped */
	EXPECT_EQ(-EBUSY, neuron_nq_destroy(self->fd, CORE, 4));
	neuron_ring_unmap(&ring);
	EXPECT_EQ(0, neuron_nq_destroy(self->fd, CORE, 4));
}

TEST_F(nq, mmap_bad_cookies)
{
	struct neuron_nq_init init;
	int other = neuron_open();
	void *p;

	ASSERT_LE(0, other);
	ASSERT_EQ(0, neuron_nq_create(self->fd, CORE, 5, 4096, 0, &init));
	/* an offset no ioctl returned */
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd,
		 (off_t)(init.ring_offset + 4096));
	EXPECT_EQ(MAP_FAILED, p);
	/* longer than the ring */
	p = mmap(NULL, 8192, PROT_READ, MAP_SHARED, self->fd, (off_t)init.ring_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* another file's cookie */
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, other, (off_t)init.ring_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, other,
		 (off_t)init.doorbell_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* the right cookie works */
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd, (off_t)init.ring_offset);
	ASSERT_NE(MAP_FAILED, p);
	munmap(p, 4096);
	close(other);
}

/*
 * The file's status page (include/uapi/linux/neuron.h "mmap", struct
 * neuron_status_page): offset 3 << 36 (cookie type 3, core, queue and page
 * 0: kernel/neuron_mmap.c), exactly one page, read-only, MAP_SHARED; LIVE
 * with the rest of the page zero on a working file; a dup()ed descriptor
 * maps the same file's page, another open file its own; a queue's life
 * does not touch it.
 */
TEST_F(nq, status_page_rules)
{
	const uint64_t off = 3ull << 36;
	const struct neuron_status_page *sp, *dsp, *osp;
	const volatile uint32_t *w;
	struct neuron_nq_init init;
	int dupfd = dup(self->fd), other = neuron_open(), word;
	void *p;

	ASSERT_LE(0, dupfd);
	ASSERT_LE(0, other);
	EXPECT_EQ(off, NEURON_STATUS_PAGE_OFFSET);
	EXPECT_EQ(4096, NEURON_STATUS_PAGE_SIZE);
	EXPECT_EQ(64, sizeof(struct neuron_status_page));
	sp = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd, (off_t)off);
	ASSERT_NE(MAP_FAILED, sp) TH_LOG("mmap status page: %s", strerror(errno));
	EXPECT_EQ(1u, neuron_status_state(sp));		/* NEURON_STATUS_LIVE */
	EXPECT_EQ(0u, sp->cause);
	w = (const volatile uint32_t *)sp;
	for (word = 3; word < 1024; word++)		/* reserved, then the page */
		EXPECT_EQ(0u, w[word]) TH_LOG("word %d", word);

	/* read-only: write or exec now or later is -EACCES */
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, (off_t)off);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, self->fd, (off_t)off);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	EXPECT_NE(0, mprotect((void *)sp, 4096, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	/* exactly one page at exactly that offset, MAP_SHARED */
	p = mmap(NULL, 8192, PROT_READ, MAP_SHARED, self->fd, (off_t)off);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd, (off_t)(off + 4096));
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, self->fd, (off_t)off);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);

	/* one page per open file; no reset between the two opens */
	dsp = mmap(NULL, 4096, PROT_READ, MAP_SHARED, dupfd, (off_t)off);
	osp = mmap(NULL, 4096, PROT_READ, MAP_SHARED, other, (off_t)off);
	ASSERT_NE(MAP_FAILED, dsp);
	ASSERT_NE(MAP_FAILED, osp);
	EXPECT_EQ(1u, neuron_status_state(dsp));
	EXPECT_EQ(1u, neuron_status_state(osp));
	EXPECT_EQ(sp->generation, dsp->generation);
	EXPECT_EQ(sp->generation, osp->generation);

	/* a queue's life does not touch it */
	ASSERT_EQ(0, neuron_nq_create(self->fd, CORE, 6, 4096, 0, &init));
	ASSERT_EQ(0, neuron_nq_destroy(self->fd, CORE, 6));
	EXPECT_EQ(1u, neuron_status_state(sp));
	EXPECT_EQ(0u, sp->cause);

	munmap((void *)osp, 4096);
	munmap((void *)dsp, 4096);
	munmap((void *)sp, 4096);
	close(other);
	close(dupfd);
}

/* NOP, NOTIFY(hint 3, ext 0x1234), NOP, HALT with tracing on. */
static void hello_program(struct neuron_emu_insn prog[4])
{
	prog[0] = neuron_insn(NEURON_OP_NOP, 0);
	prog[1] = neuron_insn(NEURON_OP_NOTIFY, 3);
	prog[1].operand.arg.debug_hint_extended = htole16(0x1234);
	prog[2] = neuron_insn(NEURON_OP_NOP, 0);
	prog[3] = neuron_insn(NEURON_OP_HALT, 0);
}

static void check_records_flow(struct __test_metadata *_metadata, int fd,
			       __u32 nq_flags, __u32 engine)
{
	struct neuron_nq_init trace_init, expl_init;
	struct neuron_ring trace = { 0 }, expl = { 0 };
	union neuron_isa_notification recs[8], e;
	struct neuron_emu_insn prog[4];
	struct neuron_engine_status st;
	uint8_t start = NEURON_ENGINE_NOTIFIC_TYPE(engine, NEURON_ENGINE_RECORD_INST_START);

	ASSERT_EQ(0, neuron_nq_create(fd, CORE, 0, 4096, nq_flags, &trace_init));
	ASSERT_EQ(0, neuron_nq_create(fd, CORE, 1, 4096, nq_flags, &expl_init));
	ASSERT_EQ(0, neuron_ring_map(fd, &trace_init, &trace));
	ASSERT_EQ(0, neuron_ring_map(fd, &expl_init, &expl));

	hello_program(prog);
	ASSERT_EQ(0, neuron_submit(fd, CORE, engine, prog, 4, NEURON_SUBMIT_F_TRACE));
	ASSERT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(fd, CORE, engine, NEURON_WAIT_MS));
	ASSERT_EQ(0, neuron_engine_status(fd, CORE, engine, &st));

	/* trace queue: START/END for each of the 4 instructions, in order */
	ASSERT_EQ(0, neuron_ring_read(&trace, recs, 8, NEURON_WAIT_MS));
	for (int i = 0; i < 8; i++) {
		const struct neuron_isa_trace_notification *t = &recs[i].trace;

		EXPECT_EQ(start + (i & 1), neuron_rec_type(&recs[i])) TH_LOG("record %d", i);
		EXPECT_EQ(i / 2, (int)t->program_counter);
		EXPECT_EQ(i / 2 == 1 ? 3 : 0, (int)t->debug_hint);
		EXPECT_EQ(1, neuron_rec_phase(&recs[i]));
		EXPECT_EQ(st.soft_reset_counter, t->soft_reset_counter);
		EXPECT_EQ(0, recs[i].bytes[3] & (NEURON_ISA_HEADER_SW_OVF | NEURON_ISA_HEADER_HW_OVF));
		if (i)
			EXPECT_LE(recs[i - 1].trace.timestamp, t->timestamp);
	}
	EXPECT_NE(0, recs[0].trace.timestamp);

	/* explicit queue: exactly one EXPLICIT from pc 1 */
	ASSERT_EQ(0, neuron_ring_read(&expl, &e, 1, NEURON_WAIT_MS));
	EXPECT_EQ(start + NEURON_ENGINE_RECORD_EXPLICIT, neuron_rec_type(&e));
	EXPECT_EQ(1, (int)e.explicit_notif.program_counter);
	EXPECT_EQ(3, (int)e.explicit_notif.debug_hint);
	EXPECT_EQ(0x1234, e.explicit_notif.debug_hint_extended);
	EXPECT_EQ(st.soft_reset_counter, e.explicit_notif.soft_reset_counter);
	EXPECT_EQ(1, neuron_rec_phase(&e));
	/* the NOTIFY executes between its own START and END */
	EXPECT_LE(recs[2].trace.timestamp, e.explicit_notif.timestamp);
	EXPECT_LE(e.explicit_notif.timestamp, recs[3].trace.timestamp);
	/* and nothing more arrives */
	usleep(100 * 1000);
	EXPECT_EQ(0, neuron_ring_pop(&trace, recs));
	EXPECT_EQ(0, neuron_ring_pop(&expl, recs));

	neuron_ring_unmap(&trace);
	neuron_ring_unmap(&expl);
}

TEST_F(nq, records_flow_host_ring)
{
	check_records_flow(_metadata, self->fd, 0, NEURON_ENGINE_PE);
}

TEST_F(nq, records_flow_device_ring)
{
	check_records_flow(_metadata, self->fd, NEURON_NQ_F_DEVICE_MEM, NEURON_ENGINE_SP);
}

TEST_F(nq, records_flow_every_engine)
{
	for (__u32 engine = 0; engine < NEURON_ENGINES_PER_CORE; engine++) {
		check_records_flow(_metadata, self->fd, 0, engine);
		ASSERT_EQ(0, neuron_nq_destroy(self->fd, CORE, 0));
		ASSERT_EQ(0, neuron_nq_destroy(self->fd, CORE, 1));
	}
}

/* A 4-entry ring and 6 traced instructions: 12 records, three passes. */
TEST_F(nq, ring_wrap_flips_phase)
{
	struct neuron_emu_insn prog[6];
	union neuron_isa_notification recs[12];
	struct neuron_nq_init init;
	struct neuron_nq_info info = { .core = CORE, .queue = 0 };
	struct neuron_ring ring = { 0 };

	ASSERT_EQ(0, neuron_nq_create(self->fd, CORE, 0, 64, 0, &init));
	ASSERT_EQ(0, neuron_ring_map(self->fd, &init, &ring));
	ASSERT_EQ(4, ring.entries);
	for (int i = 0; i < 5; i++)
		prog[i] = neuron_insn(NEURON_OP_NOP, (uint16_t)i);
	prog[5] = neuron_insn(NEURON_OP_HALT, 0);
	ASSERT_EQ(0, neuron_submit(self->fd, CORE, NEURON_ENGINE_ACT, prog, 6,
				   NEURON_SUBMIT_F_TRACE));
	/* the consumer keeps up; backpressure holds the engine meanwhile */
	ASSERT_EQ(0, neuron_ring_read(&ring, recs, 12, NEURON_WAIT_MS));
	for (int i = 0; i < 12; i++) {
		EXPECT_EQ(0x08 + (i & 1), neuron_rec_type(&recs[i])) TH_LOG("record %d", i);
		EXPECT_EQ(i / 2, (int)recs[i].trace.program_counter);
		EXPECT_EQ((i / 4) % 2 == 0 ? 1 : 0, neuron_rec_phase(&recs[i]))
			TH_LOG("record %d on pass %d", i, i / 4);
	}
	ASSERT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(self->fd, CORE,
							 NEURON_ENGINE_ACT, NEURON_WAIT_MS));
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_NQ_INFO, &info));
	EXPECT_EQ(12, info.tail);
	EXPECT_EQ(12, info.head);
	EXPECT_EQ(0, info.phase);	/* the 4th pass writes phase 0 */
	EXPECT_EQ(0, info.overflow_count);
	neuron_ring_unmap(&ring);
}

/*
 * Records in a ring in device memory (BAR4, NEURON_NQ_F_DEVICE_MEM) arrive
 * in the order the engine produced them, across wraps. A 4-entry device
 * ring on queue 1 (EXPLICIT's default route), SP runs NOTIFY 0x300 + i for
 * i = 0..9, then HALT. The consumer first lets the ring fill: the engine
 * stalls on the full lossless queue (WAITING, TAIL 4) after record 3; then
 * it reads the ten records through its mapping of BAR4, writing HEAD back
 * after each. Expected, literally: header byte 0x96 (phase | SP EXPLICIT
 * 0x16) on passes 1 and 3, 0x16 on pass 2 (docs/hardware.md#rec-phase),
 * program_counter = i, debug_hint_extended = 0x300 + i.
 */
TEST_F(nq, device_ring_order_across_wraps)
{
	static const uint8_t want_hdr[10] = {
		0x96, 0x96, 0x96, 0x96, 0x16, 0x16, 0x16, 0x16, 0x96, 0x96,
	};
	static const uint32_t want_pc[10] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	static const uint16_t want_ext[10] = {
		0x300, 0x301, 0x302, 0x303, 0x304, 0x305, 0x306, 0x307, 0x308, 0x309,
	};
	struct neuron_emu_insn prog[11];
	union neuron_isa_notification recs[10];
	struct neuron_nq_init init;
	struct neuron_nq_info info = { .core = CORE, .queue = 1 };
	struct neuron_engine_status st;
	struct neuron_ring ring = { 0 };

	ASSERT_EQ(0, neuron_nq_create(self->fd, CORE, 1, 64, NEURON_NQ_F_DEVICE_MEM, &init));
	ASSERT_EQ(0, neuron_ring_map(self->fd, &init, &ring));
	ASSERT_EQ(4, ring.entries);
	for (int i = 0; i < 10; i++) {
		prog[i] = neuron_insn(NEURON_OP_NOTIFY, 0);
		prog[i].operand.arg.debug_hint_extended = htole16(0x300 + i);
	}
	prog[10] = neuron_insn(NEURON_OP_HALT, 0);
	ASSERT_EQ(0, neuron_submit(self->fd, CORE, NEURON_ENGINE_SP, prog, 11, 0));

	/* nobody reads yet: four records, then the engine waits for room */
	usleep(200 * 1000);
	ASSERT_EQ(0, neuron_engine_status(self->fd, CORE, NEURON_ENGINE_SP, &st));
	EXPECT_EQ(NEURON_ENGINE_WAITING, st.state);
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_NQ_INFO, &info));
	EXPECT_EQ(4, info.tail);
	EXPECT_EQ(0, info.head);

	ASSERT_EQ(0, neuron_ring_read(&ring, recs, 10, NEURON_WAIT_MS));
	for (int i = 0; i < 10; i++) {
		EXPECT_EQ(want_hdr[i], recs[i].bytes[NEURON_ISA_HEADER_OFFSET]) TH_LOG("record %d", i);
		EXPECT_EQ(want_pc[i], (uint32_t)recs[i].explicit_notif.program_counter)
			TH_LOG("record %d", i);
		EXPECT_EQ(want_ext[i], le16toh(recs[i].explicit_notif.debug_hint_extended))
			TH_LOG("record %d", i);
	}
	ASSERT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(self->fd, CORE, NEURON_ENGINE_SP,
							 NEURON_WAIT_MS));
	ASSERT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_NQ_INFO, &info));
	EXPECT_EQ(10, info.tail);
	EXPECT_EQ(10, info.head);
	EXPECT_EQ(0, info.overflow_count);
	EXPECT_EQ(0, info.drop_count);
	/* nothing more arrives */
	usleep(100 * 1000);
	EXPECT_EQ(0, neuron_ring_pop(&ring, recs));
	neuron_ring_unmap(&ring);
}

TEST_F(nq, submit_bad_inputs)
{
	struct neuron_emu_insn prog[2] = {
		neuron_insn(NEURON_OP_NOP, 0), neuron_insn(NEURON_OP_HALT, 0),
	};
	struct neuron_submit s = {
		.core = CORE, .engine = 0, .count = 2, .insns = (__u64)(uintptr_t)prog,
	};
	struct neuron_engine_status st = { .core = CORE, .engine = 5 };

	s.engine = 5;
	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_SUBMIT, &s));
	s.engine = 0;
	s.core = 2;
	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_SUBMIT, &s));
	s.core = CORE;
	s.count = 0;
	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_SUBMIT, &s));
	s.count = NEURON_MAX_PROGRAM_INSNS + 1;
	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_SUBMIT, &s));
	s.count = 2;
	s.flags = 1u << 7;
	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_SUBMIT, &s));
	s.flags = 0;
	s.reserved = 1;
	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_SUBMIT, &s));
	s.reserved = 0;
	s.insns = 16;	/* unmapped user address */
	EXPECT_EQ(-EFAULT, neuron_ioctl(self->fd, NEURON_IOC_SUBMIT, &s));
	EXPECT_EQ(-EINVAL, neuron_ioctl(self->fd, NEURON_IOC_ENGINE_STATUS, &st));
	/* the engine is unharmed: a good program still runs */
	s.insns = (__u64)(uintptr_t)prog;
	EXPECT_EQ(0, neuron_ioctl(self->fd, NEURON_IOC_SUBMIT, &s));
	EXPECT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(self->fd, CORE, 0, NEURON_WAIT_MS));
}

TEST_F(nq, submit_while_running_is_ebusy)
{
	struct neuron_emu_insn prog[2];

	prog[0] = neuron_insn(NEURON_OP_DELAY, 0);
	prog[0].operand.arg.value = htole32(500 * 1000 * 1000);	/* 0.5 s of device time */
	prog[1] = neuron_insn(NEURON_OP_HALT, 0);
	ASSERT_EQ(0, neuron_submit(self->fd, CORE, NEURON_ENGINE_DVE, prog, 2, 0));
	EXPECT_EQ(-EBUSY, neuron_submit(self->fd, CORE, NEURON_ENGINE_DVE, prog, 2, 0));
	EXPECT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(self->fd, CORE,
							 NEURON_ENGINE_DVE, NEURON_WAIT_MS));
	EXPECT_EQ(0, neuron_submit(self->fd, CORE, NEURON_ENGINE_DVE, prog, 2, 0));
	EXPECT_EQ(NEURON_ENGINE_IDLE, neuron_engine_wait(self->fd, CORE,
							 NEURON_ENGINE_DVE, NEURON_WAIT_MS));
}

/* Closing a file with live queues (one of them mapped) tears them down. */
TEST(release_disables_queues)
{
	struct neuron_nq_init init;
	struct neuron_ring ring = { 0 };
	char buf[256];
	int fd = neuron_open(), other;

	ASSERT_LE(0, fd);
	for (__u32 q = 0; q < 10; q++)
		ASSERT_EQ(0, neuron_nq_create(fd, 1, q, 4096, q & 1 ? NEURON_NQ_F_DEVICE_MEM : 0,
					      q == 0 ? &init : NULL));
	ASSERT_EQ(0, neuron_ring_map(fd, &init, &ring));
	ASSERT_LT(0, neuron_sysfs_read("queue_enable", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "core1 0x3ff")) TH_LOG("queue_enable: %s", buf);
	close(fd);
	/* the mapping keeps the file alive; unmapping releases it */
	neuron_ring_unmap(&ring);

	ASSERT_LT(0, neuron_sysfs_read("queue_enable", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "core1 0x000")) TH_LOG("queue_enable: %s", buf);
	other = neuron_open();
	ASSERT_LE(0, other);
	for (__u32 q = 0; q < 10; q++)
		EXPECT_EQ(0, neuron_nq_create(other, 1, q, 4096, 0, NULL));
	close(other);
}

TEST_HARNESS_MAIN
