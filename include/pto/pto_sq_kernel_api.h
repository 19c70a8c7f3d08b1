// pto_sq_kernel_api.h: available on Ascend hardware only.
#pragma once
#error "pto_sq_kernel_api.h is not available on the simulator: it needs the device's submission queues. Build this program for a real a2a3 / a5 device, or remove the include and the calls that use it."
