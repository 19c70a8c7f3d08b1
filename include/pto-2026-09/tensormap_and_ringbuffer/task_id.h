// tensormap_and_ringbuffer/task_id.h (2026-09): Simpler's simpler::tmr::TaskId header; everything it declares is part of tensor.h here, so it forwards there.
#pragma once

#include <tensor.h>
