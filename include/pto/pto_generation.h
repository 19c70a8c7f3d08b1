// pto_generation.h: which Simpler generation the headers on this include path spell.
//
// The runtime's shared headers include it as <pto_generation.h>, so the copy found first on
// the include path decides: this one (the 2026-08 root, alone on the path) says 2026-08, the
// 2026-09 root's copy says 2026-09. The toolchain puts the 2026-09 root in front for a build
// directory whose sources are of that generation (pto_toolchain::detect_generation).
#pragma once

/// 2026-08 (Simpler 6ebaf77: pto_orchestration_api.h, 128-byte ChipTensor) or
/// 2026-09 (orchestration_api.h, simpler::tmr::Tensor), as YYYYMM.
#define PTO_SIMPLER_GENERATION 202608
