//! Every name in docs/PTO_ISA.md's tables compiles as documented: the examples of supported
//! and partial rows compile (one translation unit over a fixed set of tiles), and every
//! example of an unsupported row fails with a static_assert that names the row and the page.

use pto_toolchain::CoreKind;

use crate::common::{compile_error, compile_ok};

const DOC: &str = include_str!("../../../docs/PTO_ISA.md");

/// The fixtures the examples refer to.
const FIXTURES: &str = r#"
    float* gm_f32 = reinterpret_cast<float*>(args[0]);
    bfloat16_t* gm_bf16 = reinterpret_cast<bfloat16_t*>(args[1]);
    using VF = Tile<TileType::Vec, float, 16, 64>;
    VF vf, vf2, vf3;
    Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1> vdyn(8, 32);
    Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, 16, 64, SLayout::NoneBox, 512, PadValue::Min> vpad;
    Tile<TileType::Vec, float, 8, 64> half_rows;
    Tile<TileType::Vec, float, 16, 32> half_cols, half_cols2;
    Tile<TileType::Vec, float, 16, 16> sq, sq2, sq3;
    Tile<TileType::Vec, bfloat16_t, 16, 64> vb;
    Tile<TileType::Vec, half, 16, 64> vh;
    Tile<TileType::Vec, int32_t, 16, 64> vi, vi2, vi3;
    Tile<TileType::Vec, int8_t, 16, 64> vi8;
    Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor> col;
    Tile<TileType::Vec, float, 1, 64> row;
    Tile<TileType::Vec, float, 1, 16> row16;
    Tile<TileType::Vec, bfloat16_t, 16, 64, BLayout::ColMajor, 16, 64, SLayout::RowMajor, 512> nz;
    Tile<TileType::Mat, bfloat16_t, 32, 64, BLayout::ColMajor, 32, 64, SLayout::RowMajor, 512> mat;
    Tile<TileType::Mat, bfloat16_t, 64, 32, BLayout::RowMajor, 64, 32, SLayout::ColMajor, 512> matzn;
    Tile<TileType::Left, bfloat16_t, 32, 64, BLayout::RowMajor, 32, 64, SLayout::RowMajor, 512> left;
    Tile<TileType::Right, bfloat16_t, 64, 32, BLayout::RowMajor, 64, 32, SLayout::ColMajor, 512> right;
    TileAcc<float, 32, 32> acc;
    TileLeft<int8_t, 32, 64> left8;
    TileRight<int8_t, 64, 32> right8;
    TileAcc<int32_t, 32, 32> acc32;
    Tile<TileType::Bias, float, 1, 32> bias;
    GlobalTensor<float, Shape<1, 1, 1, 16, 64>, Stride<1024, 1024, 1024, 64, 1>> gf(gm_f32);
    GlobalTensor<float, Shape<1, 1, 1, 16, 1>, Stride<16, 16, 16, 1, 16>, Layout::DN> gdn(gm_f32);
    GlobalTensor<bfloat16_t, Shape<1, 1, 1, 32, 64>, Stride<2048, 2048, 2048, 64, 1>> gb2(gm_bf16);
    GlobalTensor<float, Shape<1, 1, 1, 32, 32>, Stride<1024, 1024, 1024, 32, 1>> gacc(gm_f32);
    GlobalTensor<bfloat16_t, Shape<1, 1, 1, 32, 32>, Stride<1024, 1024, 1024, 32, 1>> gacc_b(gm_bf16);
    TPipe<0, Direction::DIR_C2V, 8192, 4> c2v(nullptr, 0, 0);
    TPipe<1, Direction::DIR_BOTH, 16384, 4, 4, true> both(nullptr, 0, 0);
    Tile<TileType::Vec, float, 1, 32> s32;
    Tile<TileType::Vec, uint32_t, 1, 32> ix32;
    Tile<TileType::Vec, float, 1, 64> d64, d64b, d64c;
    Tile<TileType::Vec, float, 1, 256> l256, l256b;
"#;

/// One table row.
struct Row {
    name: String,
    status: String,
    example: String,
}

/// The rows of every table whose header is `| Name | Kind | Status | Example | Notes |`.
fn rows() -> Vec<Row> {
    let mut out = Vec::new();
    let mut in_table = false;
    for line in DOC.lines() {
        if line.starts_with("| Name | Kind | Status | Example |") {
            in_table = true;
            continue;
        }
        if !line.starts_with('|') {
            in_table = false;
            continue;
        }
        if !in_table || line.starts_with("|---") {
            continue;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        assert!(cells.len() >= 6, "malformed row: {line}");
        let unquote = |s: &str| s.trim_matches('`').to_string();
        out.push(Row {
            name: unquote(cells[1]),
            status: cells[3].to_string(),
            example: unquote(cells[4]),
        });
    }
    out
}

fn translation_unit(examples: &[(String, String)]) -> String {
    let mut tu = String::from(
        "#include <cstdint>\n#include <pto/pto-inst.hpp>\n#include \"tensor.h\"\n#include \"intrinsic.h\"\n#include \"pipe_sync.h\"\nusing namespace pto;\n",
    );
    for (i, (name, example)) in examples.iter().enumerate() {
        tu += &format!(
            "// {name}\nextern \"C\" void example_{i}(__gm__ int64_t* args) {{\n{FIXTURES}\n    {{ {example} }}\n}}\n"
        );
    }
    tu += "extern \"C\" void kernel_entry(__gm__ int64_t* args) { (void)args; }\n";
    tu
}

#[test]
fn every_documented_name_compiles_as_documented() {
    let rows = rows();
    assert!(rows.len() > 150, "only {} rows parsed", rows.len());
    let mut supported = Vec::new();
    let mut unsupported = Vec::new();
    for r in &rows {
        assert!(!r.example.is_empty(), "{}: no example", r.name);
        match r.status.as_str() {
            "supported" | "partial" => supported.push((r.name.clone(), r.example.clone())),
            "not supported" => unsupported.push((r.name.clone(), r.example.clone())),
            other => panic!("{}: unknown status {other:?}", r.name),
        }
    }
    compile_ok(
        "names_supported",
        &translation_unit(&supported),
        CoreKind::Aiv,
    );

    let stderr = compile_error(
        "names_unsupported",
        &translation_unit(&unsupported),
        CoreKind::Aiv,
    );
    for (name, _) in &unsupported {
        let short = name.rsplit("::").next().unwrap_or(name);
        let found = stderr.lines().any(|l| {
            l.contains("static assertion failed")
                && l.contains(short)
                && l.contains("docs/PTO_ISA.md")
        });
        assert!(
            found,
            "{name}: no static_assert naming it and docs/PTO_ISA.md in:\n{stderr}"
        );
    }
}
