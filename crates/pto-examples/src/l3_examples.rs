//! The L3 (several chips) examples, as PyPTO's distributed codegen would write them:
//! `distributed_meta.json`, `orchestration/host_orch.py` in the generated shape, one
//! complete sub-build per chip program under `next_levels/<name>/` (no sidecar there, as in
//! PyPTO), plus `golden.py`, `data/{in,out}/*.npy` and `debug/run.py`.
//!
//! | example | ranks | what it shows |
//! |---|---|---|
//! | `l3_hello_rank` | 2 | per-rank slices `x[r]`, a directed dispatch per rank, the rank as a scalar |
//! | `l3_allreduce` / `l3_allreduce_4` | 2 / 4 | a comm domain with window buffers, ordering tokens, a kernel that notifies, waits and reads its peers' windows |
//! | `l3_builtin_allreduce` | 2 | a builtin collective (`builtin.tensor.allreduce__sum__fp32`) between two user chip programs |

use std::path::{Path, PathBuf};

use pto_build_output::kernel_config::{ArgDirection, CoreType};
use pto_build_output::{
    DistributedConfig, DistributedMeta, KernelConfig, KernelEntry, OrchestrationConfig,
    RuntimeConfig,
};

use crate::example::{f32_array, f32_array_from_f64, write_file, Example, Param};
use crate::rng::SplitMix64;
use crate::Error;

/// One chip program: `next_levels/<name>/`.
pub struct SubBuild {
    /// The directory name (the `callables` key).
    pub name: String,
    /// Its `kernel_config.py`.
    pub kernel_config: KernelConfig,
    /// Its sources, relative to the sub-build.
    pub files: Vec<(PathBuf, String)>,
}

impl SubBuild {
    /// Writes the sub-build into `root` (`kernel_config.py` and the sources); returns the
    /// files written.
    pub fn write(&self, root: &Path) -> Result<Vec<PathBuf>, Error> {
        std::fs::create_dir_all(root).map_err(|source| Error::CreateDir {
            path: root.to_path_buf(),
            source,
        })?;
        let mut written = Vec::new();
        let path = root.join("kernel_config.py");
        self.kernel_config.write(&path)?;
        written.push(path);
        for (rel, text) in &self.files {
            let path = root.join(rel);
            write_file(&path, text.as_bytes())?;
            written.push(path);
        }
        Ok(written)
    }
}

/// A chip program `name` submitting one AIV task of a kernel that does nothing, over no
/// arguments (the dispatch cost alone: the L3 benchmark).
pub fn empty_program(name: &str) -> SubBuild {
    user_program(
        name,
        Vec::new(),
        "empty",
        Vec::new(),
        one_task_orchestration(name, "One task of an empty kernel.", &[], 0),
        kernel_source(
            "empty",
            "Does nothing.",
            "extern \"C\" void kernel_entry(int64_t* args) { (void)args; }\n",
        ),
    )
}

/// One L3 example.
pub struct L3Example {
    /// Directory name.
    pub name: &'static str,
    /// `orchestration/host_orch.py`.
    pub host_orch: String,
    /// The chip programs.
    pub sub_builds: Vec<SubBuild>,
    /// The HOST orchestrator's parameters with their data (golden.py, data/, sidecar).
    pub golden: Example,
    /// Devices (ranks).
    pub device_ids: Vec<i64>,
}

pub(crate) const IMPORTS: &str = "import torch\nfrom simpler.task_interface import CallConfig, CommBufferSpec, DataType, TaskArgs, TensorArgType\nfrom pypto.runtime.tensor_arg import make_tensor_arg\nfrom pypto.runtime.distributed_runner import _submit_chip\n\n";

