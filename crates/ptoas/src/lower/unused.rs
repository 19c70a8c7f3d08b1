//! Dead constants: `arith.constant`s whose C++ variable nothing reads are left out.
//!
//! Most index constants of a PyPTO kernel end up as template arguments (`Shape<1, 1, 1, 16,
//! 128>`) once [`crate::analysis`] has folded them, so their variables are never read. MLIR's
//! canonicalizer removes such pure ops before ptoas prints, and a C++ compiler run with
//! `-Wall` would warn about every one of them; this pass drops each declaration together with
//! its `// pto: %name` comment. Only constants are candidates (their initializers are
//! literals, so removing them changes nothing), and uses are counted over the code itself:
//! statements, loop heads and conditions, never comments (an SSA name like `%v12` must not
//! keep the C++ `v12` alive).

use std::collections::{HashMap, HashSet};

use crate::cpp::Stmt;

/// Removes from `body` the declarations of the constant variables in `candidates` that no
/// other statement reads.
pub(crate) fn drop_unused_constants(body: &mut Vec<Stmt>, candidates: &HashSet<String>) {
    if candidates.is_empty() {
        return;
    }
    let mut uses: HashMap<&str, usize> = HashMap::new();
    count_uses(body, candidates, &mut uses);
    // A declaration reads its own name once; anything beyond that is a use.
    let dead: HashSet<String> = candidates
        .iter()
        .filter(|name| uses.get(name.as_str()).copied().unwrap_or(0) <= 1)
        .cloned()
        .collect();
    if !dead.is_empty() {
        remove(body, &dead);
    }
}

/// Adds the occurrences of each candidate identifier in the code of `stmts`.
fn count_uses<'a>(
    stmts: &[Stmt],
    candidates: &'a HashSet<String>,
    uses: &mut HashMap<&'a str, usize>,
) {
    for s in stmts {
        match s {
            Stmt::Comment(_) | Stmt::Pre(_) => {}
            Stmt::Line(text) => count_in(text, candidates, uses),
            Stmt::Block { head, body } => {
                count_in(head, candidates, uses);
                count_uses(body, candidates, uses);
            }
            Stmt::If {
                cond,
                then_body,
                else_body,
            } => {
                count_in(cond, candidates, uses);
                count_uses(then_body, candidates, uses);
                if let Some(e) = else_body {
                    count_uses(e, candidates, uses);
                }
            }
        }
    }
}

/// Counts the whole-identifier occurrences of candidates in one line of code.
fn count_in<'a>(text: &str, candidates: &'a HashSet<String>, uses: &mut HashMap<&'a str, usize>) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            if let Some(name) = candidates.get(&text[start..i]) {
                *uses.entry(name.as_str()).or_insert(0) += 1;
            }
        } else if c.is_ascii_digit() {
            // A number (`16`, `0x10`, `1.5e3f`) is not an identifier.
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.') {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
}

/// The variable a `const T name = init;` line declares.
fn declared_constant(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("const ")?;
    let (lhs, _) = rest.split_once(" = ")?;
    lhs.rsplit(' ').next()
}

/// Drops the declarations of `dead` and the comment line right before each.
fn remove(stmts: &mut Vec<Stmt>, dead: &HashSet<String>) {
    let mut kept: Vec<Stmt> = Vec::with_capacity(stmts.len());
    for mut s in std::mem::take(stmts) {
        match &mut s {
            Stmt::Line(text) if declared_constant(text).is_some_and(|n| dead.contains(n)) => {
                if matches!(kept.last(), Some(Stmt::Comment(_))) {
                    kept.pop();
                }
                continue;
            }
            Stmt::Block { body, .. } => remove(body, dead),
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                remove(then_body, dead);
                if let Some(e) = else_body {
                    remove(e, dead);
                }
            }
            _ => {}
        }
        kept.push(s);
    }
    *stmts = kept;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(s: &str) -> Stmt {
        Stmt::Line(s.into())
    }

    fn comment(s: &str) -> Stmt {
        Stmt::Comment(s.into())
    }

    #[test]
    fn unread_constants_go_with_their_comment_and_read_ones_stay() {
        let mut body = vec![
            comment("pto: %c16"),
            line("const int64_t v2 = 16;"),
            comment("pto: %c1"),
            line("const int64_t v12 = 1;"),
            comment("pto: %v2"),
            line("const float v13 = 0.5f;"),
            Stmt::Block {
                head: "for (int64_t v14 = 0; v14 < v1; v14 += v12)".into(),
                body: vec![line("TMULS(v3, v3, v13);")],
            },
        ];
        let candidates: HashSet<String> = ["v2", "v12", "v13"].map(String::from).into();
        drop_unused_constants(&mut body, &candidates);
        assert_eq!(
            body,
            vec![
                comment("pto: %c1"),
                line("const int64_t v12 = 1;"),
                comment("pto: %v2"),
                line("const float v13 = 0.5f;"),
                Stmt::Block {
                    head: "for (int64_t v14 = 0; v14 < v1; v14 += v12)".into(),
                    body: vec![line("TMULS(v3, v3, v13);")],
                },
            ]
        );
    }

    #[test]
    fn uses_in_branches_and_conditions_count_and_prefixes_do_not() {
        let mut body = vec![
            line("const int64_t v5 = 0;"),
            line("const int64_t v6 = 7;"),
            line("const int64_t v7 = 8;"),
            Stmt::If {
                cond: "v9 != v5".into(),
                then_body: vec![line("f(v60, 7);")],
                else_body: Some(vec![line("const int64_t v8 = 1;"), line("g(v7);")]),
            },
        ];
        let candidates: HashSet<String> = ["v5", "v6", "v7", "v8"].map(String::from).into();
        drop_unused_constants(&mut body, &candidates);
        assert_eq!(
            body,
            vec![
                line("const int64_t v5 = 0;"),
                line("const int64_t v7 = 8;"),
                Stmt::If {
                    cond: "v9 != v5".into(),
                    then_body: vec![line("f(v60, 7);")],
                    else_body: Some(vec![line("g(v7);")]),
                },
            ]
        );
    }
}
