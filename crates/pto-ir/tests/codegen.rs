//! Codegen into a build directory: the layout, the generated text, the marker rule, and a
//! compiled program run by the real replay (C++ compiler, simulated chip, golden check).

mod common;

use std::path::Path;

use common::*;
use pto_build_output::{write_npy, DType, KernelConfig, NpyArray};
use pto_ir::ir::Attrs;
use pto_ir::{CompileOptions, Expr, FunctionType, ParamDirection, Var};

fn vector_add_program() -> pto_ir::Program {
    vector_add_program_named("kernel_add")
}

fn vector_add_program_named(kernel_name: &str) -> pto_ir::Program {
    // kernel: c = a + b + 1 (via two tile ops); orchestration: dump_tag(a) → call.
    let a = Var::new("a", t2(16, 32));
    let b = Var::new("b", t2(16, 32));
    let c = Var::new("c", t2(16, 32));
    let (ta, tb, s, u) = (
        Var::new("ta", tile(16, 32)),
        Var::new("tb", tile(16, 32)),
        Var::new("s", tile(16, 32)),
        Var::new("u", tile(16, 32)),
    );
    let o = Var::new("o", t2(16, 32));
    let kernel = func(
        kernel_name,
        FunctionType::InCore,
        &[
            (&a, ParamDirection::In),
            (&b, ParamDirection::In),
            (&c, ParamDirection::Out),
        ],
        vec![t2(16, 32)],
        vec![
            assign(
                &ta,
                op("tile.load", vec![v(&a), list(&[0, 0])], shapes(&[16, 32])),
            ),
            assign(
                &tb,
                op("tile.load", vec![v(&b), list(&[0, 0])], shapes(&[16, 32])),
            ),
            assign(&s, op("tile.add", vec![v(&ta), v(&tb)], Attrs::new())),
            assign(
                &u,
                op(
                    "tile.adds",
                    vec![
                        v(&s),
                        pto_ir::Expr::Float {
                            value: 1.0,
                            dtype: pto_ir::DataType::Fp32,
                        },
                    ],
                    Attrs::new(),
                ),
            ),
            assign(
                &o,
                op(
                    "tile.store",
                    vec![v(&u), list(&[0, 0]), v(&c)],
                    Attrs::new(),
                ),
            ),
            ret(&[&o]),
        ],
    );
    let (oa, ob, oc, r) = (
        Var::new("a", t2(16, 32)),
        Var::new("b", t2(16, 32)),
        Var::new("c", t2(16, 32)),
        Var::new("c", t2(16, 32)),
    );
    let orch = func(
        "vector_add",
        FunctionType::Orchestration,
        &[
            (&oa, ParamDirection::In),
            (&ob, ParamDirection::In),
            (&oc, ParamDirection::Out),
        ],
        vec![t2(16, 32)],
        vec![
            assign(
                &r,
                call(
                    kernel_name,
                    vec![v(&oa), v(&ob), v(&oc)],
                    t2(16, 32),
                    &[&oa],
                ),
            ),
            ret(&[&r]),
        ],
    );
    program(vec![kernel, orch])
}

fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// A DSL kernel named `int` ended in "internal error: ptoas refused the generated kernel":
/// a C++ keyword as a function name is a program error naming the function and the fix.
#[test]
fn a_kernel_named_like_a_cpp_keyword_is_a_program_error() {
    let tmp = tempfile::tempdir().unwrap();
    let err = pto_ir::compile(
        vector_add_program_named("int"),
        &tmp.path().join("build"),
        &CompileOptions::new(),
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(!text.contains("internal error"), "{text}");
    assert!(
        text.contains("function 'int' has the name of a C++ keyword"),
        "{text}"
    );
    let err = pto_ir::compile(
        vector_add_program_named("v3"),
        &tmp.path().join("build2"),
        &CompileOptions::new(),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("function 'v3' has a name ptoas reserves for its values (v<N>)"),
        "{err}"
    );
}

#[test]
fn writes_the_single_chip_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("build");
    // A stale marker of another build kind is dropped.
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("distributed_meta.json"), "{}").unwrap();
    let report = pto_ir::compile(vector_add_program(), &dir, &CompileOptions::new()).unwrap();
    assert_eq!(report.kernels, ["kernel_add"]);
    assert_eq!(report.orchestration, "vector_add");
    for rel in [
        "kernel_config.py",
        "compiled_meta.json",
        "orchestration/vector_add.cpp",
        "ptoas/kernel_add.pto",
        "ptoas/kernel_add.cpp",
        "kernels/aiv/kernel_add.cpp",
        "passes_dump/00_frontend.py",
        "passes_dump/01_after_InlineFunctions.py",
        "passes_dump/02_after_ConvertToSSA.py",
        "passes_dump/03_after_OutlineIncoreScopes.py",
        "passes_dump/04_after_ResolveKernelCoreTypes.py",
        "passes_dump/05_after_DeriveCallDirections.py",
    ] {
        assert!(dir.join(rel).is_file(), "{rel}");
    }
    assert!(dir.join("report").is_dir());
    assert!(
        !dir.join("distributed_meta.json").exists(),
        "foreign marker kept"
    );

    let config = KernelConfig::load(&dir.join("kernel_config.py")).unwrap();
    assert_eq!(config.kernels.len(), 1);
    assert_eq!(config.kernels[0].name, "kernel_add");
    assert_eq!(config.kernels[0].func_id, 0);
    assert_eq!(
        config.orchestration.source,
        dir.join("orchestration/vector_add.cpp")
    );
    let meta = pto_build_output::CompiledMeta::load(&dir).unwrap();
    assert_eq!(
        meta.params
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>(),
        ["a", "b", "c"]
    );
    assert_eq!(meta.output_indices(), [2]);
    assert_eq!(meta.num_return_types, 1);

    let orch = read(&dir, "orchestration/vector_add.cpp");
    assert!(orch
        .starts_with("// Orchestration Function: vector_add\n// Generated by PyPTO IR Compiler\n"));
    assert!(orch.contains("#include \"pto_orchestration_api.h\""));
    assert!(orch.contains(".expected_arg_count = 3,"));
    assert!(orch.contains("ChipTensor ext_a = orch_args.tensor(0).ref();"));
    let task = "        CoreTaskArgs params_t0;\n        params_t0.add_input(ext_a);\n        params_t0.add_input(ext_b);\n        params_t0.add_output(ext_c);\n        params_t0.dump(ext_a);\n        rt_submit_aiv_task(0, params_t0);\n";
    assert!(orch.contains(task), "{orch}");

    let pto = read(&dir, "ptoas/kernel_add.pto");
    assert!(pto.starts_with("module attributes {pto.target_arch = \"a2a3\"} {\n  func.func @kernel_add(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %arg2: !pto.ptr<f32>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {"), "{pto}");
    assert!(pto.contains("pto.tadds ins("), "{pto}");
    assert!(pto.contains("loc(\"test.py\":"), "{pto}");
    assert!(!pto.contains("addr ="), "level 2: ptoas plans the tiles");

    let kernel = read(&dir, "kernels/aiv/kernel_add.cpp");
    let begin = kernel.find("// --- ptoas-generated code ---").unwrap();
    let end = kernel.find("// --- Kernel entry point ---").unwrap();
    assert!(begin < end);
    assert!(kernel[begin..end].contains("static __aicore__ void kernel_add("));
    assert!(kernel[end..].contains("kernel_add(arg0, arg1, arg2);"));
    // The body is exactly what replay's .pto splice would put there.
    let raw = std::fs::read(dir.join("ptoas/kernel_add.cpp")).unwrap();
    let body = pto_build_output::kernel_splice::preprocess_ptoas_output(&raw);
    let spliced = pto_build_output::kernel_splice::splice_body(kernel.as_bytes(), &body).unwrap();
    assert_eq!(spliced, kernel.as_bytes());
}

#[test]
fn a_relative_output_directory_gives_sources_relative_to_the_build() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = std::env::current_dir().unwrap();
    let rel = pathdiff(tmp.path(), &cwd).join("rel_build");
    pto_ir::compile(vector_add_program(), &rel, &CompileOptions::new()).unwrap();
    let text = read(&tmp.path().join("rel_build"), "kernel_config.py");
    assert!(
        text.contains(r#""source": str(_ROOT_DIR / "orchestration" / "vector_add.cpp"),"#),
        "{text}"
    );
}

/// `to` relative to `from` (both absolute), with `..` components.
fn pathdiff(to: &Path, from: &Path) -> std::path::PathBuf {
    let to: Vec<_> = to.components().collect();
    let from: Vec<_> = from.components().collect();
    let common = to.iter().zip(&from).take_while(|(a, b)| a == b).count();
    let mut out = std::path::PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for c in &to[common..] {
        out.push(c.as_os_str());
    }
    out
}