pub(crate) fn user_program(
    name: &str,
    signature: Vec<ArgDirection>,
    kernel: &str,
    kernel_signature: Vec<ArgDirection>,
    orchestration: String,
    kernel_source: String,
) -> SubBuild {
    let orch = PathBuf::from("orchestration").join(format!("{name}.cpp"));
    let k = PathBuf::from("kernels")
        .join("aiv")
        .join(format!("{kernel}.cpp"));
    SubBuild {
        name: name.to_string(),
        kernel_config: KernelConfig {
            runtime: RuntimeConfig::default(),
            orchestration: OrchestrationConfig {
                source: orch.clone(),
                function_name: "aicpu_orchestration_entry".to_string(),
                config_name: None,
                signature: Some(signature),
            },
            kernels: vec![KernelEntry {
                func_id: 0,
                name: kernel.to_string(),
                source: k.clone(),
                core_type: CoreType::Aiv,
                signature: Some(kernel_signature),
                extra_include_dirs: Vec::new(),
                external: false,
            }],
        },
        files: vec![(orch, orchestration), (k, kernel_source)],
    }
}

/// An orchestration submitting one AIV task of kernel 0 over its tensors (with `tags`,
/// `add_input` / `add_output` / `add_inout`) and its scalars.
pub(crate) fn one_task_orchestration(
    name: &str,
    what: &str,
    tags: &[&str],
    n_scalars: usize,
) -> String {
    let mut body = String::new();
    for (i, _) in tags.iter().enumerate() {
        body.push_str(&format!(
            "    ChipTensor ext_{i} = orch_args.tensor({i}).ref();\n"
        ));
    }
    body.push_str("\n    PTO2_SCOPE() {\n        CoreTaskArgs params_t0;\n");
    for (i, t) in tags.iter().enumerate() {
        body.push_str(&format!("        params_t0.add_{t}(ext_{i});\n"));
    }
    for s in 0..n_scalars {
        body.push_str(&format!(
            "        params_t0.add_scalar(orch_args.scalar({s}));\n"
        ));
    }
    body.push_str("        rt_submit_aiv_task(0, params_t0);\n    }\n");
    format!(
        "// Orchestration Function: {name}\n// Generated by PyPTO IR Compiler\n\n// Hand-written in the layout of PyPTO's orchestration codegen (pto-examples, l3_examples).\n// {what}\n\n#include <stdint.h>\n\n#include \"pto_orchestration_api.h\"\n\nextern \"C\" {{\n\n__attribute__((visibility(\"default\")))\nPTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& orch_args) {{\n    (void)orch_args;\n    return PTO2OrchestrationConfig{{\n        .expected_arg_count = {},\n    }};\n}}\n\n__attribute__((visibility(\"default\")))\nvoid aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {{\n{body}}}\n\n}}  // extern \"C\"\n",
        tags.len() + n_scalars
    )
}

pub(crate) fn kernel_source(name: &str, what: &str, body: &str) -> String {
    format!(
        "// Kernel Function: {name}\n// {what}\n\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n\n#include \"pto_comm_sim.h\"\n#include \"tensor.h\"\n\n// --- ptoas-generated code ---\n{body}// --- Kernel entry point ---\n"
    )
}

const ADD_RANK: &str = r#"static void add_rank(const ChipTensor* x, const ChipTensor* y, int64_t rank) {
    const float* xs = x->data<float>();
    float* ys = y->data<float>();
    for (uint64_t i = 0; i < y->numel(); ++i) ys[i] = xs[i] + (float)rank;
}
"#;

const ADD_RANK_ENTRY: &str = "extern \"C\" void kernel_entry(int64_t* args) {\n    add_rank(kernel_tensor(args, 0), kernel_tensor(args, 1), kernel_scalar<int64_t>(args, 2));\n}\n";

/// Rows x cols of one rank's slice in `l3_hello_rank`.
pub const HELLO_ROWS: usize = 8;

