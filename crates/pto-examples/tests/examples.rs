//! End to end: generate the example build directories, compile them with the project's
//! toolchain, run them on the simulated chip (`a2a3sim`) and on `cpu`, and compare every
//! output with `data/out/*.npy`. Also checks the PyPTO layout of the generated files, that
//! generation is deterministic, the tile library's self-test, and (when NumPy is installed)
//! that `golden.py` reproduces `data/out`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use pto_build_output::{
    compare, read_npy, read_tolerances, CompiledMeta, KernelConfig, NpyArray, ParamDirection,
    Tolerances,
};
use pto_examples::Example;
use pto_runtime::{
    ArgDirection, ChipConfig, CoreType, HostTensor, KernelSpec, OrchArg, Platform, Program,
    ProgramSpec,
};
use pto_toolchain::{detect_generation, CompileUnit, CoreKind, Generation, Toolchain, UnitKind};

fn tmp_root() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pto-examples")
}

/// Generates every example into a fresh directory named `tag`.
fn generate_into(tag: &str) -> PathBuf {
    let dir = tmp_root().join(format!("{tag}-{}", std::process::id()));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    pto_examples::generate(&dir).unwrap_or_else(|e| panic!("generate: {e}"));
    dir
}

/// The examples generated once for this test process.
fn generated() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| generate_into("generated"))
}

fn example(name: &str) -> Example {
    let all = pto_examples::examples().unwrap();
    all.into_iter().find(|e| e.name == name).unwrap()
}

fn toolchain() -> Toolchain {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pto-cache");
    Toolchain::discover(&root).unwrap_or_else(|e| panic!("no toolchain: {e}"))
}

/// Compiles and loads a build directory the way a runner would: from its kernel_config.py.
fn load_program(dir: &Path) -> Program {
    let config =
        KernelConfig::load(&dir.join("kernel_config.py")).unwrap_or_else(|e| panic!("{e}"));
    let mut units = vec![CompileUnit::new(
        &config.orchestration.source,
        UnitKind::Orchestration,
    )];
    for k in &config.kernels {
        let core = match k.core_type {
            pto_build_output::CoreType::Aic => CoreKind::Aic,
            pto_build_output::CoreType::Aiv => CoreKind::Aiv,
        };
        units.push(CompileUnit::new(&k.source, UnitKind::Kernel(core)));
    }
    // The Simpler generation of the sources decides the include roots, as in a replay.
    let sources: Vec<&Path> = units.iter().map(|u| u.source.as_path()).collect();
    let generation = detect_generation(&sources).unwrap_or_else(|e| panic!("{e}"));
    let units: Vec<CompileUnit> = units
        .into_iter()
        .map(|u| u.with_generation(generation))
        .collect();
    let objects: Vec<PathBuf> = toolchain()
        .compile_all(&units)
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("{e}")).so_path)
        .collect();
    let spec = ProgramSpec {
        orchestration_so: objects[0].clone(),
        entry_symbol: config.orchestration.function_name.clone(),
        config_symbol: config.orchestration.config_name.clone(),
        kernels: config
            .kernels
            .iter()
            .zip(&objects[1..])
            .map(|(k, so)| KernelSpec {
                func_id: k.func_id,
                name: k.name.clone(),
                core_type: match k.core_type {
                    pto_build_output::CoreType::Aic => CoreType::Aic,
                    pto_build_output::CoreType::Aiv => CoreType::Aiv,
                },
                so_path: so.clone(),
            })
            .collect(),
    };
    Program::load(&spec).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs a loaded build directory once on `platform`: binds `data/in/*.npy` in parameter order
