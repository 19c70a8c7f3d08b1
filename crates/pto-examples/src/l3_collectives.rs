//! Builtin host collectives as L2 sub-builds (`next_levels/builtin.tensor.<variant>/`), the
//! way PyPTO renders them for a HOST-level `pld.tensor.*` collective: `kernel_config.py`,
//! `orchestration/<entry>.cpp` and `kernels/aiv/<entry>_kernel.cpp`, where `<entry>` is the
//! variant with every non-alphanumeric character replaced by `_`.
//!
//! Every variant takes the same arguments: the data window buffer (INOUT), a
//! `[world_size, 1]` int32 signal buffer in the same window (INOUT), then the scalars
//! `domain_size` and `device_ctx` (mesh allreduce variants also `core_num`; it is accepted
//! and unused on the CPU). The kernel is one AIV task: it tells every peer its data is
//! ready (a +1 in the peer's signal word for this rank), waits for all peers, computes the
//! result into private memory reading the peers' windows directly, tells every peer it has
//! finished reading, waits for all, and writes the result in place. `allreduce_ring` uses
//! the same algorithm as the mesh form on the CPU.

use std::path::PathBuf;

use pto_build_output::kernel_config::{ArgDirection, CoreType};
use pto_build_output::{KernelConfig, KernelEntry, OrchestrationConfig, RuntimeConfig};

use crate::Error;

/// What one variant computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collective {
    /// Element-wise reduction of every rank's buffer, into every rank's buffer.
    AllReduce(Reduce),
    /// Only the two signal rounds.
    Barrier,
    /// Rank `root`'s buffer into every rank's.
    Broadcast(u32),
    /// Chunk `r` of the reduction into chunk `r` of rank `r` (other chunks unchanged).
    ReduceScatter(Reduce),
    /// Chunk `p` of every rank `p` into chunk `p` of every rank.
    AllGather,
    /// Chunk `q` of rank `p` into chunk `p` of rank `q`.
    AllToAll,
}

/// An element-wise reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduce {
    /// `+`.
    Sum,
    /// `max`.
    Max,
    /// `min`.
    Min,
    /// `*`.
    Prod,
}

impl Reduce {
    fn from_name(s: &str) -> Option<Reduce> {
        Some(match s {
            "sum" => Reduce::Sum,
            "max" => Reduce::Max,
            "min" => Reduce::Min,
            "prod" => Reduce::Prod,
            _ => return None,
        })
    }

    fn cpp(self) -> &'static str {
        match self {
            Reduce::Sum => "acc + v",
            Reduce::Max => "(v > acc ? v : acc)",
            Reduce::Min => "(v < acc ? v : acc)",
            Reduce::Prod => "acc * v",
        }
    }
}

/// A variant name (`builtin.tensor.allreduce__sum__fp32`, ...) parsed; `None` for a name
/// this runtime does not render (fp16 variants and `all_to_all_v` among them).
pub fn parse_variant(variant: &str) -> Option<Collective> {
    let rest = variant.strip_prefix("builtin.tensor.")?;
    let parts: Vec<&str> = rest.split("__").collect();
    match parts.as_slice() {
        ["allreduce", op, "fp32"] | ["allreduce_ring", op @ "sum", "fp32"] => {
            Some(Collective::AllReduce(Reduce::from_name(op)?))
        }
        ["barrier", "fp32"] => Some(Collective::Barrier),
        ["broadcast", root, "fp32"] => Some(Collective::Broadcast(
            root.strip_prefix("root")?.parse().ok()?,
        )),
        ["reduce_scatter", op, "fp32"] => Some(Collective::ReduceScatter(Reduce::from_name(op)?)),
        ["allgather", "fp32"] => Some(Collective::AllGather),
        ["all_to_all", "fp32"] => Some(Collective::AllToAll),
        _ => None,
    }
}

