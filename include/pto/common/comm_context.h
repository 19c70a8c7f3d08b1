// common/comm_context.h: an older spelling of platform_comm/comm_context.h (the CommContext of an
// L3 run; see pto_comm_sim.h).
#pragma once

#include "pto_comm_sim.h"
