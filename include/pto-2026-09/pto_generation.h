// pto_generation.h (2026-09 include root): the headers on this include path spell Simpler's
// 2026-09 generation. The runtime's shared headers include it as <pto_generation.h>; this root
// comes before the 2026-08 root for build directories of that generation.
#pragma once

/// 2026-08 (Simpler 6ebaf77: pto_orchestration_api.h, 128-byte ChipTensor) or
/// 2026-09 (orchestration_api.h, simpler::tmr::Tensor), as YYYYMM.
#define PTO_SIMPLER_GENERATION 202609
