// backend/sdma/sdma_completion_kernel.h: available on Ascend hardware only.
#pragma once
#error "backend/sdma/sdma_completion_kernel.h is not available on the simulator: it needs the device's SDMA engine. Build this program for a real a2a3 / a5 device, or remove the include and the calls that use it."
