// pto/comm/pto_comm_inst.hpp: where PTO-ISA declares the distributed instructions. Here they
// are part of <pto/pto-inst.hpp> (pto/sim/comm.hpp); kernels that include this header by its
// PTO-ISA name get the same declarations.
#pragma once

#include "pto/pto-inst.hpp"