/// `l3_hello_rank`: `y[r] = x[r] + r` on rank `r`.
pub fn hello_rank() -> Result<L3Example, Error> {
    let ranks = 2usize;
    let n = ranks * HELLO_ROWS * HELLO_ROWS;
    let x = SplitMix64::new(0x13_0001).uniform_vec(n);
    let y: Vec<f64> = x
        .iter()
        .enumerate()
        .map(|(i, &v)| f64::from(v) + (i / (HELLO_ROWS * HELLO_ROWS)) as f64)
        .collect();
    let shape = [ranks, HELLO_ROWS, HELLO_ROWS];
    let host_orch = format!(
        "{IMPORTS}def _alloc_intermediates(tensors, world_size=1):\n    pass\n\n\ndef hello_rank(orch, _args, config, *, tensors, callables, sub_ids, _keep, world_size, _domain_provider=None):\n    NR = tensors[\"x\"].shape[0]\n    for r in range(0, world_size, 1):\n        tensors[\"x_r\"] = tensors[\"x\"][r, 0:8, 0:8]\n        tensors[\"y_r\"] = tensors[\"y\"][r, 0:8, 0:8]\n        _ta_0 = TaskArgs()\n        _ta_0.add_tensor(make_tensor_arg(orch._worker, tensors[\"x_r\"]), TensorArgType.INPUT)\n        _ta_0.add_tensor(make_tensor_arg(orch._worker, tensors[\"y_r\"]), TensorArgType.OUTPUT_EXISTING)\n        _ta_0.add_scalar(r)\n        _keep.append(_ta_0)\n        _submit_chip(orch, callables[\"per_rank\"], _ta_0, config, r)\n\n\nhello_rank._pypto_distributed_entry = True\n"
    );
    let program = user_program(
        "per_rank",
        vec![ArgDirection::In, ArgDirection::Out],
        "add_rank",
        vec![ArgDirection::In, ArgDirection::Out, ArgDirection::Scalar],
        one_task_orchestration(
            "per_rank",
            "y = x + rank on one rank's slice.",
            &["input", "output"],
            1,
        ),
        kernel_source(
            "add_rank",
            "y = x + rank.",
            &format!("{ADD_RANK}{ADD_RANK_ENTRY}"),
        ),
    );
    Ok(L3Example {
        name: "l3_hello_rank",
        host_orch,
        sub_builds: vec![program],
        golden: golden_example(
            "l3_hello_rank",
            vec![
                Param::input("x", f32_array(&shape, &x)?),
                Param::output("y", f32_array_from_f64(&shape, &y)?),
            ],
            "    \"\"\"y[r] = x[r] + r, in float64 rounded to float32.\"\"\"\n    x = np.asarray(tensors[\"x\"], dtype=np.float64)\n    r = np.arange(x.shape[0], dtype=np.float64).reshape(-1, 1, 1)\n    tensors[\"y\"][:] = (x + r).astype(np.float32)\n",
        ),
        device_ids: vec![0, 1],
    })
}

/// Elements of one rank's vector in the allreduce examples.
pub const ALLREDUCE_N: usize = 256;

const WINDOW_ALLREDUCE: &str = r#"static void window_allreduce(const ChipTensor* in, const ChipTensor* out, const ChipTensor* data_t,
                             const ChipTensor* sig_t, uint64_t device_ctx) {
    const CommContext* ctx = pto_comm_ctx(device_ctx);
    const uint32_t me = ctx->rankId;
    const uint64_t n = out->numel();
    float* data = data_t->data<float>();
    int32_t* sig = sig_t->data<int32_t>();
    const float* x = in->data<float>();
    for (uint64_t i = 0; i < n; ++i) data[i] = x[i];
    // Tell every peer this rank's window holds its vector, then wait for all of them.
    for (uint32_t p = 0; p < ctx->rankNum; ++p) {
        if (p != me) pto_comm_notify(pto_comm_peer_ptr(ctx, &sig[me], p), 1, PTO_NOTIFY_SET);
    }
    for (uint32_t p = 0; p < ctx->rankNum; ++p) {
        if (p != me && pto_comm_wait(&sig[p], 1, PTO_WAIT_EQ) != 0) {
            fprintf(stderr, "window_allreduce: rank %u never heard from rank %u\n", me, p);
            abort();
        }
    }
    float* y = out->data<float>();
    for (uint64_t i = 0; i < n; ++i) {
        float acc = 0.0f;
        for (uint32_t p = 0; p < ctx->rankNum; ++p) acc += pto_comm_peer_ptr(ctx, data, p)[i];
        y[i] = acc;
    }
}
"#;

