//! Each pass on its own: what it does to the IR, and the dump-var transfer rules
//! (reference: pypto-dsl-dump.md §3.4–3.6).

mod common;

use common::*;
use pto_ir::ir::ATTR_DUMP_VARS;
use pto_ir::passes::{directions, inline, outline, ssa};
use pto_ir::{Expr, FunctionType, ParamDirection, StmtKind, Type, Var};

/// An Inline helper `helper(x, y) -> y` whose body is a pl.at scope reading `x` and storing
/// into `y`, plus a kernel call passing `x` (the nested GlobalVar call).
fn helper() -> pto_ir::Function {
    let x = Var::new("x", t2(16, 16));
    let y = Var::new("y", t2(16, 16));
    let t = Var::new("t", tile(16, 16));
    let r = Var::new("r", t2(16, 16));
    let scope = at_scope(
        vec![
            assign(
                &t,
                op("tile.load", vec![v(&x), list(&[0, 0])], shapes(&[16, 16])),
            ),
            eval(op(
                "tile.store",
                vec![v(&t), list(&[0, 0]), v(&y)],
                pto_ir::ir::Attrs::new(),
            )),
        ],
        &[],
    );
    let k = Var::new("k_out", t2(16, 16));
    func(
        "helper",
        FunctionType::Inline,
        &[(&x, ParamDirection::In), (&y, ParamDirection::In)],
        vec![t2(16, 16)],
        vec![
            scope,
            assign(&k, call("copy", vec![v(&x), v(&y)], t2(16, 16), &[])),
            assign(&r, v(&k)),
            ret(&[&r]),
        ],
    )
}

#[test]
fn inline_transfers_call_site_tags_to_scopes_and_nested_calls() {
    let a = Var::new("a", t2(16, 16));
    let b = Var::new("b", t2(16, 16));
    let unused = Var::new("unused", t2(16, 16));
    let res = Var::new("res", t2(16, 16));
    let orch = func(
        "main",
        FunctionType::Orchestration,
        &[
            (&a, ParamDirection::In),
            (&b, ParamDirection::Out),
            (&unused, ParamDirection::In),
        ],
        vec![t2(16, 16)],
        vec![
            assign(
                &res,
                call("helper", vec![v(&a), v(&b)], t2(16, 16), &[&a, &unused]),
            ),
            ret(&[&res]),
        ],
    );
    let p = inline::run(program(vec![
        copy_kernel("copy", 16, 16, false),
        helper(),
        orch,
    ]))
    .unwrap();
    assert_eq!(
        p.functions
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>(),
        ["copy", "main"],
        "the Inline function is deleted"
    );
    let main = p.function("main").unwrap();
    // The scope reads `a` (the parameter it was spliced from): tagged; `unused` is dropped.
    let sc = scopes(&main.body);
    assert_eq!(sc.len(), 1);
    assert_eq!(sc[0].attrs.vars(ATTR_DUMP_VARS), std::slice::from_ref(&a));
    // The nested kernel call passes `a`: stamped; nothing else.
    let calls = fn_calls(&main.body);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].function_name(), Some("copy"));
    assert_eq!(calls[0].dump_vars(), std::slice::from_ref(&a));
    // Body variables are fresh copies named `<name>_inline<N>`.
    let text = pto_ir::printer::print_function_text(main);
    assert!(text.contains("_inline"), "{text}");
}

