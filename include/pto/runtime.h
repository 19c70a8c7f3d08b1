// runtime.h: compatibility header.
//
// PyPTO's run path patches `#include "runtime.h"` into generated orchestrations, and some of
// Simpler's orchestrations include it; with this runtime everything an orchestration needs
// is in pto_orchestration_api.h, so this header forwards to it.
#pragma once

#include "pto_orchestration_api.h"
