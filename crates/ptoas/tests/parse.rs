//! The parser and printer: round trips of every sample (parse, print, parse again: the
//! same IR and the same text) and the located errors of bad input.

use crate::common::data;

const SAMPLES: [&str; 12] = [
    "bidir.pto",
    "carry.pto",
    "cmo.pto",
    "comm.pto",
    "tassign.pto",
    "vadd.pto",
    "softmax.pto",
    "matmul.pto",
    "ctrl.pto",
    "mix.pto",
    "grammar.pto",
    "too_big.pto",
];

fn parse(text: &str) -> ptoas::ir::Module {
    match ptoas::parse(text, "t.pto", ptoas::Arch::A3) {
        Ok(m) => m,
        Err(e) => panic!("{e}\n{}", e.excerpt().unwrap_or("")),
    }
}

#[test]
fn every_sample_round_trips_through_the_canonical_printer() {
    for name in SAMPLES {
        let m1 = parse(&data(name));
        let text1 = ptoas::printer::print_module(&m1);
        let m2 = parse(&text1);
        assert_eq!(m1, m2, "{name}: IR after a round trip\n{text1}");
        let text2 = ptoas::printer::print_module(&m2);
        assert_eq!(text1, text2, "{name}: printing is a fixed point");
        // And the reprinted text translates to the same C++.
        let mut o = ptoas::Options::new();
        if text1.contains("addr = ") {
            o.level = ptoas::Level::Level3;
        }
        o.arch = Some(ptoas::Arch::A3);
        // (Errors keep their message; their line moves with the reprinted text.)
        assert_eq!(
            ptoas::translate(&data(name), name, &o).map_err(|e| e.message().to_string()),
            ptoas::translate(&text1, name, &o).map_err(|e| e.message().to_string()),
            "{name}: C++ of the reprinted text"
        );
    }
}

#[test]
fn spans_do_not_take_part_in_equality_but_names_and_types_do() {
    let a = parse("func.func @f(%x: index) {\n  %c = arith.addi %x, %x : index\n  return\n}");
    let b = parse("func.func @f(%x: index) {   %c = arith.addi %x, %x : index return }");
    assert_eq!(a, b);
    let c = parse("func.func @f(%x: index) { %d = arith.addi %x, %x : index return }");
    assert_ne!(a, c, "value names are part of the IR");
}

/// Checks that translating `text` fails with exactly `want` (`file:line:col: message`).
fn check_err(text: &str, level: ptoas::Level, want: &str) {
    let mut o = ptoas::Options::new();
    o.level = level;
    match ptoas::translate(text, "bad.pto", &o) {
        Ok(cpp) => panic!("expected an error `{want}`, got C++:\n{cpp}"),
        Err(e) => {
            assert_eq!(e.to_string(), want);
            assert!(e.location().is_some(), "located");
        }
    }
}

const L2: ptoas::Level = ptoas::Level::Level2;
const L3: ptoas::Level = ptoas::Level::Level3;
const TILE: &str = "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>";

#[test]
fn syntax_errors_name_the_position() {
    check_err(
        "module {\n  func.func @f() {\n    $\n  }\n}",
        L2,
        "bad.pto:3:5: unexpected character '$'",
    );
    check_err(
        "func.func @f() {\n  %a = arith.addi %b, %b : index\n  return\n}",
        L2,
        "bad.pto:2:19: use of undefined value '%b'",
    );
    check_err(
        "func.func @f() {\n  %a = arith.constant 1 : index\n  %a = arith.constant 2 : index\n  return\n}",
        L2,
        "bad.pto:3:3: redefinition of SSA value '%a'",
    );
    check_err(
        "func.func @f() {\n  return\n",
        L2,
        "bad.pto:1:16: unclosed '{': the region never ends",
    );
    check_err(
        "func.func @f() {\n  %t = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=16, rows=8, cols=16>\n  return\n}",
        L2,
        "bad.pto:2:68: conflicting 'rows' in tile_buf",
    );
    check_err(
        "func.func @f() {\n  %t = pto.alloc_tile : !pto.tile_buf<loc=vec, dtype=f32, rows=-16, cols=16>\n  return\n}",
        L2,
        "bad.pto:2:64: 'rows' must be positive, got -16",
    );
    check_err(
        "func.func @f() {\n  %c = arith.constant 1 : index\n  %d = arith.cmpi bogus, %c, %c : index\n  return\n}",
        L2,
        "bad.pto:3:19: unknown cmpi predicate 'bogus'",
    );
    check_err(
        "func.func @f(%x: !pto.ptr<f32>) {\n  %v = pto.make_tensor_view %x, shape = [], strides = [] : !pto.tensor_view<3xf32, #pto.layout<nd>\n}",
        L2,
        "bad.pto:3:1: expected '>', found '}'",
    );
}