/// `<entry>`: the variant with non-alphanumerics replaced by `_`.
pub fn entry_name(variant: &str) -> String {
    variant
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

fn compute_cpp(c: Collective) -> String {
    let reduce = |r: Reduce, lo: &str, hi: &str, target: &str| {
        format!(
            "    for (uint64_t i = {lo}; i < {hi}; ++i) {{\n        float acc = pto_comm_peer_ptr(ctx, data, 0)[i];\n        for (uint32_t p = 1; p < nranks; ++p) {{\n            const float v = pto_comm_peer_ptr(ctx, data, p)[i];\n            acc = {};\n        }}\n        {target} = acc;\n    }}\n",
            r.cpp()
        )
    };
    match c {
        Collective::AllReduce(r) => reduce(r, "0", "n", "tmp[i]"),
        Collective::Barrier => String::new(),
        Collective::Broadcast(root) => format!(
            "    if ({root}u >= nranks) {{ fprintf(stderr, \"broadcast root {root} outside the domain of %u ranks\\n\", nranks); abort(); }}\n    const float* src = pto_comm_peer_ptr(ctx, data, {root}u);\n    for (uint64_t i = 0; i < n; ++i) tmp[i] = src[i];\n"
        ),
        Collective::ReduceScatter(r) => format!(
            "    for (uint64_t i = 0; i < n; ++i) tmp[i] = data[i];\n{}",
            reduce(r, "me * chunk", "(me + 1) * chunk", "tmp[i]")
        ),
        Collective::AllGather => "    for (uint32_t p = 0; p < nranks; ++p) {\n        const float* src = pto_comm_peer_ptr(ctx, data, p);\n        for (uint64_t i = p * chunk; i < (p + 1) * chunk; ++i) tmp[i] = src[i];\n    }\n".to_string(),
        Collective::AllToAll => "    for (uint32_t p = 0; p < nranks; ++p) {\n        const float* src = pto_comm_peer_ptr(ctx, data, p);\n        for (uint64_t i = 0; i < chunk; ++i) tmp[p * chunk + i] = src[me * chunk + i];\n    }\n".to_string(),
    }
}

fn kernel_cpp(variant: &str, c: Collective) -> String {
    let entry = entry_name(variant);
    let write_back = if c == Collective::Barrier {
        ""
    } else {
        "    for (uint64_t i = 0; i < n; ++i) data[i] = tmp[i];\n"
    };
    format!(
        r#"// Kernel Function: {entry}_kernel
// Builtin host collective `{variant}` rendered by pto-examples (l3_collectives).

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <vector>

#include "pto_comm_sim.h"
#include "tensor.h"

// --- ptoas-generated code ---
static void signal_round(const CommContext* ctx, int32_t* sig, int32_t round) {{
    const uint32_t me = ctx->rankId;
    for (uint32_t p = 0; p < ctx->rankNum; ++p) {{
        pto_comm_notify(pto_comm_peer_ptr(ctx, &sig[me], p), 1, PTO_NOTIFY_ADD);
    }}
    for (uint32_t p = 0; p < ctx->rankNum; ++p) {{
        if (pto_comm_wait(&sig[p], round, PTO_WAIT_GE) != 0) {{
            fprintf(stderr, "{variant}: rank %u waited too long for rank %u (round %d)\n", me, p, round);
            abort();
        }}
    }}
}}

static void {entry}_kernel(const ChipTensor* data_t, const ChipTensor* sig_t, uint64_t device_ctx) {{
    const CommContext* ctx = pto_comm_ctx(device_ctx);
    const uint32_t me = ctx->rankId;
    const uint32_t nranks = ctx->rankNum;
    float* data = data_t->data<float>();
    int32_t* sig = sig_t->data<int32_t>();
    const uint64_t n = data_t->numel();
    const uint64_t chunk = nranks ? n / nranks : 0;
    (void)me;
    (void)chunk;
    std::vector<float> tmp(n);
    signal_round(ctx, sig, 1);
{compute}    signal_round(ctx, sig, 2);
{write_back}}}
// --- Kernel entry point ---
extern "C" void kernel_entry(int64_t* args) {{
    {entry}_kernel(kernel_tensor(args, 0), kernel_tensor(args, 1), (uint64_t)args[3]);
}}
"#,
        compute = compute_cpp(c)
    )
}

fn orchestration_cpp(variant: &str, c: Collective) -> String {
    let entry = entry_name(variant);
    let expected = if matches!(c, Collective::AllReduce(_)) {
        5
    } else {
        4
    };
    format!(
        r#"// Orchestration Function: {entry}
// Generated by PyPTO IR Compiler

// Builtin host collective `{variant}` rendered by pto-examples (l3_collectives).
// Arguments: data (INOUT window buffer), signal (INOUT [world_size, 1] int32 window buffer),
// then the scalars domain_size and device_ctx{core}. Ordering tokens arrive as extra tensors.

#include <stdint.h>

#include "pto_orchestration_api.h"

extern "C" {{

__attribute__((visibility("default")))
PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& orch_args) {{
    (void)orch_args;
    return PTO2OrchestrationConfig{{
        .expected_arg_count = {expected},
    }};
}}

__attribute__((visibility("default")))
void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {{
    ChipTensor ext_data = orch_args.tensor(0).ref();
    ChipTensor ext_signal = orch_args.tensor(1).ref();
    uint64_t domain_size = orch_args.scalar(0);
    uint64_t device_ctx = orch_args.scalar(1);

    PTO2_SCOPE() {{
        CoreTaskArgs params_t0;
        params_t0.add_inout(ext_data);
        params_t0.add_inout(ext_signal);
        params_t0.add_scalar(domain_size);
        params_t0.add_scalar(device_ctx);
        rt_submit_aiv_task(0, params_t0);
    }}
}}

}}  // extern "C"
"#,
        core = if expected == 5 { " and core_num" } else { "" }
    )
}

