//! What every HTML page the viewers write shares: escaping and the page shell.
//!
//! Every name that comes from an input file (kernel names, scope sites, file
//! names) reaches the page through one of two doors, each safe for its
//! context:
//!
//! - [`escape`] for element text and quoted attribute values (`&`, `<`,
//!   `>`, `"`, `'` become entities), so `<script>` renders as text;
//! - [`script_json`] for data embedded in `<script type="application/json">`
//!   blocks (`<`, `>`, `&`, U+2028 and U+2029 become `\uXXXX` escapes, so no
//!   string can close the script element), read by the page's script with
//!   `JSON.parse` and shown with `textContent`, never `innerHTML`.
//!
//! [`Page`] writes the shell: UTF-8, a title, inline CSS, the body and an
//! inline script, under a Content-Security-Policy that forbids every
//! network fetch, so a page that works offline is proven self-contained.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` with `&`, `<`, `>`, `"` and `'` replaced by entities; borrowed
/// when nothing needs escaping.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text
        .bytes()
        .any(|b| matches!(b, b'&' | b'<' | b'>' | b'"' | b'\''))
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Appends `text`, escaped as [`escape`] does, to `out`.
pub fn push_escaped(out: &mut String, text: &str) {
    out.push_str(&escape(text));
}

/// Serialized JSON made safe for a `<script type="application/json">`
/// element: `<`, `>`, `&`, U+2028 and U+2029 become `\uXXXX` escapes
/// (valid JSON inside strings, and outside strings they cannot occur).
pub fn script_json(value: &serde_json::Value) -> String {
    let text = value.to_string();
    // U+2028 and U+2029 are E2 80 A8 / E2 80 A9 in UTF-8.
    if !text.bytes().any(|b| matches!(b, b'<' | b'>' | b'&' | 0xE2)) {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// The Content-Security-Policy of every page: inline style and script only,
/// no fetch of any kind (no CDN, no fonts, no images from elsewhere).
pub const CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

/// A self-contained HTML page.
#[derive(Clone, Debug)]
pub struct Page<'a> {
    /// The `<title>` (plain text; escaped here).
    pub title: &'a str,
    /// Inline CSS.
    pub style: &'a str,
    /// The body's HTML (already escaped by the caller).
    pub body: &'a str,
    /// Inline JavaScript, run at the end of the body.
    pub script: &'a str,
}

impl Page<'_> {
    /// The whole document: [`Page::head`], the body, [`Page::tail`].
    pub fn render(&self) -> String {
        let mut out =
            String::with_capacity(self.style.len() + self.body.len() + self.script.len() + 512);
        out.push_str(&self.head());
        out.push_str(self.body);
        out.push_str(&self.tail());
        out
    }

    /// Everything before the body (a writer that streams a large body
    /// writes this, the body, then [`Page::tail`]; `body` is not used).
    pub fn head(&self) -> String {
        let mut out = String::with_capacity(self.style.len() + 512);
        out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        out.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"");
        out.push_str(CONTENT_SECURITY_POLICY);
        out.push_str("\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
        push_escaped(&mut out, self.title);
        out.push_str("</title>\n<style>\n");
        out.push_str(self.style);
        out.push_str("\n</style>\n</head>\n<body>\n");
        out
    }

    /// Everything after the body: the script and the closing tags.
    pub fn tail(&self) -> String {
        let mut out = String::with_capacity(self.script.len() + 64);
        out.push_str("\n<script>\n");
        out.push_str(self.script);
        out.push_str("\n</script>\n</body>\n</html>\n");
        out
    }
}

