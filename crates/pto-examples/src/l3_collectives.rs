//! Builtin host collectives as L2 sub-builds (`next_levels/builtin.tensor.<variant>/`), the
//! way PyPTO renders them for a HOST-level `pld.tensor.*` collective: `kernel_config.py`,
//! `orchestration/<entry>.cpp` and `kernels/aiv/<entry>_kernel.cpp`, where `<entry>` is the
//! variant with every non-alphanumeric character replaced by `_`.
//!
//! Every variant of reference `pypto-l3.md` §1.5 is rendered, with PyPTO's argument layout
//! (the tensors of the call in order, then the scalars `domain_size` and `device_ctx`; the
//! mesh allreduce also gets `core_num`, accepted and unused: one AIV task does the work on the
//! CPU; ordering tokens arrive as extra tensors and are ignored):
//!
//! | variant | tensors | result |
//! |---|---|---|
//! | `allreduce__{sum,max,min,prod}__{fp32,fp16}` | data (INOUT), signal (INOUT) | every rank's data = its own, then each peer's in rank order, folded with the op (rounded to the dtype at every step) |
//! | `allreduce_ring__sum__fp32` | data, signal | the same (the ring schedule is a mesh on the CPU) |
//! | `barrier__fp32` | signal | none: every rank waits for all |
//! | `broadcast__root<k>__fp32` | target (INOUT), signal | every rank's target = rank k's |
//! | `reduce_scatter__sum__fp32` | target, signal | the full sum in every rank's target, as PyPTO's kernel leaves it (its host consume step takes the rank's chunk) |
//! | `allgather__fp32`, `all_to_all__fp32` | input (INPUT), target (INOUT), signal | row `p` of rank `q`'s target = row `q` of rank `p`'s input (`[nranks, …]`; allgather's publish step replicates the rank's chunk into every input row) |
//! | `all_to_all_v__fp32` | input, target, signal, send_counts (INPUT, int32 `[nranks]`), recv_counts (INOUT) | block `p` of rank `q`'s target (`[nranks * max_recv, …]`) gets `clamp(send_counts_p[q], 0, max_recv)` rows of block `q` of rank `p`'s input, and `recv_counts_q[p]` that count; the rest of the block is left as it was |
//!
//! The signal buffer holds one int32 per rank. Each round, a rank adds 1 to its own cell in
//! every peer's signal buffer and waits until every peer's cell in its own reached the round;
//! at the end it takes back the credits of this call (an atomic subtraction, so a peer that
//! already entered its next call keeps its credit). The buffer is therefore back as it was
//! after every call, and one signal buffer can serve any number of calls in a row.
//!
//! [`coverage`] is an L3 build (a test fixture) that calls every variant once, through a
//! generated `host_orch.py`, and checks the numbers against `golden.py`.

use std::path::PathBuf;

use pto_build_output::dtype::DType;
use pto_build_output::kernel_config::{ArgDirection, CoreType};
use pto_build_output::{KernelConfig, KernelEntry, NpyArray, OrchestrationConfig, RuntimeConfig};

use crate::example::{f32_array, i32_array, Param, ParamValue, TensorParam};
use crate::l3_examples::{self, L3Example, SubBuild};
use crate::rng::SplitMix64;
use crate::Error;

/// What one variant computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collective {
    /// Element-wise reduction of every rank's buffer into every rank's buffer (`ring`: the
    /// `allreduce_ring` name, which has no `core_num` scalar).
    AllReduce {
        /// The reduction.
        op: Reduce,
        /// Ring (`allreduce_ring`) rather than mesh.
        ring: bool,
    },
    /// Only a signal round.
    Barrier,
    /// Rank `root`'s buffer into every rank's.
    Broadcast(u32),
    /// The full reduction into every rank's target (PyPTO's kernel).
    ReduceScatter(Reduce),
    /// Row `q` of every rank `p`'s input into row `p` of rank `q`'s target.
    AllGather,
    /// The same exchange as [`Collective::AllGather`] (without the replicated input).
    AllToAll,
    /// The exchange with per-destination row counts.
    AllToAllV,
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

/// The element type of a variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// `fp32`.
    Fp32,
    /// `fp16`.
    Fp16,
}

/// A parsed variant name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variant {
    /// What it computes.
    pub collective: Collective,
    /// Its element type.
    pub elem: Elem,
}

impl Reduce {
    /// Every reduction, in PyPTO's `ReduceOp` order.
    pub const ALL: [Reduce; 4] = [Reduce::Sum, Reduce::Max, Reduce::Min, Reduce::Prod];

    /// The name in a variant (`sum`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Reduce::Sum => "sum",
            Reduce::Max => "max",
            Reduce::Min => "min",
            Reduce::Prod => "prod",
        }
    }

    fn from_name(s: &str) -> Option<Reduce> {
        Reduce::ALL.into_iter().find(|r| r.name() == s)
    }

    /// The C++ expression folding `v` into `acc`.
    fn cpp(self) -> &'static str {
        match self {
            Reduce::Sum => "acc + v",
            Reduce::Max => "(v > acc ? v : acc)",
            Reduce::Min => "(v < acc ? v : acc)",
            Reduce::Prod => "acc * v",
        }
    }
}

impl Elem {
    fn from_name(s: &str) -> Option<Elem> {
        match s {
            "fp32" => Some(Elem::Fp32),
            "fp16" => Some(Elem::Fp16),
            _ => None,
        }
    }
}

