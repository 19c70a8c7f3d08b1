// pto_sim_thread_exit.h: what the simulator does when a kernel or an orchestration calls
// pthread_exit() (or is cancelled) on the runtime's thread.
//
// The thread belongs to the runtime: it must come back from the kernel to complete the task.
// pthread_exit unwinds with glibc's forced-unwind exception, which may not be swallowed (glibc
// aborts with "exception not rethrown") and may not unwind into the runtime's frames either.
// The trampolines (pto_kernel_call, pto_orchestration_call, pto_sim_invoke) therefore catch
// it, say what happened and abort: in the default isolated mode the chip process dies, the
// host reports the task, kernel, core and arguments from its status board and survives.
#pragma once

#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>

namespace pto_detail {

/// Reports that `who` ("kernel" or "orchestration") ended its thread, then aborts.
[[noreturn]] inline void thread_exit_refused(const char* who) noexcept {
    std::fprintf(stderr,
                 "pto: the %s called pthread_exit() (or was cancelled) on a runtime thread; a %s must "
                 "return to complete its task, so the chip stops here\n",
                 who, who);
    std::fflush(stderr);
    std::abort();
}

}  // namespace pto_detail
