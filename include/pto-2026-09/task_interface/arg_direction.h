// task_interface/arg_direction.h (2026-09): Simpler's argument-direction header; everything it declares is part of tensor.h here, so it forwards there.
#pragma once

#include <tensor.h>