/// (pure outputs zero-filled, scalars from the example), runs, and compares every Out / InOut
/// tensor with `data/out/*.npy` (within the tolerances, or bit for bit when `bit_exact`).
/// Returns the number of tasks submitted.
fn run_and_check(
    dir: &Path,
    program: &Program,
    ex: &Example,
    platform: Platform,
    bit_exact: bool,
) -> u64 {
    let meta = CompiledMeta::load(dir).unwrap_or_else(|e| panic!("{e}"));
    let tol = read_tolerances(&dir.join("golden.py")).unwrap_or_else(|e| panic!("{e}"));

    // Host buffers first (the OrchArgs borrow them).
    let mut buffers: Vec<(usize, NpyArray)> = Vec::new();
    for (i, p) in meta.params.iter().enumerate() {
        if p.is_scalar() {
            continue;
        }
        let dtype = p.host_dtype().unwrap();
        let shape: Vec<usize> = p
            .shape
            .as_ref()
            .unwrap()
            .iter()
            .map(|&d| d as usize)
            .collect();
        let array = if p.direction == ParamDirection::Out {
            NpyArray::zeros(dtype, &shape).unwrap()
        } else {
            let a = read_npy(&dir.join("data/in").join(format!("{}.npy", p.name))).unwrap();
            assert_eq!(
                (a.dtype, &a.shape),
                (dtype, &shape),
                "{}: data/in does not match compiled_meta",
                p.name
            );
            a
        };
        buffers.push((i, array));
    }
    let mut tensors: BTreeMap<usize, &mut NpyArray> =
        buffers.iter_mut().map(|(i, a)| (*i, a)).collect();
    let mut args: Vec<OrchArg<'_>> = Vec::new();
    for (i, p) in meta.params.iter().enumerate() {
        if p.is_scalar() {
            continue;
        }
        let array = tensors.remove(&i).unwrap();
        args.push(OrchArg::Tensor(HostTensor {
            direction: match p.direction {
                ParamDirection::In => ArgDirection::In,
                ParamDirection::Out => ArgDirection::Out,
                ParamDirection::InOut => ArgDirection::InOut,
            },
            dtype: array.dtype.runtime_code(),
            shape: array.shape.iter().map(|&d| d as u32).collect(),
            data: &mut array.data,
        }));
    }
    for p in meta.params.iter().filter(|p| p.is_scalar()) {
        let value = ex
            .params
            .iter()
            .find(|q| q.name == p.name)
            .and_then(|q| q.scalar_value())
            .unwrap();
        args.push(OrchArg::Scalar(value.bits()));
    }

    let config = ChipConfig::new(platform).unwrap();
    let report = pto_runtime::run(program, &mut args, &config)
        .unwrap_or_else(|e| panic!("{} on {}: {e}", ex.name, platform.name()));
    drop(args);

    for (i, actual) in &buffers {
        let p = &meta.params[*i];
        if p.direction == ParamDirection::In {
            continue;
        }
        let golden = read_npy(&dir.join("data/out").join(format!("{}.npy", p.name))).unwrap();
        let cmp = compare(actual, &golden, tol).unwrap();
        eprintln!(
            "{} on {}: {}: max |actual - golden| = {:e} over {} elements",
            ex.name,
            platform.name(),
            p.name,
            cmp.max_abs_diff,
            cmp.n_total
        );
        assert!(
            cmp.passed(),
            "{} on {}:\n{}",
            ex.name,
            platform.name(),
            cmp.report(&p.name)
        );
        if bit_exact {
            assert!(
                actual.data == golden.data,
                "{} on {}: {} is within the tolerances but not bit for bit the golden",
                ex.name,
                platform.name(),
                p.name
            );
        }
    }
    report.n_tasks
}

/// The examples whose kernels are PTO-ISA kernels in PyPTO's shape. Their goldens repeat
/// every rounding of the kernels in the same order, so the kernels reproduce them bit for bit
/// (the tolerances only absorb NumPy's reordering in `golden.py`).
const PTO_ISA_EXAMPLES: &[&str] = &["paged_attn_bf16", "softmax", "mixed_pipe"];

fn check_example(name: &str) {
    let ex = example(name);
    let dir = generated().join(name);
    let program = load_program(&dir);
    let exact = PTO_ISA_EXAMPLES.contains(&name);
    let mut platforms = vec![Platform::A2a3Sim, Platform::Cpu];
    if exact {
        // The PTO-ISA kernels also run on the A5 simulator (larger UB and L0C, same results).
        platforms.push(Platform::A5Sim);
    }
    for platform in platforms {
        let tasks = run_and_check(&dir, &program, &ex, platform, exact);
        assert_eq!(
            tasks,
            ex.expected_tasks,
            "{name}: tasks submitted on {}",
            platform.name()
        );
    }
}

#[test]
fn vector_add_matches_golden() {
    check_example("vector_add");
}

#[test]
fn bgemm_matches_golden() {
    check_example("bgemm");
}

#[test]
fn vector_add_2026_09_matches_golden() {
    check_example("vector_add_2026_09");
}