/// A variant name (`builtin.tensor.allreduce__sum__fp32`, ...) parsed; `None` for a name
/// this renderer does not know.
pub fn parse_variant(variant: &str) -> Option<Variant> {
    let rest = variant.strip_prefix("builtin.tensor.")?;
    let parts: Vec<&str> = rest.split("__").collect();
    let fp32 = |collective| {
        Some(Variant {
            collective,
            elem: Elem::Fp32,
        })
    };
    match parts.as_slice() {
        ["allreduce", op, elem] => Some(Variant {
            collective: Collective::AllReduce {
                op: Reduce::from_name(op)?,
                ring: false,
            },
            elem: Elem::from_name(elem)?,
        }),
        ["allreduce_ring", "sum", "fp32"] => fp32(Collective::AllReduce {
            op: Reduce::Sum,
            ring: true,
        }),
        ["barrier", "fp32"] => fp32(Collective::Barrier),
        ["broadcast", root, "fp32"] => {
            let digits = root.strip_prefix("root")?;
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            fp32(Collective::Broadcast(digits.parse().ok()?))
        }
        ["reduce_scatter", "sum", "fp32"] => fp32(Collective::ReduceScatter(Reduce::Sum)),
        ["allgather", "fp32"] => fp32(Collective::AllGather),
        ["all_to_all", "fp32"] => fp32(Collective::AllToAll),
        ["all_to_all_v", "fp32"] => fp32(Collective::AllToAllV),
        _ => None,
    }
}

/// Every variant name of reference §1.5 (broadcast with `root`).
pub fn reference_variants(root: u32) -> Vec<String> {
    let mut v = Vec::new();
    for elem in ["fp32", "fp16"] {
        for op in Reduce::ALL {
            v.push(format!("builtin.tensor.allreduce__{}__{elem}", op.name()));
        }
    }
    v.push("builtin.tensor.allreduce_ring__sum__fp32".to_string());
    v.push("builtin.tensor.barrier__fp32".to_string());
    v.push(format!("builtin.tensor.broadcast__root{root}__fp32"));
    v.push("builtin.tensor.reduce_scatter__sum__fp32".to_string());
    v.push("builtin.tensor.allgather__fp32".to_string());
    v.push("builtin.tensor.all_to_all__fp32".to_string());
    v.push("builtin.tensor.all_to_all_v__fp32".to_string());
    v
}

/// `<entry>`: the variant with non-alphanumerics replaced by `_`.
pub fn entry_name(variant: &str) -> String {
    variant
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

impl Variant {
    /// The tensor arguments, in order, with their directions.
    pub fn tensors(self) -> Vec<(&'static str, ArgDirection)> {
        use ArgDirection::{In, InOut};
        match self.collective {
            Collective::AllReduce { .. } => vec![("data", InOut), ("signal", InOut)],
            Collective::Barrier => vec![("signal", InOut)],
            Collective::Broadcast(_) | Collective::ReduceScatter(_) => {
                vec![("target", InOut), ("signal", InOut)]
            }
            Collective::AllGather | Collective::AllToAll => {
                vec![("input", In), ("target", InOut), ("signal", InOut)]
            }
            Collective::AllToAllV => vec![
                ("input", In),
                ("target", InOut),
                ("signal", InOut),
                ("send_counts", In),
                ("recv_counts", InOut),
            ],
        }
    }

    /// Whether the host passes `core_num` after `domain_size` and `device_ctx` (the mesh
    /// allreduce only).
    pub fn has_core_num(self) -> bool {
        matches!(self.collective, Collective::AllReduce { ring: false, .. })
    }

    /// The arguments the orchestration declares (tensors and scalars).
    pub fn expected_arg_count(self) -> usize {
        self.tensors().len() + 2 + usize::from(self.has_core_num())
    }
}

/// The signal helpers every kernel starts with.
const SIGNAL_HELPERS: &str = r#"// One signal round: add 1 to this rank's cell in every peer's signal buffer, then wait until
// every peer's cell in this rank's buffer reached `round`.
static void coll_round(const CommContext* ctx, int32_t* sig, int32_t round, const char* what) {
    const uint32_t me = ctx->rankId;
    for (uint32_t p = 0; p < ctx->rankNum; ++p) {
        if (p != me) pto_comm_notify(pto_comm_peer_ptr(ctx, &sig[me], p), 1, PTO_NOTIFY_ADD);
    }
    for (uint32_t p = 0; p < ctx->rankNum; ++p) {
        if (p != me && pto_comm_wait(&sig[p], round, PTO_WAIT_GE) != 0) {
            fprintf(stderr, "%s: rank %u waited too long for rank %u (signal round %d)\n", what, me, p, round);
            abort();
        }
    }
}

// Takes back the `rounds` credits each peer put into its cell during this call, leaving the
// signal buffer as the call found it (a peer already in its next call keeps its credit).
static void coll_release(const CommContext* ctx, int32_t* sig, int32_t rounds) {
    for (uint32_t p = 0; p < ctx->rankNum; ++p) {
        if (p != ctx->rankId) __atomic_fetch_sub(&sig[p], rounds, __ATOMIC_SEQ_CST);
    }
}

static void coll_check(bool ok, const char* what, const char* message) {
    if (!ok) {
        fprintf(stderr, "%s: %s\n", what, message);
        abort();
    }
}
"#;

fn elem_helpers(elem: Elem) -> &'static str {
    match elem {
        Elem::Fp32 => "typedef float elem_t;\nstatic inline float ld(elem_t v) { return v; }\nstatic inline elem_t st(float f) { return f; }\n",
        Elem::Fp16 => "typedef uint16_t elem_t;  // IEEE binary16 bits\nstatic inline float ld(elem_t v) { return pto_tile::fp16_to_float(v); }\nstatic inline elem_t st(float f) { return pto_tile::float_to_fp16(f); }\n",
    }
}

