// pto_runtime2_types.h (2026-09 include root): a header of Simpler's 2026-08 orchestration API, which this
// generation renamed. Reaching it means a 2026-09 unit (orchestration_api.h) also uses 2026-08
// names; a build directory uses one generation.
#pragma once

#error "pto_runtime2_types.h is Simpler's 2026-08 API (pto_orchestration_api.h), but this unit is compiled with the 2026-09 headers (orchestration_api.h): a build directory must not mix the two generations; use orchestration_api.h's names (see docs/COMPATIBILITY.md)"