#[test]
fn bgemm_2026_09_matches_golden() {
    check_example("bgemm_2026_09");
}

/// The twins are of the 2026-09 generation and their originals of 2026-08, as a replay
/// detects them from their sources.
#[test]
fn twins_are_detected_as_2026_09() {
    for (name, want) in [
        ("vector_add", Generation::Simpler2026_08),
        ("bgemm", Generation::Simpler2026_08),
        ("vector_add_2026_09", Generation::Simpler2026_09),
        ("bgemm_2026_09", Generation::Simpler2026_09),
    ] {
        let ex = example(name);
        let dir = generated().join(name);
        let mut sources = vec![dir.join(ex.orchestration_relative_path())];
        sources.extend(ex.kernels.iter().map(|k| dir.join(k.relative_path())));
        let refs: Vec<&Path> = sources.iter().map(PathBuf::as_path).collect();
        assert_eq!(detect_generation(&refs).unwrap(), want, "{name}");
    }
}

#[test]
fn paged_attention_matches_golden() {
    check_example("paged_attention");
}

#[test]
fn paged_attn_bf16_matches_golden() {
    check_example("paged_attn_bf16");
}

#[test]
fn softmax_matches_golden() {
    check_example("softmax");
}

#[test]
fn mixed_pipe_matches_golden() {
    check_example("mixed_pipe");
}

#[test]
fn task_counts() {
    let counts: Vec<(&str, u64)> = pto_examples::examples()
        .unwrap()
        .iter()
        .map(|e| (e.name, e.expected_tasks))
        .collect();
    assert_eq!(
        counts,
        vec![
            ("vector_add", 8),
            ("bgemm", 128),
            ("vector_add_2026_09", 8),
            ("bgemm_2026_09", 128),
            ("paged_attention", 80),
            ("paged_attn_bf16", 31),
            ("softmax", 4),
            ("mixed_pipe", 2),
        ]
    );
}

/// Every file under `dir`, relative, sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// PyPTO creates no empty directories (e.g. no `kernels/aic/` without cube kernels).
fn assert_no_empty_dirs(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            assert!(
                std::fs::read_dir(&path).unwrap().next().is_some(),
                "{} is empty",
                path.display()
            );
            assert_no_empty_dirs(&path);
        }
    }
}

#[test]
fn generation_is_deterministic() {
    let a = generate_into("determinism-a");
    let b = generate_into("determinism-b");
    // Generating over existing files gives the same bytes too.
    let written = pto_examples::generate(&b).unwrap();
    let files = files_under(&a);
    assert_eq!(files, files_under(&b));
    let mut reported: Vec<PathBuf> = written
        .iter()
        .map(|p| p.strip_prefix(&b).unwrap().to_path_buf())
        .collect();
    reported.sort();
    assert_eq!(
        files, reported,
        "generate() reports exactly the files it writes"
    );
    for f in &files {
        assert!(
            std::fs::read(a.join(f)).unwrap() == std::fs::read(b.join(f)).unwrap(),
            "{} differs",
            f.display()
        );
    }
}

