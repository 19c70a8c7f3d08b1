// pto/sim/adl.hpp: lets kernels call instructions with explicit template arguments without
// `using namespace pto;`.
//
// Hand-written kernels often import only the types (`using pto::Tile; using pto::TPipe;`) and
// call `TPUSH<PipeT, AccT, TileSplitAxis::TILE_UP_DOWN>(pipe, acc)` unqualified, relying on
// argument-dependent lookup. Before C++20, `NAME<...>(...)` only parses as a template call if
// ordinary lookup finds some template named NAME, so under -std=c++17 such a call is a syntax
// error. For each instruction name this header declares a global function template that can
// never be called (its only parameter type cannot be constructed): it makes the name parse as
// a template, and overload resolution then finds the real instruction in namespace pto by ADL.
// With `using namespace pto;` the placeholder is simply one more non-viable candidate.
#pragma once

namespace pto {
namespace sim {
/// Parameter type of the global placeholders: nothing converts to it.
struct AdlOnly {
    AdlOnly() = delete;
};
} // namespace sim
} // namespace pto

/// Declares the never-viable global placeholder template for instruction `NAME`.
#define PTO_SIM_ADL_NAME(NAME) \
    template <int = 0>         \
    void NAME(::pto::sim::AdlOnly) = delete;

PTO_SIM_ADL_NAME(TASSIGN)
PTO_SIM_ADL_NAME(TLOAD)
PTO_SIM_ADL_NAME(TSTORE)
PTO_SIM_ADL_NAME(TSTORE_FP)
PTO_SIM_ADL_NAME(TPREFETCH)
PTO_SIM_ADL_NAME(TMOV)
PTO_SIM_ADL_NAME(TMOV_FP)
PTO_SIM_ADL_NAME(TEXTRACT)
PTO_SIM_ADL_NAME(TEXTRACT_FP)
PTO_SIM_ADL_NAME(TINSERT)
PTO_SIM_ADL_NAME(TINSERT_FP)
PTO_SIM_ADL_NAME(TRESHAPE)
PTO_SIM_ADL_NAME(TSUBVIEW)
PTO_SIM_ADL_NAME(TFILLPAD)
PTO_SIM_ADL_NAME(TFILLPAD_INPLACE)
PTO_SIM_ADL_NAME(TFILLPAD_EXPAND)
PTO_SIM_ADL_NAME(TTRANS)
PTO_SIM_ADL_NAME(TCONCAT)
PTO_SIM_ADL_NAME(TCVT)
PTO_SIM_ADL_NAME(TMATMUL)
PTO_SIM_ADL_NAME(TMATMUL_ACC)
PTO_SIM_ADL_NAME(TMATMUL_BIAS)
PTO_SIM_ADL_NAME(TMATMUL_MX)
PTO_SIM_ADL_NAME(TGEMV)
PTO_SIM_ADL_NAME(TGEMV_ACC)
PTO_SIM_ADL_NAME(TGEMV_BIAS)
PTO_SIM_ADL_NAME(TPUSH)
PTO_SIM_ADL_NAME(TPOP)
PTO_SIM_ADL_NAME(TFREE)
PTO_SIM_ADL_NAME(TALLOC)
PTO_SIM_ADL_NAME(TCI)
PTO_SIM_ADL_NAME(TGATHER)
PTO_SIM_ADL_NAME(TMRGSORT)
PTO_SIM_ADL_NAME(TSORT32)
PTO_SIM_ADL_NAME(TROWSUM)
PTO_SIM_ADL_NAME(TROWMAX)
PTO_SIM_ADL_NAME(TROWMIN)
PTO_SIM_ADL_NAME(TCOLSUM)
PTO_SIM_ADL_NAME(TCOLMAX)
PTO_SIM_ADL_NAME(TCOLMIN)
PTO_SIM_ADL_NAME(TEXPANDS)

#undef PTO_SIM_ADL_NAME
