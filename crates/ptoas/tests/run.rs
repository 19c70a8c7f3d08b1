//! End to end: `.pto` files translated, wrapped as PyPTO wraps ptoas output, compiled with
//! the project's toolchain, run on the simulated chip and checked against scalar
//! references computed here.

use pto_runtime::CoreType;

use crate::common::*;

#[test]
fn vector_add_level2() {
    let cpp = translate(&data("vadd.pto"), "vadd.pto", &ptoas::Options::new());
    assert_eq!(kernel_names(&cpp), ["vadd"]);
    let src = pypto_kernel(&cpp, "vadd", &[Param::Tensor("float"); 3]);
    let program = build(
        "vadd",
        &one_task(3, 0, "rt_submit_aiv_task(0, p)"),
        &[Kernel {
            func_id: 0,
            name: "vadd".into(),
            core: CoreType::Aiv,
            source: src,
        }],
    );
    let a = values(1024, 1, 4.0);
    let b = values(1024, 2, 4.0);
    let mut bufs = vec![
        Buf::f32(&[32, 32], &a),
        Buf::f32(&[32, 32], &b),
        Buf::zeros(Dt::F32, &[32, 32]),
    ];
    run(&program, &mut bufs, &[]);
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    assert_close("vadd", &bufs[2].as_f32(), &want, 0.0, 0.0);
}

fn level3() -> ptoas::Options {
    let mut o = ptoas::Options::new();
    o.level = ptoas::Level::Level3;
    o.insert_sync = true;
    o
}

/// Rounds `x` to bf16 bits with ties away from zero (CAST_ROUND).
fn bf16_round(x: f32) -> u16 {
    let b = x.to_bits();
    ((b & 0x7fff_ffff).wrapping_add(0x8000) >> 16) as u16 | ((b >> 16) as u16 & 0x8000)
}

/// Truncates `x` to bf16 bits (CAST_TRUNC).
fn bf16_trunc(x: f32) -> u16 {
    (x.to_bits() >> 16) as u16
}

#[test]
fn softmax_row_reductions_broadcasts_and_rounding_modes() {
    let cpp = translate(&data("softmax.pto"), "softmax.pto", &level3());
    // The [16,1] column view is inferred DN from its ColMajor tile.
    assert!(
        cpp.contains("pto::Stride<16, 16, 16, 1, 16>, pto::Layout::DN>"),
        "{cpp}"
    );
    assert!(cpp.contains("RoundMode::CAST_ROUND") && cpp.contains("RoundMode::CAST_TRUNC"));
    let src = pypto_kernel(
        &cpp,
        "softmax",
        &[
            Param::Tensor("float"),
            Param::Tensor("float"),
            Param::Tensor("float"),
            Param::Tensor("bfloat16_t"),
            Param::Tensor("bfloat16_t"),
        ],
    );
    let program = build(
        "softmax",
        &one_task(5, 0, "rt_submit_aiv_task(0, p)"),
        &[Kernel {
            func_id: 0,
            name: "softmax".into(),
            core: CoreType::Aiv,
            source: src,
        }],
    );
    let x = values(16 * 64, 7, 3.0);
    let mut bufs = vec![
        Buf::f32(&[16, 64], &x),
        Buf::zeros(Dt::F32, &[16, 64]),
        Buf::zeros(Dt::F32, &[16, 1]),
        Buf::zeros(Dt::Bf16, &[16, 64]),
        Buf::zeros(Dt::Bf16, &[16, 64]),
    ];
    run(&program, &mut bufs, &[]);
    let mut want = vec![0f32; 16 * 64];
    let mut want_max = vec![0f32; 16];
    for r in 0..16 {
        let row = &x[r * 64..][..64];
        let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        want_max[r] = m;
        let e: Vec<f32> = row.iter().map(|v| (v - m).exp()).collect();
        let s: f32 = e.iter().sum();
        for c in 0..64 {
            want[r * 64 + c] = e[c] / s;
        }
    }
    let got = bufs[1].as_f32();
    assert_close("softmax", &got, &want, 1e-5, 1e-7);
    assert_close("row max", &bufs[2].as_f32(), &want_max, 0.0, 0.0);
    // The bf16 outputs round the kernel's own f32 result.
    let round: Vec<u16> = got.iter().map(|v| bf16_round(*v)).collect();
    let trunc: Vec<u16> = got.iter().map(|v| bf16_trunc(*v)).collect();
    assert_eq!(bufs[3].as_bf16_bits(), round, "CAST_ROUND");
    assert_eq!(bufs[4].as_bf16_bits(), trunc, "CAST_TRUNC");
    assert_ne!(round, trunc, "the data must tell the two modes apart");
}

