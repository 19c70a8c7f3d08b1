// pipe_sync.h: Simpler's kernel-side helper `pipe_sync()`.
//
// On the device it drains the core's output pipe after the last store (AIV: MTE3 to scalar,
// AIC: FIX to scalar, through set_flag / wait_flag on EVENT_ID7), so that the task's GM
// writes are complete when the kernel returns. The simulated core runs its instructions in
// program order, so the flags are no-ops and so is this, but kernels that call it compile
// unchanged. It needs the PTO-ISA header and a core type, like the kernels that use it.
#pragma once

#include <pto/pto-inst.hpp>

#if !defined(__DAV_VEC__) && !defined(__DAV_CUBE__)
#error "pipe_sync.h: compile AIV kernels with -D__DAV_VEC__ and AIC kernels with -D__DAV_CUBE__"
#endif

/// Waits until the core's output pipe (MTE3 on AIV, FIX on AIC) has drained.
static __aicore__ inline void pipe_sync() {
#if defined(__DAV_VEC__)
    set_flag(PIPE_MTE3, PIPE_S, EVENT_ID7);
    wait_flag(PIPE_MTE3, PIPE_S, EVENT_ID7);
#else
    set_flag(PIPE_FIX, PIPE_S, EVENT_ID7);
    wait_flag(PIPE_FIX, PIPE_S, EVENT_ID7);
#endif
}
