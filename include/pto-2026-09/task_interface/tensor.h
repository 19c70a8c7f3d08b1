// task_interface/tensor.h (2026-09): Simpler's boundary ChipTensor header; everything it declares is part of tensor.h here, so it forwards there.
#pragma once

#include <tensor.h>
