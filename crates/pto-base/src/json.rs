//! JSON string literals, the one escaper of the project's hand-written JSON (the diagnostics'
//! files, the swimlane trace, the name map). The text is Python's `json.dumps` of a `str`:
//! `"` and `\` escaped, `\n` `\r` `\t` `\b` `\f` by name, every other control character as
//! `\u00XX`; the rest as it is ([`push_str`], `ensure_ascii=False`) or, with
//! [`push_str_ascii`] (`ensure_ascii=True`, Python's default), every character outside
//! printable ASCII as `\uXXXX` (UTF-16 surrogate pairs above U+FFFF). Integers are
//! printed by [`push_u64`], the one decimal printer of those writers.

use std::fmt::Write as _;

/// The two ASCII digits of every value below 100, `00` to `99`.
const PAIRS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// Appends `v` in decimal, as `{}` prints it, without the formatting machinery (the
/// writers print hundreds of millions of integers): a value below 10, the commonest, as
/// one byte; others four digits per step into a zeroed stack buffer, right-aligned at its
/// middle, then appended by one copy of a fixed 20 bytes (digits and the zeros after them)
/// of which the string keeps the digits: no copy of a length only known at run time,
/// which was a library call per integer.
#[inline]
pub fn push_u64(out: &mut String, v: u64) {
    if v < 10 {
        out.push(char::from(b'0' + v as u8));
        return;
    }
    const MAX: usize = 20; // digits of u64::MAX
    let mut buf = [0u8; 2 * MAX];
    let mut at = MAX;
    let mut x = v;
    let mut pair = |at: &mut usize, p: usize| {
        *at -= 2;
        buf[*at..*at + 2].copy_from_slice(&PAIRS[2 * p..2 * p + 2]);
    };
    while x >= 10_000 {
        let rem = (x % 10_000) as usize;
        x /= 10_000;
        pair(&mut at, rem % 100);
        pair(&mut at, rem / 100);
    }
    let mut x = x as usize;
    if x >= 100 {
        pair(&mut at, x % 100);
        x /= 100;
    }
    if x >= 10 {
        pair(&mut at, x);
    } else {
        at -= 1;
        buf[at] = b'0' + x as u8;
    }
    let n = MAX - at;
    // SAFETY: only ASCII digits are kept below, so the string stays UTF-8.
    let bytes = unsafe { out.as_mut_vec() };
    bytes.reserve(MAX);
    let len = bytes.len();
    // SAFETY: `reserve` made room for MAX bytes after `len`; `buf[at..at + MAX]` is in
    // bounds (`at` ≥ 0, `buf` is 2 × MAX long) and initialized; of those MAX bytes the
    // first `n` are the digits, and only they are kept.
    unsafe {
        std::ptr::copy_nonoverlapping(buf[at..at + MAX].as_ptr(), bytes.as_mut_ptr().add(len), MAX);
        bytes.set_len(len + n);
    }
}

/// Appends `text` as a JSON string literal, non-ASCII characters as they are (Python's
/// `json.dumps(text, ensure_ascii=False)`).
pub fn push_str(out: &mut String, text: &str) {
    if !text.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        out.push('"');
        out.push_str(text);
        out.push('"');
        return;
    }
    push(out, text, false);
}

/// Appends `text` as a JSON string literal with every character outside printable ASCII
/// escaped (Python's `json.dumps(text)`, `ensure_ascii=True`).
pub fn push_str_ascii(out: &mut String, text: &str) {
    push(out, text, true);
}

/// `text` as a JSON string literal ([`push_str`]).
pub fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    push_str(&mut out, text);
    out
}

/// Serialized JSON `text` with every non-ASCII character written as `\uXXXX`, which is what
/// Python's `ensure_ascii=True` makes of it (non-ASCII text can only occur inside strings),
/// for JSON a serializer wrote with the characters as they are (`serde_json`).
pub fn escape_non_ascii(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            push_unicode_escape(&mut out, c);
        }
    }
    out
}

/// `c` as `\uXXXX`, two of them (a UTF-16 surrogate pair) above U+FFFF.
fn push_unicode_escape(out: &mut String, c: char) {
    let mut units = [0u16; 2];
    for unit in c.encode_utf16(&mut units) {
        // Writing to a `String` cannot fail.
        let _ = write!(out, "\\u{unit:04x}");
    }
}

fn push(out: &mut String, text: &str, ascii: bool) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            c if (c as u32) < 0x20 || ascii => push_unicode_escape(out, c),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_print_as_display_does_at_every_length() {
        let mut values: Vec<u64> = (0..=1000).collect();
        for k in 1..=19u32 {
            let p = 10u64.pow(k);
            values.extend([p - 1, p, p + 1, p + p / 2]);
        }
        values.extend([
            u64::MAX,
            u64::MAX - 1,
            0x8000_0000_0000_0000,
            12_345_678_901_234,
        ]);
        let mut out = String::from("x");
        let mut want = String::from("x");
        for v in values {
            push_u64(&mut out, v);
            out.push(',');
            want.push_str(&format!("{v},"));
        }
        assert_eq!(out, want);
    }

    const TEXT: &str = "a\"b\\c\n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f}é😀";

    #[test]
    fn escapes_as_python_json_dumps() {
        // json.dumps(TEXT, ensure_ascii=False)
        assert_eq!(
            quoted(TEXT),
            "\"a\\\"b\\\\c\\n\\r\\t\\b\\f\\u0001\\u001f\u{7f}é😀\""
        );
        // json.dumps(TEXT)
        let mut s = String::new();
        push_str_ascii(&mut s, TEXT);
        assert_eq!(
            s,
            "\"a\\\"b\\\\c\\n\\r\\t\\b\\f\\u0001\\u001f\\u007f\\u00e9\\ud83d\\ude00\""
        );
    }

    #[test]
    fn non_ascii_of_serialized_json_is_escaped() {
        assert_eq!(
            escape_non_ascii("{\"c\u{e9}\": \"😀\u{7f}\"}"),
            "{\"c\\u00e9\": \"\\ud83d\\ude00\u{7f}\"}"
        );
    }

    #[test]
    fn plain_text_is_copied() {
        assert_eq!(quoted("kernel_add"), "\"kernel_add\"");
        assert_eq!(quoted(""), "\"\"");
    }
}
