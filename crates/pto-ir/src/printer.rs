//! The IR as DSL source: a `@pl.program` class that the front end (`pl.parse`) reads back
//! into an equal program ([`crate::equal::structurally_equal`]).
//!
//! Every construct has one printed form:
//!
//! | IR | printed |
//! |---|---|
//! | operation call | `pl.tile.load(a, [0, 0], shapes=[16, 16])` (keyword arguments typed) |
//! | function call | `self.k(a, b, attrs={"dump_vars": [a], "arg_directions": ["In", "Out"]})` |
//! | submit | `out, tid = pl.submit(self.k, a, b, deps=[t], dumps=[a], attrs={...})` |
//! | loop with carried values | `for i, (x,) in pl.range(0, 4, 1, init_values=(x0,)):` ... `r = pl.yield_(y)` |
//! | if with merged values | `if c:` ... `r = pl.yield_(a)` `else:` ... `r = pl.yield_(b)` |
//! | `pl.at` scope | `with pl.at(level=pl.Level.CORE_GROUP, deps=[t], dumps=[a]) as tid:` |
//! | manual scope | `with pl.manual_scope():` |
//!
//! Variables print under their name hints. Before SSA a name is a Python variable: two
//! variables named `acc` (a rebinding, a value carried around a loop) must print as the same
//! name for the program to mean the same thing when read back, so names are not made
//! unique — except parameters, which must differ from each other. (The front end keeps
//! every `dump_vars` entry a current binding of its name, and SSA names are unique, so
//! every entry reads back as the value it names.)

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use crate::ir::{
    AttrValue, Attrs, BinOp, Call, Callee, Expr, Function, Program, ScopeKind, Stmt, StmtKind,
    UnOp, Var, ATTR_DUMP_VARS,
};
use crate::types::{DataType, ParamDirection, Type};

/// The source text of `program`, with `header` as its first comment line.
pub fn print_program(program: &Program, header: &str) -> String {
    let mut out = String::new();
    for line in header.lines() {
        let _ = writeln!(out, "# {line}");
    }
    out.push_str("import pypto.language as pl\n\n\n@pl.program\nclass ");
    out.push_str(&program.name);
    out.push_str(":\n");
    if program.functions.is_empty() {
        out.push_str("    pass\n");
    }
    for (i, f) in program.functions.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        print_function(&mut out, f, true);
    }
    out
}

/// The source text of one function (a method of the program class, indented by 4).
pub fn print_function_text(f: &Function) -> String {
    let mut out = String::new();
    print_function(&mut out, f, true);
    out
}

/// The source text of one function on its own: a module-level `@pl.function` without
/// `self` (what `pl.parse` of a single function reads back).
pub fn print_standalone_function(f: &Function) -> String {
    let mut out = String::from("import pypto.language as pl\n\n\n");
    let mut method = String::new();
    print_function(&mut method, f, false);
    for line in method.lines() {
        out.push_str(line.strip_prefix("    ").unwrap_or(line));
        out.push('\n');
    }
    out
}

struct Names {
    by_id: HashMap<u64, String>,
    used: HashSet<String>,
}

impl Names {
    fn new() -> Names {
        let mut used = HashSet::new();
        // Names the printed source needs for itself.
        for reserved in ["pl", "self"] {
            used.insert(reserved.to_string());
        }
        Names {
            by_id: HashMap::new(),
            used,
        }
    }

    /// A parameter: a name no other parameter (or reserved word) has.
    fn define_unique(&mut self, v: &Var) -> String {
        if let Some(n) = self.by_id.get(&v.id()) {
            return n.clone();
        }
        let base = sanitize(v.name());
        let mut name = base.clone();
        let mut k = 1;
        while self.used.contains(&name) || is_python_keyword(&name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        self.used.insert(name.clone());
        self.by_id.insert(v.id(), name.clone());
        name
    }

    /// A variable of a body: its name hint (reserved words suffixed).
    fn define(&mut self, v: &Var) -> String {
        if let Some(n) = self.by_id.get(&v.id()) {
            return n.clone();
        }
        let mut name = sanitize(v.name());
        if is_python_keyword(&name) || name == "pl" || name == "self" {
            name.push('_');
        }
        self.by_id.insert(v.id(), name.clone());
        name
    }

    fn get(&mut self, v: &Var) -> String {
        match self.by_id.get(&v.id()) {
            Some(n) => n.clone(),
            None => self.define(v),
        }
    }
}

fn sanitize(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 'v');
    }
    s
}

