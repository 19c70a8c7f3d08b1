//! The two Simpler generations at compile time: each unit sees its generation's spellings, a
//! 2026-09 kernel that reads its arguments through the 72-byte boundary `ChipTensor` does not
//! compile (instead of reading a wrong layout), and a header of the other generation is an
//! error naming both headers.

use std::path::{Path, PathBuf};

use pto_toolchain::{CompileUnit, CoreKind, Generation, Toolchain, ToolchainError, UnitKind};

fn toolchain(dir: &Path) -> Toolchain {
    Toolchain::discover(&dir.join("cache")).unwrap_or_else(|e| panic!("no toolchain: {e}"))
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The compiler's diagnostics of a unit that must not compile.
fn compile_error(tc: &Toolchain, unit: &CompileUnit) -> String {
    match tc.compile(unit) {
        Err(ToolchainError::Compile { stderr, .. }) => stderr,
        other => panic!("{} compiled: {other:?}", unit.source.display()),
    }
}

const KERNEL_CHIP_TENSOR: &str = r#"#include "tensor.h"
extern "C" void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* t = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    float* x = reinterpret_cast<float*>(t->buffer.addr) + t->start_offset;
    x[0] += 1.0f;
}
"#;

#[test]
fn a_2026_09_kernel_cannot_read_its_arguments_as_chip_tensor() {
    let dir = tempfile::tempdir().unwrap();
    let tc = toolchain(dir.path());
    let src = write(dir.path(), "k.cpp", KERNEL_CHIP_TENSOR);
    let aiv = |g| CompileUnit::new(&src, UnitKind::Kernel(CoreKind::Aiv)).with_generation(g);
    // 2026-08: ChipTensor is the 128-byte argument descriptor.
    tc.compile(&aiv(Generation::Simpler2026_08))
        .unwrap_or_else(|e| panic!("{e}"));
    // 2026-09: ChipTensor is the boundary type, incomplete in kernels; the note says why.
    let err = compile_error(&tc, &aiv(Generation::Simpler2026_09));
    assert!(err.contains("incomplete type"), "{err}");
    assert!(
        err.contains("never a kernel argument; kernels read args[i] as Tensor*"),
        "{err}"
    );
}

#[test]
fn a_2026_09_kernel_reads_tensor_and_task_tensor_with_the_128_byte_layout() {
    let dir = tempfile::tempdir().unwrap();
    let tc = toolchain(dir.path());
    let src = write(
        dir.path(),
        "k.cpp",
        r#"#include "tensor.h"
#if __has_include("tensormap_and_ringbuffer/tensor.h")
using ArgTensor = TaskTensor;
#else
#error "the 2026-09 include root is missing"
#endif
static_assert(sizeof(ArgTensor) == 128 && sizeof(Tensor) == 128, "the argument descriptor is 128 bytes");
static_assert(EXT_PARAMS_COUNT == 2, "two context slots");
extern "C" void kernel_entry(__gm__ int64_t* args) {
    __gm__ Tensor* t = reinterpret_cast<__gm__ Tensor*>(args[0]);
    reinterpret_cast<float*>(t->buffer.addr)[t->start_offset] += (float)get_block_idx(args);
    (void)get_tracr_aicore_slice(args);
}
"#,
    );
    let unit = CompileUnit::new(&src, UnitKind::Kernel(CoreKind::Aiv))
        .with_generation(Generation::Simpler2026_09);
    tc.compile(&unit).unwrap_or_else(|e| panic!("{e}"));
    // The same kernel against the 2026-08 headers: the probe sees no 2026-09 root.
    let err = compile_error(
        &tc,
        &unit.clone().with_generation(Generation::Simpler2026_08),
    );
    assert!(err.contains("the 2026-09 include root is missing"), "{err}");
}

#[test]
fn a_header_of_the_other_generation_names_both_headers() {
    let dir = tempfile::tempdir().unwrap();
    let tc = toolchain(dir.path());
    let new = write(dir.path(), "new.cpp", "#include \"orchestration_api.h\"\n");
    let old = write(
        dir.path(),
        "old.cpp",
        "#include \"pto_orchestration_api.h\"\n",
    );
    let orch = |p: &Path, g| CompileUnit::new(p, UnitKind::Orchestration).with_generation(g);
    let err = compile_error(&tc, &orch(&new, Generation::Simpler2026_08));
    assert!(
        err.contains("orchestration_api.h is Simpler's 2026-09 orchestration API")
            && err.contains("2026-08 headers (pto_orchestration_api.h)"),
        "{err}"
    );
    let err = compile_error(&tc, &orch(&old, Generation::Simpler2026_09));
    assert!(
        err.contains("pto_orchestration_api.h is Simpler's 2026-08 API")
            && err.contains("2026-09 headers (orchestration_api.h)"),
        "{err}"
    );
}

#[test]
fn set_initial_value_is_gone_in_2026_09() {
    let dir = tempfile::tempdir().unwrap();
    let tc = toolchain(dir.path());
    let body = "void f() { uint32_t s[1] = {4}; TensorCreateInfo ci(s, 1); ci.set_initial_value(1.0f); }\n";
    let old = write(
        dir.path(),
        "old.cpp",
        &format!("#include \"pto_orchestration_api.h\"\n{body}"),
    );
    let new = write(
        dir.path(),
        "new.cpp",
        &format!("#include \"orchestration_api.h\"\n{body}"),
    );
    let orch = |p: &Path, g| CompileUnit::new(p, UnitKind::Orchestration).with_generation(g);
    tc.compile(&orch(&old, Generation::Simpler2026_08))
        .unwrap_or_else(|e| panic!("{e}"));
    let err = compile_error(&tc, &orch(&new, Generation::Simpler2026_09));
    assert!(err.contains("set_initial_value"), "{err}");
}
