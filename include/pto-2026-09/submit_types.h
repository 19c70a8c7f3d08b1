// submit_types.h (2026-09): Simpler's submit types header (MixedKernels, LaunchSpec, PredicateOp); everything it declares is part of orchestration_api.h here, so it forwards there.
#pragma once

#include <orchestration_api.h>