#[test]
fn build_directories_follow_the_pypto_layout() {
    let root = generated();
    for ex in pto_examples::examples().unwrap() {
        let dir = root.join(ex.name);
        let mut expected = vec![
            PathBuf::from("compiled_meta.json"),
            PathBuf::from("debug/run.py"),
            PathBuf::from("golden.py"),
            PathBuf::from("kernel_config.py"),
            ex.orchestration_relative_path(),
        ];
        for k in &ex.kernels {
            expected.push(k.relative_path());
        }
        for unit in ex.ptoas_units().unwrap() {
            expected.push(PathBuf::from(format!("ptoas/{}.pto", unit.name)));
            expected.push(PathBuf::from(format!("ptoas/{}.cpp", unit.name)));
        }
        for p in &ex.params {
            if p.scalar_value().is_some() {
                // Scalars are stored as 0-d arrays for tools without Python.
                expected.push(PathBuf::from(format!("data/in/{}.npy", p.name)));
            }
            if let Some(t) = p.tensor() {
                if t.input.is_some() {
                    expected.push(PathBuf::from(format!("data/in/{}.npy", p.name)));
                }
                if t.golden.is_some() {
                    expected.push(PathBuf::from(format!("data/out/{}.npy", p.name)));
                }
                // Pure outputs have no data/in file; pure inputs no data/out file.
                assert_eq!(
                    t.input.is_some(),
                    p.direction != ParamDirection::Out,
                    "{}",
                    p.name
                );
                assert_eq!(
                    t.golden.is_some(),
                    p.direction != ParamDirection::In,
                    "{}",
                    p.name
                );
            }
        }
        expected.sort();
        assert_eq!(files_under(&dir), expected, "{}", ex.name);
        assert_no_empty_dirs(&dir);

        // debug/run.py replays through pypto with the example's parameters and platform.
        let run_py = std::fs::read_to_string(dir.join("debug/run.py")).unwrap();
        assert_eq!(run_py, ex.run_script(), "{}", ex.name);
        let names: Vec<&str> = ex.params.iter().map(|p| p.name).collect();
        assert!(
            run_py.contains(&format!("def _user_compare({}):", names.join(", "))),
            "{}",
            ex.name
        );
        assert!(run_py.contains("from pypto.runtime.debug.replay import _main"));
        assert!(run_py.contains("default_platform=\"a2a3sim\","));

        // The orchestration header PyPTO writes.
        let orch = std::fs::read_to_string(dir.join(ex.orchestration_relative_path())).unwrap();
        assert!(
            orch.starts_with(&format!(
                "// Orchestration Function: {}\n// Generated by PyPTO IR Compiler\n\n",
                ex.name
            )),
            "{}",
            ex.name
        );
        let scope = if ex.name.ends_with("_2026_09") {
            "SIMPLER_SCOPE("
        } else {
            "PTO2_SCOPE()"
        };
        for needle in [
            "aicpu_orchestration_config",
            ".expected_arg_count",
            "aicpu_orchestration_entry(const ChipTaskArgs& orch_args)",
            scope,
            "CoreTaskArgs params_t0;",
        ] {
            assert!(
                orch.contains(needle),
                "{}: orchestration lacks {needle}",
                ex.name
            );
        }

        // Kernel wrappers: header, sentinels in order, static body, kernel_entry after the end sentinel.
        for k in &ex.kernels {
            let text = std::fs::read_to_string(dir.join(k.relative_path())).unwrap();
            assert!(
                text.starts_with(&format!("// Kernel Function: {}\n", k.name)),
                "{}",
                k.name
            );
            let begin = text
                .find("\n// --- ptoas-generated code ---\n")
                .expect("begin sentinel");
            let end = text
                .find("\n// --- Kernel entry point ---\n")
                .expect("end sentinel");
            let body = &text[begin..end];
            let entry = text
                .find("extern \"C\" void kernel_entry(int64_t* args) {")
                .or_else(|| text.find(PYPTO_KERNEL_ENTRY))
                .expect("kernel_entry");
            assert!(begin < end && end < entry, "{}", k.name);
            assert!(
                body.contains(&format!("static __aicore__ void {}(", k.name)),
                "{}: static body",
                k.name
            );
            assert!(
                text[entry..].contains(&format!("{}(", k.name)),
                "{}: entry calls the body",
                k.name
            );
        }

        // kernel_config.py reads back as what was written, with absolute sources.
        let config = KernelConfig::load(&dir.join("kernel_config.py")).unwrap();
        let mut again = ex.kernel_config();
        again.orchestration.source = dir.join(&again.orchestration.source);
        for k in &mut again.kernels {
            k.source = dir.join(&k.source);
        }
        assert_eq!(config, again, "{}", ex.name);
        let text = std::fs::read_to_string(dir.join("kernel_config.py")).unwrap();
        assert!(text.contains(&format!(
            "\"source\": str(_ROOT_DIR / \"orchestration\" / \"{}.cpp\"),",
            ex.name
        )));

        assert_eq!(
            CompiledMeta::load(&dir).unwrap(),
            ex.compiled_meta(),
            "{}",
            ex.name
        );
        assert_eq!(
            read_tolerances(&dir.join("golden.py")).unwrap(),
            Tolerances {
                rtol: ex.rtol,
                atol: ex.atol
            },
            "{}",
            ex.name
        );
    }
}

/// `kernel_entry` as PyPTO's kernel wrapper declares it.
const PYPTO_KERNEL_ENTRY: &str =
    "extern \"C\" __aicore__ __attribute__((always_inline)) void kernel_entry(__gm__ int64_t *args) {";

