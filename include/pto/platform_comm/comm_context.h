// platform_comm/comm_context.h: available on Ascend hardware only.
#pragma once
#error "platform_comm/comm_context.h is not available on the simulator: it needs the device's inter-chip communication contexts. Build this program for a real a2a3 / a5 device, or remove the include and the calls that use it."
