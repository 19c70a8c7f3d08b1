# Kernel and Orchestration Configuration

from pathlib import Path

from simpler.task_interface import ArgDirection as _D

_ROOT_DIR = Path(__file__).parent

# Runtime configuration for tensormap_and_ringbuffer.
# AICPU thread count 0 selects the runtime's architecture default (a2a3: 4; a5: 5).
RUNTIME_CONFIG = {
	"runtime": "tensormap_and_ringbuffer",
	"aicpu_thread_num": 0,
}

ORCHESTRATION = {
	"source": str(_ROOT_DIR / "orchestration" / "paged_attention.cpp"),
	"function_name": "aicpu_orchestration_entry",
	"signature": [_D.IN, _D.IN, _D.IN, _D.IN, _D.IN, _D.OUT],
}

KERNELS = [
	{"func_id": 0, "name": "init_state", "source": str(_ROOT_DIR / "kernels" / "aiv" / "init_state.cpp"), "core_type": "aiv", "signature": [_D.OUT, _D.OUT, _D.OUT]},
	{"func_id": 1, "name": "qk", "source": str(_ROOT_DIR / "kernels" / "aic" / "qk.cpp"), "core_type": "aic", "signature": [_D.IN, _D.IN, _D.OUT]},
	{"func_id": 2, "name": "softmax", "source": str(_ROOT_DIR / "kernels" / "aiv" / "softmax.cpp"), "core_type": "aiv", "signature": [_D.IN, _D.INOUT, _D.INOUT, _D.OUT, _D.OUT]},
	{"func_id": 3, "name": "pv", "source": str(_ROOT_DIR / "kernels" / "aic" / "pv.cpp"), "core_type": "aic", "signature": [_D.IN, _D.IN, _D.OUT]},
	{"func_id": 4, "name": "update", "source": str(_ROOT_DIR / "kernels" / "aiv" / "update.cpp"), "core_type": "aiv", "signature": [_D.IN, _D.IN, _D.INOUT]},
	{"func_id": 5, "name": "normalize", "source": str(_ROOT_DIR / "kernels" / "aiv" / "normalize.cpp"), "core_type": "aiv", "signature": [_D.IN, _D.IN, _D.OUT]},
]