/// The PTO-ISA kernels have PyPTO's wrapper shape: the header block, the two sentinels, the
/// ptoas helpers and a body in ptoas's output form, a `kernel_entry` that unpacks
/// `ChipTensor`s and forwards to the body of its core type.
#[test]
fn pto_isa_kernels_have_the_pypto_wrapper_shape() {
    let header = "\n#include <cstdint>\n\n#ifndef __gm__\n#define __gm__\n#endif\n\n#ifndef __aicore__\n\
                  #if defined(__CPU_SIM)\n#define __aicore__\n#else\n#define __aicore__ [aicore]\n#endif\n#endif\n\n\
                  #include <pto/pto-inst.hpp>\n#include \"tensor.h\"\n#include \"intrinsic.h\"\n\n\
                  using namespace pto;\n\n// --- ptoas-generated code ---\n";
    for name in PTO_ISA_EXAMPLES {
        let ex = example(name);
        for k in &ex.kernels {
            let text = k.source.as_str();
            let first_line = format!("// Kernel Function: {}\n", k.name);
            assert!(
                text.starts_with(&format!("{first_line}{header}")),
                "{}: header block",
                k.name
            );
            let (body, entry) = text
                .split_once("\n// --- Kernel entry point ---\n")
                .expect("end sentinel");
            for helper in [
                "PTOAS__GLOBAL_TENSOR_DATA(",
                "enum class PTOAutoSyncTailMode",
                "static AICORE inline void ptoas_auto_sync_tail(",
                "PTOAS__DCCI_SINGLE_CACHE_LINE(",
            ] {
                assert!(body.contains(helper), "{}: ptoas helper {helper}", k.name);
            }
            let guard = match k.core_type {
                pto_build_output::CoreType::Aic => "#if defined(__DAV_CUBE__)",
                pto_build_output::CoreType::Aiv => "#if defined(__DAV_VEC__)",
            };
            for needle in [
                guard,
                "// pto: %",
                "const int64_t v",
                "TASSIGN(v",
                "pto::Shape<1, 1, 1, ",
                "pto::Layout::",
                "ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);\n  return;\n}",
            ] {
                assert!(body.contains(needle), "{}: body lacks {needle}", k.name);
            }
            if k.core_type == pto_build_output::CoreType::Aiv {
                assert!(
                    body.contains("#if defined(__DAV_VEC__)\n  set_mask_norm();\n  set_vector_mask(-1, -1);\n"),
                    "{}: vector bodies start with the mask calls",
                    k.name
                );
            }
            assert!(
                entry.starts_with(PYPTO_KERNEL_ENTRY),
                "{}: kernel_entry",
                k.name
            );
            assert!(
                entry.contains("reinterpret_cast<__gm__ ChipTensor *>(args[")
                    && entry.contains("->buffer.addr) + ")
                    && entry.contains("->start_offset"),
                "{}: ChipTensor unpacking",
                k.name
            );
            assert!(
                entry.contains(&format!("    {}(", k.name)),
                "{}: kernel_entry forwards to its own body",
                k.name
            );
        }
    }
}

/// The mixed kernel: one ptoas unit with both functions in each file (each entry forwards to
/// the function of its directory), PyPTO's TPUSH / TPOP / TFREE with a split axis, submitted
/// as a MIX task.
#[test]
fn mixed_pipe_is_one_ptoas_unit_in_both_kernel_files() {
    let ex = example("mixed_pipe");
    let bodies: Vec<&str> = ex
        .kernels
        .iter()
        .map(|k| {
            let (_, after) = k
                .source
                .split_once("// --- ptoas-generated code ---\n")
                .unwrap();
            after
                .split_once("\n// --- Kernel entry point ---\n")
                .unwrap()
                .0
        })
        .collect();
    assert_eq!(
        bodies[0], bodies[1],
        "both files hold the same ptoas output"
    );
    for needle in [
        "static __aicore__ void matmul_relu_aic(",
        "static __aicore__ void matmul_relu_aiv(",
        "TPUSH<TPipe<0, Direction::DIR_C2V, 8192, 2, 2, false>,",
        "TileSplitAxis::TILE_UP_DOWN>(",
        "TFREE<TPipe<0, Direction::DIR_C2V, 8192, 2, 2, false>, TileSplitAxis::TILE_UP_DOWN>(",
    ] {
        assert!(bodies[0].contains(needle), "mixed_pipe lacks {needle}");
    }
    let orch = ex.orchestration_source;
    assert!(orch.contains("rt_submit_task(MixedKernels{0, 1, 1}, params_t0);"));
}