#[test]
fn inline_carries_tags_across_several_levels() {
    // outer(x) calls helper(x, x) passing its parameter through: a tag at outer's call
    // site reaches the scope two levels down.
    let x = Var::new("x", t2(16, 16));
    let o = Var::new("o", t2(16, 16));
    let r = Var::new("r", t2(16, 16));
    let outer = func(
        "outer",
        FunctionType::Inline,
        &[(&x, ParamDirection::In), (&o, ParamDirection::In)],
        vec![t2(16, 16)],
        vec![
            assign(&r, call("helper", vec![v(&x), v(&o)], t2(16, 16), &[])),
            ret(&[&r]),
        ],
    );
    let a = Var::new("a", t2(16, 16));
    let b = Var::new("b", t2(16, 16));
    let res = Var::new("res", t2(16, 16));
    let orch = func(
        "main",
        FunctionType::Orchestration,
        &[(&a, ParamDirection::In), (&b, ParamDirection::Out)],
        vec![t2(16, 16)],
        vec![
            assign(&res, call("outer", vec![v(&a), v(&b)], t2(16, 16), &[&a])),
            ret(&[&res]),
        ],
    );
    let p = inline::run(program(vec![
        copy_kernel("copy", 16, 16, false),
        helper(),
        outer,
        orch,
    ]))
    .unwrap();
    let main = p.function("main").unwrap();
    assert_eq!(
        scopes(&main.body)[0].attrs.vars(ATTR_DUMP_VARS),
        std::slice::from_ref(&a)
    );
    assert_eq!(fn_calls(&main.body)[0].dump_vars(), [a]);
}

#[test]
fn inline_recursion_is_an_error_naming_the_function() {
    let x = Var::new("x", t2(16, 16));
    let r = Var::new("r", t2(16, 16));
    let rec = func(
        "rec",
        FunctionType::Inline,
        &[(&x, ParamDirection::In)],
        vec![t2(16, 16)],
        vec![
            assign(&r, call("rec", vec![v(&x)], t2(16, 16), &[])),
            ret(&[&r]),
        ],
    );
    let a = Var::new("a", t2(16, 16));
    let res = Var::new("res", t2(16, 16));
    let orch = func(
        "main",
        FunctionType::Orchestration,
        &[(&a, ParamDirection::In)],
        vec![],
        vec![assign(&res, call("rec", vec![v(&a)], t2(16, 16), &[]))],
    );
    let e = inline::run(program(vec![rec, orch])).unwrap_err();
    assert!(e.to_string().contains("recursive"), "{e}");
    assert!(
        e.to_string()
            .contains("Hint: Inline functions cannot call themselves"),
        "{e}"
    );
}

#[test]
fn ssa_versions_loops_and_keeps_tags_on_the_value_they_name() {
    // q = param; tagged; q = copy(q, o) (rebinding); a pl.at scope tagged with the OLD q
    // (forward-sticky) that reads the NEW q: after SSA the scope's tag names q__ssa_v0 and
    // its body reads q__ssa_v1 — so the outliner will drop the tag.
    let q = Var::new("q", t2(16, 16));
    let o = Var::new("o", t2(16, 16));
    let q2 = Var::new("q", t2(16, 16));
    let t = Var::new("t", tile(16, 16));
    let body = vec![
        assign(&q2, call("copy", vec![v(&q), v(&o)], t2(16, 16), &[&q])),
        at_scope(
            vec![
                assign(
                    &t,
                    op("tile.load", vec![v(&q2), list(&[0, 0])], shapes(&[16, 16])),
                ),
                eval(op(
                    "tile.store",
                    vec![v(&t), list(&[0, 0]), v(&o)],
                    pto_ir::ir::Attrs::new(),
                )),
            ],
            &[&q],
        ),
    ];
    let orch = func(
        "main",
        FunctionType::Orchestration,
        &[(&q, ParamDirection::In), (&o, ParamDirection::Out)],
        vec![],
        body,
    );
    let p = ssa::run(program(vec![copy_kernel("copy", 16, 16, false), orch])).unwrap();
    let main = p.function("main").unwrap();
    let call_dumps = fn_calls(&main.body)[0].dump_vars().to_vec();
    assert_eq!(names(&call_dumps), ["q__ssa_v0"]);
    let sc = &scopes(&main.body)[0];
    assert_eq!(names(sc.attrs.vars(ATTR_DUMP_VARS)), ["q__ssa_v0"]);
    assert!(pto_ir::ir::vars_read(&sc.body)
        .iter()
        .any(|x| x.name() == "q__ssa_v1"));
    // Outlining drops the tag: the dispatch takes q__ssa_v1, not the tagged value.
    let p = outline::run(p).unwrap();
    let dispatch = fn_calls(&p.function("main").unwrap().body)
        .into_iter()
        .find(|c| c.function_name() == Some("main_incore_0"))
        .unwrap();
    assert!(dispatch.dump_vars().is_empty());
}

