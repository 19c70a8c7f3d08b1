//! The statements of `kernel_config.py`, evaluated without Python.
//!
//! [`read_module`] walks the file statement by statement, in order, as
//! Python would run it: the two allowed imports, `_ROOT_DIR =
//! Path(__file__).parent`, and `NAME = <value>` assignments. Each value is
//! evaluated on the spot, so `_D.IN` before the `_D` import or
//! `str(_ROOT_DIR / ...)` before `_ROOT_DIR` is assigned fails here just as
//! it would fail in Python. What the names *mean* is checked by the caller.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::ArgDirection;
use crate::pysyntax::{tokenize, Expr, ExprKind, Parser, Pos, SyntaxError, Tok};

/// An evaluated value with the position of its expression.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Value {
    pub kind: ValueKind,
    pub pos: Pos,
}

/// What a value is.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum ValueKind {
    None,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    /// `str(_ROOT_DIR / "a" / "b")`, already joined onto the root directory.
    Path(PathBuf),
    /// `_D.IN` and friends.
    ArgDir(ArgDirection),
    List(Vec<Value>),
    Tuple(Vec<Value>),
    /// Keys are string literals, unique, in file order.
    Dict(Vec<DictEntry>),
}

/// One `"key": value` of a dict.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct DictEntry {
    pub key: String,
    pub value: Value,
}

/// `NAME = value` at the top level.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Assignment {
    pub name: String,
    pub pos: Pos,
    pub value: Value,
}

impl Value {
    /// A short description for "must be X, found Y" messages.
    pub(super) fn describe(&self) -> String {
        use crate::pyrepr::{repr_float, repr_str};
        match &self.kind {
            ValueKind::None => "None".to_string(),
            ValueKind::Bool(b) => if *b { "True" } else { "False" }.to_string(),
            ValueKind::Int(i) => format!("int {i}"),
            ValueKind::Float(x) => format!("float {}", repr_float(*x)),
            ValueKind::Str(s) => format!("str {}", repr_str(s)),
            ValueKind::Path(p) => format!("path {}", repr_str(&p.to_string_lossy())),
            ValueKind::ArgDir(d) => format!("_D.{}", d.name()),
            ValueKind::List(_) => "a list".to_string(),
            ValueKind::Tuple(_) => "a tuple".to_string(),
            ValueKind::Dict(_) => "a dict".to_string(),
        }
    }
}

struct Env<'a> {
    root_dir: &'a Path,
    path_imported: bool,
    d_imported: bool,
    root_defined: bool,
}

const ALLOWED_IMPORTS: &str =
    "kernel_config.py may only import `from pathlib import Path` and `from simpler.task_interface import ArgDirection as _D`";

/// Reads every statement of `text`; `root_dir` is what `_ROOT_DIR` stands for.
pub(super) fn read_module(text: &str, root_dir: &Path) -> Result<Vec<Assignment>, SyntaxError> {
    let toks = tokenize(text)?;
    let mut p = Parser::new(&toks);
    let mut env = Env {
        root_dir,
        path_imported: false,
        d_imported: false,
        root_defined: false,
    };
    let mut out = Vec::new();
    loop {
        let tok = p.peek();
        if tok.tok == Tok::Eof {
            return Ok(out);
        }
        if tok.pos.col != 1 {
            return Err(SyntaxError::new(
                tok.pos,
                "unexpected indentation: top-level statements must start in column 1",
            ));
        }
        match &tok.tok {
            Tok::Name(n) if n == "from" => {
                p.bump();
                read_from_import(&mut p, tok.pos, &mut env)?;
            }
            Tok::Name(n) if n == "import" => {
                return Err(SyntaxError::new(
                    tok.pos,
                    format!("`import` statements are not supported; {ALLOWED_IMPORTS}"),
                ));
            }
            Tok::Name(name) => {
                p.bump();
                p.expect_punct(
                    '=',
                    &format!("after `{name}` (only `NAME = value` statements are supported)"),
                )?;
                if name == "_ROOT_DIR" {
                    let expr = p.parse_expr()?;
                    check_root_dir(&expr, &env)?;
                    env.root_defined = true;
                } else {
                    let expr = p.parse_expr()?;
                    out.push(Assignment {
                        name: name.clone(),
                        pos: tok.pos,
                        value: eval(&expr, &env)?,
                    });
                }
                p.expect_end_of_line(&format!("after the value of `{name}`"))?;
            }
            other => {
                return Err(SyntaxError::new(
                    tok.pos,
                    format!("expected an import or a `NAME = value` statement, found {other}"),
                ));
            }
        }
    }
}

