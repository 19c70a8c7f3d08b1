// runtime_status.h (2026-09): Simpler's status-code header (SIMPLER_ERROR_*); everything it declares is part of orchestration_api.h here, so it forwards there.
#pragma once

#include <orchestration_api.h>
