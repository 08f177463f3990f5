// SPDX-License-Identifier: GPL-2.0
/*
 * Engines: program submission, status and reset, and the host-owned
 * NEURON_FEATURE_FLAGS register
 * (docs/decisions/0001-original-architecture.md#arch-device "Engines execute
 * instruction streams from per-engine queues in device memory",
 * docs/decisions/0001-original-architecture.md#arch-driver "submit instructions
 * to an engine; engine
 * status/reset; feature flags get/set"; docs/hardware.md#dge-feature-flags;
 * docs/device-model.md "Engines"; include/neuron/emu_isa.h).
 *
 * Each of a core's five engines (PE, ACT, POOL, DVE, SP) has a 64 KiB
 * program area in device memory: core c engine e at prog_base +
 * (c * 5 + e) * 64 KiB, prog_base = mem_size - cores * 5 * 64 KiB. SUBMIT
 * copies the program there, points PROG_BASE/PROG_COUNT at it, sets the
 * engine's TRACE_ENABLE bit as asked, and writes CTRL.START. Only the
 * core's owner may, or a file whose uid the owner granted the core, for a
 * detached program (NEURON_SUBMIT_F_DETACH, neuron_owner.c). The driver
 * remembers which file each engine's program belongs to (the submitter,
 * or for a detached program the core's owner), and the ownership code
 * resets those engines when that file gives the core up or is released,
 * so none keeps producing records into rings that are about to be freed.
 * A program stopped while it runs or waits, by ENGINE_RESET or by the
 * ownership code, is counted and reported (neuron_events_engines_stopped(),
 * docs/decisions/0024-submit-detach.md).
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <uapi/linux/neuron.h>

#include "neuron.h"
#include "neuron_trace.h"

/* Validate core and engine indices of any engine ioctl. */
static int neuron_engine_check_id(struct neuron_device *ndev, const char *cmd,
				  u32 core, u32 engine)
{
	if (core >= ndev->num_cores)
		return neuron_bad_field(ndev, cmd, "core");
	if (engine >= NEURON_ENGINES_PER_CORE)
		return neuron_bad_field(ndev, cmd, "engine");
	return 0;
}

static u64 neuron_engine_prog_off(struct neuron_device *ndev, u32 core,
				  u32 engine)
{
	return ndev->prog_base +
	       (u64)(core * NEURON_ENGINES_PER_CORE + engine) *
	       NEURON_PROG_AREA_SIZE;
}

/**
 * neuron_engine_ioctl_submit() - NEURON_IOC_SUBMIT: load and start a program
 * @nfile: the caller's file (recorded as the program's owner, unless the
 *	program is detached to the core's owner)
 * @arg: @core (< num_cores), @engine (enum neuron_engine, < 5), @count
 *	(instructions, 1..NEURON_MAX_PROGRAM_INSNS), @flags
 *	(NEURON_SUBMIT_F_TRACE: INST_START/INST_END around each instruction;
 *	NEURON_SUBMIT_F_DETACH: the program belongs to the core's owner),
 *	@insns (user pointer to @count struct neuron_emu_insn, 32 bytes each);
 *	@reserved zero
 *
 * Copies @count * 32 bytes from @insns, writes them with memcpy_toio() to
 * the engine's program area, programs PROG_BASE (a BAR4 offset) and
 * PROG_COUNT, sets or clears the engine's TRACE_ENABLE bit and writes
 * CTRL.START. Returns once the engine is started; completion is reported
 * by records, not by this call (docs/hardware.md#host-paths, #host-drain).
 * The instructions are not interpreted here, except that every DGE_COPY
 * must stay inside device memory the program's owner allocated
 * (neuron_mem.c): the device halts the engine on a bad one
 * (docs/device-model.md). A detached program from a file the owner
 * granted the core (neuron_owner_of_program()) belongs to the owner: its
 * memory is checked against the owner's allocations and the owner's
 * release, not the submitter's, stops it.
 * docs/decisions/0001-original-architecture.md#arch-device,
 * #arch-driver, #tenancy, #submit-detach.
 *
 * Locking: the check (O(@count log m) in the owner's m allocations) runs
 * under the caller's &neuron_file.mem_lock, not the device-wide
 * &neuron_device.lock, which is taken only to find the program's owner,
 * read the engine's state and start it, so another tenant's calls never
 * wait for this one's check. The caller's lock is held until the engine
 * is started and its owner recorded, so a MEM_FREE through the same file
 * either ran before the check or sees the program and refuses (-EBUSY).
 * A detached program that belongs to another file is checked under the
 * device's lock instead, against which that file's allocations cannot
 * change (neuron_mem.c; docs/decisions/0005-tenancy.md "memory and running
 * programs").
 *
 * Return: 0; -EINVAL (core/engine/count out of range, unknown flag,
 * reserved nonzero); -EFAULT (@insns unreadable); -ENOMEM; -EPERM (another
 * file owns the core and, for a detached program, granted it to no uid of
 * this file); -EACCES (a DGE_COPY names memory the program's owner did not
 * allocate; nothing was started); -EINVAL also for an indirect DGE_COPY
 * whose index table overlaps its destination; -EBUSY (the engine is RUNNING or
 * WAITING); -EIO (the engine is HALTED on a fatal error:
 * NEURON_IOC_ENGINE_RESET it first; or a stale file); -ENODEV (device
 * removed).
 */