/// The standard base64 alphabet (RFC 4648), for [`push_base64`].
const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Appends `bytes` in standard base64 (RFC 4648, `=` padding) to `out`; a
/// writer that streams a long column calls it on pieces whose lengths are
/// multiples of 3, so no padding appears before the end. The pages embed
/// binary columns this way in `<script type="application/octet-stream">`
/// elements (the alphabet holds no character HTML treats specially).
pub fn push_base64(out: &mut String, bytes: &[u8]) {
    out.reserve(bytes.len().div_ceil(3) * 4);
    let sym = |v: u32| char::from(BASE64[(v & 63) as usize]);
    for chunk in bytes.chunks(3) {
        let b = |i: usize| u32::from(chunk.get(i).copied().unwrap_or(0));
        let v = (b(0) << 16) | (b(1) << 8) | b(2);
        out.push(sym(v >> 18));
        out.push(sym(v >> 12));
        out.push(if chunk.len() > 1 { sym(v >> 6) } else { '=' });
        out.push(if chunk.len() > 2 { sym(v) } else { '=' });
    }
}

/// A number for SVG coordinates: at most two decimals, no trailing zeros.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return String::from("0");
    }
    // Rounded to hundredths by integer formatting; values near a tie (where the formatter's
    // exact decimal rounding decides) take the formatter.
    let hundredths = v * 100.0;
    if hundredths.abs() < 1e12 && (hundredths - hundredths.floor() - 0.5).abs() > 1e-6 {
        let h = hundredths.round() as i64;
        let (int, frac) = (h / 100, (h % 100).abs());
        let sign = if h < 0 && int == 0 { "-" } else { "" };
        return match frac {
            0 => format!("{int}"),
            f if f % 10 == 0 => format!("{sign}{int}.{}", f / 10),
            f => format!("{sign}{int}.{f:02}"),
        };
    }
    let text = format!("{v:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" || text.is_empty() {
        String::from("0")
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape("<script>alert(1)</script>"),
            "&lt;script&gt;alert(1)&lt;/script&gt;"
        );
        assert_eq!(escape("a&b \"c\" 'd'"), "a&amp;b &quot;c&quot; &#39;d&#39;");
        assert!(matches!(escape("plain"), Cow::Borrowed("plain")));
    }

    #[test]
    fn script_safe_json() {
        let v = serde_json::json!({"name": "</script><b>&\u{2028}"});
        let text = script_json(&v);
        assert!(!text.contains('<') && !text.contains('>') && !text.contains('&'));
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn page_shell_escapes_title_and_forbids_fetches() {
        let page = Page {
            title: "<b>x</b>",
            style: "",
            body: "",
            script: "",
        }
        .render();
        assert!(page.contains("<title>&lt;b&gt;x&lt;/b&gt;</title>"));
        assert!(page.contains("default-src 'none'"));
        let p = Page {
            title: "t",
            style: "s",
            body: "<p>b</p>",
            script: "x()",
        };
        assert_eq!(p.render(), format!("{}<p>b</p>{}", p.head(), p.tail()));
    }

    #[test]
    fn base64_matches_rfc_4648() {
        // The test vectors of RFC 4648, section 10.
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            let mut out = String::new();
            push_base64(&mut out, plain.as_bytes());
            assert_eq!(out, coded, "{plain:?}");
        }
        let mut out = String::new();
        push_base64(&mut out, &[0xfb, 0xff, 0xbf]);
        assert_eq!(out, "+/+/");
    }

    #[test]
    fn numbers() {
        assert_eq!(num(1.0), "1");
        assert_eq!(num(1.256), "1.26");
        assert_eq!(num(-0.001), "0");
        assert_eq!(num(f64::NAN), "0");
        // The integer path and the formatter agree.
        for v in [
            0.0, 12.0, 12.5, -12.5, -0.5, -0.05, 3.25, 100.1, -7.0, 1e9, 48.3,
        ] {
            let text = format!("{v:.2}");
            let text = text.trim_end_matches('0').trim_end_matches('.');
            let expected = if text == "-0" || text.is_empty() {
                "0"
            } else {
                text
            };
            assert_eq!(num(v), expected, "{v}");
        }
    }
}
