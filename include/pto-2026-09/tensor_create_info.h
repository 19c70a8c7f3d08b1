// tensor_create_info.h (2026-09): Simpler's TensorCreateInfo header (no set_initial_value in this generation); everything it declares is part of orchestration_api.h here, so it forwards there.
#pragma once

#include <orchestration_api.h>