/// The body of `<entry>_kernel` (after the context and element pointers are set up).
fn body_cpp(c: Collective) -> String {
    match c {
        Collective::AllReduce { op, .. } | Collective::ReduceScatter(op) => format!(
            r#"    elem_t* data = t0->data<elem_t>();
    int32_t* sig = t1->data<int32_t>();
    const uint64_t n = t0->numel();
    coll_check(t1->numel() >= nranks, WHAT, "the signal buffer needs one int32 per rank");
    std::vector<elem_t> out(n);
    coll_round(ctx, sig, 1, WHAT);
    // This rank's own value first, then every peer's in rank order, rounded at each step.
    for (uint64_t i = 0; i < n; ++i) {{
        float acc = ld(data[i]);
        for (uint32_t p = 0; p < nranks; ++p) {{
            if (p == me) continue;
            const float v = ld(pto_comm_peer_ptr(ctx, data, p)[i]);
            acc = ld(st({}));
        }}
        out[i] = st(acc);
    }}
    coll_round(ctx, sig, 2, WHAT);  // every peer has read this rank's data
    for (uint64_t i = 0; i < n; ++i) data[i] = out[i];
    coll_release(ctx, sig, 2);
"#,
            op.cpp()
        ),
        Collective::Barrier => r#"    int32_t* sig = t0->data<int32_t>();
    coll_check(t0->numel() >= nranks, WHAT, "the signal buffer needs one int32 per rank");
    coll_round(ctx, sig, 1, WHAT);
    coll_release(ctx, sig, 1);
"#
        .to_string(),
        Collective::Broadcast(root) => format!(
            r#"    elem_t* target = t0->data<elem_t>();
    int32_t* sig = t1->data<int32_t>();
    const uint64_t n = t0->numel();
    coll_check(t1->numel() >= nranks, WHAT, "the signal buffer needs one int32 per rank");
    coll_check({root}u < nranks, WHAT, "the root rank {root} is outside the comm domain");
    coll_round(ctx, sig, 1, WHAT);  // the root's target is ready
    if (me != {root}u) {{
        const elem_t* src = pto_comm_peer_ptr(ctx, target, {root}u);
        for (uint64_t i = 0; i < n; ++i) target[i] = src[i];
    }}
    coll_round(ctx, sig, 2, WHAT);  // every rank has read the root's target
    coll_release(ctx, sig, 2);
"#
        ),
        Collective::AllGather | Collective::AllToAll => r#"    const elem_t* input = t0->data<elem_t>();
    elem_t* target = t1->data<elem_t>();
    int32_t* sig = t2->data<int32_t>();
    coll_check(t2->numel() >= nranks, WHAT, "the signal buffer needs one int32 per rank");
    coll_check(t1->ndims >= 1 && t1->shapes[0] == nranks, WHAT, "the target must have one row per rank");
    const uint64_t row = t1->numel() / nranks;
    coll_check(t0->numel() >= row * nranks, WHAT, "the input must have one row per rank");
    coll_round(ctx, sig, 1, WHAT);  // every input is staged
    for (uint32_t p = 0; p < nranks; ++p) {
        const elem_t* src = pto_comm_peer_ptr(ctx, input, p) + (uint64_t)me * row;
        for (uint64_t i = 0; i < row; ++i) target[(uint64_t)p * row + i] = src[i];
    }
    coll_round(ctx, sig, 2, WHAT);  // every rank has read its rows of this rank's input
    coll_release(ctx, sig, 2);
"#
        .to_string(),
        Collective::AllToAllV => r#"    const elem_t* input = t0->data<elem_t>();
    elem_t* target = t1->data<elem_t>();
    int32_t* sig = t2->data<int32_t>();
    const int32_t* send_counts = t3->data<int32_t>();
    int32_t* recv_counts = t4->data<int32_t>();
    coll_check(t2->numel() >= nranks, WHAT, "the signal buffer needs one int32 per rank");
    coll_check(t3->numel() >= nranks && t4->numel() >= nranks, WHAT, "send_counts and recv_counts need one int32 per rank");
    coll_check(t1->ndims >= 1 && t1->shapes[0] % nranks == 0 && t1->shapes[0] > 0, WHAT,
               "the target's first axis must be a positive multiple of the rank count");
    const uint64_t max_recv = t1->shapes[0] / nranks;
    const uint64_t row = t1->numel() / t1->shapes[0];
    coll_check(t0->numel() >= t1->numel(), WHAT, "the input must be as large as the target");
    coll_round(ctx, sig, 1, WHAT);  // every input and send count is staged
    for (uint32_t p = 0; p < nranks; ++p) {
        int64_t rows = pto_comm_peer_ptr(ctx, send_counts, p)[me];
        if (rows < 0) rows = 0;
        if ((uint64_t)rows > max_recv) rows = (int64_t)max_recv;
        const elem_t* src = pto_comm_peer_ptr(ctx, input, p) + (uint64_t)me * max_recv * row;
        elem_t* dst = target + (uint64_t)p * max_recv * row;
        for (uint64_t i = 0; i < (uint64_t)rows * row; ++i) dst[i] = src[i];
        recv_counts[p] = (int32_t)rows;
    }
    coll_round(ctx, sig, 2, WHAT);  // every rank has read this rank's input
    coll_release(ctx, sig, 2);
"#
        .to_string(),
    }
}

fn kernel_cpp(variant: &str, v: Variant) -> String {
    let entry = entry_name(variant);
    let n = v.tensors().len();
    let params: Vec<String> = (0..n).map(|i| format!("const ChipTensor* t{i}")).collect();
    let args: Vec<String> = (0..n)
        .map(|i| format!("kernel_tensor(args, {i})"))
        .collect();
    let roles: Vec<String> = v
        .tensors()
        .iter()
        .enumerate()
        .map(|(i, (name, _))| format!("t{i} = {name}"))
        .collect();
    format!(
        r#"// Kernel Function: {entry}_kernel
// Builtin host collective `{variant}` rendered by pto-examples (l3_collectives).
// Tensors: {roles}; scalars: domain_size, device_ctx.

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <vector>

#include "pto_comm_sim.h"
#include "pto_tile.h"
#include "tensor.h"

// --- ptoas-generated code ---
{helpers}
{elem}
#define WHAT "{variant}"

static void {entry}_kernel({params}, uint64_t device_ctx) {{
    const CommContext* ctx = pto_comm_ctx(device_ctx);
    const uint32_t me = ctx->rankId;
    const uint32_t nranks = ctx->rankNum;
    (void)me;
    (void)nranks;
{body}}}
// --- Kernel entry point ---
extern "C" void kernel_entry(int64_t* args) {{
    {entry}_kernel({args}, (uint64_t)args[{ctx}]);
}}
"#,
        roles = roles.join(", "),
        helpers = SIGNAL_HELPERS,
        elem = elem_helpers(v.elem),
        params = params.join(", "),
        body = body_cpp(v.collective),
        args = args.join(", "),
        ctx = n + 1,
    )
}