int neuron_engine_ioctl_submit(struct neuron_file *nfile,
			       const struct neuron_submit *arg)
{
	static const char cmd[] = "SUBMIT";
	struct neuron_device *ndev = nfile->ndev;
	u32 c = arg->core, e = arg->engine;
	struct neuron_mem_bad bad;
	struct neuron_file *owner;
	int ret, checked;
	size_t bytes;
	void *prog;
	u32 state, trace;
	u64 off;

	ret = neuron_engine_check_id(ndev, cmd, c, e);
	if (ret)
		return ret;
	if (arg->count < 1 || arg->count > NEURON_MAX_PROGRAM_INSNS)
		return neuron_bad_field(ndev, cmd, "count");
	if (arg->flags & ~NEURON_SUBMIT_F_ALL)
		return neuron_bad_field(ndev, cmd, "flags");
	if (arg->reserved)
		return neuron_bad_field(ndev, cmd, "reserved");
	off = neuron_engine_prog_off(ndev, c, e);

	BUILD_BUG_ON(NEURON_MAX_PROGRAM_INSNS * NEURON_EMU_INSN_BYTES >
		     NEURON_PROG_AREA_SIZE);
	bytes = (size_t)arg->count * NEURON_EMU_INSN_BYTES;
	prog = vmemdup_user(u64_to_user_ptr(arg->insns), bytes);
	if (IS_ERR(prog))
		return PTR_ERR(prog);

	ret = neuron_enter_file(nfile);
	if (ret)
		goto out_free;
	/*
	 * The program is nearly always the caller's: checked against its
	 * allocations before the device's lock is taken (see above).
	 */
	mutex_lock(&nfile->mem_lock);
	checked = neuron_mem_check_program(nfile, prog, arg->count, off, &bad);
	neuron_pause(ndev, NEURON_PAUSE_SUBMIT_CHECKED);
	mutex_lock(&ndev->lock);
	owner = neuron_owner_of_program(nfile, c,
					arg->flags & NEURON_SUBMIT_F_DETACH);
	if (IS_ERR(owner)) {
		ret = PTR_ERR(owner);
		goto out_unlock;
	}
	if (owner != nfile)
		checked = neuron_mem_check_program(owner, prog, arg->count,
						   off, &bad);
	if (checked) {
		neuron_mem_report_bad(owner, &bad);
		ret = checked;
		goto out_unlock;
	}

	state = neuron_rd(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_STATUS));
	neuron_busy_update(ndev, c, e, state);
	if (neuron_engine_state_busy(state)) {
		ret = -EBUSY;
		goto out_unlock;
	}
	if (state != NEURON_ENGINE_IDLE) {
		/* NEURON_ENGINE_HALTED, or a state we do not know */
		ret = -EIO;
		goto out_unlock;
	}

	memcpy_toio(ndev->mem + off, prog, bytes);

	neuron_wr(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_PROG_BASE_LO),
		  lower_32_bits(off));
	neuron_wr(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_PROG_BASE_HI),
		  upper_32_bits(off));
	neuron_wr(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_PROG_COUNT),
		  arg->count);

	trace = neuron_rd(ndev, NEURON_NOTIFIC_REG(c, NEURON_NOTIFIC_TRACE_ENABLE));
	if (arg->flags & NEURON_SUBMIT_F_TRACE)
		trace |= BIT(e);
	else
		trace &= ~BIT(e);
	neuron_wr(ndev, NEURON_NOTIFIC_REG(c, NEURON_NOTIFIC_TRACE_ENABLE),
		  trace);

	/*
	 * Traced before START: the engine may run, and its edges reach the
	 * interrupt thread, before this thread gets past the write.
	 */
	trace_neuron_submit(ndev->id, c, e, arg->count, arg->flags);
	/* writel() orders START after the program stores above */
	neuron_wr(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_CTRL),
		  NEURON_ENG_CTRL_START);
	neuron_busy_start(ndev, c, e);
	ndev->eng_owner[c][e] = owner;
	/* who to name if it hangs: the log is read in the initial namespace */
	ndev->eng_pid[c][e] = task_tgid_nr(current);
	get_task_comm(ndev->eng_comm[c][e], current);

