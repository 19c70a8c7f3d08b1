// common/comm_context.h: an older spelling of platform_comm/comm_context.h (the CommContext of an
// L3 run; see pto_comm_sim.h).
#pragma once

#include "pto_comm_sim.h"

// This spelling's name of the same 1056-byte struct (Simpler's a2a3 platform header).
using CommDeviceContext = CommContext;
static constexpr uint32_t COMM_MAX_RANK_NUM = PTO_COMM_MAX_RANKS;