fn is_python_keyword(s: &str) -> bool {
    matches!(
        s,
        "False"
            | "None"
            | "True"
            | "and"
            | "as"
            | "assert"
            | "async"
            | "await"
            | "break"
            | "class"
            | "continue"
            | "def"
            | "del"
            | "elif"
            | "else"
            | "except"
            | "finally"
            | "for"
            | "from"
            | "global"
            | "if"
            | "import"
            | "in"
            | "is"
            | "lambda"
            | "nonlocal"
            | "not"
            | "or"
            | "pass"
            | "raise"
            | "return"
            | "try"
            | "while"
            | "with"
            | "yield"
            | "min"
            | "max"
            | "range"
            | "float"
    )
}

fn param_annotation(ty: &Type, direction: ParamDirection) -> String {
    match direction {
        ParamDirection::In => ty.annotation(),
        ParamDirection::Out => format!("pl.Out[{}]", ty.annotation()),
        ParamDirection::InOut => format!("pl.InOut[{}]", ty.annotation()),
    }
}

fn print_function(out: &mut String, f: &Function, method: bool) {
    let mut names = Names::new();
    let _ = write!(
        out,
        "    @pl.function(type=pl.FunctionType.{}",
        f.ftype.name()
    );
    if !f.attrs.is_empty() {
        let _ = write!(out, ", attrs={}", attrs_dict(&f.attrs, &mut names));
    }
    out.push_str(")\n");
    let _ = write!(out, "    def {}(", f.name);
    if method {
        out.push_str("self");
    }
    for (i, p) in f.params.iter().enumerate() {
        let n = names.define_unique(&p.var);
        let sep = if i == 0 && !method { "" } else { ", " };
        let _ = write!(
            out,
            "{sep}{n}: {}",
            param_annotation(p.var.ty(), p.direction)
        );
    }
    out.push(')');
    match f.return_types.len() {
        0 => {}
        1 => {
            let _ = write!(out, " -> {}", f.return_types[0].annotation());
        }
        _ => {
            let _ = write!(
                out,
                " -> tuple[{}]",
                f.return_types
                    .iter()
                    .map(Type::annotation)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    out.push_str(":\n");
    print_body(out, &f.body, 2, &mut names, None);
}

fn indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("    ");
    }
}

fn print_body(
    out: &mut String,
    body: &[Stmt],
    level: usize,
    names: &mut Names,
    yields: Option<(&[Expr], &[Var])>,
) {
    let has_yield = yields.is_some_and(|(y, _)| !y.is_empty());
    if body.is_empty() && !has_yield {
        indent(out, level);
        out.push_str("pass\n");
        return;
    }
    for s in body {
        print_stmt(out, s, level, names);
    }
    if let Some((values, results)) = yields {
        if !values.is_empty() {
            indent(out, level);
            let targets: Vec<String> = results.iter().map(|v| names.define(v)).collect();
            let vals: Vec<String> = values.iter().map(|e| expr(e, names)).collect();
            let _ = writeln!(
                out,
                "{} = pl.yield_({})",
                targets.join(", "),
                vals.join(", ")
            );
        }
    }
}

fn print_stmt(out: &mut String, s: &Stmt, level: usize, names: &mut Names) {
    match &s.kind {
        StmtKind::Assign { targets, value } => {
            let v = expr(value, names);
            indent(out, level);
            if targets.len() == 1 {
                let t = &targets[0];
                let n = names.define(t);
                let _ = writeln!(out, "{n}: {} = {v}", t.ty().annotation());
            } else {
                let ns: Vec<String> = targets.iter().map(|t| names.define(t)).collect();
                let _ = writeln!(out, "{} = {v}", ns.join(", "));
            }
        }
        StmtKind::Eval(e) => {
            let v = expr(e, names);
            indent(out, level);
            let _ = writeln!(out, "{v}");
        }
        StmtKind::Return(vs) => {
            let v: Vec<String> = vs.iter().map(|e| expr(e, names)).collect();
            indent(out, level);
            if v.is_empty() {
                out.push_str("return\n");
            } else {
                let _ = writeln!(out, "return {}", v.join(", "));
            }
        }
        StmtKind::For(f) => {
            let start = expr(&f.start, names);
            let stop = expr(&f.stop, names);
            let step = expr(&f.step, names);
            let inits: Vec<String> = f.iter_args.iter().map(|(_, e)| expr(e, names)).collect();
            let var = names.define(&f.var);
            indent(out, level);
            if f.iter_args.is_empty() {
                let _ = writeln!(out, "for {var} in pl.range({start}, {stop}, {step}):");
            } else {
                let its: Vec<String> = f.iter_args.iter().map(|(v, _)| names.define(v)).collect();
                let _ = writeln!(
                    out,
                    "for {var}, ({},) in pl.range({start}, {stop}, {step}, init_values=({},)):",
                    its.join(", "),
                    inits.join(", ")
                );
            }
            print_body(
                out,
                &f.body,
                level + 1,
                names,
                Some((&f.yields, &f.results)),
            );
        }
        StmtKind::If(i) => {
            let c = expr(&i.cond, names);
            indent(out, level);
            let _ = writeln!(out, "if {c}:");
            print_body(
                out,
                &i.then_body,
                level + 1,
                names,
                Some((&i.then_yields, &i.results)),
            );
            if !i.else_body.is_empty() || !i.else_yields.is_empty() {
                indent(out, level);
                out.push_str("else:\n");
                print_body(
                    out,
                    &i.else_body,
                    level + 1,
                    names,
                    Some((&i.else_yields, &i.results)),
                );
            }
        }
        StmtKind::Scope(sc) => {
            indent(out, level);
            match sc.kind {
                ScopeKind::Manual => out.push_str("with pl.manual_scope()"),
                ScopeKind::At(lv) => {
                    let mut parts = vec![format!("level=pl.Level.{}", lv.name())];
                    if !sc.deps.is_empty() {
                        let d: Vec<String> = sc.deps.iter().map(|e| expr(e, names)).collect();
                        parts.push(format!("deps=[{}]", d.join(", ")));
                    }
                    let dumps = sc.attrs.vars(ATTR_DUMP_VARS);
                    if !dumps.is_empty() {
                        let d: Vec<String> = dumps.iter().map(|v| names.get(v)).collect();
                        parts.push(format!("dumps=[{}]", d.join(", ")));
                    }
                    if let Some(h) = sc.attrs.str("name_hint") {
                        parts.push(format!("name_hint={}", py_str(h)));
                    }
                    if let Some(o) = at_optimizations(&sc.attrs) {
                        parts.push(o);
                    }
                    let _ = write!(out, "with pl.at({})", parts.join(", "));
                }
            }
            if let Some(t) = &sc.task_id {
                let n = names.define(t);
                let _ = write!(out, " as {n}");
            }
            out.push_str(":\n");
            print_body(out, &sc.body, level + 1, names, None);
        }
    }
}

/// `optimizations=[...]` of a `pl.at` scope (its `split` and `slot_num` attributes).
fn at_optimizations(attrs: &crate::ir::Attrs) -> Option<String> {
    let mut items = Vec::new();
    if let Some(mode) = attrs.str("split") {
        items.push(format!("pl.split(pl.SplitMode.{mode})"));
    }
    if let Some(n) = attrs.int("slot_num") {
        items.push(format!("pl.cross_core_slot(slot_num={n})"));
    }
    (!items.is_empty()).then(|| format!("optimizations=[{}]", items.join(", ")))
}

/// A Python string literal, double-quoted (`pto_base::pyrepr::double_quoted`).
pub fn py_str(s: &str) -> String {
    pto_base::pyrepr::double_quoted(s)
}

/// A Python float literal that reads back as the same `f64`: `repr(v)`
/// (`pto_base::pyrepr`) for a finite value, `float("nan")` / `float("inf")` otherwise
/// (double-quoted, as the printer quotes every string).
pub fn float_text(v: f64) -> String {
    if v.is_nan() {
        "float(\"nan\")".to_string()
    } else if v.is_infinite() {
        if v > 0.0 {
            "float(\"inf\")".to_string()
        } else {
            "-float(\"inf\")".to_string()
        }
    } else {
        pto_base::pyrepr::repr_float(v)
    }
}

fn attr_value(v: &AttrValue, names: &mut Names) -> String {
    match v {
        AttrValue::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        AttrValue::Int(i) => i.to_string(),
        AttrValue::Float(f) => float_text(*f),
        AttrValue::Str(s) => py_str(s),
        AttrValue::Ints(v) => format!(
            "[{}]",
            v.iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        AttrValue::Strs(v) => format!(
            "[{}]",
            v.iter().map(|s| py_str(s)).collect::<Vec<_>>().join(", ")
        ),
        AttrValue::DType(d) => d.to_string(),
        AttrValue::Memory(m) => m.to_string(),
        AttrValue::Var(v) => names.get(v),
        AttrValue::Vars(vs) => format!(
            "[{}]",
            vs.iter()
                .map(|v| names.get(v))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn attrs_dict(attrs: &Attrs, names: &mut Names) -> String {
    let items: Vec<String> = attrs
        .iter()
        .map(|(k, v)| format!("{}: {}", py_str(k), attr_value(v, names)))
        .collect();
    format!("{{{}}}", items.join(", "))
}

/// Python's keywords: an operation whose last name part is one (`tile.and`) is spelled with
/// a trailing underscore (`pl.tile.and_`), as PyPTO's printer does; the parser strips it.
const PYTHON_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

fn dsl_op_name(op: &str) -> String {
    let leaf = op.rsplit('.').next().unwrap_or(op);
    let tail = if PYTHON_KEYWORDS.contains(&leaf) {
        "_"
    } else {
        ""
    };
    format!("pl.{op}{tail}")
}

fn call(c: &Call, names: &mut Names) -> String {
    let mut parts: Vec<String> = c.args.iter().map(|a| expr(a, names)).collect();
    match &c.callee {
        // The DSL spellings of the array and system operations (their IR keywords are not
        // what a program writes).
        Callee::Op(op) if op == "array.create" => format!(
            "pl.array.create({}, pl.{})",
            c.kwargs.int("size").unwrap_or(0),
            c.kwargs.str("elem").unwrap_or("TASK_ID")
        ),
        Callee::Op(op) if op == "system.task_dummy" => {
            format!("pl.system.task_dummy(deps=[{}])", parts.join(", "))
        }
        Callee::Op(op) => {
            for (k, v) in c.kwargs.iter() {
                parts.push(format!("{k}={}", attr_value(v, names)));
            }
            if !c.attrs.is_empty() {
                parts.push(format!("attrs={}", attrs_dict(&c.attrs, names)));
            }
            format!("{}({})", dsl_op_name(op), parts.join(", "))
        }
        Callee::Function(f) => match &c.submit {
            Some(deps) => {
                parts.insert(0, format!("self.{f}"));
                if !deps.is_empty() {
                    let d: Vec<String> = deps.iter().map(|e| expr(e, names)).collect();
                    parts.push(format!("deps=[{}]", d.join(", ")));
                }
                let mut attrs = c.attrs.clone();
                if let Some(AttrValue::Vars(dumps)) = attrs.remove(ATTR_DUMP_VARS) {
                    if !dumps.is_empty() {
                        let d: Vec<String> = dumps.iter().map(|v| names.get(v)).collect();
                        parts.push(format!("dumps=[{}]", d.join(", ")));
                    }
                }
                if !attrs.is_empty() {
                    parts.push(format!("attrs={}", attrs_dict(&attrs, names)));
                }
                format!("pl.submit({})", parts.join(", "))
            }
            None => {
                if !c.attrs.is_empty() {
                    parts.push(format!("attrs={}", attrs_dict(&c.attrs, names)));
                }
                format!("self.{f}({})", parts.join(", "))
            }
        },
    }
}

fn expr(e: &Expr, names: &mut Names) -> String {
    expr_prec(e, names, 0)
}

fn expr_prec(e: &Expr, names: &mut Names, outer: u8) -> String {
    match e {
        Expr::Var(v) => names.get(v),
        Expr::Int { value, dtype } => {
            if *dtype == DataType::Index {
                if *value < 0 && outer > 0 {
                    format!("({value})")
                } else {
                    value.to_string()
                }
            } else {
                format!("pl.const({value}, {dtype})")
            }
        }
        Expr::Float { value, dtype } => {
            if *dtype == DataType::Fp32 {
                let s = float_text(*value);
                if s.starts_with('-') && outer > 0 {
                    format!("({s})")
                } else {
                    s
                }
            } else {
                format!("pl.const({}, {dtype})", float_text(*value))
            }
        }
        Expr::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        Expr::Binary { op, lhs, rhs, .. } => match op {
            BinOp::Min | BinOp::Max => format!(
                "{}({}, {})",
                op.symbol(),
                expr_prec(lhs, names, 0),
                expr_prec(rhs, names, 0)
            ),
            _ => {
                let p = op.precedence();
                // Left-associative: the right operand needs parentheses at equal precedence.
                let s = format!(
                    "{} {} {}",
                    expr_prec(lhs, names, p),
                    op.symbol(),
                    expr_prec(rhs, names, p + 1)
                );
                if p < outer {
                    format!("({s})")
                } else {
                    s
                }
            }
        },
        Expr::Unary { op, operand, dtype } => {
            if *op == UnOp::Cast {
                let inner = expr_prec(operand, names, 0);
                return format!("pl.cast({inner}, pl.{})", dtype.pl_name());
            }
            let inner = expr_prec(operand, names, 8);
            let s = match op {
                UnOp::Neg => format!("-{inner}"),
                UnOp::Not => format!("not {inner}"),
                UnOp::Cast => unreachable!("printed above"),
            };
            if outer > 3 {
                format!("({s})")
            } else {
                s
            }
        }
        Expr::List(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|i| expr_prec(i, names, 0))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Expr::GetItem { tuple, index } => format!("{}[{index}]", expr_prec(tuple, names, 10)),
        Expr::Call(c) => call(c, names),
    }
}