const WINDOW_ALLREDUCE_ENTRY: &str = "extern \"C\" void kernel_entry(int64_t* args) {\n    window_allreduce(kernel_tensor(args, 0), kernel_tensor(args, 1), kernel_tensor(args, 2), kernel_tensor(args, 3), (uint64_t)args[4]);\n}\n";

pub(crate) fn window_size_expr(buffers: &[(&str, &str)]) -> String {
    buffers
        .iter()
        .map(|(_, c)| format!("((((({c}) + 31) // 32) * 32))"))
        .collect::<Vec<_>>()
        .join(" + ")
}

pub(crate) fn buffer_specs(buffers: &[(&str, &str)], indent: &str) -> String {
    buffers
        .iter()
        .map(|(n, c)| {
            format!("{indent}CommBufferSpec(name=\"{n}\", dtype=\"opaque\", count=({c}), nbytes=(((({c}) + 31) // 32) * 32)),\n")
        })
        .collect()
}

fn allreduce_data(ranks: usize, seed: u64) -> Result<(Vec<f32>, Vec<f64>), Error> {
    let x = SplitMix64::new(seed).uniform_vec(ranks * ALLREDUCE_N);
    let mut sum = vec![0f64; ALLREDUCE_N];
    for r in 0..ranks {
        for i in 0..ALLREDUCE_N {
            sum[i] += f64::from(x[r * ALLREDUCE_N + i]);
        }
    }
    let y: Vec<f64> = (0..ranks * ALLREDUCE_N)
        .map(|k| sum[k % ALLREDUCE_N])
        .collect();
    Ok((x, y))
}

const ALLREDUCE_GOLDEN: &str = "    \"\"\"Every rank's row is the sum of all ranks' rows (float64, rounded to float32).\"\"\"\n    x = np.asarray(tensors[\"inputs\"], dtype=np.float64)\n    tensors[\"outputs\"][:] = np.broadcast_to(x.sum(axis=0, keepdims=True), x.shape).astype(np.float32)\n";

