// vector_add in the style of Simpler's SPMD examples (written for this project's tests): one
// sync-start SPMD task per tile whose block count is set with the arch's own name (a5's
// set_core_num behind a5's include guard, a2a3's set_block_num otherwise), and a predicated
// branch that must never run (its gate is false): it would overwrite the result with a.
// Uses the bundled vector_add example's kernel 0 (kernel_add: c = a + b, split by block).

#include "pto_orchestration_api.h"

extern "C" __attribute__((visibility("default")))
PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& orch_args) {
    (void)orch_args;
    return PTO2OrchestrationConfig{.expected_arg_count = 3};
}

extern "C" __attribute__((visibility("default")))
void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {
    const ChipTensor& a = orch_args.tensor(0).ref();
    const ChipTensor& b = orch_args.tensor(1).ref();
    const ChipTensor& c = orch_args.tensor(2).ref();
    const uint32_t n = a.shapes[0], tile = 2048;
    const int16_t blocks = (int16_t)std::min(rt_available_cluster_count(), 4);
    PTO2_SCOPE() {
        CoreTaskArgs args;
        for (uint32_t off = 0; off < n; off += tile) {
            uint32_t s[1] = {tile}, o[1] = {off};
            ChipTensor at = a.view(s, o), bt = b.view(s, o), ct = c.view(s, o);
            args.reset();
            args.add_input(at, bt);
            args.add_output(ct);
#if defined(SRC_A5_RUNTIME_TENSORMAP_AND_RINGBUFFER_RUNTIME_PTO_TYPES_H_)
            args.launch_spec.set_core_num(blocks);
#else
            args.launch_spec.set_block_num(blocks);
#endif
            args.launch_spec.set_require_sync_start(true);
            TaskOutputTensors t = rt_submit_aiv_task(0, args);

            // Predicated branch: c := a + 0 * ... only if a[off] > 1e30, which never holds
            // for the example's inputs; the predicate reads the first element as an int32
            // bit pattern compared with a huge target.
            CoreTaskPredicate gate;
            gate.operand.tensor = &a;
            gate.operand.ndims = 1;
            gate.operand.indices[0] = off;
            gate.op = PredicateOp::GT;
            gate.target = (int64_t)1 << 40;
            CoreTaskArgs branch;
            branch.add_input(at, at);
            branch.add_output(ct);
            branch.set_predicate(gate);
            PTO2TaskId after = t.task_id();
            branch.set_dependencies(&after, 1);
            rt_submit_aiv_task(0, branch);
        }
    }
}