#[test]
fn cache_maintenance_and_gm_fence_as_pypto_writes_them() {
    let cpp = translate(&data("cmo.pto"), "cmo.pto", &level3());
    // The region form addresses the partition's first element; the pointer form the pointer.
    assert!(
        cpp.contains("(v2 + (512 + 16), v19, v20);\n  PTOAS__DCCI_SINGLE_CACHE_LINE(PTOAS__GLOBAL_TENSOR_DATA(v21));"),
        "{cpp}"
    );
    assert!(cpp.contains("PTOAS__DCCI_SINGLE_CACHE_LINE(v3);"));
    assert!(cpp.contains("dcci((__gm__ void*)0, cache_line_t::ENTIRE_DATA_CACHE);"));
    assert_eq!(cpp.matches("dsb(DSB_DDR);").count(), 2);
    let src = pypto_kernel(
        &cpp,
        "publish",
        &[
            Param::Tensor("float"),
            Param::Tensor("float"),
            Param::Tensor("int32_t"),
        ],
    );
    let program = build(
        "publish",
        &one_task(3, 0, "rt_submit_aiv_task(0, p)"),
        &[Kernel {
            func_id: 0,
            name: "publish".into(),
            core: CoreType::Aiv,
            source: src,
        }],
    );
    let x = values(16 * 64, 5, 4.0);
    let mut bufs = vec![
        Buf::f32(&[16, 64], &x),
        Buf::zeros(Dt::F32, &[16, 64]),
        Buf::zeros(Dt::I32, &[1]),
    ];
    run(&program, &mut bufs, &[]);
    let mut want: Vec<f32> = x.iter().map(|v| v + v).collect();
    want[1023] = 7.0;
    assert_close("out", &bufs[1].as_f32(), &want, 0.0, 0.0);
    assert_eq!(bufs[2].as_i32(), [7]);
}

#[test]
fn comm_puts_gets_and_signals_on_one_chip() {
    let cpp = translate(&data("comm.pto"), "comm.pto", &level3());
    assert!(
        cpp.contains("pto::comm::TPUT<AtomicType::AtomicAdd>("),
        "{cpp}"
    );
    assert!(cpp.contains("pto::comm::NotifyOp::AtomicAdd);"));
    assert!(cpp.contains("pto::comm::WaitCmp::GE);"));
    let src = pypto_kernel(
        &cpp,
        "window_traffic",
        &[
            Param::Tensor("float"),
            Param::Tensor("float"),
            Param::Tensor("float"),
            Param::Tensor("int32_t"),
        ],
    );
    let program = build(
        "window_traffic",
        &one_task(4, 0, "rt_submit_aiv_task(0, p)"),
        &[Kernel {
            func_id: 0,
            name: "window_traffic".into(),
            core: CoreType::Aiv,
            source: src,
        }],
    );
    let x = values(16 * 64, 13, 4.0);
    let mut bufs = vec![
        Buf::f32(&[16, 64], &x),
        Buf::zeros(Dt::F32, &[16, 64]),
        Buf::zeros(Dt::F32, &[16, 64]),
        Buf::zeros(Dt::I32, &[1]),
    ];
    run(&program, &mut bufs, &[]);
    let twice: Vec<f32> = x.iter().map(|v| v + v).collect();
    assert_close("y", &bufs[1].as_f32(), &twice, 0.0, 0.0);
    assert_close("z", &bufs[2].as_f32(), &twice, 0.0, 0.0);
    assert_eq!(bufs[3].as_i32(), [1]);
}

#[test]
fn tassign_moves_a_tile_to_another_address() {
    let cpp = translate(&data("tassign.pto"), "tassign.pto", &level3());
    assert!(cpp.contains("TASSIGN(v"), "{cpp}");
    let src = pypto_kernel(&cpp, "rebind", &[Param::Tensor("float"); 3]);
    let program = build(
        "rebind",
        &one_task(3, 0, "rt_submit_aiv_task(0, p)"),
        &[Kernel {
            func_id: 0,
            name: "rebind".into(),
            core: CoreType::Aiv,
            source: src,
        }],
    );
    let x = values(256, 21, 4.0);
    let y = values(256, 22, 4.0);
    let mut bufs = vec![
        Buf::f32(&[16, 16], &x),
        Buf::f32(&[16, 16], &y),
        Buf::zeros(Dt::F32, &[16, 16]),
    ];
    run(&program, &mut bufs, &[]);
    let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| a + b).collect();
    assert_close("z", &bufs[2].as_f32(), &want, 0.0, 0.0);
}