#[test]
fn ssa_makes_loop_carried_values_iter_args() {
    let n = Var::new("n", Type::Scalar(pto_ir::DataType::Index));
    let acc0 = Var::new("acc", Type::Scalar(pto_ir::DataType::Index));
    let acc1 = Var::new("acc", Type::Scalar(pto_ir::DataType::Index));
    let i = Var::new("i", Type::Scalar(pto_ir::DataType::Index));
    let after = Var::new("after", Type::Scalar(pto_ir::DataType::Index));
    let add = Expr::Binary {
        op: pto_ir::BinOp::Add,
        lhs: Box::new(v(&acc0)),
        rhs: Box::new(v(&i)),
        dtype: pto_ir::DataType::Index,
    };
    let lp = pto_ir::Stmt::new(
        StmtKind::For(Box::new(pto_ir::ForStmt {
            var: i.clone(),
            start: Expr::index(0),
            stop: v(&n),
            step: Expr::index(1),
            iter_args: vec![],
            body: vec![assign(&acc1, add)],
            yields: vec![],
            results: vec![],
        })),
        span(5),
    );
    let f = func(
        "main",
        FunctionType::Orchestration,
        &[(&n, ParamDirection::In)],
        vec![],
        vec![assign(&acc0, Expr::index(0)), lp, assign(&after, v(&acc1))],
    );
    let p = ssa::run(program(vec![f])).unwrap();
    let text = pto_ir::printer::print_function_text(p.function("main").unwrap());
    assert!(
        text.contains("for i__ssa_v0, (acc__ssa_v1,) in pl.range(0, n__ssa_v0, 1, init_values=(acc__ssa_v0,)):"),
        "{text}"
    );
    assert!(
        text.contains("acc__ssa_v3 = pl.yield_(acc__ssa_v2)"),
        "{text}"
    );
    assert!(
        text.contains("after__ssa_v0: pl.Scalar[pl.INDEX] = acc__ssa_v3"),
        "{text}"
    );
}

#[test]
fn ssa_refuses_a_value_bound_only_inside_a_loop() {
    let n = Var::new("n", Type::Scalar(pto_ir::DataType::Index));
    let x = Var::new("x", Type::Scalar(pto_ir::DataType::Index));
    let i = Var::new("i", Type::Scalar(pto_ir::DataType::Index));
    let y = Var::new("y", Type::Scalar(pto_ir::DataType::Index));
    let lp = pto_ir::Stmt::new(
        StmtKind::For(Box::new(pto_ir::ForStmt {
            var: i.clone(),
            start: Expr::index(0),
            stop: v(&n),
            step: Expr::index(1),
            iter_args: vec![],
            body: vec![assign(&x, v(&i))],
            yields: vec![],
            results: vec![],
        })),
        span(5),
    );
    let f = func(
        "main",
        FunctionType::Orchestration,
        &[(&n, ParamDirection::In)],
        vec![],
        vec![lp, assign(&y, v(&x))],
    );
    let e = ssa::run(program(vec![f])).unwrap_err();
    assert!(
        e.to_string()
            .contains("'x' is read here but bound only inside a loop"),
        "{e}"
    );
    assert_eq!(e.span().map(|s| s.line), Some(3));
}