#[test]
fn unsupported_ops_and_attributes_are_errors_not_silence() {
    check_err(
        "func.func @f() {\n  pto.frobnicate\n  return\n}",
        L2,
        "bad.pto:2:3: unsupported op 'pto.frobnicate' (docs/PTOAS.md lists the supported ops)",
    );
    check_err(
        &format!("func.func @f() {{\n  %t = pto.alloc_tile : {TILE}\n  pto.tfrob ins(%t : {TILE}) outs(%t : {TILE})\n  return\n}}"),
        L2,
        "bad.pto:3:3: unsupported op 'pto.tfrob' (docs/PTOAS.md lists the supported ops)",
    );
    check_err(
        &format!("func.func @f() {{\n  %t = pto.alloc_tile : {TILE}\n  pto.tadd ins(%t, %t : {TILE}, {TILE}) outs(%t : {TILE}) {{flavour = 3}}\n  return\n}}"),
        L2,
        "bad.pto:3:3: 'pto.tadd': unsupported attribute 'flavour'",
    );
    check_err(
        "func.func @f() {\n  %x = \"test.op\"() : () -> index\n  return\n}",
        L2,
        "bad.pto:2:8: generic op syntax \"test.op\"(...) is not supported; write the op in its custom form",
    );
}

#[test]
fn types_written_without_their_pto_prefix_read_as_the_full_spelling() {
    // MLIR drops `!pto.tile_buf` / `!pto.ptr` where the op allows one type class only.
    let body = |ptr: &str, tile: &str, tile2: &str| {
        format!(
            "func.func @f(%p: !pto.ptr<f32>) attributes {{pto.kernel_kind = #pto.kernel_kind<vector>}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %q = pto.addptr %p, %c16 : {ptr} -> {ptr}
  %v = pto.make_tensor_view %q, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
  %pv = pto.partition_view %v, offsets = [%c0, %c0], sizes = [%c16, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>
  %t = pto.alloc_tile : {tile}
  %u = pto.alloc_tile : {tile2}
  pto.tload ins(%pv : !pto.partition_tensor_view<16x16xf32>) outs(%t : {tile})
  pto.tadd ins(%t, %t : {tile}, {tile}) outs(%u : {tile2})
  pto.tstore ins(%u : {tile2}) outs(%pv : !pto.partition_tensor_view<16x16xf32>)
  return
}}"
        )
    };
    let elided = body("<f32>", &TILE["!pto.tile_buf".len()..], "<vec, 16x16xf32>");
    let full = body("!pto.ptr<f32>", TILE, "!pto.tile_buf<vec, 16x16xf32>");
    let o = ptoas::Options::new();
    let a = ptoas::translate(&elided, "t.pto", &o).map_err(|e| e.to_string());
    assert!(a.is_ok(), "{a:?}");
    assert_eq!(
        a,
        ptoas::translate(&full, "t.pto", &o).map_err(|e| e.to_string())
    );
    // A shape alone does not say which view type it is.
    check_err(
        "func.func @f(%p: <16x16xf32>) {\n  return\n}",
        L2,
        "bad.pto:1:18: cannot tell which !pto type '<...>' abbreviates; write it in full (!pto.tile_buf<...>, !pto.ptr<...>, !pto.tensor_view<...>)",
    );
}

