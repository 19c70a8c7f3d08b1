//! The C++ side: a small statement tree for the generated functions, the helpers ptoas
//! puts at the top of its output, and the printer (2-space indentation, as ptoas writes).

/// The helper definitions at the top of every output file, after the include and `using`
/// lines: `PTOAS__GLOBAL_TENSOR_DATA(gt)` (the GM pointer of a GlobalTensor),
/// `PTOAutoSyncTailMode` with `ptoas_auto_sync_tail(mode)` (the sync that ends a kernel: a
/// barrier on every pipe, or the MTE3 -> S event hand-off), and
/// `PTOAS__DCCI_SINGLE_CACHE_LINE(ptr)` (flush one data-cache line of GM). Same names,
/// signatures and behaviour as ptoas's; our own text.
pub const HELPERS: &str = r#"template <typename GT>
static AICORE inline auto PTOAS__GLOBAL_TENSOR_DATA(GT &gt) -> decltype(gt.data()) {
  return gt.data();
}

enum class PTOAutoSyncTailMode : int {
  kBarrierAll = 0,
  kSetWaitMte3ToSEvent0 = 1,
};

static AICORE inline void ptoas_auto_sync_tail(
    PTOAutoSyncTailMode mode = PTOAutoSyncTailMode::kBarrierAll) {
  if (mode == PTOAutoSyncTailMode::kSetWaitMte3ToSEvent0) {
    set_flag(PIPE_MTE3, PIPE_S, EVENT_ID0);
    wait_flag(PIPE_MTE3, PIPE_S, EVENT_ID0);
  } else {
    pipe_barrier(PIPE_ALL);
  }
}

template <typename P>
static AICORE inline void PTOAS__DCCI_SINGLE_CACHE_LINE(P ptr) {
  dcci((__gm__ void*)ptr, cache_line_t::SINGLE_CACHE_LINE);
}
"#;

/// A C++ statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// A comment line (`// pto: %name`), without the `//`.
    Comment(String),
    /// One statement line, `;` included.
    Line(String),
    /// A preprocessor line (printed without indentation).
    Pre(String),
    /// `head {` body `}` (loops, bare scopes).
    Block {
        /// The text before `{` (`for (...)`, `while (true)`).
        head: String,
        /// The body.
        body: Vec<Stmt>,
    },
    /// `if (cond) { ... } [else { ... }]`.
    If {
        /// The condition expression.
        cond: String,
        /// Then branch.
        then_body: Vec<Stmt>,
        /// Else branch.
        else_body: Option<Vec<Stmt>>,
    },
}

/// A generated function.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// `__global__ AICORE void name(__gm__ float* v1, ...)`.
    pub signature: String,
    /// The body.
    pub body: Vec<Stmt>,
}

/// A translation unit: the helpers and the functions.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Unit {
    /// In definition order (callees before callers).
    pub functions: Vec<Function>,
}

fn print_stmts(out: &mut String, stmts: &[Stmt], depth: usize) {
    for s in stmts {
        let pad = "  ".repeat(depth);
        match s {
            Stmt::Comment(c) => {
                out.push_str(&pad);
                out.push_str("//");
                if !c.is_empty() {
                    out.push(' ');
                    out.push_str(c);
                }
                out.push('\n');
            }
            Stmt::Line(l) => {
                if !l.is_empty() {
                    out.push_str(&pad);
                    out.push_str(l);
                }
                out.push('\n');
            }
            Stmt::Pre(p) => {
                // ptoas indents its guards like code.
                out.push_str(&pad);
                out.push_str(p);
                out.push('\n');
            }
            Stmt::Block { head, body } => {
                out.push_str(&pad);
                out.push_str(head);
                out.push_str(" {\n");
                print_stmts(out, body, depth + 1);
                out.push_str(&pad);
                out.push_str("}\n");
            }
            Stmt::If {
                cond,
                then_body,
                else_body,
            } => {
                out.push_str(&pad);
                out.push_str("if (");
                out.push_str(cond);
                out.push_str(") {\n");
                print_stmts(out, then_body, depth + 1);
                out.push_str(&pad);
                match else_body {
                    Some(e) => {
                        out.push_str("} else {\n");
                        print_stmts(out, e, depth + 1);
                        out.push_str(&pad);
                        out.push_str("}\n");
                    }
                    None => out.push_str("}\n"),
                }
            }
        }
    }
}

impl Unit {
    /// The whole output file: include, `using namespace pto;`, helpers, functions.
    pub fn print(&self) -> String {
        let mut out = String::from("#include \"pto/pto-inst.hpp\"\nusing namespace pto;\n\n");
        out.push_str(HELPERS);
        for f in &self.functions {
            out.push('\n');
            out.push_str(&f.signature);
            out.push_str(" {\n");
            print_stmts(&mut out, &f.body, 1);
            out.push_str("}\n");
        }
        out
    }
}