#[test]
fn outline_captures_inputs_derives_directions_and_sorts_dumps_by_argument() {
    let a = Var::new("a", t2(16, 16));
    let b = Var::new("b", t2(16, 16));
    let io = Var::new("io", t2(16, 16));
    let out = Var::new("out", t2(16, 16));
    let (ta, tb, tio, s) = (
        Var::new("ta", tile(16, 16)),
        Var::new("tb", tile(16, 16)),
        Var::new("tio", tile(16, 16)),
        Var::new("s", tile(16, 16)),
    );
    let stored = Var::new("stored", t2(16, 16));
    let none = pto_ir::ir::Attrs::new;
    // Reads b before a; writes out (write-only) and io (read and written). The scope is
    // tagged with [io, out, a, ghost] (ghost not captured).
    let ghost = Var::new("ghost", t2(16, 16));
    let scope = at_scope(
        vec![
            assign(
                &tb,
                op("tile.load", vec![v(&b), list(&[0, 0])], shapes(&[16, 16])),
            ),
            assign(
                &ta,
                op("tile.load", vec![v(&a), list(&[0, 0])], shapes(&[16, 16])),
            ),
            assign(
                &tio,
                op("tile.load", vec![v(&io), list(&[0, 0])], shapes(&[16, 16])),
            ),
            assign(&s, op("tile.add", vec![v(&ta), v(&tb)], none())),
            eval(op("tile.store", vec![v(&s), list(&[0, 0]), v(&io)], none())),
            assign(
                &stored,
                op("tile.store", vec![v(&tio), list(&[0, 0]), v(&out)], none()),
            ),
        ],
        &[&io, &out, &a, &ghost],
    );
    let after = Var::new("after", t2(16, 16));
    let f = func(
        "main",
        FunctionType::Opaque,
        &[
            (&a, ParamDirection::In),
            (&b, ParamDirection::In),
            (&io, ParamDirection::InOut),
            (&out, ParamDirection::Out),
            (&ghost, ParamDirection::In),
        ],
        vec![],
        vec![scope, assign(&after, v(&stored))],
    );
    let p = outline::run(program(vec![f])).unwrap();
    let main = p.function("main").unwrap();
    assert_eq!(
        main.ftype,
        FunctionType::Orchestration,
        "Opaque is promoted"
    );
    let k = p.function("main_incore_0").unwrap();
    let dirs: Vec<_> = k
        .params
        .iter()
        .map(|p| (p.var.name(), p.direction))
        .collect();
    assert_eq!(
        dirs,
        [
            ("b", ParamDirection::In),
            ("a", ParamDirection::In),
            ("io", ParamDirection::InOut),
            ("out", ParamDirection::Out),
        ],
        "first-read order; a dump mark is not a read (out stays Out)"
    );
    assert_eq!(k.return_types, [t2(16, 16)]);
    let dispatch = &fn_calls(&main.body)[0];
    assert_eq!(
        names(dispatch.dump_vars()),
        ["a", "io", "out"],
        "argument order, ghost dropped"
    );
    assert!(dispatch.submit.is_none());
    // The scope's result is bound by the dispatch.
    match &main.body[0].kind {
        StmtKind::Assign { targets, .. } => assert_eq!(targets, &[stored]),
        other => panic!("{other:?}"),
    }
}

/// Two scopes: the first loads `t` (of `memory`) from `a`, the second stores it into `o`.
fn tile_across_scopes(memory: pto_ir::MemorySpace) -> pto_ir::Function {
    let a = Var::new("a", t2(16, 16));
    let t = Var::new("t", Type::tile(16, 16, pto_ir::DataType::Fp32, memory));
    let o = Var::new("o", t2(16, 16));
    let mut load = shapes(&[16, 16]);
    load.set("target_memory", pto_ir::ir::AttrValue::Memory(memory));
    func(
        "main",
        FunctionType::Orchestration,
        &[(&a, ParamDirection::In), (&o, ParamDirection::Out)],
        vec![],
        vec![
            at_scope(
                vec![assign(
                    &t,
                    op("tile.load", vec![v(&a), list(&[0, 0])], load),
                )],
                &[],
            ),
            at_scope(
                vec![eval(op(
                    "tile.store",
                    vec![v(&t), list(&[0, 0]), v(&o)],
                    pto_ir::ir::Attrs::new(),
                ))],
                &[],
            ),
        ],
    )
}

