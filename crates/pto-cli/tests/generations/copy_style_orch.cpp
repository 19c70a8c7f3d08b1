// A 2026-09 orchestration of our own over the API surface of Simpler's hand-written
// prefetch_async_demo orchestration: a custom entry symbol with its own config function and a
// forwarding aicpu_orchestration_config, an argument-count check with LOG_ERROR, entry tensors
// bound as `const simpler::tmr::Tensor&`, and one AIV task with an INPUT and an existing OUTPUT.

#include <stdint.h>

#include "orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) OrchestrationConfig add_orchestration_config(const ChipTaskArgs& orch_args) {
    (void)orch_args;
    return OrchestrationConfig{.expected_arg_count = 4};
}

__attribute__((visibility("default"))) OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& orch_args) {
    return add_orchestration_config(orch_args);
}

__attribute__((visibility("default"))) void add_orchestration(const ChipTaskArgs& orch_args) {
    if (orch_args.tensor_count() + orch_args.scalar_count() != 4) {
        LOG_ERROR("add_orchestration: expected 4 args (a, b, c, tile)");
        return;
    }
    const simpler::tmr::Tensor& a = orch_args.tensor(0).ref();
    const simpler::tmr::Tensor& b = orch_args.tensor(1).ref();
    const simpler::tmr::Tensor& c = orch_args.tensor(2).ref();

    CoreTaskArgs task_args;
    task_args.add_input(a, b);
    task_args.add_output(c);
    task_args.launch_spec.set_block_num(4);
    rt_submit_aiv_task(0, task_args);
}

}  // extern "C"
