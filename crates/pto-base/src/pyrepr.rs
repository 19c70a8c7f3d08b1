//! Python-compatible renderings of values: `repr(str)`, `repr(float)`, a list of strings,
//! and float literals that evaluate back to the same value.
//!
//! Texts the project writes must read exactly like Python's: error details quote values the
//! way `{x!r}` does (`'fp99'`, `1e-05`), and generated Python files (`kernel_config.py`,
//! `golden.py`) write literals with `repr()`. This is the one place they are rendered.

use std::fmt::Write as _;

/// `repr(s)` for a Python `str`: single quotes unless the text contains a
/// single quote and no double quote, backslash escapes for the quote, the
/// backslash and control characters; printable non-ASCII text is kept as is.
pub fn repr_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    quoted(s, quote)
}

/// `s` inside double quotes, escaped as a Python string literal.
pub fn double_quoted(s: &str) -> String {
    quoted(s, '"')
}

fn quoted(s: &str, quote: char) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => {
                let code = u32::from(c);
                // Writing into a String cannot fail.
                let _ = if code < 0x100 {
                    write!(out, "\\x{code:02x}")
                } else {
                    write!(out, "\\u{code:04x}")
                };
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// `repr(x)` for a Python `float`: the shortest text that round-trips, in
/// fixed notation for exponents -4..16 (`0.0001`, `100.0`) and scientific
/// notation otherwise (`1e-05`, `1.5e+16`).
pub fn repr_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "-1.2345e-7".
    let sci = format!("{x:e}");
    let (mantissa, exp) = match sci.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (sci.as_str(), 0),
    };
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let mut out = String::from(sign);
    if (-4..16).contains(&exp) {
        if exp < 0 {
            out.push_str("0.");
            for _ in 0..(-exp - 1) {
                out.push('0');
            }
            out.push_str(&digits);
        } else {
            let int_len = usize::try_from(exp).unwrap_or(0) + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                for _ in digits.len()..int_len {
                    out.push('0');
                }
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let exp_sign = if exp < 0 { '-' } else { '+' };
        // Writing into a String cannot fail.
        let _ = write!(out, "e{exp_sign}{:02}", exp.unsigned_abs());
    }
    out
}

/// A Python float literal that evaluates to `x`: `repr(x)` for a finite value,
/// `float('nan')`, `float('inf')` or `-float('inf')` otherwise (`repr` gives `nan` / `inf`,
/// which are not literals).
pub fn float_literal(x: f64) -> String {
    if x.is_nan() {
        "float('nan')".to_string()
    } else if x.is_infinite() {
        if x > 0.0 {
            "float('inf')"
        } else {
            "-float('inf')"
        }
        .to_string()
    } else {
        repr_float(x)
    }
}

/// A Python tuple literal of `items`: `(16384,)`, `(4, 16, 128)`, `()`.
pub fn tuple_literal<T: std::fmt::Display>(items: &[T]) -> String {
    match items {
        [one] => format!("({one},)"),
        _ => {
            let parts: Vec<String> = items.iter().map(T::to_string).collect();
            format!("({})", parts.join(", "))
        }
    }
}

/// A Python list literal of string reprs: `['a', 'b']`.
pub fn repr_str_list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let parts: Vec<String> = items.into_iter().map(repr_str).collect();
    format!("[{}]", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_str(input: &str, expected: &str) {
        assert_eq!(repr_str(input), expected, "repr of {input:?}");
    }

    #[test]
    fn str_repr_matches_python() {
        check_str("fp99", "'fp99'");
        check_str("", "''");
        check_str("it's", "\"it's\"");
        check_str("both ' and \"", "'both \\' and \"'");
        check_str("a\\b", "'a\\\\b'");
        check_str("tab\there\n", "'tab\\there\\n'");
        check_str("\u{1}", "'\\x01'");
        check_str("héllo", "'héllo'");
    }

    fn check_float(input: f64, expected: &str) {
        assert_eq!(repr_float(input), expected, "repr of {input:e}");
    }

    #[test]
    fn float_repr_matches_python() {
        check_float(1e-5, "1e-05");
        check_float(1e-4, "0.0001");
        check_float(0.00015, "0.00015");
        check_float(1.0, "1.0");
        check_float(0.0, "0.0");
        check_float(-0.0, "-0.0");
        check_float(100.0, "100.0");
        check_float(123.456, "123.456");
        check_float(-2.5, "-2.5");
        check_float(1e15, "1000000000000000.0");
        check_float(1e16, "1e+16");
        check_float(1.5e16, "1.5e+16");
        check_float(1.2345678901234568e17, "1.2345678901234568e+17");
        check_float(1e-100, "1e-100");
        check_float(0.1, "0.1");
        check_float(f64::NAN, "nan");
        check_float(f64::NEG_INFINITY, "-inf");
    }

    #[test]
    fn float_literals_evaluate_back() {
        assert_eq!(float_literal(1e-5), "1e-05");
        assert_eq!(float_literal(f64::NAN), "float('nan')");
        assert_eq!(float_literal(f64::INFINITY), "float('inf')");
        assert_eq!(float_literal(f64::NEG_INFINITY), "-float('inf')");
    }

    #[test]
    fn tuples_are_python_tuples() {
        assert_eq!(tuple_literal(&[16384]), "(16384,)");
        assert_eq!(tuple_literal(&[4, 16, 128]), "(4, 16, 128)");
        assert_eq!(tuple_literal::<i64>(&[]), "()");
    }

    #[test]
    fn string_lists_are_python_lists() {
        assert_eq!(repr_str_list(["a", "it's"]), "['a', \"it's\"]");
        assert_eq!(repr_str_list([]), "[]");
    }
}