/// The files of `next_levels/<variant>/`, relative to that directory, and its
/// `kernel_config.py` content.
pub fn render(variant: &str) -> Result<(KernelConfig, Vec<(PathBuf, String)>), Error> {
    let c = parse_variant(variant).ok_or_else(|| Error::Unsupported {
        what: format!("builtin collective variant {variant:?}"),
    })?;
    let entry = entry_name(variant);
    let orch = PathBuf::from("orchestration").join(format!("{entry}.cpp"));
    let kernel = PathBuf::from("kernels")
        .join("aiv")
        .join(format!("{entry}_kernel.cpp"));
    let kc = KernelConfig {
        runtime: RuntimeConfig::default(),
        orchestration: OrchestrationConfig {
            source: orch.clone(),
            function_name: "aicpu_orchestration_entry".to_string(),
            config_name: None,
            signature: Some(vec![ArgDirection::InOut, ArgDirection::InOut]),
        },
        kernels: vec![KernelEntry {
            func_id: 0,
            name: format!("{entry}_kernel"),
            source: kernel.clone(),
            core_type: CoreType::Aiv,
            signature: Some(vec![
                ArgDirection::InOut,
                ArgDirection::InOut,
                ArgDirection::Scalar,
                ArgDirection::Scalar,
            ]),
            extra_include_dirs: Vec::new(),
            external: false,
        }],
    };
    Ok((
        kc,
        vec![
            (orch, orchestration_cpp(variant, c)),
            (kernel, kernel_cpp(variant, c)),
        ],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variant_names_follow_pyptos_list() {
        assert_eq!(
            parse_variant("builtin.tensor.allreduce__sum__fp32"),
            Some(Collective::AllReduce(Reduce::Sum))
        );
        assert_eq!(
            parse_variant("builtin.tensor.broadcast__root1__fp32"),
            Some(Collective::Broadcast(1))
        );
        assert_eq!(parse_variant("builtin.tensor.allreduce__sum__fp16"), None);
        assert_eq!(parse_variant("tensor.allreduce__sum__fp32"), None);
        assert_eq!(
            entry_name("builtin.tensor.allreduce__sum__fp32"),
            "builtin_tensor_allreduce__sum__fp32"
        );
        let (kc, files) = render("builtin.tensor.allgather__fp32").unwrap();
        assert_eq!(kc.kernels[0].name, "builtin_tensor_allgather__fp32_kernel");
        assert!(files[0].1.contains(".expected_arg_count = 4"));
    }
}
