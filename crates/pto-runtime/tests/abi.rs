//! The C++ headers and the Rust mirrors agree on every size and offset.

use std::mem::{offset_of, size_of};
use std::path::PathBuf;

use pto_runtime::ffi::{
    ArgSlot, ChipTaskArgs, ChipTensor, GlobalContext, LocalContext, RuntimeHandle, TaskArgsData,
    TaskOutputTensors, TaskPredicate, TensorCreateInfo,
};
use pto_runtime::sim_abi::PtoSimContext;

#[test]
fn layouts_match_the_headers() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("abi");
    std::fs::create_dir_all(&dir).unwrap();
    let include = pto_toolchain::materialize_headers(
        &PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pto-cache"),
    )
    .unwrap()
    .join(pto_toolchain::RUNTIME_INCLUDE);
    let src = dir.join("layout.cpp");
    std::fs::write(
        &src,
        r#"#include <cstdio>
#include "pto_orchestration_api.h"
#include "intrinsic.h"
#include "pto_sim_abi.h"
int main() {
    printf("%zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu\n",
        sizeof(ChipTensor), sizeof(TensorCreateInfo), sizeof(PTO2ArgSlot), sizeof(PTO2TaskArgsData),
        offsetof(PTO2TaskArgsData, scalars), offsetof(PTO2TaskArgsData, n_tensors), offsetof(PTO2TaskArgsData, deps),
        offsetof(PTO2TaskArgsData, launch_spec), offsetof(PTO2TaskArgsData, error_msg),
        sizeof(TaskOutputTensors), sizeof(PTO2Runtime), sizeof(ChipTaskArgs), sizeof(CoreTaskArgs), offsetof(PTO2TaskArgsData, predicate_), sizeof(CoreTaskPredicate),
        sizeof(LocalContext), offsetof(LocalContext, async_ctx), sizeof(GlobalContext),
        offsetof(GlobalContext, dma_workspace), sizeof(PtoSimContext), offsetof(PtoSimContext, gm_ranges));
}
"#,
    )
    .unwrap();
    let exe = dir.join("layout");
    let status = std::process::Command::new("c++")
        .args(["-std=c++17", "-I"])
        .arg(&include)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .status()
        .unwrap();
    assert!(status.success());
    let out = std::process::Command::new(&exe).output().unwrap();
    let got: Vec<usize> = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    let want = vec![
        size_of::<ChipTensor>(),
        size_of::<TensorCreateInfo>(),
        size_of::<ArgSlot>(),
        size_of::<TaskArgsData>(),
        offset_of!(TaskArgsData, scalars),
        offset_of!(TaskArgsData, n_tensors),
        offset_of!(TaskArgsData, deps),
        offset_of!(TaskArgsData, launch_spec),
        offset_of!(TaskArgsData, error_msg),
        size_of::<TaskOutputTensors>(),
        size_of::<RuntimeHandle>(),
        size_of::<ChipTaskArgs>(),
        size_of::<TaskArgsData>(),
        offset_of!(TaskArgsData, predicate),
        size_of::<TaskPredicate>(),
        size_of::<LocalContext>(),
        offset_of!(LocalContext, async_ctx),
        size_of::<GlobalContext>(),
        offset_of!(GlobalContext, dma_workspace),
        size_of::<PtoSimContext>(),
        offset_of!(PtoSimContext, gm_ranges),
    ];
    assert_eq!(got, want);
}