fn read_from_import(p: &mut Parser<'_>, pos: Pos, env: &mut Env<'_>) -> Result<(), SyntaxError> {
    let (first, _) = p.expect_name("after `from`")?;
    let mut module = first.to_string();
    while p.peek().tok == Tok::Punct('.') {
        p.bump();
        let (part, _) = p.expect_name("in the module name")?;
        module.push('.');
        module.push_str(part);
    }
    let (kw, kw_pos) = p.expect_name("(`import`)")?;
    if kw != "import" {
        return Err(SyntaxError::new(
            kw_pos,
            format!("expected `import`, found name `{kw}`"),
        ));
    }
    let (name, _) = p.expect_name("after `import`")?;
    let alias = if matches!(&p.peek().tok, Tok::Name(n) if n == "as") {
        p.bump();
        Some(p.expect_name("after `as`")?.0)
    } else {
        None
    };
    p.expect_end_of_line("after the import")?;
    match (module.as_str(), name, alias) {
        ("pathlib", "Path", None | Some("Path")) => env.path_imported = true,
        ("simpler.task_interface", "ArgDirection", Some("_D")) => env.d_imported = true,
        _ => {
            let shown = match alias {
                Some(a) => format!("from {module} import {name} as {a}"),
                None => format!("from {module} import {name}"),
            };
            return Err(SyntaxError::new(
                pos,
                format!("unsupported import `{shown}`; {ALLOWED_IMPORTS}"),
            ));
        }
    }
    Ok(())
}

fn check_root_dir(expr: &Expr, env: &Env<'_>) -> Result<(), SyntaxError> {
    let is_root_expr = match &expr.kind {
        ExprKind::Attr(base, attr) if attr == "parent" => match &base.kind {
            ExprKind::Call(callee, args) => {
                callee.kind == ExprKind::Name("Path".to_string())
                    && matches!(args.as_slice(), [a] if a.kind == ExprKind::Name("__file__".to_string()))
            }
            _ => false,
        },
        _ => false,
    };
    if !is_root_expr {
        return Err(SyntaxError::new(
            expr.pos,
            format!(
                "`_ROOT_DIR` must be `Path(__file__).parent`, found {}",
                expr.describe()
            ),
        ));
    }
    if !env.path_imported {
        return Err(SyntaxError::new(
            expr.pos,
            "`Path` is used before `from pathlib import Path`",
        ));
    }
    Ok(())
}