#[test]
fn outline_hands_a_vector_tile_to_a_later_scope_through_a_workspace() {
    let p = outline::run(program(vec![tile_across_scopes(pto_ir::MemorySpace::Vec)])).unwrap();
    let main = &p.functions[0];
    // A workspace tensor, the first kernel storing into it, the second reading it.
    let StmtKind::Assign { targets, value } = &main.body[0].kind else {
        panic!("{:?}", main.body[0])
    };
    assert_eq!(targets[0].name(), "t_ws");
    assert_eq!(
        value.as_call().and_then(|c| c.op_name()),
        Some("tensor.create")
    );
    let second = &p.functions[2];
    let StmtKind::Assign { value, .. } = &second.body[0].kind else {
        panic!("{:?}", second.body[0])
    };
    let load = value.as_call().unwrap();
    assert_eq!(load.op_name(), Some("tile.load"));
    assert_eq!(second.params[0].var.name(), "t_ws");
}

#[test]
fn outline_hands_a_mat_tile_to_a_later_scope_loading_it_into_mat() {
    let p = outline::run(program(vec![tile_across_scopes(pto_ir::MemorySpace::Mat)])).unwrap();
    let second = &p.functions[2];
    let StmtKind::Assign { targets, value } = &second.body[0].kind else {
        panic!("{:?}", second.body[0])
    };
    assert_eq!(value.as_call().and_then(|c| c.op_name()), Some("tile.load"));
    assert_eq!(
        targets[0].ty().as_tile().map(|t| t.memory),
        Some(pto_ir::MemorySpace::Mat)
    );
    assert_eq!(second.params[0].var.name(), "t_ws");
}

#[test]
fn directions_stamp_every_dispatch_and_check_arity() {
    let a = Var::new("a", t2(16, 16));
    let o = Var::new("o", t2(16, 16));
    let r = Var::new("r", t2(16, 16));
    let good = func(
        "main",
        FunctionType::Orchestration,
        &[(&a, ParamDirection::In), (&o, ParamDirection::Out)],
        vec![],
        vec![assign(
            &r,
            call("copy", vec![v(&a), v(&o)], t2(16, 16), &[]),
        )],
    );
    let p =
        directions::derive_call_directions(program(vec![copy_kernel("copy", 16, 16, false), good]))
            .unwrap();
    let c = &fn_calls(&p.function("main").unwrap().body)[0];
    assert_eq!(
        c.attrs.strs(pto_ir::ir::ATTR_ARG_DIRECTIONS).unwrap(),
        ["In".to_string(), "Out".to_string()]
    );
    let bad = func(
        "main",
        FunctionType::Orchestration,
        &[(&a, ParamDirection::In)],
        vec![],
        vec![assign(&r, call("copy", vec![v(&a)], t2(16, 16), &[]))],
    );
    let e =
        directions::derive_call_directions(program(vec![copy_kernel("copy", 16, 16, false), bad]))
            .unwrap_err();
    assert!(
        e.to_string()
            .contains("kernel 'copy' takes 2 argument(s), got 1"),
        "{e}"
    );
}

#[test]
fn core_types_follow_the_memories_and_mixed_kernels_are_named() {
    let mut k = copy_kernel("k", 16, 16, false);
    k.ftype = FunctionType::InCore;
    let p = directions::resolve_core_types(program(vec![k])).unwrap();
    assert_eq!(p.functions[0].ftype, FunctionType::Aiv);
    let mut g = copy_kernel("g", 16, 16, false);
    g.ftype = FunctionType::Group;
    let e = directions::resolve_core_types(program(vec![g])).unwrap_err();
    assert!(e.to_string().contains("not support yet"), "{e}");
}

#[test]
fn printing_is_deterministic_and_equality_maps_variables() {
    let p1 = program(vec![copy_kernel("copy", 16, 16, true)]);
    let p2 = program(vec![copy_kernel("copy", 16, 16, true)]);
    let header = "test";
    assert_eq!(
        pto_ir::printer::print_program(&p1, header),
        pto_ir::printer::print_program(&p2, header)
    );
    pto_ir::equal::structurally_equal(&p1, &p2).unwrap();
    let p3 = program(vec![copy_kernel("copy", 16, 16, false)]);
    let d = pto_ir::equal::structurally_equal(&p1, &p3).unwrap_err();
    assert!(d.path.starts_with("P.copy.body"), "{d}");
}

