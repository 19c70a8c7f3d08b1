# Kernel and Orchestration Configuration

from pathlib import Path

_ROOT_DIR = Path(__file__).parent

# Runtime configuration for host_build_graph.
# AICPU thread count 0 selects the runtime's architecture default (a2a3: 4; a5: 5).
RUNTIME_CONFIG = {
	"runtime": "host_build_graph",
	"aicpu_thread_num": 0,
	"enable_sdma": True,
}

ORCHESTRATION = {
	"source": str(_ROOT_DIR / "orchestration" / "main.cpp"),
	"function_name": "aicpu_orchestration_entry",
}

KERNELS = [
	{"func_id": 0, "name": "matmul", "source": str(_ROOT_DIR / "kernels" / "aic" / "matmul.cpp"), "core_type": "aic"},
	{"func_id": 1, "name": "ext", "source": '/src/ext/k.cpp', "core_type": "aiv", "external": True, "extra_include_dirs": ['/src/inc', "/src/it's"]},
]