#[test]
fn output_views_threaded_through_loops_and_branches() {
    let cpp = translate(&data("carry.pto"), "carry.pto", &ptoas::Options::new());
    let src = pypto_kernel(&cpp, "carry", &[Param::Tensor("float"); 2]);
    let program = build(
        "carry",
        &one_task(2, 0, "rt_submit_aiv_task(0, p)"),
        &[Kernel {
            func_id: 0,
            name: "carry".into(),
            core: CoreType::Aiv,
            source: src,
        }],
    );
    let x = values(32 * 32, 9, 4.0);
    let old = values(32 * 32, 10, 4.0);
    let mut bufs = vec![Buf::f32(&[32, 32], &x), Buf::f32(&[32, 32], &old)];
    run(&program, &mut bufs, &[]);
    let want: Vec<f32> = (0..32 * 32)
        .map(|i| if i < 24 * 32 { 2.0 * x[i] } else { old[i] })
        .collect();
    assert_close("out", &bufs[1].as_f32(), &want, 0.0, 0.0);
}

/// Rounds to bf16 (nearest even) and back.
fn bf(x: f32) -> f32 {
    half::bf16::from_f32(x).to_f32()
}

#[test]
fn bf16_matmul_with_k_split_tmov_and_atomic_store() {
    let cpp = translate(&data("matmul.pto"), "matmul.pto", &level3());
    assert!(cpp.contains("pto::Layout::DN>"), "B is a DN view");
    assert!(cpp.contains("TMATMUL_ACC(") && cpp.contains("TMOV("));
    assert!(cpp.contains(", AtomicType::AtomicAdd>("));
    assert!(cpp.contains("#if defined(__DAV_CUBE__)"));
    let src = pypto_kernel(
        &cpp,
        "matmul",
        &[
            Param::Tensor("bfloat16_t"),
            Param::Tensor("bfloat16_t"),
            Param::Tensor("float"),
            Param::Tensor("bfloat16_t"),
            Param::Tensor("float"),
        ],
    );
    let program = build(
        "matmul",
        &one_task(5, 0, "rt_submit_aic_task(0, p)"),
        &[Kernel {
            func_id: 0,
            name: "matmul".into(),
            core: CoreType::Aic,
            source: src,
        }],
    );
    let a: Vec<f32> = values(16 * 64, 11, 2.0).into_iter().map(bf).collect();
    // B[k][n] stored column-major: element (k, n) at n * 64 + k.
    let b: Vec<f32> = values(64 * 32, 12, 2.0).into_iter().map(bf).collect();
    let mut bufs = vec![
        Buf::bf16(&[16, 64], &a),
        Buf::bf16(&[32, 64], &b),
        Buf::zeros(Dt::F32, &[16, 32]),
        Buf::zeros(Dt::Bf16, &[16, 32]),
        Buf::zeros(Dt::F32, &[16, 32]),
    ];
    run(&program, &mut bufs, &[]);
    let mut want = vec![0f32; 16 * 32];
    for i in 0..16 {
        for j in 0..32 {
            want[i * 32 + j] = (0..64).map(|k| a[i * 64 + k] * b[j * 64 + k]).sum();
        }
    }
    assert_close("C", &bufs[2].as_f32(), &want, 1e-4, 1e-4);
    let want_b: Vec<f32> = bufs[2].as_f32().iter().map(|v| bf(*v)).collect();
    assert_close("C bf16", &bufs[3].as_bf16(), &want_b, 0.0, 0.0);
    let twice: Vec<f32> = want.iter().map(|v| 2.0 * v).collect();
    assert_close("C atomic x2", &bufs[4].as_f32(), &twice, 1e-4, 1e-4);
}