/// An Inline helper `fill(x, y: Out) -> y` whose pl.at scope stores into `y` column block by
/// column block in a loop (`y = pl.store(t, [0, c * 16], y)`), called by an orchestration.
fn loop_storing_helper_program() -> pto_ir::Program {
    let x = Var::new("x", t2(16, 64));
    let y = Var::new("y", t2(16, 64));
    let y_in_loop = Var::new("y", t2(16, 64));
    let c = Var::new("c", Type::Scalar(pto_ir::DataType::Index));
    let t = Var::new("t", tile(16, 16));
    let col = Expr::Binary {
        op: pto_ir::BinOp::Mul,
        lhs: Box::new(v(&c)),
        rhs: Box::new(Expr::index(16)),
        dtype: pto_ir::DataType::Index,
    };
    let at = Expr::List(vec![Expr::index(0), col]);
    let lp = pto_ir::Stmt::new(
        StmtKind::For(Box::new(pto_ir::ForStmt {
            var: c.clone(),
            start: Expr::index(0),
            stop: Expr::index(4),
            step: Expr::index(1),
            iter_args: vec![],
            body: vec![
                assign(
                    &t,
                    op("tile.load", vec![v(&x), at.clone()], shapes(&[16, 16])),
                ),
                assign(
                    &y_in_loop,
                    op(
                        "tile.store",
                        vec![v(&t), at, v(&y)],
                        pto_ir::ir::Attrs::new(),
                    ),
                ),
            ],
            yields: vec![],
            results: vec![],
        })),
        span(5),
    );
    let fill = func(
        "fill",
        FunctionType::Inline,
        &[(&x, ParamDirection::In), (&y, ParamDirection::Out)],
        vec![t2(16, 64)],
        vec![at_scope(vec![lp], &[]), ret(&[&y_in_loop])],
    );
    let (ox, oy, r) = (
        Var::new("a", t2(16, 64)),
        Var::new("b", t2(16, 64)),
        Var::new("b", t2(16, 64)),
    );
    let orch = func(
        "main",
        FunctionType::Orchestration,
        &[(&ox, ParamDirection::In), (&oy, ParamDirection::Out)],
        vec![t2(16, 64)],
        vec![
            assign(&r, call("fill", vec![v(&ox), v(&oy)], t2(16, 64), &[])),
            ret(&[&r]),
        ],
    );
    program(vec![fill, orch])
}

#[test]
fn an_inline_helper_storing_into_its_out_parameter_in_a_loop_outlines_one_kernel() {
    let p = inline::run(loop_storing_helper_program()).unwrap();
    let p = ssa::run(p).unwrap();
    let p = outline::run(p).unwrap();
    let kernels: Vec<&pto_ir::Function> = p
        .functions
        .iter()
        .filter(|f| f.ftype == FunctionType::InCore)
        .collect();
    assert_eq!(kernels.len(), 1);
    // The tensor the loop stores into leaves the kernel as the caller's `b`: an output.
    let dirs: Vec<(String, ParamDirection)> = kernels[0]
        .params
        .iter()
        .map(|p| (p.var.name().to_string(), p.direction))
        .collect();
    assert!(
        dirs.iter()
            .any(|(n, d)| n.starts_with('b') && *d != ParamDirection::In),
        "{dirs:?}"
    );
    let text = pto_ir::printer::print_function_text(p.function("main").unwrap());
    assert!(text.contains("return b__ssa_v"), "{text}");
}

