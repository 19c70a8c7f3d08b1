//! Parsing of Makefile-style dependency files as written by `-MD`/`-MMD`.

use std::path::PathBuf;

/// Returns the prerequisites of every rule in `text`, in order of first
/// appearance, without duplicates.
///
/// Handles backslash-newline continuations, `\ ` (escaped space), `\#`, `$$`
/// and multiple rules (as produced by `-MP`). A backslash before any other
/// character is kept literally; after a rule's first `:` further colons are
/// part of file names.
pub(crate) fn parse_prerequisites(text: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for line in logical_lines(text) {
        let mut after_colon = false;
        for tok in tokenize(&line) {
            match tok {
                Tok::Colon => after_colon = true,
                Tok::Word(w) if after_colon => {
                    let p = PathBuf::from(w);
                    if !out.contains(&p) {
                        out.push(p);
                    }
                }
                Tok::Word(_) => {} // a target
            }
        }
    }
    out
}

/// Joins backslash-newline continuations into single lines.
fn logical_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::new();
    for raw in text.split('\n') {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        // A line ending in an odd number of backslashes continues.
        let trailing = raw.len() - raw.trim_end_matches('\\').len();
        if trailing % 2 == 1 {
            cur.push_str(&raw[..raw.len() - 1]);
            cur.push(' ');
        } else {
            cur.push_str(raw);
            lines.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

enum Tok {
    Word(String),
    /// The first unescaped `:` of a line (separates targets from prerequisites).
    Colon,
}

fn tokenize(line: &str) -> Vec<Tok> {
    let mut tokens = Vec::new();
    let mut word = String::new();
    let mut colon_seen = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.peek() {
                Some(&n @ (' ' | '\t' | '#')) => {
                    chars.next();
                    word.push(n);
                }
                _ => word.push('\\'),
            },
            '$' if chars.peek() == Some(&'$') => {
                chars.next();
                word.push('$');
            }
            ':' if !colon_seen => {
                colon_seen = true;
                if !word.is_empty() {
                    tokens.push(Tok::Word(std::mem::take(&mut word)));
                }
                tokens.push(Tok::Colon);
            }
            c if c.is_whitespace() => {
                if !word.is_empty() {
                    tokens.push(Tok::Word(std::mem::take(&mut word)));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        tokens.push(Tok::Word(word));
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(v: Vec<PathBuf>) -> Vec<String> {
        v.into_iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn gcc_style() {
        let d = "/tmp/x.so: /src/k.cpp /inc/a.h \\\n /inc/b.h\\\n  /inc/c.h\n";
        assert_eq!(
            strs(parse_prerequisites(d)),
            ["/src/k.cpp", "/inc/a.h", "/inc/b.h", "/inc/c.h"]
        );
    }

    #[test]
    fn escapes() {
        let d = "out.o: /my\\ dir/k.cpp /a\\#b.h /c$$d.h /e\\f.h\r\n";
        assert_eq!(
            strs(parse_prerequisites(d)),
            ["/my dir/k.cpp", "/a#b.h", "/c$d.h", "/e\\f.h"]
        );
    }

    #[test]
    fn multiple_rules_and_phony_targets() {
        let d = "a.o: a.cpp x.h\nx.h:\n\ny.o : y.h x.h\n";
        assert_eq!(strs(parse_prerequisites(d)), ["a.cpp", "x.h", "y.h"]);
    }

    #[test]
    fn target_with_escaped_space_and_no_space_after_colon() {
        let d = "my\\ out.o:dep.h other.h\n";
        assert_eq!(strs(parse_prerequisites(d)), ["dep.h", "other.h"]);
    }

    #[test]
    fn empty() {
        assert!(parse_prerequisites("").is_empty());
        assert!(parse_prerequisites("\n\n").is_empty());
    }
}
