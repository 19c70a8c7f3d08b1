// tensormap_and_ringbuffer/tensor.h (2026-09): Simpler's simpler::tmr::Tensor header (the probe `__has_include("tensormap_and_ringbuffer/tensor.h")` tells this generation apart); everything it declares is part of tensor.h here, so it forwards there.
#pragma once

#include <tensor.h>
