//! Shared helpers: translate `.pto` files, shape the C++ exactly as PyPTO does (its
//! preprocessing of ptoas output and its kernel wrapper), compile with the project's
//! toolchain and run on the simulated chip.

#![allow(dead_code)] // each test module uses a different subset

use std::path::PathBuf;

use pto_runtime::{
    ArgDirection, ChipConfig, CoreType, HostTensor, KernelSpec, OrchArg, Platform, Program,
    ProgramSpec, RunReport, RuntimeError,
};
use pto_toolchain::{CompileUnit, CoreKind, Toolchain, UnitKind};

/// The text of `tests/data/<name>`.
pub fn data(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Translates `.pto` text with `options`, panicking with the error.
pub fn translate(text: &str, name: &str, options: &ptoas::Options) -> String {
    match ptoas::translate(text, name, options) {
        Ok(c) => c,
        Err(e) => panic!("{e}\n{}", e.excerpt().unwrap_or("")),
    }
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every match of `\bword\b` in `s`: byte offsets.
fn word_positions(s: &str, word: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = s[from..].find(word) {
        let at = from + i;
        let before = s[..at].chars().next_back();
        let after = s[at + word.len()..].chars().next();
        if !before.is_some_and(is_word) && !after.is_some_and(is_word) {
            out.push(at);
        }
        from = at + word.len();
    }
    out
}

/// PyPTO's function-name regex over raw ptoas output:
/// `(?:__global__\s+)?AICORE\s+void\s+(\w+)\s*\(`.
pub fn kernel_names(cpp: &str) -> Vec<String> {
    let mut names = Vec::new();
    for at in word_positions(cpp, "AICORE") {
        let rest = &cpp[at + "AICORE".len()..];
        let t = rest.trim_start();
        if t.len() == rest.len() {
            continue;
        }
        let Some(t2) = t.strip_prefix("void") else {
            continue;
        };
        let t3 = t2.trim_start();
        if t3.len() == t2.len() {
            continue;
        }
        let name: String = t3.chars().take_while(|c| is_word(*c)).collect();
        if name.is_empty() {
            continue;
        }
        if t3[name.len()..].trim_start().starts_with('(') {
            names.push(name);
        }
    }
    names
}

/// PyPTO's `_preprocess_ptoas_output`: drops the includes of pto-inst / cstdint / tensor.h,
/// `using namespace pto;` and `set_ffts_base_addr(` lines, rewrites
/// `[extern "C"] [__global__] AICORE void` to `static __aicore__ void` and any other
/// `AICORE` to `__aicore__`, and renames the word `Tensor` to `ChipTensor`.
pub fn pypto_preprocess(cpp: &str) -> String {
    let mut kept = String::new();
    for line in cpp.split_inclusive('\n') {
        let s = line.trim();
        if s.starts_with("#include")
            && (s.contains("pto-inst") || s.contains("cstdint") || s.contains("tensor.h"))
        {
            continue;
        }
        if s == "using namespace pto;" || s.starts_with("set_ffts_base_addr(") {
            continue;
        }
        kept.push_str(line);
    }
    // `[extern "C"] [__global__] AICORE void` -> `static __aicore__ void`.
    let mut out = String::new();
    let mut rest = kept.as_str();
    loop {
        let positions = word_positions(rest, "AICORE");
        let Some(&at) = positions.first() else {
            out.push_str(rest);
            break;
        };
        let after = &rest[at + "AICORE".len()..];
        let t = after.trim_start();
        let is_void = t.len() < after.len()
            && t.starts_with("void")
            && !t[4..].chars().next().is_some_and(is_word);
        let mut head = &rest[..at];
        if is_void {
            // Strip a preceding `__global__ ` and `extern "C" `.
            let h = head.trim_end();
            if h.len() < head.len() {
                if let Some(g) = h.strip_suffix("__global__") {
                    head = g;
                }
                if let Some(e) = head.trim_end().strip_suffix("extern \"C\"") {
                    head = e;
                }
            }
            out.push_str(head);
            out.push_str("static __aicore__ void");
            rest = &t[4..];
        } else {
            out.push_str(head);
            out.push_str("__aicore__");
            rest = after;
        }
    }
    // `\bTensor\b` -> `ChipTensor`.
    let mut renamed = String::new();
    let mut last = 0;
    for at in word_positions(&out, "Tensor") {
        renamed.push_str(&out[last..at]);
        renamed.push_str("ChipTensor");
        last = at + "Tensor".len();
    }
    renamed.push_str(&out[last..]);
    renamed
}

/// PyPTO's kernel header block.
pub const WRAPPER_HEADER: &str = r#"#include <cstdint>

#ifndef __gm__
#define __gm__
#endif

#ifndef __aicore__
#if defined(__CPU_SIM)
#define __aicore__
#else
#define __aicore__ [aicore]
#endif
#endif

#include <pto/pto-inst.hpp>
#include "tensor.h"
#include "intrinsic.h"

using namespace pto;
"#;

/// A kernel parameter as PyPTO's wrapper unpacks it.
#[derive(Clone, Copy, Debug)]
pub enum Param<'a> {
    /// A tensor argument: its C++ element type.
    Tensor(&'a str),
    /// A scalar argument: its C++ type (read from the raw 64-bit slot through a union).
    Scalar(&'a str),
}

/// The complete kernel source PyPTO writes to `kernels/aiv|aic/<func>.cpp`: header,
/// `// --- ptoas-generated code ---`, the preprocessed ptoas output, `// --- Kernel entry
/// point ---` and `kernel_entry` calling `func` with the unpacked arguments.
pub fn pypto_kernel(ptoas_cpp: &str, func: &str, params: &[Param<'_>]) -> String {
    let body = pypto_preprocess(ptoas_cpp);
    let mut entry = String::from(
        "extern \"C\" __aicore__ __attribute__((always_inline)) void kernel_entry(__gm__ int64_t* args) {\n",
    );
    let mut call = Vec::new();
    let mut tensor = 0usize;
    let n_tensors = params
        .iter()
        .filter(|p| matches!(p, Param::Tensor(_)))
        .count();
    let mut scalar = 0usize;
    for (i, p) in params.iter().enumerate() {
        match p {
            Param::Tensor(t) => {
                entry += &format!(
                    "    __gm__ ChipTensor* arg{i}_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[{tensor}]);\n    \
                     __gm__ {t}* arg{i} = reinterpret_cast<__gm__ {t}*>(arg{i}_tensor->buffer.addr) + arg{i}_tensor->start_offset;\n"
                );
                tensor += 1;
            }
            Param::Scalar(t) => {
                let slot = n_tensors + scalar;
                entry += &format!(
                    "    union {{ uint64_t u64; {t} val; }} arg{i}_conv;\n    arg{i}_conv.u64 = args[{slot}];\n    {t} arg{i} = arg{i}_conv.val;\n"
                );
                scalar += 1;
            }
        }
        call.push(format!("arg{i}"));
    }
    entry += &format!("    {func}({});\n}}\n", call.join(", "));
    format!("{WRAPPER_HEADER}\n// --- ptoas-generated code ---\n{body}\n// --- Kernel entry point ---\n{entry}")
}

/// A kernel for [`build`].
pub struct Kernel {
    pub func_id: i32,
    pub name: String,
    pub core: CoreType,
    pub source: String,
}

/// The toolchain, with one cache root for this crate's tests.
pub fn toolchain() -> Toolchain {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ptoas-cache");
    match Toolchain::discover(&root) {
        Ok(t) => t,
        Err(e) => panic!("no toolchain: {e}"),
    }
}

/// A scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("ptoas-tests")
        .join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Compiles an orchestration and kernels and loads them.
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
                name: k.name.clone(),
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

/// An orchestration submitting one task with all `n_tensors` tensors (in/out) and
/// `n_scalars` scalars: `submit` is the call (`rt_submit_aiv_task(0, p)`).
pub fn one_task(n_tensors: usize, n_scalars: usize, submit: &str) -> String {
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
    body += &format!("    {submit};\n");
    format!(
        r#"#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {{
    return PTO2OrchestrationConfig{{.expected_arg_count = {}}};
}}
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {{
    (void)orch_args;
{body}
}}
"#,
        n_tensors + n_scalars
    )
}

/// Runtime dtype codes of host tensors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dt {
    F32 = 0,
    F16 = 1,
    I32 = 2,
    Bf16 = 6,
}

impl Dt {
    fn size(self) -> usize {
        match self {
            Dt::F32 | Dt::I32 => 4,
            Dt::F16 | Dt::Bf16 => 2,
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
    pub fn zeros(dtype: Dt, shape: &[u32]) -> Buf {
        let n: usize = shape.iter().map(|&d| d as usize).product();
        Buf {
            dtype,
            shape: shape.to_vec(),
            bytes: vec![0; n * dtype.size()],
        }
    }
    pub fn f32(shape: &[u32], v: &[f32]) -> Buf {
        let mut b = Buf::zeros(Dt::F32, shape);
        assert_eq!(v.len() * 4, b.bytes.len(), "shape and data disagree");
        for (i, x) in v.iter().enumerate() {
            b.bytes[4 * i..4 * i + 4].copy_from_slice(&x.to_le_bytes());
        }
        b
    }
    pub fn i32(shape: &[u32], v: &[i32]) -> Buf {
        let mut b = Buf::zeros(Dt::I32, shape);
        assert_eq!(v.len() * 4, b.bytes.len(), "shape and data disagree");
        for (i, x) in v.iter().enumerate() {
            b.bytes[4 * i..4 * i + 4].copy_from_slice(&x.to_le_bytes());
        }
        b
    }
    pub fn bf16(shape: &[u32], v: &[f32]) -> Buf {
        let mut b = Buf::zeros(Dt::Bf16, shape);
        assert_eq!(v.len() * 2, b.bytes.len(), "shape and data disagree");
        for (i, x) in v.iter().enumerate() {
            let h = half::bf16::from_f32(*x).to_bits();
            b.bytes[2 * i..2 * i + 2].copy_from_slice(&h.to_le_bytes());
        }
        b
    }
    pub fn as_f32(&self) -> Vec<f32> {
        self.bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }
    pub fn as_i32(&self) -> Vec<i32> {
        self.bytes
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }
    pub fn as_bf16(&self) -> Vec<f32> {
        self.bytes
            .chunks_exact(2)
            .map(|c| half::bf16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f32())
            .collect()
    }
    pub fn as_bf16_bits(&self) -> Vec<u16> {
        self.bytes
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect()
    }
}

/// A default configuration for `platform`.
pub fn config(platform: Platform) -> ChipConfig {
    ChipConfig::new(platform).unwrap()
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

/// Runs on a2a3sim and panics on failure.
pub fn run(program: &Program, bufs: &mut [Buf], scalars: &[u64]) {
    if let Err(e) = run_with(program, bufs, scalars, &config(Platform::A2a3Sim)) {
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