#[test]
fn control_flow_dynamic_views_and_level2_reuse() {
    let cpp = translate(&data("ctrl.pto"), "ctrl.pto", &ptoas::Options::new());
    assert!(
        cpp.contains("pto::Shape<1, 1, 1, 16, -1>(1, 1, 1, 16, v5)"),
        "dynamic width"
    );
    assert!(cpp.contains("while (true) {"));
    let src = pypto_kernel(
        &cpp,
        "ctrl",
        &[
            Param::Tensor("float"),
            Param::Tensor("float"),
            Param::Tensor("float"),
            Param::Tensor("float"),
            Param::Scalar("int64_t"),
            Param::Scalar("int32_t"),
        ],
    );
    let program = build(
        "ctrl",
        &one_task(4, 2, "rt_submit_aiv_task(0, p)"),
        &[Kernel {
            func_id: 0,
            name: "ctrl".into(),
            core: CoreType::Aiv,
            source: src,
        }],
    );
    let x = values(64 * 64, 21, 5.0);
    let n = 40usize;
    let mut bufs = vec![
        Buf::f32(&[64, 64], &x),
        Buf::zeros(Dt::F32, &[64, 64]),
        Buf::zeros(Dt::F32, &[16, 64]),
        Buf::zeros(Dt::F32, &[8]),
    ];
    run(&program, &mut bufs, &[n as u64, 64]);
    let mut want = vec![0f32; 64 * 64];
    for r in 0..64 {
        for c in 0..n {
            let v = x[r * 64 + c];
            want[r * 64 + c] = if (r / 16) % 2 == 0 { v + 1.0 } else { v * 2.0 };
        }
    }
    assert_close("y", &bufs[1].as_f32(), &want, 0.0, 0.0);
    let z: Vec<f32> = x[..16 * 64]
        .iter()
        .map(|v| (0..50).fold(*v, |a, _| a + 0.5))
        .collect();
    assert_close("z", &bufs[2].as_f32(), &z, 0.0, 0.0);
    assert_eq!(
        bufs[3].as_f32()[..4],
        [6.0, 4.0, 8.0, 8.0],
        "sum, blocks, while count, reload"
    );
}

#[test]
fn a_level2_module_that_does_not_fit_is_an_error_naming_the_tile() {
    let e =
        ptoas::translate(&data("too_big.pto"), "too_big.pto", &ptoas::Options::new()).unwrap_err();
    assert_eq!(e.kind(), ptoas::ErrorKind::Memory);
    let msg = e.to_string();
    assert!(
        msg.starts_with("too_big.pto:58:5: tile %t48 (vec 16x64xf32, 4096 bytes) does not fit in UB: 192 KiB on a3"),
        "{msg}"
    );
    assert!(msg.contains("and 40 more"), "{msg}");
    // a5's UB is 256 KiB: the same module fits.
    let mut a5 = ptoas::Options::new();
    a5.arch = Some(ptoas::Arch::A5);
    assert!(ptoas::translate(&data("too_big.pto"), "too_big.pto", &a5).is_ok());
}

#[test]
fn mixed_cube_vector_pair_through_frontend_pipes_runs_as_a_mix_task() {
    let cpp = translate(&data("mix.pto"), "mix.pto", &ptoas::Options::new());
    assert_eq!(kernel_names(&cpp), ["cube_part", "vector_part"]);
    for needle in [
        "auto v7 = TPipe<0, Direction::DIR_C2V, 1024, 8, 8, false>(",
        "TPUSH<TPipe<0, Direction::DIR_C2V, 1024, 8, 8, false>, Tile<TileType::Acc, float, 16, 16",
        ", TileSplitAxis::TILE_UP_DOWN>(v7, ",
        "TFREE<TPipe<0, Direction::DIR_C2V, 1024, 8, 8, false>, TileSplitAxis::TILE_UP_DOWN>(v7);",
    ] {
        assert!(cpp.contains(needle), "missing {needle}\n{cpp}");
    }
    let params = [Param::Tensor("float"); 4];
    let aic = pypto_kernel(&cpp, "cube_part", &params);
    let aiv = pypto_kernel(&cpp, "vector_part", &params);
    let program = build(
        "mix",
        &one_task(4, 0, "rt_submit_task(MixedKernels{0, 1, 1}, p)"),
        &[
            Kernel {
                func_id: 0,
                name: "cube_part".into(),
                core: CoreType::Aic,
                source: aic,
            },
            Kernel {
                func_id: 1,
                name: "vector_part".into(),
                core: CoreType::Aiv,
                source: aiv,
            },
        ],
    );
    let a = values(256, 31, 2.0);
    let b = values(256, 32, 2.0); // column-major: (k, n) at n * 16 + k
    let mut bufs = vec![
        Buf::f32(&[16, 16], &a),
        Buf::f32(&[16, 16], &b),
        Buf::zeros(Dt::F32, &[16, 16]),
        Buf::zeros(Dt::F32, &[8, 1024]),
    ];
    run(&program, &mut bufs, &[]);
    let mut want = vec![0f32; 256];
    for i in 0..16 {
        for j in 0..16 {
            let dot = (0..16).fold(0f32, |s, k| a[i * 16 + k].mul_add(b[j * 16 + k], s));
            want[i * 16 + j] = dot + 1.0;
        }
    }
    assert_close("A.B + 1", &bufs[2].as_f32(), &want, 1e-6, 1e-6);
}

