// data_type.h (2026-09): Simpler's DataType header; everything it declares is part of tensor.h here, so it forwards there.
#pragma once

#include <tensor.h>
