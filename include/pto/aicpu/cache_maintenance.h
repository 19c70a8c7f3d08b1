// aicpu/cache_maintenance.h: data-cache maintenance around buffers shared with AI cores.
//
// On the device an AICPU must clean / invalidate its cache lines before reading what a kernel
// wrote (or after writing what a kernel reads). On the simulator host and AI cores share one
// coherent memory, so both calls only order memory (a full fence).
#pragma once

#include <stddef.h>

/// Makes later reads of `[addr, addr + size)` see what AI cores wrote.
inline void cache_invalidate_range(const void* addr, size_t size) {
    (void)addr;
    if (size != 0) __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
/// Makes earlier writes to `[addr, addr + size)` visible to AI cores.
inline void cache_flush_range(const void* addr, size_t size) {
    (void)addr;
    if (size != 0) __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
