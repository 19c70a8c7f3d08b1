// runtime.h: compatibility header.
//
// PyPTO's run path patches `#include "runtime.h"` into generated orchestrations; with this
// runtime everything an orchestration needs is in pto_orchestration_api.h, so this header
// only forwards to it.
#pragma once

#include "pto_orchestration_api.h"