out_unlock:
	mutex_unlock(&ndev->lock);
	mutex_unlock(&nfile->mem_lock);
	neuron_exit(ndev);
out_free:
	kvfree(prog);
	return ret;
}

/**
 * neuron_engine_ioctl_status() - NEURON_IOC_ENGINE_STATUS
 * @nfile: the caller's file
 * @arg: in: @core, @engine, reserved zero (@programs_stopped, once
 *	reserved, is ignored); out: @state (enum neuron_engine_state), @pc
 *	(index of the next instruction), @soft_reset_counter (programs
 *	started), @last_error (error_id of the last fatal error, 0xff if
 *	none), @exec_count (instructions retired), @programs_stopped
 *	(programs the driver stopped while they ran or waited)
 *
 * Reads the engine's registers (regs.h NEURON_ENG_*) and the driver's
 * count; docs/decisions/0001-original-architecture.md#arch-driver,
 * docs/decisions/0024-submit-detach.md.
 *
 * Return: 0; -EINVAL (core/engine out of range, reserved nonzero);
 * -ENODEV (device removed).
 */
int neuron_engine_ioctl_status(struct neuron_file *nfile,
			       struct neuron_engine_status *arg)
{
	static const char cmd[] = "ENGINE_STATUS";
	struct neuron_device *ndev = nfile->ndev;
	u32 c = arg->core, e = arg->engine;
	int ret;

	ret = neuron_engine_check_id(ndev, cmd, c, e);
	if (ret)
		return ret;
	if (arg->reserved)
		return neuron_bad_field(ndev, cmd, "reserved");

	ret = neuron_enter(ndev);
	if (ret)
		return ret;
	arg->state = neuron_rd(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_STATUS));
	arg->pc = neuron_rd(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_PC));
	arg->soft_reset_counter =
		neuron_rd(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_SOFT_RESET_COUNTER));
	arg->last_error =
		neuron_rd(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_LAST_ERROR));
	arg->exec_count =
		neuron_rd(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_EXEC_COUNT));
	mutex_lock(&ndev->lock);
	arg->programs_stopped = ndev->programs_stopped[c][e];
	neuron_busy_update(ndev, c, e, arg->state);
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);
	return 0;
}

/**
 * neuron_engine_ioctl_reset() - NEURON_IOC_ENGINE_RESET
 * @nfile: the caller's file
 * @arg: @core, @engine; @reserved zero
 *
 * Writes CTRL.RESET: the engine stops, a fatal halt is cleared, state IDLE,
 * PC 0; semaphores, $S and FEATURE_FLAGS are kept (docs/device-model.md).
 * Only the core's owner may (docs/decisions/0005-tenancy.md); a free core
 * becomes the caller's. A program it stops while RUNNING or WAITING (the
 * owner's own or a detached one) is counted and reported
 * (NEURON_STOP_ENGINE_RESET, docs/decisions/0024-submit-detach.md).
 * docs/decisions/0001-original-architecture.md#arch-driver.
 *
 * Return: 0; -EINVAL (core/engine out of range, reserved nonzero); -EPERM
 * (another file owns the core); -EIO (stale file, device offline);
 * -ENODEV (device removed).
 */
int neuron_engine_ioctl_reset(struct neuron_file *nfile,
			      const struct neuron_engine_id *arg)
{
	static const char cmd[] = "ENGINE_RESET";
	struct neuron_device *ndev = nfile->ndev;
	int ret;

	ret = neuron_engine_check_id(ndev, cmd, arg->core, arg->engine);
	if (ret)
		return ret;
	if (arg->reserved)
		return neuron_bad_field(ndev, cmd, "reserved");

	ret = neuron_enter_file(nfile);
	if (ret)
		return ret;
	mutex_lock(&ndev->lock);
	ret = neuron_owner_claim(nfile, arg->core);
	if (!ret) {
		u32 state = neuron_hw_engine_reset(ndev, arg->core, arg->engine);

		neuron_busy_update(ndev, arg->core, arg->engine,
				   NEURON_ENGINE_IDLE);
		ndev->eng_owner[arg->core][arg->engine] = NULL;
		if (neuron_engine_state_busy(state))
			neuron_events_engines_stopped(ndev, arg->core,
						      BIT(arg->engine),
						      NEURON_STOP_ENGINE_RESET);
	}
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);
	return ret;
}

