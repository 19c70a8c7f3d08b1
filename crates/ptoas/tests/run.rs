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
