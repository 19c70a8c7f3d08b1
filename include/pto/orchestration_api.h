// orchestration_api.h: a header of Simpler's 2026-09 orchestration API. It lives in the 2026-09 include root,
// which the toolchain puts first on the include path for a build directory whose sources are
// of that generation; reaching this copy means the unit was compiled as 2026-08.
#pragma once

#error "orchestration_api.h is Simpler's 2026-09 orchestration API, but this unit is compiled with the 2026-08 headers (pto_orchestration_api.h): build it from a build directory (its generation is detected from its sources), or compile it as generation 2026-09; a build directory must not mix the two"