#[test]
fn ins_lists_take_standalone_attributes_and_per_operand_types() {
    let f = |ins: &str| {
        format!("func.func @f() {{\n  %t = pto.alloc_tile : {TILE}\n  %u = pto.alloc_tile : {TILE}\n  pto.tgather ins({ins}) outs(%u : {TILE})\n  return\n}}")
    };
    let o = ptoas::Options::new();
    let standalone = ptoas::translate(
        &f(&format!(
            "%t, {{maskPattern = #pto.mask_pattern<P0101>}} : {TILE}"
        )),
        "t.pto",
        &o,
    )
    .map_err(|e| e.to_string());
    let attached = ptoas::translate(
        &f(&format!(
            "%t {{maskPattern = #pto.mask_pattern<P0101>}} : {TILE}"
        )),
        "t.pto",
        &o,
    )
    .map_err(|e| e.to_string());
    assert!(
        standalone
            .as_ref()
            .is_ok_and(|c| c.contains("MaskPattern::P0101>(")),
        "{standalone:?}"
    );
    assert_eq!(standalone, attached);
    // `ins(%a : T, %b : U)`: each operand with its own type, as `ins(%a, %b : T, U)`.
    let g = |ins: &str| {
        format!("func.func @f() {{\n  %t = pto.alloc_tile : {TILE}\n  %u = pto.alloc_tile : {TILE}\n  pto.tadd ins({ins}) outs(%u : {TILE})\n  return\n}}")
    };
    let grouped = ptoas::translate(&g(&format!("%t : {TILE}, %u : {TILE}")), "t.pto", &o)
        .map_err(|e| e.to_string());
    assert!(grouped.is_ok(), "{grouped:?}");
    assert_eq!(
        grouped,
        ptoas::translate(&g(&format!("%t, %u : {TILE}, {TILE}")), "t.pto", &o)
            .map_err(|e| e.to_string())
    );
    // The count is checked at the ')' that closes the list.
    let bad = g(&format!("%t : {TILE}, {TILE}"));
    let col = bad
        .lines()
        .nth(3)
        .and_then(|l| l.find(") outs"))
        .unwrap_or(0)
        + 1;
    check_err(
        &bad,
        L2,
        &format!("bad.pto:4:{col}: 1 input(s) but 2 type(s) in ins(...)"),
    );
}

#[test]
fn a_view_result_must_be_one_view_on_every_path() {
    let head = "func.func @f(%p: !pto.ptr<f32>, %q: !pto.ptr<f32>, %b: i1) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %v = pto.make_tensor_view %p, shape = [%c8, %c8], strides = [%c8, %c1] : !pto.tensor_view<?x?xf32>
  %w = pto.make_tensor_view %q, shape = [%c8, %c8], strides = [%c8, %c1] : !pto.tensor_view<?x?xf32>
";
    check_err(
        &format!("{head}  %r = scf.if %b -> (!pto.tensor_view<?x?xf32>) {{\n    scf.yield %v : !pto.tensor_view<?x?xf32>\n  }} else {{\n    scf.yield %w : !pto.tensor_view<?x?xf32>\n  }}\n  return\n}}"),
        L2,
        "bad.pto:6:3: %w (!pto.tensor_view<?x?xf32>) is carried out of scf.if / scf.for, but a view result must be the same view on every path",
    );
    check_err(
        &format!("{head}  %r = scf.for %i = %c1 to %c8 step %c1 iter_args(%a = %v) -> (!pto.tensor_view<?x?xf32>) {{\n    scf.yield %w : !pto.tensor_view<?x?xf32>\n  }}\n  return\n}}"),
        L2,
        "bad.pto:6:3: %w (!pto.tensor_view<?x?xf32>) is carried out of scf.if / scf.for, but a view result must be the same view on every path",
    );
}

#[test]
fn comm_ops_check_their_signals_and_attributes() {
    let head = "func.func @f(%p: !pto.ptr<f32>, %v: i32) {
  %c1 = arith.constant 1 : index
  %t = pto.make_tensor_view %p, shape = [%c1, %c1], strides = [%c1, %c1] : !pto.tensor_view<?x?xf32>
";
    check_err(
        &format!("{head}  pto.comm.tnotify(%t, %v : !pto.tensor_view<?x?xf32>, i32) {{notifyOp = #pto<notify_op set>}}\n  return\n}}"),
        L2,
        "bad.pto:4:3: 'pto.comm.tnotify': a signal is a view of i32, %t holds f32",
    );
    check_err(
        "func.func @f(%p: !pto.ptr<i32>, %v: i32) {\n  pto.comm.twait(%p, %v : !pto.ptr<i32>, i32)\n  return\n}",
        L2,
        "bad.pto:2:3: 'pto.comm.twait' needs the attribute 'cmp'",
    );
    check_err(
        &format!("{head}  pto.comm.tget(%t, %t, buf(%v) : !pto.tensor_view<?x?xf32>, !pto.tensor_view<?x?xf32>, i32) {{atomicType = #pto<atomic_type atomic_add>}}\n  return\n}}"),
        L2,
        "bad.pto:4:3: 'pto.comm.tget': unsupported attribute 'atomicType'",
    );
}

#[test]
fn a_pop_with_a_valid_extent_needs_a_dynamic_valid_shape() {
    // mix.pto's vector side pops a static 8x16 tile; give the pop an explicit extent.
    let text = data("mix.pto").replace(
        "%t = pto.tpop_from_aic {split = 1} -> !half",
        "%t = pto.tpop_from_aic(%r8, %r8) {split = 1} -> !half",
    );
    let text = text.replacen(
        "%t = pto.tpop_from_aic(",
        "%r8 = arith.constant 8 : index\n    %t = pto.tpop_from_aic(",
        1,
    );
    let e = ptoas::translate(&text, "mix.pto", &ptoas::Options::new())
        .map(|_| ())
        .map_err(|e| e.message().to_string());
    assert_eq!(
        e,
        Err("'pto.tpop_from_aic' op expects tile result to have dynamic validShape (?, ?) when valid_row/valid_col operands are provided".to_string())
    );
}

