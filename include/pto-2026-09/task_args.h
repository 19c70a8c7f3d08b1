// task_args.h (2026-09): Simpler's task-argument header; everything it declares is part of orchestration_api.h here, so it forwards there.
#pragma once

#include <orchestration_api.h>
