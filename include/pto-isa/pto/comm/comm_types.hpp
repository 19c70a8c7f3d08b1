// pto/comm/comm_types.hpp: where PTO-ISA declares the pto::comm types (Signal, Signal2D,
// ParallelGroup, NotifyOp, WaitCmp, ReduceOp). Here they are part of <pto/pto-inst.hpp>
// (pto/sim/types.hpp, pto/sim/comm.hpp).
#pragma once

#include "pto/pto-inst.hpp"
