// pto_task_id.h: one of Simpler's task-interface headers; DataType, PTO2TaskId and friends are
// declared in tensor.h here, so it forwards there.
#pragma once

#include "tensor.h"