fn eval(expr: &Expr, env: &Env<'_>) -> Result<Value, SyntaxError> {
    let kind = match &expr.kind {
        ExprKind::None => ValueKind::None,
        ExprKind::Bool(b) => ValueKind::Bool(*b),
        ExprKind::Int(i) => ValueKind::Int(*i),
        ExprKind::Float(x) => ValueKind::Float(*x),
        ExprKind::Str(s) => ValueKind::Str(s.clone()),
        ExprKind::List(items) => ValueKind::List(eval_all(items, env)?),
        ExprKind::Tuple(items) => ValueKind::Tuple(eval_all(items, env)?),
        ExprKind::Dict(items) => {
            let mut entries: Vec<DictEntry> = Vec::with_capacity(items.len());
            // key -> the line it was first given on, so duplicates cost O(1) per key.
            let mut key_lines: HashMap<&str, usize> = HashMap::with_capacity(items.len());
            for (key, value) in items {
                let ExprKind::Str(key_text) = &key.kind else {
                    return Err(SyntaxError::new(
                        key.pos,
                        format!("dict keys must be string literals, found {}", key.describe()),
                    ));
                };
                if let Some(first_line) = key_lines.get(key_text.as_str()) {
                    return Err(SyntaxError::new(
                        key.pos,
                        format!(
                            "duplicate key {} (first given on line {first_line})",
                            crate::pyrepr::double_quoted(key_text),
                        ),
                    ));
                }
                key_lines.insert(key_text, key.pos.line);
                entries.push(DictEntry {
                    key: key_text.clone(),
                    value: eval(value, env)?,
                });
            }
            ValueKind::Dict(entries)
        }
        ExprKind::Attr(base, member) if base.kind == ExprKind::Name("_D".to_string()) => {
            if !env.d_imported {
                return Err(SyntaxError::new(
                    expr.pos,
                    "`_D` is used before `from simpler.task_interface import ArgDirection as _D`",
                ));
            }
            ValueKind::ArgDir(ArgDirection::from_name(member).ok_or_else(|| {
                SyntaxError::new(
                    expr.pos,
                    format!("unknown ArgDirection member `_D.{member}`; known: _D.SCALAR, _D.IN, _D.OUT, _D.INOUT"),
                )
            })?)
        }
        ExprKind::Call(callee, args) if callee.kind == ExprKind::Name("str".to_string()) => {
            match args.as_slice() {
                [arg] => ValueKind::Path(eval_root_path(arg, env)?),
                _ => {
                    return Err(SyntaxError::new(
                        expr.pos,
                        format!("str(...) takes exactly one argument here, found {}", args.len()),
                    ))
                }
            }
        }
        ExprKind::Div(..) => {
            return Err(SyntaxError::new(
                expr.pos,
                "a path expression must be wrapped in str(...), as in str(_ROOT_DIR / \"kernels\" / \"aiv\" / \"k.cpp\")",
            ))
        }
        ExprKind::Name(n) => {
            return Err(SyntaxError::new(
                expr.pos,
                format!("name `{n}` cannot be used here; values must be literals, str(_ROOT_DIR / ...) or _D.<direction>"),
            ))
        }
        ExprKind::Attr(..) | ExprKind::Call(..) => {
            return Err(SyntaxError::new(
                expr.pos,
                format!(
                    "unsupported expression ({}); values must be literals, str(_ROOT_DIR / ...) or _D.<direction>",
                    expr.describe()
                ),
            ))
        }
    };
    Ok(Value {
        kind,
        pos: expr.pos,
    })
}

fn eval_all(items: &[Expr], env: &Env<'_>) -> Result<Vec<Value>, SyntaxError> {
    items.iter().map(|e| eval(e, env)).collect()
}

