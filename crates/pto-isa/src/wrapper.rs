//! The kernel-source scaffolding PyPTO generates around ptoas output, so that test and
//! benchmark kernels are shaped exactly like real PyPTO kernels.

/// PyPTO's kernel header block: `<cstdint>`, the `__gm__` / `__aicore__` fallbacks, the
/// PTO-ISA header, the runtime headers and `using namespace pto;`, followed by the helpers
/// ptoas emits into its own output (`PTOAS__GLOBAL_TENSOR_DATA`, `ptoas_auto_sync_tail`,
/// `PTOAS__DCCI_SINGLE_CACHE_LINE`).
pub const PRELUDE: &str = r#"#include <cstdint>

#ifndef __gm__
#define __gm__
#endif

#ifndef __aicore__
#if defined(__CPU_SIM)
#define __aicore__
#else
#define __aicore__ [aicore]
#endif
#endif

#include <pto/pto-inst.hpp>
#include "tensor.h"
#include "intrinsic.h"

using namespace pto;

// --- ptoas-generated code ---

template <typename TensorT>
static __aicore__ inline auto PTOAS__GLOBAL_TENSOR_DATA(TensorT &tensor) -> decltype(tensor.data()) {
    return tensor.data();
}

enum class PTOAutoSyncTailMode : int {
    kBarrierAll = 0,
    kSetWaitMte3ToSEvent0 = 1,
};

static __aicore__ inline void ptoas_auto_sync_tail(PTOAutoSyncTailMode mode = PTOAutoSyncTailMode::kBarrierAll) {
    switch (mode) {
    case PTOAutoSyncTailMode::kSetWaitMte3ToSEvent0:
        set_flag(PIPE_MTE3, PIPE_S, EVENT_ID0);
        wait_flag(PIPE_MTE3, PIPE_S, EVENT_ID0);
        break;
    case PTOAutoSyncTailMode::kBarrierAll:
    default:
        pipe_barrier(PIPE_ALL);
        break;
    }
}

template <typename Ptr>
static __aicore__ inline void PTOAS__DCCI_SINGLE_CACHE_LINE(Ptr ptr) {
    dcci((__gm__ void *)ptr, cache_line_t::SINGLE_CACHE_LINE);
}
"#;

/// The `__CPU_SIM` cache-maintenance shim of PyPTO's deepseek kernels, inserted after the
/// includes: it `#undef`s the header's `dcci` / `dsb` / cache-line macros and declares its own.
pub const DEEPSEEK_SHIM: &str = r#"
#if defined(__CPU_SIM)
#include <atomic>
namespace pypto_sim_detail {
template <typename... Args>
static inline void sim_dcci(Args...);
}  // namespace pypto_sim_detail
#undef ENTIRE_DATA_CACHE
#undef SINGLE_CACHE_LINE
#undef DSB_DDR
#undef dcci
#undef dsb
#undef CACHELINE_OUT
namespace cache_line_t {
constexpr int ENTIRE_DATA_CACHE = 0;
constexpr int SINGLE_CACHE_LINE = 0;
constexpr int CACHELINE_OUT = 0;
}  // namespace cache_line_t
typedef int mem_dsb_t;
#define DSB_DDR 0
static inline void dcci(...) { std::atomic_thread_fence(std::memory_order_seq_cst); }
static inline void dsb(mem_dsb_t) { std::atomic_thread_fence(std::memory_order_seq_cst); }
#endif  // __CPU_SIM
"#;

/// A complete kernel source: [`PRELUDE`], the ptoas body (one or more `static __aicore__`
/// functions), and PyPTO's `kernel_entry` section.
pub fn kernel(body: &str, entry: &str) -> String {
    format!("{PRELUDE}\n{body}\n// --- Kernel entry point ---\n{entry}\n")
}

/// As [`kernel`], with the deepseek [`DEEPSEEK_SHIM`] between the includes and the body.
pub fn kernel_with_shim(body: &str, entry: &str) -> String {
    let (head, tail) = match PRELUDE.split_once("using namespace pto;") {
        Some(parts) => parts,
        None => (PRELUDE, ""),
    };
    format!("{head}{DEEPSEEK_SHIM}\nusing namespace pto;{tail}\n{body}\n// --- Kernel entry point ---\n{entry}\n")
}

/// PyPTO's unpacking of tensor argument `index` into a typed GM pointer named `name`:
/// `reinterpret_cast<__gm__ ChipTensor*>(args[i])`, then `buffer.addr + start_offset`.
pub fn tensor_arg(index: usize, ctype: &str, name: &str) -> String {
    format!(
        "    __gm__ ChipTensor* {name}_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[{index}]);\n    \
         __gm__ {ctype}* {name} = reinterpret_cast<__gm__ {ctype}*>({name}_tensor->buffer.addr) + {name}_tensor->start_offset;\n"
    )
}

/// PyPTO's unpacking of scalar argument `index` (raw 64-bit slot) as `ctype` named `name`,
/// through a `union { uint64_t u64; T val; }`.
pub fn scalar_arg(index: usize, ctype: &str, name: &str) -> String {
    format!(
        "    union {{ uint64_t u64; {ctype} val; }} {name}_conv;\n    {name}_conv.u64 = args[{index}];\n    {ctype} {name} = {name}_conv.val;\n"
    )
}

/// `extern "C" __aicore__ __attribute__((always_inline)) void kernel_entry(...)` with the
/// given unpacking lines and call.
pub fn entry(unpack: &str, call: &str) -> String {
    format!(
        "extern \"C\" __aicore__ __attribute__((always_inline)) void kernel_entry(__gm__ int64_t* args) {{\n{unpack}    {call};\n}}\n"
    )
}
