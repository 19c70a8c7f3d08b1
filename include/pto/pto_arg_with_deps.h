// pto_arg_with_deps.h (2026-08): task arguments that carry their own explicit-dependency buffer.
//
// `CoreTaskArgsWithDeps<N>` collects up to N dependencies with `add_dep(...)` (WAIT | RETAIN)
// and `add_dep_wait(...)` (WAIT only), so no separate id array has to outlive the submit. It is
// defined in pto_orchestration_core.h, shared with 2026-09's arg_with_deps.h;
// pto_orchestration_api.h includes it, so including this header again is harmless.
#pragma once

#include "pto_orchestration_api.h"