#[test]
fn grammar_coverage_compiles_against_the_header() {
    let cpp = translate(&data("grammar.pto"), "grammar.pto", &level3());
    for needle in [
        "static AICORE float scale(float v1, int32_t v2) {",
        "set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);",
        "wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID1);",
        "pipe_barrier(PIPE_ALL);",
        "TASSIGN(v22, v17.data() + (8 * 64 + 0));",
        "Tile<TileType::Vec, float, 32, 64, BLayout::RowMajor, 16, 64, SLayout::NoneBox",
        "TRESHAPE(v25, v23);",
        ".SetValidShape(v7, v8);",
        "-std::numeric_limits<float>::infinity()",
        "(int64_t) get_block_idx()",
    ] {
        assert!(cpp.contains(needle), "missing {needle}\n{cpp}");
    }
    // a5 (from pto.target_arch): no planning needed, but the guards and helpers are the same.
    let src = pypto_kernel(
        &cpp,
        "grammar",
        &[
            Param::Tensor("float"),
            Param::Tensor("float"),
            Param::Scalar("int32_t"),
            Param::Scalar("bool"),
        ],
    );
    let dir = scratch("grammar");
    let path = dir.join("grammar.cpp");
    std::fs::write(&path, &src).unwrap();
    let unit = pto_toolchain::CompileUnit::new(
        path,
        pto_toolchain::UnitKind::Kernel(pto_toolchain::CoreKind::Aiv),
    );
    if let Err(e) = toolchain().compile(&unit) {
        panic!("{e}");
    }
}

#[test]
fn disabling_layout_inference_keeps_declared_layouts() {
    let mut o = level3();
    o.infer_layout = false;
    let cpp = translate(&data("softmax.pto"), "softmax.pto", &o);
    // The column view declares no layout: ND without inference; the ND views stay ND.
    assert!(
        cpp.contains("pto::Stride<16, 16, 16, 1, 16>, pto::Layout::ND>"),
        "{cpp}"
    );
    assert!(!cpp.contains("pto::Layout::DN"));
    // An explicit layout is kept either way.
    let mm = translate(&data("mix.pto"), "mix.pto", &{
        let mut o = ptoas::Options::new();
        o.infer_layout = false;
        o
    });
    assert!(mm.contains("pto::Layout::DN>"), "declared dn");
}

#[test]
fn both_directions_through_one_pipe() {
    let cpp = translate(&data("bidir.pto"), "bidir.pto", &ptoas::Options::new());
    assert!(cpp.contains("TPipe<0, Direction::DIR_BOTH, 1024, 4, 4, false>"));
    assert!(cpp.contains(
        "TPOP<TPipe<0, Direction::DIR_BOTH, 1024, 4, 4, false>, Tile<TileType::Mat, float, 16, 16"
    ));
    let params = [Param::Tensor("float"); 5];
    let program = build(
        "bidir",
        &one_task(5, 0, "rt_submit_task(MixedKernels{0, 1, 1}, p)"),
        &[
            Kernel {
                func_id: 0,
                name: "cube_side".into(),
                core: CoreType::Aic,
                source: pypto_kernel(&cpp, "cube_side", &params),
            },
            Kernel {
                func_id: 1,
                name: "vector_side".into(),
                core: CoreType::Aiv,
                source: pypto_kernel(&cpp, "vector_side", &params),
            },
        ],
    );
    let a = values(256, 41, 3.0);
    let eye: Vec<f32> = (0..256)
        .map(|i| if i % 17 == 0 { 1.0 } else { 0.0 })
        .collect();
    let mut bufs = vec![
        Buf::f32(&[16, 16], &a),
        Buf::f32(&[16, 16], &eye),
        Buf::zeros(Dt::F32, &[16, 16]),
        Buf::zeros(Dt::F32, &[16, 16]),
        Buf::zeros(Dt::F32, &[8, 1024]),
    ];
    run(&program, &mut bufs, &[]);
    let want: Vec<f32> = a.iter().map(|v| v + 1.0).collect();
    assert_close("vector side A.I + 1", &bufs[2].as_f32(), &want, 0.0, 0.0);
    assert_close("cube side (A.I + 1).I", &bufs[3].as_f32(), &want, 0.0, 0.0);
}
