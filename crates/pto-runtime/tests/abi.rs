//! The C++ headers and the Rust mirrors agree on every size and offset.

use std::mem::{offset_of, size_of};
use std::path::PathBuf;

use pto_runtime::ffi::{
    ArgSlot, ChipTaskArgs, ChipTensor, RuntimeHandle, TaskArgsData, TaskOutputTensors,
    TensorCreateInfo,
};

#[test]
fn layouts_match_the_headers() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("abi");
    std::fs::create_dir_all(&dir).unwrap();
    let include = pto_toolchain::materialize_headers(
        &PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pto-cache"),
    )
    .unwrap();
    let src = dir.join("layout.cpp");
    std::fs::write(
        &src,
        r#"#include <cstdio>
#include "pto_orchestration_api.h"
int main() {
    printf("%zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu\n",
        sizeof(ChipTensor), sizeof(TensorCreateInfo), sizeof(PTO2ArgSlot), sizeof(PTO2TaskArgsData),
        offsetof(PTO2TaskArgsData, scalars), offsetof(PTO2TaskArgsData, n_tensors), offsetof(PTO2TaskArgsData, deps),
        offsetof(PTO2TaskArgsData, launch_spec), offsetof(PTO2TaskArgsData, error),
        sizeof(TaskOutputTensors), sizeof(PTO2Runtime), sizeof(ChipTaskArgs), sizeof(CoreTaskArgs));
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
        offset_of!(TaskArgsData, error),
        size_of::<TaskOutputTensors>(),
        size_of::<RuntimeHandle>(),
        size_of::<ChipTaskArgs>(),
        size_of::<TaskArgsData>(),
    ];
    assert_eq!(got, want);
}