/// `_ROOT_DIR / "a" / "b"` (inside `str(...)`) joined onto the root.
fn eval_root_path(expr: &Expr, env: &Env<'_>) -> Result<PathBuf, SyntaxError> {
    let mut segments: Vec<&str> = Vec::new();
    let mut cur = expr;
    while let ExprKind::Div(left, right) = &cur.kind {
        let ExprKind::Str(seg) = &right.kind else {
            return Err(SyntaxError::new(
                right.pos,
                format!(
                    "path segments must be string literals, found {}",
                    right.describe()
                ),
            ));
        };
        segments.push(seg);
        cur = left;
    }
    if cur.kind != ExprKind::Name("_ROOT_DIR".to_string()) {
        return Err(SyntaxError::new(
            cur.pos,
            format!(
                "str(...) must wrap a path that starts at `_ROOT_DIR`, found {}",
                cur.describe()
            ),
        ));
    }
    if !env.root_defined {
        return Err(SyntaxError::new(
            cur.pos,
            "`_ROOT_DIR` is used before `_ROOT_DIR = Path(__file__).parent`",
        ));
    }
    let mut path = env.root_dir.to_path_buf();
    for seg in segments.iter().rev() {
        path.push(seg);
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "from pathlib import Path\nfrom simpler.task_interface import ArgDirection as _D\n_ROOT_DIR = Path(__file__).parent\n";

    fn show(v: &Value) -> String {
        let list = |items: &[Value]| items.iter().map(show).collect::<Vec<_>>().join(" ");
        match &v.kind {
            ValueKind::Path(p) => format!("path:{}", p.display()),
            ValueKind::List(items) => format!("[{}]", list(items)),
            ValueKind::Tuple(items) => format!("({})", list(items)),
            ValueKind::Dict(entries) => {
                let parts: Vec<String> = entries
                    .iter()
                    .map(|e| format!("{}={}", e.key, show(&e.value)))
                    .collect();
                format!("{{{}}}", parts.join(" "))
            }
            _ => v.describe(),
        }
    }

    fn check(input: &str, expected: &str) {
        let res = match read_module(input, Path::new("/b")) {
            Ok(assignments) => assignments
                .iter()
                .map(|a| format!("{}@{}: {}", a.name, a.pos.line, show(&a.value)))
                .collect::<Vec<_>>()
                .join("; "),
            Err(e) => format!("error {}:{}: {}", e.pos.line, e.pos.col, e.message),
        };
        assert_eq!(res, expected, "input:\n{input}");
    }

    #[test]
    fn evaluates_the_supported_forms() {
        check(
            &format!("{HEADER}X = {{'a': str(_ROOT_DIR / \"k\" / 'x.cpp'), \"d\": [_D.IN, _D.INOUT], 'n': -3}}\n"),
            "X@4: {a=path:/b/k/x.cpp d=[_D.IN _D.INOUT] n=int -3}",
        );
        check(&format!("{HEADER}X = str(_ROOT_DIR)"), "X@4: path:/b");
        check("# only a comment\n\n", "");
        check(
            "A = None\nB = (1.5, True)",
            "A@1: None; B@2: (float 1.5 True)",
        );
    }

    #[test]
    fn rejects_what_python_would_reject_or_we_do_not_support() {
        check("X = _D.IN", "error 1:5: `_D` is used before `from simpler.task_interface import ArgDirection as _D`");
        check(
            "from pathlib import Path\nX = str(_ROOT_DIR / 'a')",
            "error 2:9: `_ROOT_DIR` is used before `_ROOT_DIR = Path(__file__).parent`",
        );
        check(
            "_ROOT_DIR = Path(__file__).parent",
            "error 1:13: `Path` is used before `from pathlib import Path`",
        );
        check(
            "from pathlib import Path\n_ROOT_DIR = Path('.')",
            "error 2:13: `_ROOT_DIR` must be `Path(__file__).parent`, found an attribute expression".replace("an attribute expression", "a call").as_str(),
        );
        check("import os", "error 1:1: `import` statements are not supported; kernel_config.py may only import `from pathlib import Path` and `from simpler.task_interface import ArgDirection as _D`");
        check("from os import path", "error 1:1: unsupported import `from os import path`; kernel_config.py may only import `from pathlib import Path` and `from simpler.task_interface import ArgDirection as _D`");
        check(
            "X = 1\n  Y = 2",
            "error 2:3: unexpected indentation: top-level statements must start in column 1",
        );
        check("X: int = 1", "error 1:2: expected `=` after `X` (only `NAME = value` statements are supported), found `:`");
        check(
            "X = 1 2",
            "error 1:7: expected the end of the line after the value of `X`, found number `2`",
        );
        check(&format!("{HEADER}X = _D.NO_DEP"), "error 4:5: unknown ArgDirection member `_D.NO_DEP`; known: _D.SCALAR, _D.IN, _D.OUT, _D.INOUT");
        check(&format!("{HEADER}X = _ROOT_DIR / 'a'"), "error 4:5: a path expression must be wrapped in str(...), as in str(_ROOT_DIR / \"kernels\" / \"aiv\" / \"k.cpp\")");
        check(
            &format!("{HEADER}X = str(_ROOT_DIR / name)"),
            "error 4:21: path segments must be string literals, found name `name`",
        );
        check(
            "X = {'a': 1, 'a': 2}",
            "error 1:14: duplicate key \"a\" (first given on line 1)",
        );
        check(
            "X = {1: 2}",
            "error 1:6: dict keys must be string literals, found int 1",
        );
        check("X = os.getcwd()", "error 1:5: unsupported expression (a call); values must be literals, str(_ROOT_DIR / ...) or _D.<direction>");
        check("X = Y", "error 1:5: name `Y` cannot be used here; values must be literals, str(_ROOT_DIR / ...) or _D.<direction>");
        check(
            "'doc'",
            "error 1:1: expected an import or a `NAME = value` statement, found string 'doc'",
        );
    }
}
