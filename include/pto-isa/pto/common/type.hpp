// pto/common/type.hpp: compatibility header. Hand-written PTO kernels include it next to
// <pto/pto-inst.hpp>; everything PTO-ISA declares in it is declared by <pto/pto-inst.hpp> here.
#pragma once

#include "pto/pto-inst.hpp"
