// pto/sim/invoke.hpp: the kernel library's exports for the runtime (pto_sim_abi.h).
//
// `pto_sim_invoke(ctx, entry, args)` binds `ctx` to the calling thread, runs `entry(args)`
// and turns the ways a kernel can end into status codes: PTO_SIM_OK, PTO_SIM_FAULT (the
// header reported a fault through ctx->fault and unwound), PTO_SIM_STOPPED (a blocking wait
// saw the run stop) and PTO_SIM_EXCEPTION (any other C++ exception; its text goes through
// ctx->fault first). The previous binding is restored on return, so nested or repeated
// invocations on one thread are fine. `pto_sim_kernel_core_type` tells the runtime which core
// type the library was compiled for. Both are weak so that several translation units of one
// library may include the header.
#pragma once

#include "pto/sim/unsupported.hpp"

#include <exception>

#include "pto_sim_thread_exit.h"

/// Runs one subtask of a kernel built over this header (see pto_sim_abi.h).
extern "C" __attribute__((weak, visibility("default"))) int pto_sim_invoke(PtoSimContext* ctx, PtoSimKernelEntry entry,
                                                                          int64_t* args) {
    if (ctx == nullptr || entry == nullptr) {
        std::fprintf(stderr, "pto-isa: pto_sim_invoke called with a null context or entry\n");
        return PTO_SIM_FAULT;
    }
    if (ctx->abi_version != PTO_SIM_ABI_VERSION) {
        std::fprintf(stderr,
                     "pto-isa: the runtime speaks simulation ABI version %u, this kernel was built for version %d; "
                     "rebuild the kernel with the runtime's headers\n",
                     ctx->abi_version, PTO_SIM_ABI_VERSION);
        return PTO_SIM_FAULT;
    }
    PtoSimContext* previous = pto::sim::tls_context;
    const bool previous_atomic = pto::sim::tls_atomic_add;
    PtoSimTrace* const previous_trace = pto_sim_tls_trace;
    pto::sim::tls_context = ctx;
    pto::sim::tls_atomic_add = false;
    pto_sim_tls_trace = ctx->trace;
    int status = PTO_SIM_OK;
    try {
        entry(args);
    } catch (abi::__forced_unwind&) {
        pto_detail::thread_exit_refused("kernel");
    } catch (const pto::sim::FaultUnwind&) {
        status = PTO_SIM_FAULT;
    } catch (const pto::sim::StopUnwind&) {
        status = PTO_SIM_STOPPED;
    } catch (const std::exception& e) {
        const std::string message = std::string("uncaught C++ exception: ") + e.what();
        if (ctx->fault != nullptr) ctx->fault(ctx, message.c_str());
        status = PTO_SIM_EXCEPTION;
    } catch (...) {
        if (ctx->fault != nullptr) ctx->fault(ctx, "uncaught C++ exception: (not derived from std::exception)");
        status = PTO_SIM_EXCEPTION;
    }
    __atomic_store_n(&ctx->waiting_on, static_cast<const char*>(nullptr), __ATOMIC_RELEASE);
    pto::sim::tls_context = previous;
    pto::sim::tls_atomic_add = previous_atomic;
    pto_sim_tls_trace = previous_trace;
    return status;
}

/// The core type this kernel library was compiled for (PtoSimCoreType).
extern "C" __attribute__((weak, visibility("default"))) const int pto_sim_kernel_core_type = PTO_SIM_BUILD_CORE_TYPE;
