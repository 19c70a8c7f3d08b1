// pto/common/constants.hpp: compatibility header; some ptoas samples include it after
// <pto/pto-inst.hpp>. Everything it declares in PTO-ISA is in <pto/pto-inst.hpp> here.
#pragma once

#include "pto/pto-inst.hpp"