fn orchestration_cpp(variant: &str, v: Variant) -> String {
    let entry = entry_name(variant);
    let mut body = String::new();
    for (i, (name, _)) in v.tensors().iter().enumerate() {
        body.push_str(&format!(
            "    ChipTensor ext_{name} = orch_args.tensor({i}).ref();\n"
        ));
    }
    body.push_str("    uint64_t domain_size = orch_args.scalar(0);\n    uint64_t device_ctx = orch_args.scalar(1);\n");
    if v.has_core_num() {
        body.push_str("    // core_num (scalar 2) sizes the launch on a device; one AIV task does the work here.\n    (void)orch_args.scalar(2);\n");
    }
    body.push_str("\n    PTO2_SCOPE() {\n        CoreTaskArgs params_t0;\n");
    for (name, dir) in v.tensors() {
        let add = if dir == ArgDirection::In {
            "add_input"
        } else {
            "add_inout"
        };
        body.push_str(&format!("        params_t0.{add}(ext_{name});\n"));
    }
    body.push_str("        params_t0.add_scalar(domain_size);\n        params_t0.add_scalar(device_ctx);\n        rt_submit_aiv_task(0, params_t0);\n    }\n");
    let names: Vec<String> = v
        .tensors()
        .iter()
        .map(|(n, d)| {
            format!(
                "{n} ({})",
                if *d == ArgDirection::In {
                    "INPUT"
                } else {
                    "INOUT"
                }
            )
        })
        .collect();
    format!(
        r#"// Orchestration Function: {entry}
// Generated by PyPTO IR Compiler

// Builtin host collective `{variant}` rendered by pto-examples (l3_collectives).
// Arguments: {tensors}, then the scalars domain_size and device_ctx{core}.
// Ordering tokens arrive as extra tensors and are not used.

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
{body}}}

// The sanitized variant name, for reading the sources; kernel_config.py names the standard entry.
__attribute__((visibility("default")))
void {entry}(const ChipTaskArgs& orch_args) {{
    aicpu_orchestration_entry(orch_args);
}}

}}  // extern "C"
"#,
        tensors = names.join(", "),
        core = if v.has_core_num() {
            " and core_num"
        } else {
            ""
        },
        expected = v.expected_arg_count(),
    )
}

/// The files of `next_levels/<variant>/`, relative to that directory, and its
/// `kernel_config.py` content.
pub fn render(variant: &str) -> Result<(KernelConfig, Vec<(PathBuf, String)>), Error> {
    let v = parse_variant(variant).ok_or_else(|| Error::Unsupported {
        what: format!("builtin collective variant {variant:?}"),
    })?;
    let entry = entry_name(variant);
    let orch = PathBuf::from("orchestration").join(format!("{entry}.cpp"));
    let kernel = PathBuf::from("kernels")
        .join("aiv")
        .join(format!("{entry}_kernel.cpp"));
    let tensor_dirs: Vec<ArgDirection> = v.tensors().iter().map(|(_, d)| *d).collect();
    let mut kernel_sig = tensor_dirs.clone();
    kernel_sig.extend([ArgDirection::Scalar, ArgDirection::Scalar]);
    let kc = KernelConfig {
        runtime: RuntimeConfig::default(),
        orchestration: OrchestrationConfig {
            source: orch.clone(),
            function_name: "aicpu_orchestration_entry".to_string(),
            config_name: None,
            signature: Some(tensor_dirs),
        },
        kernels: vec![KernelEntry {
            func_id: 0,
            name: format!("{entry}_kernel"),
            source: kernel.clone(),
            core_type: CoreType::Aiv,
            signature: Some(kernel_sig),
            extra_include_dirs: Vec::new(),
            external: false,
        }],
    };
    Ok((
        kc,
        vec![
            (orch, orchestration_cpp(variant, v)),
            (kernel, kernel_cpp(variant, v)),
        ],
    ))
}

/// The sub-build `next_levels/<variant>/`.
pub fn sub_build(variant: &str) -> Result<SubBuild, Error> {
    let (kernel_config, files) = render(variant)?;
    Ok(SubBuild {
        name: variant.to_string(),
        kernel_config,
        files,
    })
}

// --- the coverage build ----------------------------------------------------------------------

/// Elements of the allreduce-style buffers of [`coverage`].
pub const COVERAGE_N: usize = 64;
/// Elements of one row of the exchange buffers of [`coverage`].
const ROW: usize = 4;
/// `max_recv` rows per rank block of `all_to_all_v` in [`coverage`].
const MAX_RECV: usize = 2;

/// One window buffer of the coverage build: name, bytes (a Python expression of
/// `world_size`), Simpler dtype, shape (a Python tuple body).
struct WinBuf {
    name: &'static str,
    bytes: String,
    dtype: &'static str,
    shape: String,
}

