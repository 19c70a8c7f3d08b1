// Paged attention in the style of Simpler's paged_attention_manual_scope example (written for
// this project's tests): a MANUAL scope per batch, so every edge is explicit; CoreTaskArgs
// objects reused with reset() across KV blocks; CoreTaskArgsWithDeps for the update chain;
// accumulators from alloc_tensors. Uses the bundled paged_attention example's kernels:
// 0 qk_matmul (AIC), 1 softmax_prepare (AIV), 2 pv_matmul (AIC), 3 online_update (AIV).

#include "pto_orchestration_api.h"

#define FUNC_QK_MATMUL 0
#define FUNC_SOFTMAX_PREPARE 1
#define FUNC_PV_MATMUL 2
#define FUNC_ONLINE_UPDATE 3

extern "C" __attribute__((visibility("default")))
PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& orch_args) {
    (void)orch_args;
    return PTO2OrchestrationConfig{.expected_arg_count = 7};
}

extern "C" __attribute__((visibility("default")))
void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {
    const ChipTensor& query = orch_args.tensor(0).ref();
    const ChipTensor& key_cache = orch_args.tensor(1).ref();
    const ChipTensor& value_cache = orch_args.tensor(2).ref();
    const ChipTensor& block_table = orch_args.tensor(3).ref();
    const ChipTensor& context_lens = orch_args.tensor(4).ref();
    const ChipTensor& out = orch_args.tensor(5).ref();
    float scale = from_u64<float>(orch_args.scalar(0));

    const uint32_t batch = query.shapes[0], heads = query.shapes[1], dim = query.shapes[2];
    const uint32_t block_size = key_cache.shapes[1];
    uint32_t qo_shapes[3] = {1, heads, dim}, kv_shapes[3] = {1, block_size, dim};
    uint32_t oi_shapes[2] = {heads, dim}, vec_shapes[1] = {heads}, sij_shapes[2] = {heads, block_size};
    TensorCreateInfo oi_ci(oi_shapes, 2), li_ci(vec_shapes, 1), mi_ci(vec_shapes, 1);
    TensorCreateInfo sij_ci(sij_shapes, 2), pij_ci(sij_shapes, 2), mij_ci(vec_shapes, 1), lij_ci(vec_shapes, 1);
    TensorCreateInfo oij_ci(oi_shapes, 2);

    CoreTaskArgs qk, sf, pv;               // reused across blocks with reset()
    CoreTaskArgsWithDeps<4> up;
    for (uint32_t b = 0; b < batch; ++b) {
        uint32_t ci[1] = {b};
        int32_t context_len = get_tensor_data<int32_t>(context_lens, 1, ci);
        uint32_t n_blocks = ((uint32_t)context_len + block_size - 1) / block_size;
        PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
            TaskOutputTensors acc = alloc_tensors(oi_ci, li_ci, mi_ci);
            const ChipTensor& oi = acc.get_ref(0);
            const ChipTensor& li = acc.get_ref(1);
            const ChipTensor& mi = acc.get_ref(2);
            uint32_t qo_off[3] = {b, 0, 0};
            ChipTensor qi = query.view(qo_shapes, qo_off);
            ChipTensor out_b = out.view(qo_shapes, qo_off);
            PTO2TaskId prev_update = acc.task_id();
            for (uint32_t j = 0; j < n_blocks; ++j) {
                uint32_t bt[2] = {b, j};
                int32_t block = get_tensor_data<int32_t>(block_table, 2, bt);
                uint32_t kv_off[3] = {(uint32_t)block, 0, 0};
                ChipTensor kj = key_cache.view(kv_shapes, kv_off, true);
                ChipTensor vj = value_cache.view(kv_shapes, kv_off, true);
                int64_t valid_len = std::min<int64_t>((int64_t)context_len - (int64_t)j * block_size, block_size);
                int64_t is_first = j == 0, is_last = j + 1 == n_blocks;

                qk.reset();
                qk.add_input(qi, kj);
                qk.add_output(sij_ci);
                TaskOutputTensors s = rt_submit_aic_task(FUNC_QK_MATMUL, qk);
                PTO2TaskId qk_id = s.task_id();

                sf.reset();
                sf.add_input(s.get_ref(0));
                sf.add_output(pij_ci, mij_ci, lij_ci);
                sf.add_scalar(scale, valid_len);
                sf.set_dependencies(&qk_id, 1);
                TaskOutputTensors p = rt_submit_aiv_task(FUNC_SOFTMAX_PREPARE, sf);
                PTO2TaskId sf_id = p.task_id();

                pv.reset();
                pv.add_input(p.get_ref(0), vj);
                pv.add_output(oij_ci);
                pv.set_dependencies(&sf_id, 1);
                TaskOutputTensors o = rt_submit_aic_task(FUNC_PV_MATMUL, pv);

                up.reset();
                up.add_input(p.get_ref(1), p.get_ref(2), o.get_ref(0));
                up.add_inout(mi, li, oi);
                up.add_output(out_b);
                up.add_scalar(is_first, is_last);
                up.add_dep(sf_id, o.task_id(), prev_update);
                prev_update = rt_submit_aiv_task(FUNC_ONLINE_UPDATE, up).task_id();
            }
        }
    }
}