#[test]
fn tassign_is_a_level3_op() {
    check_err(
        &format!("func.func @f() {{\n  %a = arith.constant 0 : i64\n  %t = pto.alloc_tile : {TILE}\n  %u = pto.tassign %t, %a : {TILE} -> {TILE}\n  return\n}}"),
        L2,
        "bad.pto:4:3: 'pto.tassign' op binds an explicit address: only supported when --pto-level=level3",
    );
}

#[test]
fn entry_functions_return_nothing() {
    check_err(
        "func.func @k(%a: i32) -> i32 {\n  return %a : i32\n}",
        L2,
        "bad.pto:1:1: 'func.func' op PTO entry functions must return void ('@k' returns i32)",
    );
    check_err(
        "func.func @k(%a: i32) -> i32 attributes {pto.entry} {\n  return %a : i32\n}\nfunc.func private @h() {\n  return\n}",
        L2,
        "bad.pto:1:1: 'func.func' op PTO entry functions must return void ('@k' returns i32)",
    );
    // A helper that returns a value is fine beside its kernel.
    let ok = "func.func private @h(%a: i32) -> i32 {\n  return %a : i32\n}\nfunc.func @k(%a: i32) {\n  %b = func.call @h(%a) : (i32) -> i32\n  return\n}";
    let r = ptoas::translate(ok, "t.pto", &ptoas::Options::new()).map_err(|e| e.to_string());
    assert!(r.is_ok(), "{r:?}");
}

#[test]
fn a_layout_on_a_load_or_store_applies_to_a_memref_and_must_agree_with_a_view() {
    let memref = format!("func.func @f(%m: memref<16x16xf32, #pto.address_space<gm>>) {{\n  %t = pto.alloc_tile : {TILE}\n  pto.tload ins(%m : memref<16x16xf32, #pto.address_space<gm>>) outs(%t : {TILE}) {{layout = #pto.layout<dn>}}\n  return\n}}");
    let cpp = ptoas::translate(&memref, "t.pto", &ptoas::Options::new()).map_err(|e| e.to_string());
    assert!(
        cpp.as_ref().is_ok_and(|c| c.contains("pto::Layout::DN> ")),
        "{cpp:?}"
    );
    check_err(
        &format!("func.func @f(%p: !pto.ptr<f32>) {{\n  %c1 = arith.constant 1 : index\n  %c16 = arith.constant 16 : index\n  %v = pto.make_tensor_view %p, shape = [%c16, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>\n  %t = pto.alloc_tile : {TILE}\n  pto.tload ins(%v : !pto.tensor_view<?x?xf32>) outs(%t : {TILE}) {{layout = #pto.layout<dn>}}\n  return\n}}"),
        L2,
        "bad.pto:6:3: 'pto.tload': layout dn disagrees with the layout nd of %v",
    );
}

#[test]
fn cache_maintenance_refuses_what_it_cannot_address() {
    check_err(
        "func.func @f(%p: !pto.ptr<f32, ub>) {\n  pto.cmo.cacheinvalid %p single_cache_line : !pto.ptr<f32, ub>\n  return\n}",
        L2,
        "bad.pto:2:3: %p is a UB pointer; cache maintenance addresses GM",
    );
    check_err(
        "func.func @f() {\n  pto.cmo.cacheinvalid all #pto.address_space<vec>\n  return\n}",
        L2,
        "bad.pto:2:3: 'pto.cmo.cacheinvalid all' takes #pto.address_space<gm> (the data cache holds GM lines only)",
    );
    check_err(
        "func.func @f(%p: !pto.ptr<f32>) {\n  pto.cmo.cacheinvalid %p everything : !pto.ptr<f32>\n  return\n}",
        L2,
        "bad.pto:2:27: expected 'single_cache_line' or 'all', found 'everything'",
    );
    check_err(
        "func.func @f() {\n  pto.fence.barrier_all #pto.fence_scope<l2>\n  return\n}",
        L2,
        "bad.pto:2:3: 'pto.fence.barrier_all' supports the scope #pto.fence_scope<gm> only",
    );
}