/// The generated-code lines of one staging copy between a host slice and a window buffer.
fn stage(k: &mut usize, host: &str, host_slice: &str, buf: &WinBuf, into_window: bool) -> String {
    let ta = format!("_ta_{k}");
    *k += 1;
    let host_arg = format!("make_tensor_arg(orch._worker, tensors[\"{host}_r\"])");
    let win_arg = format!(
        "__comm_d0[r].buffers[\"{}\"].tensor(shapes=({}), dtype=DataType.{})",
        buf.name, buf.shape, buf.dtype
    );
    let (src, dst) = if into_window {
        (host_arg, win_arg)
    } else {
        (win_arg, host_arg)
    };
    format!(
        "        for r in range(0, world_size, 1):\n            tensors[\"{host}_r\"] = tensors[\"{host}\"][r, {host_slice}]\n            {ta} = TaskArgs()\n            {ta}.add_tensor({src}, TensorArgType.INPUT)\n            {ta}.add_tensor({dst}, TensorArgType.OUTPUT_EXISTING)\n            {ta}.add_tensor(make_tensor_arg(orch._worker, tensors[\"__comm_d0_ord\"][r]), TensorArgType.INOUT)\n            _keep.append({ta})\n            _submit_chip(orch, callables[\"copy\"], {ta}, config, r)\n"
    )
}

/// The generated-code lines of one builtin collective call (reference §1.5's form).
fn builtin_call(k: &mut usize, variant: &str, args: &[(&WinBuf, &str)]) -> Result<String, Error> {
    let v = parse_variant(variant).ok_or_else(|| Error::Unsupported {
        what: format!("builtin collective variant {variant:?}"),
    })?;
    let ta = format!("_ta_{k}");
    *k += 1;
    let mut s =
        format!("        for r in range(0, world_size, 1):\n            {ta} = TaskArgs()\n");
    for (buf, tag) in args {
        s.push_str(&format!(
            "            {ta}.add_tensor(__comm_d0[r].buffers[\"{}\"].tensor(shapes=({}), dtype=DataType.{}), TensorArgType.{tag})\n",
            buf.name, buf.shape, buf.dtype
        ));
    }
    s.push_str(&format!("            {ta}.add_tensor(make_tensor_arg(orch._worker, tensors[\"__comm_d0_ord\"][r]), TensorArgType.INOUT)\n            {ta}.add_scalar(__comm_d0[r].domain_size)\n            {ta}.add_scalar(__comm_d0[r].device_ctx)\n"));
    if v.has_core_num() {
        s.push_str(&format!("            {ta}.add_scalar(4)\n"));
    }
    s.push_str(&format!("            {ta}_config = CallConfig()\n            {ta}_config.aicpu_thread_num = config.aicpu_thread_num\n            _keep.append({ta})\n            orch.submit_next_level(callables[\"{variant}\"], {ta}, {ta}_config, worker=r)\n"));
    Ok(s)
}

const COPY_KERNEL: &str = "static void copy(const ChipTensor* src, const ChipTensor* dst) {\n    const uint64_t n = src->nbytes() < dst->nbytes() ? src->nbytes() : dst->nbytes();\n    memcpy(dst->data<uint8_t>(), src->data<uint8_t>(), n);\n}\nextern \"C\" void kernel_entry(int64_t* args) { copy(kernel_tensor(args, 0), kernel_tensor(args, 1)); }\n";

/// The golden: every collective's result computed in NumPy in the kernels' order.
const COVERAGE_GOLDEN: &str = r#"    """Each builtin collective's result, in the kernels' order and rounding."""
    R = tensors["x"].shape[0]

    def fold(v, op):
        # Each rank: its own value first, then every peer's in rank order (dtype kept).
        out = np.empty_like(v)
        for me in range(R):
            acc = v[me].copy()
            for p in range(R):
                if p != me:
                    acc = op(acc, v[p])
            out[me] = acc
        return out

    x = np.asarray(tensors["x"], dtype=np.float32)
    x16 = np.asarray(tensors["x16"], dtype=np.float16)
    for name, op in (("sum", np.add), ("max", np.maximum), ("min", np.minimum), ("prod", np.multiply)):
        tensors["y_" + name][:] = fold(x, op)
        tensors["y16_" + name][:] = fold(x16, op)
    tensors["y_ring"][:] = fold(x, np.add)
    tensors["y_twice"][:] = fold(fold(x, np.add), np.add)
    tensors["y_bcast"][:] = np.broadcast_to(x[1], x.shape)
    tensors["y_rs"][:] = fold(x, np.add)
    C = tensors["xg"].shape[1] // R
    xg = np.asarray(tensors["xg"], dtype=np.float32).reshape(R, R, C)
    ex = np.transpose(xg, (1, 0, 2)).reshape(R, R * C)
    tensors["y_ag"][:] = ex
    tensors["y_a2a"][:] = ex
    M = tensors["xv"].shape[1] // (R * C)
    xv = np.asarray(tensors["xv"], dtype=np.float32).reshape(R, R * M, C)
    counts = np.asarray(tensors["counts"], dtype=np.int64)
    yv = np.zeros((R, R * M, C), dtype=np.float32)
    rc = np.zeros((R, R), dtype=np.int32)
    for q in range(R):
        for p in range(R):
            rows = min(max(int(counts[p][q]), 0), M)
            yv[q, p * M:p * M + rows] = xv[p, q * M:q * M + rows]
            rc[q, p] = rows
    tensors["y_v"][:] = yv.reshape(R, R * M * C)
    tensors["y_vrecv"][:] = rc
    tensors["y_signal"][:] = 0
"#;

fn f16_array(shape: &[usize], values: &[f32]) -> Result<NpyArray, Error> {
    let data = values
        .iter()
        .flat_map(|&v| half::f16::from_f32(v).to_bits().to_le_bytes())
        .collect();
    Ok(NpyArray::new(DType::Float16, shape.to_vec(), data)?)
}

