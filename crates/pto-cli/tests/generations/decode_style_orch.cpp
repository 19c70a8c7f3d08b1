// A 2026-09 orchestration of our own over the API surface of PyPTO-generated orchestrations of
// that generation (Simpler's deepseek_v4_flash_decode example and its smaller test
// orchestrations): typed and raw entry scalars, `tensor(i).ref().shapes[0]`, a variadic
// alloc_tensors with get_ref, set/get_tensor_data, views with clamped shapes (std::min without
// including <algorithm>), reshape, SPMD launch specs, early resolve, TaskId dependency arrays
// behind is_valid() guards, a predicate gate, SIMPLER_SCOPE, dummy tasks with dependency kinds
// and CoreTaskArgsWithDeps. It computes c = a + b with kernel_add (func_id 0): the first half
// in predicated tiles of `tile` elements, the second half in one task behind a dummy join, so
// the golden matches only if every part ran.

#include <stdint.h>

#include "orchestration_api.h"

extern "C" {

__attribute__((visibility("default")))
OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& orch_args) {
    (void)orch_args;
    return OrchestrationConfig{
        .expected_arg_count = 4,
    };
}

__attribute__((visibility("default")))
void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {
    const Tensor& ext_a = orch_args.tensor(0).ref();
    const Tensor& ext_b = orch_args.tensor(1).ref();
    const Tensor& ext_c = orch_args.tensor(2).ref();
    int32_t tile = orch_args.scalar<int32_t>(0);
    uint64_t tile_bits = orch_args.scalar(0);
    const uint32_t n = orch_args.tensor(2).ref().shapes[0];
    if (tile <= 0 || tile % 16 != 0 || tile_bits != (uint64_t)(uint32_t)tile) {
        rt_report_fatal(SIMPLER_ERROR_INVALID_ARGS, "decode_style: bad tile %d (bits 0x%llx)", tile,
                        (unsigned long long)tile_bits);
        return;
    }

    // A one-element gate, written and read back by the orchestration.
    uint32_t gate_shapes[1] = {1};
    TensorCreateInfo gate_ci(gate_shapes, 1, DataType::INT32);
    TaskOutputTensors gate_outs = alloc_tensors(gate_ci);
    const Tensor& gate = gate_outs.get_ref(0);
    TaskId gate_tid = gate_outs.task_id();
    uint32_t idx0[1] = {0};
    set_tensor_data<int32_t>(gate, 1, idx0, 1);
    if (get_tensor_data<int32_t>(gate, 1, idx0) != 1) {
        rt_report_fatal(SIMPLER_ERROR_INVALID_ARGS, "decode_style: the gate reads back wrong");
        return;
    }

    TaskId last_tid = TaskId::invalid();
    SIMPLER_SCOPE() {
        const uint32_t half = n / 2;
        for (uint32_t off = 0; off < half; off += (uint32_t)tile) {
            uint32_t len = off >= half ? 0 : std::min<uint32_t>((uint32_t)tile, half - off);
            uint32_t shapes[1] = {len};
            uint32_t offsets[1] = {off};
            uint32_t rows_shapes[2] = {len / 16, 16};
            Tensor a_view = ext_a.view(shapes, offsets);
            Tensor b_view = ext_b.view(shapes, offsets);
            Tensor a_rows = a_view.reshape(rows_shapes, 2);
            Tensor b_rows = b_view.reshape(rows_shapes, 2);
            Tensor c_view = ext_c.view(shapes, offsets);

            CoreTaskArgs params_t0;
            params_t0.add_input(a_rows, b_rows);
            params_t0.add_output(c_view);
            params_t0.launch_spec.set_block_num(2);
            params_t0.set_allow_early_resolve(true);
            TaskId params_t0_deps[2];
            uint32_t params_t0_deps_count = 0;
            params_t0_deps[params_t0_deps_count++] = gate_tid;
            if (last_tid.is_valid()) {
                params_t0_deps[params_t0_deps_count++] = last_tid;
            }
            params_t0.set_dependencies(params_t0_deps, params_t0_deps_count);
            CoreTaskPredicate gate_pred;
            gate_pred.operand.tensor = &gate;
            gate_pred.operand.ndims = 1;
            gate_pred.operand.indices[0] = 0;
            gate_pred.op = PredicateOp::GT;
            gate_pred.target = 0;
            params_t0.set_predicate(gate_pred);
            TaskOutputTensors task_0_outs = rt_submit_aiv_task(0, params_t0);
            last_tid = task_0_outs.task_id();
        }

        // A dependency-only join, then the second half behind it.
        TaskId join_ids[1] = {last_tid};
        DepFlags join_kinds[1] = {DEP_WAIT | DEP_RETAIN};
        CoreTaskArgs join;
        join.set_dependencies_with_kinds(join_ids, join_kinds, 1);
        TaskId join_tid = rt_submit_dummy_task(join).task_id();

        uint32_t rest_shapes[1] = {n - half};
        uint32_t rest_offsets[1] = {half};
        Tensor a_rest = ext_a.view(rest_shapes, rest_offsets);
        Tensor b_rest = ext_b.view(rest_shapes, rest_offsets);
        Tensor c_rest = ext_c.view(rest_shapes, rest_offsets);
        CoreTaskArgsWithDeps<1> again;
        again.add_input(a_rest, b_rest);
        again.add_output(c_rest);
        again.launch_spec.set_block_num(4);
        again.add_dep_wait(join_tid);
        rt_submit_aiv_task(0, again);
    }
}

}  // extern "C"
