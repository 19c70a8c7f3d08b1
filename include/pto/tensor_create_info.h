// tensor_create_info.h: one of Simpler's orchestration-side headers; everything it declares is part of the
// orchestration API here, so it forwards to pto_orchestration_api.h.
#pragma once

#include "pto_orchestration_api.h"
