// pto/pto-inst.hpp: our own CPU implementation of the PTO-ISA C++ API, as ptoas-generated
// and hand-written PTO kernels use it.
//
// Kernels include it as <pto/pto-inst.hpp> and are compiled with -std=c++17 -D__CPU_SIM and
// -D__DAV_VEC__ (AIV) or -D__DAV_CUBE__ (AIC). The implementation is split by concern under
// pto/sim/; docs/PTO_ISA.md lists every instruction and type with its status and the known
// deviations from the device.
#pragma once

#include "pto/sim/config.hpp"     // language checks, qualifiers, standard headers
#include "pto/sim/types.hpp"      // enums and small value types
#include "pto/sim/constants.hpp"  // hardware constants (C0_SIZE_BYTE, BLOCK_BYTE_SIZE, ...)
#include "pto/sim/bf16.hpp"       // bfloat16_t, half
#include "pto/sim/numeric.hpp"    // element traits, pad values, rounding
#include "pto/sim/context.hpp"    // the bound simulation context, faults, waits
#include "pto/sim/tile.hpp"       // Tile and its layouts
#include "pto/sim/global_tensor.hpp" // Shape, Stride, GlobalTensor
#include "pto/sim/assign.hpp"     // TASSIGN
#include "pto/sim/sync.hpp"       // sync no-ops, cache maintenance, core identity
#include "pto/sim/memory.hpp"     // TLOAD, TSTORE
#include "pto/sim/movement.hpp"   // TMOV, TEXTRACT, TINSERT, TRESHAPE, TFILLPAD, TTRANS, TCONCAT
#include "pto/sim/elementwise.hpp" // element-wise instructions
#include "pto/sim/convert.hpp"    // TCVT
#include "pto/sim/reduce.hpp"     // reductions and broadcasts
#include "pto/sim/matmul.hpp"     // TMATMUL*
#include "pto/sim/pipe.hpp"       // TPipe, TPUSH, TPOP, TFREE
#include "pto/sim/sort_gather.hpp" // TGATHER, TCI, TSORT32, TMRGSORT
#include "pto/sim/gm_index.hpp"    // MGATHER, MSCATTER (Row / Elem, OOB and atomic policies)
#include "pto/sim/unsupported.hpp" // declared-but-unsupported names
#include "pto/sim/comm.hpp"        // pto::comm TPUT, TGET, TNOTIFY, TWAIT, TTEST
#include "pto/sim/invoke.hpp"     // pto_sim_invoke, pto_sim_kernel_core_type
#include "pto/sim/adl.hpp"        // explicit-template-argument calls without `using namespace pto`

// PyPTO's wrapper declares `kernel_entry` `always_inline` (on the device it is inlined into
// the launch stub); here it is an exported function, and g++ says "'always_inline' function
// might not be inlinable" for every kernel. The attribute is harmless on the host, so that
// warning class is silenced for translation units that include this header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wattributes"
#endif