/// `l3_allreduce` (2 ranks) / `l3_allreduce_4` (4 ranks): a window allreduce.
pub fn window_allreduce(ranks: usize) -> Result<L3Example, Error> {
    let buffers = [("data_buf", "256 * 4"), ("signal_buf", "world_size * 4")];
    let host_orch = format!(
        "{IMPORTS}def _alloc_intermediates(tensors, world_size=1):\n    tensors[\"__comm_d0_ord\"] = [torch.zeros((1,), dtype=torch.int32).share_memory_() for _ in range(max(world_size, 1))]\n\n\ndef orchestrator(orch, _args, config, *, tensors, callables, sub_ids, _keep, world_size, _domain_provider=None):\n    NR = tensors[\"inputs\"].shape[0]\n    with (_domain_provider or orch.allocate_domain)(\n        name=\"comm_d0\",\n        workers=[*range(world_size)],\n        window_size={},\n        buffers=[\n{}        ],\n    ) as __comm_d0:\n        for r in range(0, world_size, 1):\n            tensors[\"t0\"] = tensors[\"inputs\"][r, 0:1, 0:256]\n            tensors[\"t1\"] = tensors[\"outputs\"][r, 0:1, 0:256]\n            _ta_0 = TaskArgs()\n            _ta_0.add_tensor(make_tensor_arg(orch._worker, tensors[\"t0\"]), TensorArgType.INPUT)\n            _ta_0.add_tensor(make_tensor_arg(orch._worker, tensors[\"t1\"]), TensorArgType.OUTPUT_EXISTING)\n            _ta_0.add_tensor(__comm_d0[r].buffers[\"data_buf\"].tensor(shapes=(1, 256), dtype=DataType.FLOAT32), TensorArgType.INOUT)\n            _ta_0.add_tensor(__comm_d0[r].buffers[\"signal_buf\"].tensor(shapes=(world_size, 1), dtype=DataType.INT32), TensorArgType.INOUT)\n            _ta_0.add_tensor(make_tensor_arg(orch._worker, tensors[\"__comm_d0_ord\"][r]), TensorArgType.INOUT)\n            _ta_0.add_scalar(__comm_d0[r].device_ctx)\n            _ta_0.add_scalar(__comm_d0[r].device_ctx)\n            _keep.append(_ta_0)\n            _submit_chip(orch, callables[\"chip_orch\"], _ta_0, config, r)\n\n\norchestrator._pypto_distributed_entry = True\n",
        window_size_expr(&buffers),
        buffer_specs(&buffers, "            "),
    );
    let program = user_program(
        "chip_orch",
        vec![ArgDirection::In, ArgDirection::Out, ArgDirection::InOut, ArgDirection::InOut],
        "window_allreduce",
        vec![
            ArgDirection::In,
            ArgDirection::Out,
            ArgDirection::InOut,
            ArgDirection::InOut,
            ArgDirection::Scalar,
        ],
        one_task_orchestration(
            "chip_orch",
            "One rank of a window allreduce: stage the input in the window, signal the peers, sum their windows. The ordering token arrives as tensor 4 and is not used here.",
            &["input", "output", "inout", "inout"],
            1,
        )
        .replace(".expected_arg_count = 5", ".expected_arg_count = 6"),
        kernel_source(
            "window_allreduce",
            "out = sum over ranks of their inputs, through the comm windows.",
            &format!("{WINDOW_ALLREDUCE}{WINDOW_ALLREDUCE_ENTRY}"),
        ),
    );
    let (x, y) = allreduce_data(ranks, 0x13_0002 + ranks as u64)?;
    let shape = [ranks, 1, ALLREDUCE_N];
    let name = if ranks == 2 {
        "l3_allreduce"
    } else {
        "l3_allreduce_4"
    };
    Ok(L3Example {
        name,
        host_orch,
        sub_builds: vec![program],
        golden: golden_example(
            name,
            vec![
                Param::input("inputs", f32_array(&shape, &x)?),
                Param::output("outputs", f32_array_from_f64(&shape, &y)?),
            ],
            ALLREDUCE_GOLDEN,
        ),
        device_ids: (0..ranks as i64).collect(),
    })
}

const STAGE_IN: &str = "static void stage_in(const ChipTensor* x, const ChipTensor* win) {\n    const float* s = x->data<float>();\n    float* d = win->data<float>();\n    for (uint64_t i = 0; i < win->numel(); ++i) d[i] = s[i];\n}\nextern \"C\" void kernel_entry(int64_t* args) { stage_in(kernel_tensor(args, 0), kernel_tensor(args, 1)); }\n";
const STAGE_OUT: &str = "static void stage_out(const ChipTensor* win, const ChipTensor* y) {\n    const float* s = win->data<float>();\n    float* d = y->data<float>();\n    for (uint64_t i = 0; i < y->numel(); ++i) d[i] = s[i];\n}\nextern \"C\" void kernel_entry(int64_t* args) { stage_out(kernel_tensor(args, 0), kernel_tensor(args, 1)); }\n";

/// The builtin collective the `l3_builtin_allreduce` example calls.
pub const BUILTIN_ALLREDUCE: &str = "builtin.tensor.allreduce__sum__fp32";

