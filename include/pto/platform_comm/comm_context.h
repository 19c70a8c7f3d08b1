// platform_comm/comm_context.h: Simpler's name for the per-rank communication context of an L3
// run. On the simulator it is pto_comm_sim.h's CommContext (Simpler's 1056-byte layout; the
// `device_ctx` scalar of a comm dispatch points at it), so distributed kernels that compute a
// peer's window address from `windowsIn[]` compile and run unchanged (docs/L3.md).
#pragma once

#include "pto_comm_sim.h"