#[test]
fn compiled_meta_of_paged_attention_has_the_scalar_last() {
    let meta = CompiledMeta::load(&generated().join("paged_attention")).unwrap();
    let names: Vec<&str> = meta.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "query",
            "key_cache",
            "value_cache",
            "block_table",
            "context_lens",
            "out",
            "scale"
        ]
    );
    let scale = &meta.params[6];
    assert_eq!((scale.shape.as_ref(), scale.dtype.as_str()), (None, "fp32"));
    assert_eq!(meta.params[3].dtype, "int32");
    assert_eq!(meta.num_return_types, 1);
    assert_eq!(meta.platform.as_deref(), Some("a2a3sim"));
}

fn python_with_numpy() -> Option<&'static str> {
    let ok = Command::new("python3")
        .args(["-c", "import numpy"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    ok.then_some("python3")
}

const GOLDEN_CHECK: &str = r#"
import importlib.util, sys
import numpy as np
d = sys.argv[1]
spec = importlib.util.spec_from_file_location("golden", d + "/golden.py")
g = importlib.util.module_from_spec(spec)
spec.loader.exec_module(g)
inputs = g.generate_inputs({"name": "Default"})
tensors = dict(inputs)
g.compute_golden(tensors, {"name": "Default"})
for name in g.__outputs__:
    want = np.load(d + "/data/out/" + name + ".npy")
    got = tensors[name]
    assert got.dtype == want.dtype and got.shape == want.shape, name
    assert np.allclose(got, want, rtol=g.RTOL, atol=g.ATOL), (name, float(np.abs(got - want).max()))
print("ok")
"#;

#[test]
fn golden_py_reproduces_data_out_with_numpy() {
    let Some(python) = python_with_numpy() else {
        eprintln!("skipping golden_py_reproduces_data_out_with_numpy: python3 with numpy is not installed");
        return;
    };
    for ex in pto_examples::examples().unwrap() {
        let dir = generated().join(ex.name);
        let out = Command::new(python)
            .arg("-c")
            .arg(GOLDEN_CHECK)
            .arg(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: golden.py check failed:\n{}{}",
            ex.name,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Compiles `args` with the toolchain's compiler; panics with its output on failure.
fn cxx(args: &[&std::ffi::OsStr]) {
    let tc = toolchain();
    let out = Command::new(tc.compiler()).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{} {:?} failed:\n{}",
        tc.compiler().display(),
        args,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn tile_library_selftest() {
    let tc = toolchain();
    let include = format!("-I{}", tc.include_dir().display());
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tile_selftest.cpp");
    let exe = tmp_root().join(format!("tile_selftest-{}", std::process::id()));
    std::fs::create_dir_all(tmp_root()).unwrap();
    let flags = ["-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-o"];
    let mut args: Vec<&std::ffi::OsStr> = flags.iter().map(|f| f.as_ref()).collect();
    args.extend([exe.as_os_str(), include.as_ref(), src.as_os_str()]);
    cxx(&args);
    let out = Command::new(&exe).output().unwrap();
    assert!(
        out.status.success(),
        "tile self-test failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok\n");
}

#[test]
fn example_sources_compile_without_warnings() {
    let tc = toolchain();
    let cpp = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut sources = files_under(&cpp);
    sources.retain(|p| {
        p.extension().is_some_and(|e| e == "cpp")
            && (p.components().any(|c| c.as_os_str() == "kernels")
                || p.components().any(|c| c.as_os_str() == "orchestration"))
    });
    // Every example contributes its orchestration and kernels (a filter that matched
    // nothing of one would silently skip it).
    for entry in std::fs::read_dir(&cpp).unwrap() {
        let entry = entry.unwrap();
        if !entry.file_type().unwrap().is_dir() {
            continue;
        }
        let name = entry.file_name();
        let of_example = |part: &str| {
            sources.iter().any(|p| {
                p.components().next().is_some_and(|c| c.as_os_str() == name)
                    && p.components().any(|c| c.as_os_str() == part)
            })
        };
        assert!(
            of_example("kernels") && of_example("orchestration"),
            "{name:?}: no kernel or orchestration source found in {sources:?}"
        );
    }
    let isa_include = format!("-I{}", tc.isa_include_dir().display());
    let include_root = tc.include_dir().parent().unwrap().to_path_buf();
    // Each example's generation, detected once from all its sources, as a build does.
    let mut generations = std::collections::HashMap::new();
    for rel in &sources {
        let src = cpp.join(rel);
        let example = rel.components().next().unwrap().as_os_str().to_owned();
        let generation = *generations.entry(example.clone()).or_insert_with(|| {
            let of_example: Vec<PathBuf> = sources
                .iter()
                .filter(|p| {
                    p.components()
                        .next()
                        .is_some_and(|c| c.as_os_str() == example)
                })
                .map(|p| cpp.join(p))
                .collect();
            let refs: Vec<&Path> = of_example.iter().map(PathBuf::as_path).collect();
            detect_generation(&refs).unwrap()
        });
        let includes: Vec<String> = generation
            .include_subdirs()
            .iter()
            .map(|sub| format!("-I{}", include_root.join(sub).display()))
            .collect();
        let mut flags = vec![
            "-std=c++17",
            "-fsyntax-only",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-D__CPU_SIM",
            "-DPTO_CPU_SIM",
        ];
        let text = std::fs::read_to_string(&src).unwrap();
        if text.contains("#include <pto/pto-inst.hpp>") {
            // A PTO-ISA kernel, compiled as the toolchain does (the core macro of its
            // directory). ptoas declares every parameter outside the core-type guard, so the
            // other core's function of a mixed kernel (and SPMD identity a body does not
            // read) leaves parameters unused.
            flags.push(if rel.components().any(|c| c.as_os_str() == "aic") {
                "-D__DAV_CUBE__"
            } else {
                "-D__DAV_VEC__"
            });
            flags.push("-Wno-unused-parameter");
        }
        let mut args: Vec<&std::ffi::OsStr> = flags.iter().map(|f| f.as_ref()).collect();
        args.extend(includes.iter().map(std::ffi::OsStr::new));
        args.extend([isa_include.as_ref(), src.as_os_str()]);
        cxx(&args);
    }
}

#[test]
fn committed_examples_are_what_the_generator_writes() {
    let fresh = generate_into("committed-check");
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    for f in files_under(&fresh) {
        let want = std::fs::read(fresh.join(&f)).unwrap();
        let got = std::fs::read(committed.join(&f)).unwrap_or_default();
        assert!(
            want == got,
            "examples/{} is stale: run `cargo run -p pto-examples --bin gen-examples`",
            f.display()
        );
    }
}

/// A copy of the generated example `name` in a directory of its own.
fn copy_of(name: &str, tag: &str) -> PathBuf {
    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap().flatten() {
            let dest = to.join(e.file_name());
            if e.path().is_dir() {
                copy_dir(&e.path(), &dest);
            } else {
                std::fs::copy(e.path(), &dest).unwrap();
            }
        }
    }
    let dir = tmp_root()
        .join(format!("{tag}-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&generated().join(name), &dir);
    dir
}

/// The bundled translator, whatever ptoas this machine has.
fn bundled_rebuild(dir: &Path) -> pto_toolchain::RebuildReport {
    let options = pto_toolchain::pto_rebuild::RebuildOptions {
        enabled: true,
        env: pto_toolchain::pto_rebuild::RebuildEnv::default(),
        timeout: pto_toolchain::pto_rebuild::PTOAS_TIMEOUT,
        bundled: true,
    };
    pto_toolchain::pto_rebuild::rebuild_kernel_cpp_from_pto_with(dir, &options, &mut |_| {})
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

/// Each PTO-ISA kernel's body is its unit's translation: replaying an unedited `.pto` (its
/// stamp removed, so replay regenerates it) rewrites nothing, and the regenerated
/// `ptoas/<unit>.cpp` is the generator's byte for byte.
#[test]
fn replaying_an_unedited_pto_regenerates_the_same_kernels() {
    for name in PTO_ISA_EXAMPLES {
        let ex = example(name);
        let dir = copy_of(name, "unedited-pto");
        let units = ex.ptoas_units().unwrap();
        assert!(!units.is_empty(), "{name} has no .pto");
        for unit in &units {
            std::fs::remove_file(dir.join(format!("ptoas/{}.cpp", unit.name))).unwrap();
        }
        let before: Vec<Vec<u8>> = ex
            .kernels
            .iter()
            .map(|k| std::fs::read(dir.join(k.relative_path())).unwrap())
            .collect();
        let report = bundled_rebuild(&dir);
        let mut regenerated: Vec<String> = units
            .iter()
            .map(|u| format!("ptoas/{}.pto", u.name))
            .collect();
        regenerated.sort();
        assert_eq!(report.regenerated, regenerated, "{name}");
        let mut touched: Vec<String> = ex
            .kernels
            .iter()
            .map(|k| k.relative_path().to_string_lossy().replace('\\', "/"))
            .collect();
        touched.sort();
        let mut got = report.touched.clone();
        got.sort();
        assert_eq!(got, touched, "{name}: every kernel comes from a unit");
        for (k, old) in ex.kernels.iter().zip(&before) {
            let now = std::fs::read(dir.join(k.relative_path())).unwrap();
            assert!(now == *old, "{name}: replay changed {}", k.name);
            assert_eq!(now, k.source.as_bytes(), "{name}: {}", k.name);
        }
        for unit in &units {
            let raw =
                std::fs::read_to_string(dir.join(format!("ptoas/{}.cpp", unit.name))).unwrap();
            assert_eq!(raw, unit.cpp, "{name}: ptoas/{}.cpp", unit.name);
        }
        // And with the stamps in place, nothing is regenerated at all.
        let report = bundled_rebuild(&dir);
        assert!(report.regenerated.is_empty(), "{name}: {:?}", report.lines);
    }
}

/// The `.pto` units are level-3 modules as PyPTO's default memory planner emits them:
/// `pto.target_arch`, a `pto.kernel_kind` per function, an address on every tile.
#[test]
fn pto_units_have_the_shape_pypto_emits() {
    for name in PTO_ISA_EXAMPLES {
        for unit in example(name).ptoas_units().unwrap() {
            let pto = unit.pto;
            assert!(
                pto.contains("module attributes {pto.target_arch = \"a2a3\"} {"),
                "{}",
                unit.name
            );
            assert_eq!(pto_build_output::kernel_splice::pto_level(pto), "level3");
            let funcs = pto.matches("func.func @").count();
            assert!(funcs >= 1);
            assert_eq!(
                pto.matches("attributes {pto.kernel_kind = #pto.kernel_kind<")
                    .count(),
                funcs,
                "{}",
                unit.name
            );
            assert_eq!(
                pto.matches("= pto.alloc_tile").count(),
                pto.matches("= pto.alloc_tile addr = ").count(),
                "{}: a tile without an address",
                unit.name
            );
            let module = ptoas::parse(pto, unit.name, ptoas::Arch::A3).unwrap();
            assert_eq!(module.funcs.len(), funcs, "{}", unit.name);
        }
    }
}

/// An edited `.pto` changes the kernel: doubling softmax_prepare's scale in the unit gives a
/// different body, and the generator's splice keeps the wrapper byte for byte.
#[test]
fn the_pto_decides_the_body() {
    let ex = example("paged_attn_bf16");
    let k = ex
        .kernels
        .iter()
        .find(|k| k.name == "softmax_prepare")
        .unwrap();
    let unit = k.ptoas_unit.as_ref().unwrap();
    let edited: &'static str = Box::leak(
        unit.pto
            .replacen(
                "  %c0_i64 = arith.constant 0 : i64\n",
                "  %c0_i64 = arith.constant 0 : i64\n  %two = arith.constant 2.0 : f32\n  %scale2 = arith.mulf %arg1, %two : f32\n",
                1,
            )
            .replacen("pto.tmuls ins(%s_padded, %arg1 :", "pto.tmuls ins(%s_padded, %scale2 :", 1)
            .into_boxed_str(),
    );
    assert_ne!(edited, unit.pto);
    let new_unit = pto_examples::PtoasUnit::new("softmax_prepare", edited).unwrap();
    let text = new_unit
        .kernel_source("softmax_prepare", &k.source)
        .unwrap();
    assert!(text.contains("TMULS(") && text.contains("2.0f"), "{text}");
    let split = |s: &str| -> (String, String) {
        let (head, rest) = s.split_once("// --- ptoas-generated code ---\n").unwrap();
        let (_, tail) = rest.split_once("// --- Kernel entry point ---").unwrap();
        (head.to_string(), tail.to_string())
    };
    assert_eq!(split(&text), split(&k.source), "the wrapper is kept");
    assert_ne!(text, k.source);
}