/// `l3_builtin_allreduce`: stage into the window, builtin allreduce, stage out.
pub fn builtin_allreduce() -> Result<L3Example, Error> {
    let ranks = 2usize;
    let buffers = [
        ("data_buf", "256 * 4"),
        ("__allreduce_signal_buf_0", "world_size * 4"),
    ];
    let token = "            _ta_{k}.add_tensor(make_tensor_arg(orch._worker, tensors[\"__comm_d0_ord\"][r]), TensorArgType.INOUT)\n";
    let tok = |k: usize| token.replace("{k}", &k.to_string());
    let host_orch = format!(
        "{IMPORTS}def _alloc_intermediates(tensors, world_size=1):\n    tensors[\"__comm_d0_ord\"] = [torch.zeros((1,), dtype=torch.int32).share_memory_() for _ in range(max(world_size, 1))]\n\n\ndef host_allreduce(orch, _args, config, *, tensors, callables, sub_ids, _keep, world_size, _domain_provider=None):\n    with (_domain_provider or orch.allocate_domain)(\n        name=\"comm_d0\",\n        workers=[*range(world_size)],\n        window_size={ws},\n        buffers=[\n{specs}        ],\n    ) as __comm_d0:\n        for r in range(0, world_size, 1):\n            tensors[\"t0\"] = tensors[\"inputs\"][r, 0:1, 0:256]\n            _ta_0 = TaskArgs()\n            _ta_0.add_tensor(make_tensor_arg(orch._worker, tensors[\"t0\"]), TensorArgType.INPUT)\n            _ta_0.add_tensor(__comm_d0[r].buffers[\"data_buf\"].tensor(shapes=(1, 256), dtype=DataType.FLOAT32), TensorArgType.INOUT)\n{t0}            _keep.append(_ta_0)\n            _submit_chip(orch, callables[\"stage_in\"], _ta_0, config, r)\n        for r in range(0, world_size, 1):\n            _ta_1 = TaskArgs()\n            _ta_1.add_tensor(__comm_d0[r].buffers[\"data_buf\"].tensor(shapes=(256,), dtype=DataType.FLOAT32), TensorArgType.INOUT)\n            _ta_1.add_tensor(__comm_d0[r].buffers[\"__allreduce_signal_buf_0\"].tensor(shapes=(world_size, 1), dtype=DataType.INT32), TensorArgType.INOUT)\n{t1}            _ta_1.add_scalar(__comm_d0[r].domain_size)\n            _ta_1.add_scalar(__comm_d0[r].device_ctx)\n            _ta_1.add_scalar(4)\n            _ta_1_config = CallConfig()\n            _ta_1_config.aicpu_thread_num = config.aicpu_thread_num\n            _keep.append(_ta_1)\n            orch.submit_next_level(callables[\"{BUILTIN_ALLREDUCE}\"], _ta_1, _ta_1_config, worker=r)\n        for r in range(0, world_size, 1):\n            tensors[\"t2\"] = tensors[\"outputs\"][r, 0:1, 0:256]\n            _ta_2 = TaskArgs()\n            _ta_2.add_tensor(__comm_d0[r].buffers[\"data_buf\"].tensor(shapes=(1, 256), dtype=DataType.FLOAT32), TensorArgType.INPUT)\n            _ta_2.add_tensor(make_tensor_arg(orch._worker, tensors[\"t2\"]), TensorArgType.OUTPUT_EXISTING)\n{t2}            _keep.append(_ta_2)\n            _submit_chip(orch, callables[\"stage_out\"], _ta_2, config, r)\n\n\nhost_allreduce._pypto_distributed_entry = True\n",
        ws = window_size_expr(&buffers),
        specs = buffer_specs(&buffers, "            "),
        t0 = tok(0),
        t1 = tok(1),
        t2 = tok(2),
    );
    let stage_in = user_program(
        "stage_in",
        vec![ArgDirection::In, ArgDirection::InOut],
        "stage_in",
        vec![ArgDirection::In, ArgDirection::Out],
        one_task_orchestration(
            "stage_in",
            "Copy a rank's input row into its window.",
            &["input", "inout"],
            0,
        ),
        kernel_source("stage_in", "window = x.", STAGE_IN),
    );
    let stage_out = user_program(
        "stage_out",
        vec![ArgDirection::In, ArgDirection::Out],
        "stage_out",
        vec![ArgDirection::In, ArgDirection::Out],
        one_task_orchestration(
            "stage_out",
            "Copy a rank's window into its output row.",
            &["input", "output"],
            0,
        ),
        kernel_source("stage_out", "y = window.", STAGE_OUT),
    );
    let builtin = crate::l3_collectives::sub_build(BUILTIN_ALLREDUCE)?;
    let (x, y) = allreduce_data(ranks, 0x13_0007)?;
    let shape = [ranks, 1, ALLREDUCE_N];
    Ok(L3Example {
        name: "l3_builtin_allreduce",
        host_orch,
        sub_builds: vec![builtin, stage_in, stage_out],
        golden: golden_example(
            "l3_builtin_allreduce",
            vec![
                Param::input("inputs", f32_array(&shape, &x)?),
                Param::output("outputs", f32_array_from_f64(&shape, &y)?),
            ],
            ALLREDUCE_GOLDEN,
        ),
        device_ids: (0..ranks as i64).collect(),
    })
}