/// `with pl.at(): for j in range(2): (n0 = j * 16; c = A @ B[:, n0:n0+16]; o[:, n0:] = c)`:
/// a mixed scope whose body is one loop carrying the output tensor.
fn mixed_loop_scope() -> pto_ir::Function {
    use pto_ir::ir::{AttrValue, Attrs};
    use pto_ir::{DataType, MemorySpace};
    let half = |r, c| Type::tensor(vec![r, c], DataType::Fp16);
    let (a, b) = (Var::new("a", half(16, 16)), Var::new("b", half(16, 32)));
    let o = Var::new("o", t2(16, 32));
    let (j, n0) = (
        Var::new("j", Type::Scalar(DataType::Index)),
        Var::new("n0", Type::Scalar(DataType::Index)),
    );
    let (o_it, o2, o_res) = (
        Var::new("o", t2(16, 32)),
        Var::new("o", t2(16, 32)),
        Var::new("o", t2(16, 32)),
    );
    let mem = |m: MemorySpace| {
        let mut k = Attrs::new();
        k.set("target_memory", AttrValue::Memory(m));
        k
    };
    let mat = |m: MemorySpace| {
        let mut k = shapes(&[16, 16]);
        k.set("target_memory", AttrValue::Memory(m));
        k
    };
    let tl = |n: &str, m| Var::new(n, Type::tile(16, 16, DataType::Fp16, m));
    let (ma, la, mb, rb) = (
        tl("ma", MemorySpace::Mat),
        tl("la", MemorySpace::Left),
        tl("mb", MemorySpace::Mat),
        tl("rb", MemorySpace::Right),
    );
    let c = Var::new("c", Type::tile(16, 16, DataType::Fp32, MemorySpace::Acc));
    let cv = Var::new("cv", tile(16, 16));
    let at_n0 = Expr::List(vec![Expr::index(0), v(&n0)]);
    let body = vec![
        assign(
            &n0,
            Expr::Binary {
                op: pto_ir::BinOp::Mul,
                lhs: Box::new(v(&j)),
                rhs: Box::new(Expr::index(16)),
                dtype: DataType::Index,
            },
        ),
        assign(
            &ma,
            op(
                "tile.load",
                vec![v(&a), list(&[0, 0])],
                mat(MemorySpace::Mat),
            ),
        ),
        assign(&la, op("tile.move", vec![v(&ma)], mem(MemorySpace::Left))),
        assign(
            &mb,
            op(
                "tile.load",
                vec![v(&b), at_n0.clone()],
                mat(MemorySpace::Mat),
            ),
        ),
        assign(&rb, op("tile.move", vec![v(&mb)], mem(MemorySpace::Right))),
        assign(&c, op("tile.matmul", vec![v(&la), v(&rb)], Attrs::new())),
        assign(&cv, op("tile.move", vec![v(&c)], mem(MemorySpace::Vec))),
        assign(
            &o2,
            op("tile.store", vec![v(&cv), at_n0, v(&o_it)], Attrs::new()),
        ),
    ];
    let lp = pto_ir::Stmt::new(
        StmtKind::For(Box::new(pto_ir::ForStmt {
            var: j.clone(),
            start: Expr::index(0),
            stop: Expr::index(2),
            step: Expr::index(1),
            iter_args: vec![(o_it.clone(), v(&o))],
            body,
            yields: vec![v(&o2)],
            results: vec![o_res.clone()],
        })),
        span(5),
    );
    func(
        "main",
        FunctionType::Orchestration,
        &[
            (&a, ParamDirection::In),
            (&b, ParamDirection::In),
            (&o, ParamDirection::Out),
        ],
        vec![t2(16, 32)],
        vec![at_scope(vec![lp], &[]), ret(&[&o_res])],
    )
}

#[test]
fn a_mixed_scope_of_one_loop_becomes_a_cube_and_a_vector_task_per_iteration() {
    let p = outline::run(program(vec![mixed_loop_scope()])).unwrap();
    let main = p.function("main").unwrap();
    let StmtKind::For(lp) = &main.body[0].kind else {
        panic!("{:?}", main.body[0].kind)
    };
    let calls = fn_calls(&lp.body);
    assert_eq!(calls.len(), 2, "{calls:?}");
    let kernels: Vec<&pto_ir::Function> = p
        .functions
        .iter()
        .filter(|f| f.ftype == FunctionType::InCore)
        .collect();
    assert_eq!(kernels.len(), 2);
    // Both kernels compute the offset from the loop index themselves.
    for k in kernels {
        let params: Vec<&str> = k.params.iter().map(|p| p.var.name()).collect();
        assert!(params.iter().any(|n| n.starts_with('j')), "{params:?}");
        assert!(!params.iter().any(|n| n.starts_with("n0")), "{params:?}");
    }
}