#[test]
fn level_rules_use_ptoas_words() {
    check_err(
        &format!("func.func @f() {{\n  %t = pto.alloc_tile : {TILE}\n  return\n}}"),
        L3,
        "bad.pto:2:3: 'pto.alloc_tile' op requires 'addr' operand when --pto-level=level3",
    );
    check_err(
        &format!("func.func @f() {{\n  %a = arith.constant 0 : i64\n  %t = pto.alloc_tile addr = %a : {TILE}\n  return\n}}"),
        L2,
        "bad.pto:3:3: 'pto.alloc_tile' op unexpected 'addr' operand: only supported when --pto-level=level3",
    );
}

#[test]
fn pipe_ops_need_their_initialization() {
    check_err(
        &format!("func.func @f() attributes {{pto.kernel_kind = #pto.kernel_kind<cube>}} {{\n  %t = pto.alloc_tile : {TILE}\n  pto.tpush_to_aiv(%t : {TILE}) {{split = 0}}\n  return\n}}"),
        L2,
        "bad.pto:3:3: 'pto.tpush_to_aiv' requires matching frontend initialize_pipe(id = 0) in the same function",
    );
    check_err(
        "func.func @f() {\n  %b = pto.import_reserved_buffer {name = \"fifo\", peer_func = @g} -> i32\n  return\n}",
        L2,
        "bad.pto:2:3: 'pto.import_reserved_buffer' names unknown peer function '@g'",
    );
}

#[test]
fn deep_nesting_is_a_clear_error_not_a_stack_overflow() {
    let mut text = String::from("func.func @f(%c: i1) {\n");
    for _ in 0..200 {
        text.push_str("scf.if %c {\n");
    }
    for _ in 0..200 {
        text.push_str("}\n");
    }
    text.push_str("return\n}\n");
    let e = ptoas::translate(&text, "deep.pto", &ptoas::Options::new()).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("nesting deeper than 64 levels (regions, types or attributes)"),
        "{e}"
    );
    // Deep types too.
    let mut ty = String::new();
    for _ in 0..100 {
        ty.push_str("!pto.tensor_view<4x");
    }
    let text = format!("func.func @f(%x: {ty}f32) {{ return }}");
    assert!(ptoas::translate(&text, "deep.pto", &ptoas::Options::new()).is_err());
}

#[test]
fn errors_underline_the_offending_text() {
    let e = ptoas::translate(
        "func.func @f() {\n  %a = arith.addi %zz, %zz : index\n  return\n}",
        "u.pto",
        &ptoas::Options::new(),
    )
    .unwrap_err();
    assert_eq!(
        e.excerpt(),
        Some("    %a = arith.addi %zz, %zz : index\n                    ^^^")
    );
}

#[test]
fn planning_keeps_tiles_off_reserved_buffers() {
    let text = format!(
        "func.func @f() attributes {{pto.kernel_kind = #pto.kernel_kind<vector>}} {{\n  %b = pto.reserve_buffer {{name = \"fifo\", size = 4096, location = #pto.address_space<vec>, auto = false, base = 0}} -> i32\n  %t = pto.alloc_tile : {TILE}\n  %u = pto.alloc_tile : {TILE}\n  pto.tadd ins(%t, %t : {TILE}, {TILE}) outs(%u : {TILE})\n  return\n}}"
    );
    let cpp = ptoas::translate(&text, "r.pto", &ptoas::Options::new()).unwrap();
    assert!(cpp.contains("const int32_t v1 = 0;"), "{cpp}");
    assert!(
        cpp.contains("uint64_t v3 = 4096;") && cpp.contains("uint64_t v5 = 5120;"),
        "{cpp}"
    );
}

#[test]
fn recursion_is_refused() {
    check_err(
        "func.func private @g(%x: i32) -> i32 {\n  %y = func.call @g(%x) : (i32) -> i32\n  return %y : i32\n}\nfunc.func @k() {\n  return\n}",
        L2,
        "bad.pto:1:1: recursive calls (through '@g') are not supported in the generated C++",
    );
}

#[test]
fn an_input_over_the_size_limit_is_refused_before_parsing() {
    // A comment line repeated past the limit: refused at once, naming file, size and fix.
    let line = "// padding padding padding padding padding padding padding padding\n";
    let text = line.repeat(ptoas::MAX_INPUT_BYTES / line.len() + 1);
    for err in [
        ptoas::translate(&text, "big.pto", &ptoas::Options::default()).unwrap_err(),
        ptoas::parse(&text, "big.pto", ptoas::Arch::A3).unwrap_err(),
    ] {
        let msg = err.to_string();
        assert!(
            msg.contains("big.pto") && msg.contains("PTOAS_MAX_INPUT_BYTES"),
            "{msg}"
        );
    }
}