pub(crate) fn golden_example(name: &'static str, params: Vec<Param>, compute: &str) -> Example {
    Example {
        name,
        orchestration_source: "",
        kernels: Vec::new(),
        params,
        rtol: 1e-5,
        atol: 1e-5,
        compute_golden_py: compute.to_string(),
        expected_tasks: 0,
    }
}

/// Every L3 example.
pub fn examples() -> Result<Vec<L3Example>, Error> {
    Ok(vec![
        hello_rank()?,
        window_allreduce(2)?,
        window_allreduce(4)?,
        builtin_allreduce()?,
    ])
}

impl L3Example {
    /// The sidecar.
    pub fn distributed_meta(&self) -> Result<DistributedMeta, Error> {
        let program = self.golden.compiled_meta();
        let distributed_config = DistributedConfig::new(
            self.device_ids.clone(),
            0,
            "tensormap_and_ringbuffer".to_string(),
            0,
        )
        .map_err(|e| Error::Unsupported {
            what: e.to_string(),
        })?;
        Ok(DistributedMeta {
            program,
            distributed_config,
        })
    }

    /// Writes the build directory `dir`; returns the files written.
    pub fn write(&self, dir: &Path) -> Result<Vec<PathBuf>, Error> {
        let mut written = Vec::new();
        std::fs::create_dir_all(dir).map_err(|source| Error::CreateDir {
            path: dir.to_path_buf(),
            source,
        })?;
        pto_build_output::drop_foreign_build_markers(dir, pto_build_output::BuildKind::Distributed)
            .map_err(|e| Error::Write {
                path: dir.to_path_buf(),
                source: std::io::Error::other(e.to_string()),
            })?;
        written.push(self.distributed_meta()?.write(dir)?);
        let path = dir.join("orchestration").join("host_orch.py");
        write_file(&path, self.host_orch.as_bytes())?;
        written.push(path);
        for sb in &self.sub_builds {
            written.extend(sb.write(&dir.join("next_levels").join(&sb.name))?);
        }
        let path = dir.join("golden.py");
        write_file(&path, self.golden.golden_py()?.as_bytes())?;
        written.push(path);
        let path = dir.join("debug").join("run.py");
        write_file(&path, self.golden.run_script().as_bytes())?;
        written.push(path);
        for p in &self.golden.params {
            let Some(t) = p.tensor() else { continue };
            for (sub, array) in [("in", &t.input), ("out", &t.golden)] {
                if let Some(array) = array {
                    let path = dir.join("data").join(sub).join(format!("{}.npy", p.name));
                    std::fs::create_dir_all(path.parent().unwrap_or(dir)).map_err(|source| {
                        Error::CreateDir {
                            path: dir.join("data").join(sub),
                            source,
                        }
                    })?;
                    pto_build_output::write_npy(&path, array)?;
                    written.push(path);
                }
            }
        }
        Ok(written)
    }
}

/// Writes every L3 example into `out_dir/<name>/`; returns the files written.
pub fn generate(out_dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut written = Vec::new();
    for e in examples()? {
        written.extend(e.write(&out_dir.join(e.name))?);
    }
    Ok(written)
}
