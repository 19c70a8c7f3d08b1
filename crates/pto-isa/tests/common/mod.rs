//! Shared helpers: build PyPTO-style kernels with the project's toolchain and run them on
//! the simulated chip through `pto_runtime::run`.

#![allow(dead_code)] // each test module uses a different subset

use std::path::PathBuf;

use pto_runtime::{
    ArgDirection, ChipConfig, CoreType, HostTensor, KernelSpec, OrchArg, Platform, Program,
    ProgramSpec, RunReport, RuntimeError,
};
use pto_toolchain::{CompileUnit, CoreKind, Toolchain, UnitKind};

/// A kernel source for [`build`].
pub struct Kernel {
    pub func_id: i32,
    pub name: &'static str,
    pub core: CoreType,
    pub source: String,
}

impl Kernel {
    /// An AIV kernel.
    pub fn aiv(func_id: i32, name: &'static str, source: String) -> Kernel {
        Kernel {
            func_id,
            name,
            core: CoreType::Aiv,
            source,
        }
    }
    /// An AIC kernel.
    pub fn aic(func_id: i32, name: &'static str, source: String) -> Kernel {
        Kernel {
            func_id,
            name,
            core: CoreType::Aic,
            source,
        }
    }
}

/// The toolchain, with one cache root for every test of this crate.
pub fn toolchain() -> Toolchain {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pto-isa-cache");
    match Toolchain::discover(&root) {
        Ok(t) => t,
        Err(e) => panic!("no toolchain: {e}"),
    }
}

/// A scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("pto-isa-programs")
        .join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Compiles an orchestration and kernels (written to a scratch dir) and loads them.
pub fn build(name: &str, orchestration: &str, kernels: &[Kernel]) -> Program {
    let dir = scratch(name);
    let tc = toolchain();
    let orch_path = dir.join(format!("{name}_orch.cpp"));
    std::fs::write(&orch_path, orchestration).unwrap();
    let mut units = vec![CompileUnit::new(orch_path, UnitKind::Orchestration)];
    for k in kernels {
        let p = dir.join(format!("{}.cpp", k.name));
        std::fs::write(&p, &k.source).unwrap();
        let kind = match k.core {
            CoreType::Aic => CoreKind::Aic,
            CoreType::Aiv => CoreKind::Aiv,
        };
        units.push(CompileUnit::new(p, UnitKind::Kernel(kind)));
    }
    let mut objects = Vec::new();
    for r in tc.compile_all(&units) {
        match r {
            Ok(o) => objects.push(o.so_path),
            Err(e) => panic!("{e}"),
        }
    }
    let spec = ProgramSpec {
        orchestration_so: objects[0].clone(),
        entry_symbol: "aicpu_orchestration_entry".to_string(),
        config_symbol: None,
        kernels: kernels
            .iter()
            .zip(&objects[1..])
            .map(|(k, so)| KernelSpec {
                func_id: k.func_id,
                name: k.name.to_string(),
                core_type: k.core,
                so_path: so.clone(),
            })
            .collect(),
    };
    match Program::load(&spec) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

/// Compiles one kernel source and returns the compiler's error output (panics if it compiles).
pub fn compile_error(name: &str, source: &str, core: CoreKind) -> String {
    let dir = scratch(name);
    let path = dir.join(format!("{name}.cpp"));
    std::fs::write(&path, source).unwrap();
    match toolchain().compile(&CompileUnit::new(path, UnitKind::Kernel(core))) {
        Ok(_) => panic!("{name}: expected a compile error"),
        Err(e) => e.to_string(),
    }
}

/// Compiles one kernel source (panics with the compiler output if it does not compile).
pub fn compile_ok(name: &str, source: &str, core: CoreKind) {
    let dir = scratch(name);
    let path = dir.join(format!("{name}.cpp"));
    std::fs::write(&path, source).unwrap();
    if let Err(e) = toolchain().compile(&CompileUnit::new(path, UnitKind::Kernel(core))) {
        panic!("{e}");
    }
}

/// A default a2a3sim configuration.
pub fn config() -> ChipConfig {
    ChipConfig::new(Platform::A2a3Sim).unwrap()
}

/// The orchestration exports, then `body` as the entry's body.
pub fn orchestration(expected_args: usize, body: &str) -> String {
    format!(
        r#"#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {{
    return PTO2OrchestrationConfig{{.expected_arg_count = {expected_args}}};
}}
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {{
    (void)orch_args;
{body}
}}
"#
    )
}

/// An orchestration submitting one task that takes all `n_tensors` tensors (in/out) and
/// `n_scalars` scalars of the orchestration: `submit` is the call, e.g.
/// `rt_submit_aiv_task(0, p)`, after `launch` (e.g. `p.launch_spec.set_block_num(4);`).
pub fn one_task(n_tensors: usize, n_scalars: usize, launch: &str, submit: &str) -> String {
    let mut body = String::new();
    for i in 0..n_tensors {
        body += &format!("    ChipTensor t{i} = orch_args.tensor({i}).ref();\n");
    }
    body += "    CoreTaskArgs p;\n";
    if n_tensors > 0 {
        let names: Vec<String> = (0..n_tensors).map(|i| format!("t{i}")).collect();
        body += &format!("    p.add_inout({});\n", names.join(", "));
    }
    for i in 0..n_scalars {
        body += &format!("    p.add_scalar(orch_args.scalar({i}));\n");
    }
    body += &format!("    {launch}\n    {submit};\n");
    orchestration(n_tensors + n_scalars, &body)
}