/// A pure output checked by `golden.py` only (no `data/out/` file).
fn output(name: &'static str, dtype: DType, shape: Vec<usize>) -> Param {
    Param {
        name,
        direction: pto_build_output::compiled_meta::ParamDirection::Out,
        value: ParamValue::Tensor(TensorParam {
            dtype,
            shape,
            input: None,
            golden: None,
        }),
    }
}

/// The window buffers of the [`coverage`] build: one (or one per reduction) for each
/// collective's call, and the signal buffer every call shares.
struct CoverageBufs {
    ar: Vec<WinBuf>,
    ar16: Vec<WinBuf>,
    ring: WinBuf,
    twice: WinBuf,
    bcast: WinBuf,
    rs: WinBuf,
    ag_in: WinBuf,
    ag_out: WinBuf,
    a2a_in: WinBuf,
    a2a_out: WinBuf,
    v_in: WinBuf,
    v_out: WinBuf,
    v_send: WinBuf,
    v_recv: WinBuf,
    sig: WinBuf,
}

impl CoverageBufs {
    /// The buffers, sized by `world_size` in the generated code where they scale with it.
    fn new() -> Self {
        let n = COVERAGE_N;
        let buf = |name: &'static str, bytes: String, dtype: &'static str, shape: String| WinBuf {
            name,
            bytes,
            dtype,
            shape,
        };
        let flat = |name: &'static str, elem_bytes: usize, dtype: &'static str| {
            buf(name, format!("{n} * {elem_bytes}"), dtype, format!("{n},"))
        };
        let ar: Vec<WinBuf> = ["ar_sum", "ar_max", "ar_min", "ar_prod"]
            .into_iter()
            .map(|b| flat(b, 4, "FLOAT32"))
            .collect();
        let ar16: Vec<WinBuf> = ["ar16_sum", "ar16_max", "ar16_min", "ar16_prod"]
            .into_iter()
            .map(|b| flat(b, 2, "FLOAT16"))
            .collect();
        let ring = flat("ring", 4, "FLOAT32");
        let twice = flat("twice", 4, "FLOAT32");
        let bcast = flat("bcast", 4, "FLOAT32");
        let rs = flat("rs", 4, "FLOAT32");
        let rows = |name: &'static str, per_rank: usize| {
            buf(
                name,
                format!("world_size * {} * 4", per_rank * ROW),
                "FLOAT32",
                format!("world_size * {per_rank}, {ROW}"),
            )
        };
        let ag_in = rows("ag_in", 1);
        let ag_out = rows("ag_out", 1);
        let a2a_in = rows("a2a_in", 1);
        let a2a_out = rows("a2a_out", 1);
        let v_in = rows("v_in", MAX_RECV);
        let v_out = rows("v_out", MAX_RECV);
        let ints = |name: &'static str, shape: &str| {
            buf(
                name,
                "world_size * 4".to_string(),
                "INT32",
                shape.to_string(),
            )
        };
        let v_send = ints("v_send", "world_size,");
        let v_recv = ints("v_recv", "world_size,");
        let sig = ints("__coll_signal_buf_0", "world_size, 1");

        CoverageBufs {
            ar,
            ar16,
            ring,
            twice,
            bcast,
            rs,
            ag_in,
            ag_out,
            a2a_in,
            a2a_out,
            v_in,
            v_out,
            v_send,
            v_recv,
            sig,
        }
    }

    /// Every buffer, in the comm domain's order.
    fn all(&self) -> Vec<&WinBuf> {
        self.ar
            .iter()
            .chain(&self.ar16)
            .chain([
                &self.ring,
                &self.twice,
                &self.bcast,
                &self.rs,
                &self.ag_in,
                &self.ag_out,
                &self.a2a_in,
                &self.a2a_out,
                &self.v_in,
                &self.v_out,
                &self.v_send,
                &self.v_recv,
                &self.sig,
            ])
            .collect()
    }
}

/// An L3 build over `ranks` ranks (2..=16) calling every builtin collective of reference
/// §1.5 once (and the sum allreduce twice more on one buffer), through one comm domain whose
/// buffers a `copy` chip program stages in and out; one signal buffer serves every call. The
/// outputs are checked by `golden.py` only (a test fixture: no `data/out/`).
pub fn coverage(ranks: usize) -> Result<L3Example, Error> {
    if !(2..=16).contains(&ranks) {
        return Err(Error::Unsupported {
            what: format!("a collectives build over {ranks} ranks (2..=16)"),
        });
    }
    let b = CoverageBufs::new();
    let all = b.all();
    let specs: Vec<(&str, &str)> = all.iter().map(|b| (b.name, b.bytes.as_str())).collect();
    let body = coverage_body(&b, ranks)?;
    let host_orch = format!(
        "{imports}def _alloc_intermediates(tensors, world_size=1):\n    tensors[\"__comm_d0_ord\"] = [torch.zeros((1,), dtype=torch.int32).share_memory_() for _ in range(max(world_size, 1))]\n\n\ndef collectives(orch, _args, config, *, tensors, callables, sub_ids, _keep, world_size, _domain_provider=None):\n    with (_domain_provider or orch.allocate_domain)(\n        name=\"comm_d0\",\n        workers=[*range(world_size)],\n        window_size={ws},\n        buffers=[\n{specs}        ],\n    ) as __comm_d0:\n{body}\n\ncollectives._pypto_distributed_entry = True\n",
        imports = l3_examples::IMPORTS,
        ws = l3_examples::window_size_expr(&specs),
        specs = l3_examples::buffer_specs(&specs, "            "),
    );

    let sub_builds = coverage_sub_builds()?;
    let params = coverage_params(ranks)?;
    Ok(L3Example {
        name: "l3_collectives",
        host_orch,
        sub_builds,
        golden: l3_examples::golden_example("l3_collectives", params, COVERAGE_GOLDEN),
        device_ids: (0..ranks as i64).collect(),
    })
}