/**
 * neuron_engine_ioctl_feature_flags() - NEURON_IOC_FEATURE_FLAGS
 * @nfile: the caller's file
 * @arg: in: @core (< num_cores), @op (NEURON_FEATURE_OP_GET or _SET),
 *	@flags (SET: NEURON_FEATURE_* bits, regs.h NEURON_FEATURE_MASK),
 *	reserved fields zero; out: @flags, the PE engine's register (after
 *	the write, for SET)
 *
 * NEURON_FEATURE_FLAGS is engine local register 38
 * (docs/hardware.md#dge-feature-flags), owned by the host ("NRT is responsible
 * for updating this"). SET writes the same value to NEURON_ENG_FEATURE_FLAGS of
 * all five engines of the core, under &neuron_device.lock so two setters cannot
 * interleave; GET reads the PE engine's copy (NEURON_ENGINE_PE), which SET
 * keeps equal to the others. Bit 1 gates every DGE packet notification
 * (docs/hardware.md#rec-dge-metadata, #dge-gating). The sunda generation has no
 * such register (docs/hardware.md#generations).
 * docs/decisions/0001-original-architecture.md#arch-driver
 * "feature flags get/set".
 *
 * SET needs ownership of the core (docs/decisions/0005-tenancy.md); a free core
 * becomes the caller's. GET is open to every writable file.
 *
 * Return: 0; -EINVAL (core out of range, unknown op, a flag outside
 * NEURON_FEATURE_MASK, reserved nonzero); -EOPNOTSUPP (generation sunda);
 * -EPERM (SET: another file owns the core); -EIO (stale file, device
 * offline); -ENODEV (device removed).
 */
int neuron_engine_ioctl_feature_flags(struct neuron_file *nfile,
				      struct neuron_feature_flags *arg)
{
	static const char cmd[] = "FEATURE_FLAGS";
	struct neuron_device *ndev = nfile->ndev;
	u32 c = arg->core, e;
	int ret;

	if (c >= ndev->num_cores)
		return neuron_bad_field(ndev, cmd, "core");
	if (arg->op != NEURON_FEATURE_OP_GET && arg->op != NEURON_FEATURE_OP_SET)
		return neuron_bad_field(ndev, cmd, "op");
	if (arg->op == NEURON_FEATURE_OP_SET &&
	    (arg->flags & ~NEURON_FEATURE_MASK))
		return neuron_bad_field(ndev, cmd, "flags");
	if (arg->reserved0 || arg->reserved)
		return neuron_bad_field(ndev, cmd, "reserved");
	if (ndev->gen == NEURON_GEN_SUNDA)
		return -EOPNOTSUPP;

	ret = neuron_enter_file(nfile);
	if (ret)
		return ret;
	mutex_lock(&ndev->lock);
	if (arg->op == NEURON_FEATURE_OP_SET) {
		ret = neuron_owner_claim(nfile, c);
		if (ret)
			goto out_unlock;
		for (e = 0; e < NEURON_ENGINES_PER_CORE; e++)
			neuron_wr(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_FEATURE_FLAGS),
				  arg->flags);
	}
	/* also flushes the posted writes of SET */
	arg->flags = neuron_rd(ndev, NEURON_ENG_REG(c, NEURON_ENGINE_PE,
						    NEURON_ENG_FEATURE_FLAGS));
out_unlock:
	mutex_unlock(&ndev->lock);
	neuron_exit(ndev);
	return ret;
}

/**
 * neuron_engine_stop_all() - stop every engine and forget its submitter
 * @ndev: device, offline or dead (the disable path, neuron_lifecycle.c)
 * @hw_ok: the device answers MMIO; when false only the submitters are
 *	forgotten
 *
 * Writes CTRL.RESET to every engine (and ends every engine's busy
 * interval, neuron_busy.c); the caller then waits for the device to report
 * itself quiesced (neuron_hw_wait_quiesced()).
 */
void neuron_engine_stop_all(struct neuron_device *ndev, bool hw_ok)
{
	u32 c, e;

	lockdep_assert_held(&ndev->lock);
	for (c = 0; c < ndev->num_cores; c++) {
		for (e = 0; e < NEURON_ENGINES_PER_CORE; e++) {
			if (hw_ok)
				neuron_wr(ndev, NEURON_ENG_REG(c, e, NEURON_ENG_CTRL),
					  NEURON_ENG_CTRL_RESET);
			/* stopped now, or gone with the device */
			neuron_busy_update(ndev, c, e, NEURON_ENGINE_IDLE);
		}
	}
	memset(ndev->eng_owner, 0, sizeof(ndev->eng_owner));
}