/// Element types of host tensors (runtime dtype codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dt {
    F32 = 0,
    F16 = 1,
    I32 = 2,
    I16 = 3,
    I8 = 4,
    U8 = 5,
    Bf16 = 6,
    U32 = 10,
}

impl Dt {
    fn size(self) -> usize {
        match self {
            Dt::F32 | Dt::I32 | Dt::U32 => 4,
            Dt::F16 | Dt::I16 | Dt::Bf16 => 2,
            Dt::I8 | Dt::U8 => 1,
        }
    }
}

/// A host tensor that owns its bytes.
pub struct Buf {
    pub dtype: Dt,
    pub shape: Vec<u32>,
    pub bytes: Vec<u8>,
}

impl Buf {
    /// Zeros.
    pub fn zeros(dtype: Dt, shape: &[u32]) -> Buf {
        let n: usize = shape.iter().map(|&d| d as usize).product();
        Buf {
            dtype,
            shape: shape.to_vec(),
            bytes: vec![0; n * dtype.size()],
        }
    }
    /// From f32 values.
    pub fn f32(shape: &[u32], v: &[f32]) -> Buf {
        Self::from_words(Dt::F32, shape, v.iter().map(|x| x.to_bits()))
    }
    /// From i32 values.
    pub fn i32(shape: &[u32], v: &[i32]) -> Buf {
        Self::from_words(Dt::I32, shape, v.iter().map(|x| *x as u32))
    }
    /// From u32 values.
    pub fn u32(shape: &[u32], v: &[u32]) -> Buf {
        Self::from_words(Dt::U32, shape, v.iter().copied())
    }
    /// From 16-bit encodings (bf16, f16 or i16).
    pub fn u16(dtype: Dt, shape: &[u32], v: &[u16]) -> Buf {
        let mut b = Buf::zeros(dtype, shape);
        assert_eq!(v.len() * 2, b.bytes.len());
        for (i, x) in v.iter().enumerate() {
            b.bytes[2 * i..2 * i + 2].copy_from_slice(&x.to_le_bytes());
        }
        b
    }
    /// From i8 values.
    pub fn i8(shape: &[u32], v: &[i8]) -> Buf {
        let mut b = Buf::zeros(Dt::I8, shape);
        assert_eq!(v.len(), b.bytes.len());
        for (i, x) in v.iter().enumerate() {
            b.bytes[i] = *x as u8;
        }
        b
    }
    fn from_words(dtype: Dt, shape: &[u32], words: impl Iterator<Item = u32>) -> Buf {
        let mut b = Buf::zeros(dtype, shape);
        let mut n = 0;
        for (i, w) in words.enumerate() {
            b.bytes[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
            n += 1;
        }
        assert_eq!(n * 4, b.bytes.len(), "shape and data disagree");
        b
    }
    /// As f32 values.
    pub fn as_f32(&self) -> Vec<f32> {
        self.words().map(f32::from_bits).collect()
    }
    /// As i32 values.
    pub fn as_i32(&self) -> Vec<i32> {
        self.words().map(|w| w as i32).collect()
    }
    /// As u32 values.
    pub fn as_u32(&self) -> Vec<u32> {
        self.words().collect()
    }
    /// As 16-bit encodings.
    pub fn as_u16(&self) -> Vec<u16> {
        self.bytes
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect()
    }
    /// As i8 values.
    pub fn as_i8(&self) -> Vec<i8> {
        self.bytes.iter().map(|b| *b as i8).collect()
    }
    fn words(&self) -> impl Iterator<Item = u32> + '_ {
        self.bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
    }
}

/// Runs `program` with `bufs` as in/out tensors followed by `scalars`.
pub fn run_with(
    program: &Program,
    bufs: &mut [Buf],
    scalars: &[u64],
    config: &ChipConfig,
) -> Result<RunReport, RuntimeError> {
    let mut args: Vec<OrchArg<'_>> = bufs
        .iter_mut()
        .map(|b| {
            OrchArg::Tensor(HostTensor {
                direction: ArgDirection::InOut,
                dtype: b.dtype as u8,
                shape: b.shape.clone(),
                data: &mut b.bytes,
            })
        })
        .collect();
    args.extend(scalars.iter().map(|s| OrchArg::Scalar(*s)));
    pto_runtime::run(program, &mut args, config)
}

/// Runs and panics on failure.
pub fn run(program: &Program, bufs: &mut [Buf], scalars: &[u64]) {
    if let Err(e) = run_with(program, bufs, scalars, &config()) {
        panic!("run failed: {e}");
    }
}

/// Deterministic pseudo-random values in [-scale, scale).
pub fn values(n: usize, seed: u32, scale: f32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(2_654_435_761).wrapping_add(12345);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s as f32 / u32::MAX as f32 * 2.0 - 1.0) * scale
        })
        .collect()
}

/// Asserts `got` is within `rel` relative (or `abs` absolute) error of `want`.
pub fn assert_close(what: &str, got: &[f32], want: &[f32], rel: f32, abs: f32) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = (g - w).abs() <= abs + rel * w.abs() || (g.is_nan() && w.is_nan());
        assert!(ok, "{what}[{i}]: got {g}, want {w}");
    }
}

/// Asserts bit equality of f32 results.
pub fn assert_bits(what: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
            "{what}[{i}]: got {g} ({:#x}), want {w} ({:#x})",
            g.to_bits(),
            w.to_bits()
        );
    }
}
