// runtime.h (2026-09): the header PyPTO's run path patches into generated orchestrations; everything it declares is part of orchestration_api.h here, so it forwards there.
#pragma once

#include <orchestration_api.h>