/// The generated host-orchestration lines of the [`coverage`] build's calls: for each
/// collective, stage the inputs into its window buffers, call it, stage the results out.
fn coverage_body(b: &CoverageBufs, ranks: usize) -> Result<String, Error> {
    let mut k = 0usize;
    let mut body = String::new();
    let full = format!("0:{COVERAGE_N}");
    for (i, op) in Reduce::ALL.into_iter().enumerate() {
        for (bufs, host, y, elem) in [(&b.ar, "x", "y_", "fp32"), (&b.ar16, "x16", "y16_", "fp16")]
        {
            let buf = &bufs[i];
            let yname = format!("{y}{}", op.name());
            body.push_str(&format!(
                "        # builtin.tensor.allreduce__{}__{elem}\n",
                op.name()
            ));
            body.push_str(&stage(&mut k, host, &full, buf, true));
            body.push_str(&builtin_call(
                &mut k,
                &format!("builtin.tensor.allreduce__{}__{elem}", op.name()),
                &[(buf, "INOUT"), (&b.sig, "INOUT")],
            )?);
            body.push_str(&stage(&mut k, &yname, &full, buf, false));
        }
    }
    body.push_str("        # builtin.tensor.allreduce_ring__sum__fp32\n");
    body.push_str(&stage(&mut k, "x", &full, &b.ring, true));
    body.push_str(&builtin_call(
        &mut k,
        "builtin.tensor.allreduce_ring__sum__fp32",
        &[(&b.ring, "INOUT"), (&b.sig, "INOUT")],
    )?);
    body.push_str(&stage(&mut k, "y_ring", &full, &b.ring, false));
    body.push_str(
        "        # the sum allreduce twice on one buffer (the signal buffer is reused)\n",
    );
    body.push_str(&stage(&mut k, "x", &full, &b.twice, true));
    for _ in 0..2 {
        body.push_str(&builtin_call(
            &mut k,
            "builtin.tensor.allreduce__sum__fp32",
            &[(&b.twice, "INOUT"), (&b.sig, "INOUT")],
        )?);
    }
    body.push_str(&stage(&mut k, "y_twice", &full, &b.twice, false));
    body.push_str("        # builtin.tensor.barrier__fp32\n");
    body.push_str(&builtin_call(
        &mut k,
        "builtin.tensor.barrier__fp32",
        &[(&b.sig, "INOUT")],
    )?);
    body.push_str("        # builtin.tensor.broadcast__root1__fp32\n");
    body.push_str(&stage(&mut k, "x", &full, &b.bcast, true));
    body.push_str(&builtin_call(
        &mut k,
        "builtin.tensor.broadcast__root1__fp32",
        &[(&b.bcast, "INOUT"), (&b.sig, "INOUT")],
    )?);
    body.push_str(&stage(&mut k, "y_bcast", &full, &b.bcast, false));
    body.push_str("        # builtin.tensor.reduce_scatter__sum__fp32\n");
    body.push_str(&stage(&mut k, "x", &full, &b.rs, true));
    body.push_str(&builtin_call(
        &mut k,
        "builtin.tensor.reduce_scatter__sum__fp32",
        &[(&b.rs, "INOUT"), (&b.sig, "INOUT")],
    )?);
    body.push_str(&stage(&mut k, "y_rs", &full, &b.rs, false));
    let ex = format!("0:{}", ranks * ROW);
    for (variant, input, target, y) in [
        (
            "builtin.tensor.allgather__fp32",
            &b.ag_in,
            &b.ag_out,
            "y_ag",
        ),
        (
            "builtin.tensor.all_to_all__fp32",
            &b.a2a_in,
            &b.a2a_out,
            "y_a2a",
        ),
    ] {
        body.push_str(&format!("        # {variant}\n"));
        body.push_str(&stage(&mut k, "xg", &ex, input, true));
        body.push_str(&builtin_call(
            &mut k,
            variant,
            &[(input, "INPUT"), (target, "INOUT"), (&b.sig, "INOUT")],
        )?);
        body.push_str(&stage(&mut k, y, &ex, target, false));
    }
    let exv = format!("0:{}", ranks * MAX_RECV * ROW);
    let cnt = format!("0:{ranks}");
    body.push_str("        # builtin.tensor.all_to_all_v__fp32\n");
    body.push_str(&stage(&mut k, "xv", &exv, &b.v_in, true));
    body.push_str(&stage(&mut k, "counts", &cnt, &b.v_send, true));
    body.push_str(&builtin_call(
        &mut k,
        "builtin.tensor.all_to_all_v__fp32",
        &[
            (&b.v_in, "INPUT"),
            (&b.v_out, "INOUT"),
            (&b.sig, "INOUT"),
            (&b.v_send, "INPUT"),
            (&b.v_recv, "INOUT"),
        ],
    )?);
    body.push_str(&stage(&mut k, "y_v", &exv, &b.v_out, false));
    body.push_str(&stage(&mut k, "y_vrecv", &cnt, &b.v_recv, false));
    body.push_str("        # every call left the signal buffer as it found it\n");
    body.push_str(&stage(&mut k, "y_signal", &cnt, &b.sig, false));

    Ok(body)
}

/// The [`coverage`] build's chip programs: the `copy` staging program, then one per
/// builtin collective variant.
fn coverage_sub_builds() -> Result<Vec<SubBuild>, Error> {
    let mut sub_builds = vec![l3_examples::user_program(
        "copy",
        vec![ArgDirection::In, ArgDirection::Out],
        "copy",
        vec![ArgDirection::In, ArgDirection::Out],
        l3_examples::one_task_orchestration(
            "copy",
            "Copy a tensor's bytes into another (host slice <-> window buffer). The ordering token arrives as tensor 2 and is not used here.",
            &["input", "output"],
            0,
        ),
        l3_examples::kernel_source("copy", "dst = src, byte for byte.", &format!("#include <string.h>\n\n{COPY_KERNEL}")),
    )];
    for variant in reference_variants(1) {
        sub_builds.push(sub_build(&variant)?);
    }

    Ok(sub_builds)
}