#[test]
fn compiled_program_replays_and_matches_its_golden() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("build");
    pto_ir::compile(vector_add_program(), &dir, &CompileOptions::new()).unwrap();
    let n = 16 * 32;
    let a: Vec<f64> = (0..n).map(|i| (i % 7) as f64 * 0.5).collect();
    let b: Vec<f64> = (0..n).map(|i| (i % 5) as f64 - 1.0).collect();
    let c: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x + y + 1.0).collect();
    let npy = |vals: &[f64]| NpyArray::from_f64(DType::Float32, &[16, 32], vals).unwrap();
    std::fs::create_dir_all(dir.join("data/in")).unwrap();
    std::fs::create_dir_all(dir.join("data/out")).unwrap();
    write_npy(&dir.join("data/in/a.npy"), &npy(&a)).unwrap();
    write_npy(&dir.join("data/in/b.npy"), &npy(&b)).unwrap();
    write_npy(&dir.join("data/out/c.npy"), &npy(&c)).unwrap();
    let mut config = pto_runner::RunConfig::new(Some("a2a3sim")).unwrap();
    config.in_process = true;
    let out = pto_runner::replay(&dir, &config, &pto_runner::ReplayOptions::default()).unwrap();
    assert!(out.passed(), "{:?}", out.checks);
    assert_eq!(out.report.n_tasks, 1);
}

#[test]
fn interpreter_matches_the_program_at_every_stage() {
    let program = vector_add_program();
    let n = 16 * 32;
    let a: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let b: Vec<f64> = (0..n).map(|i| 2.0 * i as f64).collect();
    let args = || {
        vec![
            pto_ir::interp::Arg::Tensor(pto_ir::interp::HostTensor {
                dtype: pto_ir::DataType::Fp32,
                shape: vec![16, 32],
                data: a.clone(),
            }),
            pto_ir::interp::Arg::Tensor(pto_ir::interp::HostTensor {
                dtype: pto_ir::DataType::Fp32,
                shape: vec![16, 32],
                data: b.clone(),
            }),
            pto_ir::interp::Arg::Tensor(pto_ir::interp::HostTensor {
                dtype: pto_ir::DataType::Fp32,
                shape: vec![16, 32],
                data: vec![0.0; n],
            }),
        ]
    };
    let mut p = program;
    for (name, pass) in pto_ir::passes::PIPELINE {
        let out = pto_ir::interp::interpret(&p, None, args()).unwrap();
        assert_eq!(out[2].data[5], a[5] + b[5] + 1.0, "before {name}");
        p = pass(p).unwrap();
    }
    let out = pto_ir::interp::interpret(&p, None, args()).unwrap();
    assert_eq!(out[2].data[n - 1], a[n - 1] + b[n - 1] + 1.0);
}

#[test]
fn program_errors_name_the_source_and_the_fix() {
    let mut p = vector_add_program();
    p.functions
        .retain(|f| f.ftype != FunctionType::Orchestration);
    let tmp = tempfile::tempdir().unwrap();
    let e = pto_ir::compile(p, tmp.path(), &CompileOptions::new()).unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with("test.py:1:5: program P has no Orchestration function"),
        "{text}"
    );
    assert!(
        text.contains("Hint: Add a @pl.function(type=pl.FunctionType.Orchestration)"),
        "{text}"
    );
}

/// An operation written as a statement of its own in an orchestration is emitted or
/// refused, never dropped: a bare tile operation, and a `tensor.assemble` (which a name
/// alias would turn into a lost copy), are program errors naming the operation and line.
#[test]
fn bare_orchestration_operations_the_codegen_cannot_emit_are_refused() {
    for (name, args, kwargs) in [
        ("tile.load", vec![list(&[0, 0])], shapes(&[16, 32])),
        (
            "tensor.assemble",
            vec![Expr::Var(Var::new("b", t2(16, 32))), list(&[0, 0])],
            Attrs::new(),
        ),
    ] {
        let mut p = vector_add_program();
        let orch = p
            .functions
            .iter_mut()
            .find(|f| f.ftype == FunctionType::Orchestration)
            .unwrap();
        let first = orch.params[0].var.clone();
        let mut all = vec![Expr::Var(first)];
        all.extend(args);
        let at = orch.body.len() - 1;
        orch.body.insert(at, eval(op(name, all, kwargs)));
        let tmp = tempfile::tempdir().unwrap();
        let e = pto_ir::compile(p, tmp.path(), &CompileOptions::new()).unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("test.py:3:5: "), "{text}");
        assert!(text.contains(name), "{text}");
    }
}

/// Copies `from` into `to`, leaving out the outputs of earlier runs.
fn copy_build(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let name = e.file_name();
        let name_s = name.to_string_lossy();
        if name_s == "dfx_outputs" || name_s == "actual" || name_s.ends_with(".so") {
            continue;
        }
        if e.path().is_dir() {
            copy_build(&e.path(), &to.join(&name));
        } else {
            std::fs::copy(e.path(), to.join(&name)).unwrap();
        }
    }
}

