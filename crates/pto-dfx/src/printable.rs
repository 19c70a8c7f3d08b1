//! Names from input files made safe for the text and Markdown the tools print and write.
//!
//! Kernel names, orchestration sites, task labels and file names come from files a user (or
//! an attacker) can edit: a name holding an escape sequence would reprogram the terminal that
//! shows a listing, a bidirectional override would reorder what it shows, and raw HTML in a
//! Markdown report would be rendered by the viewer that opens it. [`printable`] escapes
//! control and bidi-override characters as `\u{..}` (keeping `\n` and `\t` of multi-line
//! text); [`markdown`] also escapes HTML and the Markdown table separator. HTML reports
//! escape through `pto_dfx_view::html::escape`.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` must not reach a terminal or a document as is: C0 controls (other than the
/// line feed and tab of multi-line text), DEL, C1 controls, and the bidirectional
/// embedding, override and isolate characters.
fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every unsafe character written as `\u{XXXX}` (borrowed when there is none).
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe(c) {
            let _ = write!(out, "\\u{{{:04x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` for one line or table cell of a Markdown document: [`printable`], on one line,
/// with `&`, `<`, `>` as entities (no raw HTML) and `\` and `|` escaped (no broken table).
pub fn markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in printable(text).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' => out.push_str("\\\\"),
            '|' => out.push_str("\\|"),
            '\n' | '\r' | '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_overrides_are_escaped() {
        assert!(matches!(printable("add_kernel"), Cow::Borrowed(_)));
        assert_eq!(printable("a\u{1b}[2Jb"), "a\\u{001b}[2Jb");
        assert_eq!(printable("x\u{7f}\u{85}\r"), "x\\u{007f}\\u{0085}\\u{000d}");
        assert_eq!(printable("evil\u{202e}txt.exe"), "evil\\u{202e}txt.exe");
        assert_eq!(printable("two\nlines\tkept"), "two\nlines\tkept");
        assert_eq!(printable("張量 <b>"), "張量 <b>");
    }

    #[test]
    fn markdown_has_no_raw_html_and_no_broken_cells() {
        assert_eq!(
            markdown("<script>alert(1)</script>|x\\y\n&"),
            "&lt;script&gt;alert(1)&lt;/script&gt;\\|x\\\\y &amp;"
        );
        assert_eq!(markdown("k\u{1b}]0;t\u{7}"), "k\\\\u{001b}]0;t\\\\u{0007}");
    }
}