/// The [`coverage`] build's parameters over `ranks` ranks: seeded random inputs, and the
/// outputs `golden.py` checks.
fn coverage_params(ranks: usize) -> Result<Vec<Param>, Error> {
    let n = COVERAGE_N;
    let mut rng = SplitMix64::new(0x13_00c0 + ranks as u64);
    // Values in [0.5, 1.5): sums, products and the fp16 rounding stay well inside range.
    let mut vals =
        |count: usize| -> Vec<f32> { (0..count).map(|_| 1.0 + rng.uniform_f32() / 2.0).collect() };
    let x = vals(ranks * n);
    let x16: Vec<f32> = vals(ranks * n)
        .into_iter()
        .map(|v| half::f16::from_f32(v).to_f32())
        .collect();
    let xg = vals(ranks * ranks * ROW);
    let xv = vals(ranks * ranks * MAX_RECV * ROW);
    let counts: Vec<i32> = (0..ranks * ranks)
        .map(|_| rng.below(MAX_RECV as u64 + 3) as i32 - 1)
        .collect();
    let f32o = |name, cols| output(name, DType::Float32, vec![ranks, cols]);
    let mut params = vec![
        Param::input("x", f32_array(&[ranks, n], &x)?),
        Param::input("x16", f16_array(&[ranks, n], &x16)?),
        Param::input("xg", f32_array(&[ranks, ranks * ROW], &xg)?),
        Param::input("xv", f32_array(&[ranks, ranks * MAX_RECV * ROW], &xv)?),
        Param::input("counts", i32_array(&[ranks, ranks], &counts)?),
    ];
    for name in ["y_sum", "y_max", "y_min", "y_prod"] {
        params.push(f32o(name, n));
    }
    for name in ["y16_sum", "y16_max", "y16_min", "y16_prod"] {
        params.push(output(name, DType::Float16, vec![ranks, n]));
    }
    for name in ["y_ring", "y_twice", "y_bcast", "y_rs"] {
        params.push(f32o(name, n));
    }
    params.push(f32o("y_ag", ranks * ROW));
    params.push(f32o("y_a2a", ranks * ROW));
    params.push(f32o("y_v", ranks * MAX_RECV * ROW));
    params.push(output("y_vrecv", DType::Int32, vec![ranks, ranks]));
    params.push(output("y_signal", DType::Int32, vec![ranks, ranks]));
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variant_names_follow_pyptos_list() {
        assert_eq!(
            parse_variant("builtin.tensor.allreduce__sum__fp32").map(|v| v.collective),
            Some(Collective::AllReduce {
                op: Reduce::Sum,
                ring: false
            })
        );
        assert_eq!(
            parse_variant("builtin.tensor.allreduce__prod__fp16").map(|v| v.elem),
            Some(Elem::Fp16)
        );
        assert_eq!(
            parse_variant("builtin.tensor.broadcast__root1__fp32").map(|v| v.collective),
            Some(Collective::Broadcast(1))
        );
        for bad in [
            "tensor.allreduce__sum__fp32",
            "builtin.tensor.allreduce__sum__bf16",
            "builtin.tensor.allreduce_ring__max__fp32",
            "builtin.tensor.broadcast__root__fp32",
            "builtin.tensor.broadcast__root+1__fp32",
            "builtin.tensor.all_to_all_v__fp16",
        ] {
            assert_eq!(parse_variant(bad), None, "{bad}");
        }
        assert_eq!(
            entry_name("builtin.tensor.allreduce__sum__fp32"),
            "builtin_tensor_allreduce__sum__fp32"
        );
        // Every reference name renders.
        let names = reference_variants(0);
        assert_eq!(names.len(), 15);
        for v in &names {
            render(v).unwrap();
        }
    }

    #[test]
    fn argument_layouts_are_pyptos() {
        let count = |v: &str| {
            let (_, files) = render(v).unwrap();
            let p = parse_variant(v).unwrap();
            assert!(files[0]
                .1
                .contains(&format!(".expected_arg_count = {}", p.expected_arg_count())));
            p.expected_arg_count()
        };
        assert_eq!(count("builtin.tensor.allreduce__sum__fp32"), 5);
        assert_eq!(count("builtin.tensor.allreduce_ring__sum__fp32"), 4);
        assert_eq!(count("builtin.tensor.barrier__fp32"), 3);
        assert_eq!(count("builtin.tensor.broadcast__root0__fp32"), 4);
        assert_eq!(count("builtin.tensor.reduce_scatter__sum__fp32"), 4);
        assert_eq!(count("builtin.tensor.allgather__fp32"), 5);
        assert_eq!(count("builtin.tensor.all_to_all__fp32"), 5);
        assert_eq!(count("builtin.tensor.all_to_all_v__fp32"), 7);
        let (kc, files) = render("builtin.tensor.allgather__fp32").unwrap();
        assert_eq!(kc.kernels[0].name, "builtin_tensor_allgather__fp32_kernel");
        assert!(files[0].1.contains("params_t0.add_input(ext_input);"));
        // The kernel's context is the scalar after domain_size.
        assert!(files[1].1.contains("(uint64_t)args[4]"));
        assert!(render("builtin.tensor.allreduce__sum__bf16").is_err());
    }

    #[test]
    fn coverage_build_calls_every_variant() {
        let e = coverage(2).unwrap();
        for v in reference_variants(1) {
            assert!(e.host_orch.contains(&format!("callables[\"{v}\"]")), "{v}");
            assert!(e.sub_builds.iter().any(|s| s.name == v), "{v}");
        }
        assert!(e.host_orch.contains("_ta_0 = TaskArgs()"));
        assert!(coverage(1).is_err());
    }
}
