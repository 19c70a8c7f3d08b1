// arg_with_deps.h (2026-09): Simpler's CoreTaskArgsWithDeps<N> header (defined in pto_orchestration_core.h); everything it declares is part of orchestration_api.h here, so it forwards there.
#pragma once

#include <orchestration_api.h>