#[test]
fn checked_in_dsl_examples_replay_and_validate_as_pto_replay_does() {
    // The replay `pto replay DIR` runs: every parameter bound from data/in (scalars too),
    // the outputs compared with data/out.
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let tmp = tempfile::tempdir().unwrap();
    let mut config = pto_runner::RunConfig::new(Some("a2a3sim")).unwrap();
    config.in_process = true;
    for (name, tasks) in [
        ("dsl_vector_add", 4),
        ("dsl_tiled_matmul", 4),
        // Per batch: 3 pl.create_tensor allocations + init_state, then per block
        // 4 allocations + qk, softmax, pv, update, then normalize: 2 * 4 + 7 * 8 + 2.
        ("dsl_paged_attention", 66),
    ] {
        let dir = tmp.path().join(name);
        copy_build(&examples.join(name), &dir);
        let out = pto_runner::replay(&dir, &config, &pto_runner::ReplayOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(out.passed(), "{name}: {:?}", out.checks);
        assert_eq!(out.report.n_tasks, tasks, "{name}");
    }
}

/// A kernel copying element `src[1, 3]` into row 1, column 5 of the window `dst[2:4, :]`
/// (`pl.read`, `pl.write` through a slice), then the orchestration setting `dst[0, 1]`.
fn element_copy_program() -> pto_ir::Program {
    let (src, dst) = (Var::new("src", t2(4, 8)), Var::new("dst", t2(4, 8)));
    let w = Var::new("w", t2(2, 8));
    let x = Var::new("x", pto_ir::Type::Scalar(pto_ir::DataType::Fp32));
    let kernel = func(
        "put_elem",
        FunctionType::InCore,
        &[(&src, ParamDirection::In), (&dst, ParamDirection::Out)],
        vec![t2(4, 8)],
        vec![
            assign(
                &w,
                op("tensor.slice", vec![v(&dst), list(&[2, 0])], {
                    let mut a = Attrs::new();
                    a.set("shape", pto_ir::AttrValue::Ints(vec![2, 8]));
                    a
                }),
            ),
            assign(
                &x,
                op("tensor.read", vec![v(&src), list(&[1, 3])], Attrs::new()),
            ),
            eval(op(
                "tensor.write",
                vec![v(&w), list(&[1, 5]), v(&x)],
                Attrs::new(),
            )),
            ret(&[&dst]),
        ],
    );
    let (os, od, r) = (
        Var::new("src", t2(4, 8)),
        Var::new("dst", t2(4, 8)),
        Var::new("dst", t2(4, 8)),
    );
    let two = pto_ir::Expr::Float {
        value: 2.5,
        dtype: pto_ir::DataType::Fp32,
    };
    let orch = func(
        "element_copy",
        FunctionType::Orchestration,
        &[(&os, ParamDirection::In), (&od, ParamDirection::Out)],
        vec![t2(4, 8)],
        vec![
            assign(&r, call("put_elem", vec![v(&os), v(&od)], t2(4, 8), &[])),
            eval(op(
                "tensor.write",
                vec![v(&r), list(&[0, 1]), two],
                Attrs::new(),
            )),
            ret(&[&r]),
        ],
    );
    program(vec![kernel, orch])
}

#[test]
fn element_writes_interpret_and_lower_to_scalar_stores() {
    let host = |data: Vec<f64>| {
        pto_ir::interp::Arg::Tensor(pto_ir::interp::HostTensor {
            dtype: pto_ir::DataType::Fp32,
            shape: vec![4, 8],
            data,
        })
    };
    let src: Vec<f64> = (0..32).map(f64::from).collect();
    let mut p = element_copy_program();
    for (name, pass) in pto_ir::passes::PIPELINE {
        let out = pto_ir::interp::interpret(&p, None, vec![host(src.clone()), host(vec![0.0; 32])])
            .unwrap();
        // dst[2 + 1, 5] = src[1, 3]; dst[0, 1] = 2.5; nothing else written.
        let mut want = vec![0.0; 32];
        want[3 * 8 + 5] = src[8 + 3];
        want[1] = 2.5;
        assert_eq!(out[1].data, want, "before {name}");
        p = pass(p).unwrap();
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("build");
    pto_ir::compile(element_copy_program(), &dir, &CompileOptions::new()).unwrap();
    let pto = read(&dir, "ptoas/put_elem.pto");
    let store = pto
        .lines()
        .find(|l| l.contains("pto.store_scalar"))
        .unwrap_or_else(|| panic!("{pto}"));
    assert!(
        store.contains("%arg1[") && store.contains(": !pto.ptr<f32>, f32"),
        "{store}"
    );
    assert!(read(&dir, "ptoas/put_elem.cpp").contains("] = "));
    let orch = read(&dir, "orchestration/element_copy.cpp");
    assert!(orch.contains("set_tensor_data<float>("), "{orch}");
}
