//! A tiny single-chip build directory (`scale_add`: c = a + s * b), written with the
//! project's own writers, for replay tests.

use std::path::{Path, PathBuf};

use pto_build_output::{
    write_npy, ArgDirection, BackendType, CompiledMeta, CoreType, DType, KernelConfig, KernelEntry,
    NpyArray, OrchestrationConfig, ParamDirection, ParamInfo, RuntimeConfig,
};

const ORCH: &str = r#"// Orchestration Function: scale_add
#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 4};
}
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {
    ChipTensor ext_a = orch_args.tensor(0).ref();
    ChipTensor ext_b = orch_args.tensor(1).ref();
    ChipTensor ext_c = orch_args.tensor(2).ref();
    uint64_t s = orch_args.scalar(0);
    PTO2_SCOPE() {
        CoreTaskArgs params_t0;
        params_t0.add_input(ext_a, ext_b);
        params_t0.add_output(ext_c);
        params_t0.add_scalar(s);
        rt_submit_aiv_task(0, params_t0);
    }
}
"#;

const KERNEL: &str = r#"// Kernel Function: kernel_scale_add
#include <string.h>
#include "tensor.h"
// --- ptoas-generated code ---
static void kernel_scale_add(ChipTensor* a, ChipTensor* b, ChipTensor* c, float s) {
    for (uint64_t i = 0; i < c->numel(); ++i) c->data<float>()[i] = a->data<float>()[i] + s * b->data<float>()[i];
}
// --- Kernel entry point ---
extern "C" void kernel_entry(int64_t* args) {
    kernel_scale_add(kernel_tensor(args, 0), kernel_tensor(args, 1), kernel_tensor(args, 2), kernel_scalar<float>(args, 3));
}
"#;

/// Writes the fixture under `root/name` and returns its path.
pub fn scale_add(root: &Path, name: &str) -> PathBuf {
    with_orchestration(root, name, ORCH)
}

/// The fixture with another orchestration body over the same parameters (a, b, c, s).
pub fn with_orchestration(root: &Path, name: &str, orch: &str) -> PathBuf {
    let dir = root.join(name);
    let _ = std::fs::remove_dir_all(&dir);
    for sub in ["orchestration", "kernels/aiv", "data/in", "data/out"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    std::fs::write(dir.join("orchestration/scale_add.cpp"), orch).unwrap();
    std::fs::write(dir.join("kernels/aiv/kernel_scale_add.cpp"), KERNEL).unwrap();
    let kc = KernelConfig {
        runtime: RuntimeConfig::default(),
        orchestration: OrchestrationConfig {
            source: dir.join("orchestration/scale_add.cpp"),
            function_name: "aicpu_orchestration_entry".into(),
            config_name: None,
            signature: Some(vec![ArgDirection::In, ArgDirection::In, ArgDirection::Out]),
        },
        kernels: vec![KernelEntry {
            func_id: 0,
            name: "kernel_scale_add".into(),
            source: dir.join("kernels/aiv/kernel_scale_add.cpp"),
            core_type: CoreType::Aiv,
            signature: Some(vec![ArgDirection::In, ArgDirection::In, ArgDirection::Out]),
            extra_include_dirs: vec![],
            external: false,
        }],
    };
    kc.write(&dir.join("kernel_config.py")).unwrap();
    let param = |name: &str, direction, shape: Option<Vec<i64>>| ParamInfo {
        name: name.into(),
        direction,
        shape,
        dtype: "fp32".into(),
    };
    CompiledMeta {
        params: vec![
            param("a", ParamDirection::In, Some(vec![64])),
            param("b", ParamDirection::In, Some(vec![64])),
            param("c", ParamDirection::Out, Some(vec![64])),
            param("s", ParamDirection::In, None),
        ],
        num_return_types: 0,
        platform: Some("a2a3sim".into()),
        backend_type: BackendType::Ascend910B,
    }
    .write(&dir)
    .unwrap();
    let a: Vec<f64> = (0..64).map(|i| i as f64).collect();
    let b: Vec<f64> = (0..64).map(|i| (i % 7) as f64 - 3.0).collect();
    let c: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x + 0.5 * y).collect();
    write_npy(
        &dir.join("data/in/a.npy"),
        &NpyArray::from_f64(DType::Float32, &[64], &a).unwrap(),
    )
    .unwrap();
    write_npy(
        &dir.join("data/in/b.npy"),
        &NpyArray::from_f64(DType::Float32, &[64], &b).unwrap(),
    )
    .unwrap();
    write_npy(
        &dir.join("data/in/s.npy"),
        &NpyArray::from_f64(DType::Float32, &[], &[0.5]).unwrap(),
    )
    .unwrap();
    write_npy(
        &dir.join("data/out/c.npy"),
        &NpyArray::from_f64(DType::Float32, &[64], &c).unwrap(),
    )
    .unwrap();
    dir
}
