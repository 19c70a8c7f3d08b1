//! The lexer: PTO-AS text into tokens with byte spans. `//` comments and whitespace are
//! skipped. Dimension lists (`16x256xf32`) are not tokens: the parser scans them with
//! [`Lexer::scan_dims`] from the current position, as MLIR's own type parser does.

use crate::error::{Diag, DiagResult, ErrorKind};
use crate::source::Span;

/// A token kind.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// `%name` or `%name#i` (without `%`).
    Value(String),
    /// `@name` (without `@`; quoted names unquoted).
    Symbol(String),
    /// `^bb0` (without `^`).
    BlockLabel(String),
    /// `!name` (without `!`): a dialect type or a type alias.
    Bang(String),
    /// `#name` (without `#`): a dialect attribute or an attribute alias.
    Hash(String),
    /// A bare identifier (`pto.tload`, `index`, `row_major`, `x`).
    Ident(String),
    /// An integer literal as written (decimal or `0x` hex).
    Int(String),
    /// A float literal as written.
    Float(String),
    /// A string literal (unescaped).
    Str(String),
    /// `->`.
    Arrow,
    /// A single punctuation character: `( ) { } [ ] < > , : = * ? + -`.
    Punct(char),
    /// End of input.
    Eof,
}

impl Tok {
    /// A short description for "expected X, found Y" messages.
    pub fn describe(&self) -> String {
        match self {
            Tok::Value(n) => format!("'%{n}'"),
            Tok::Symbol(n) => format!("'@{n}'"),
            Tok::BlockLabel(n) => format!("'^{n}'"),
            Tok::Bang(n) => format!("'!{n}'"),
            Tok::Hash(n) => format!("'#{n}'"),
            Tok::Ident(n) => format!("'{n}'"),
            Tok::Int(n) | Tok::Float(n) => format!("'{n}'"),
            Tok::Str(s) => format!("string \"{}\"", s.escape_debug()),
            Tok::Arrow => "'->'".into(),
            Tok::Punct(c) => format!("'{c}'"),
            Tok::Eof => "end of input".into(),
        }
    }
}

/// A token and where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// What it is.
    pub tok: Tok,
    /// Where.
    pub span: Span,
}

/// The lexer over one source text.
pub struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b == b'.'
}

fn is_suffix_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'.' | b'-')
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `src`.
    pub fn new(src: &'a str) -> Lexer<'a> {
        Lexer {
            src,
            bytes: src.as_bytes(),
            pos: 0,
        }
    }

    /// Moves to byte `pos` (the start of a token seen before).
    pub fn reset(&mut self, pos: usize) {
        self.pos = pos.min(self.bytes.len());
    }

    fn skip_trivia(&mut self) {
        loop {
            while self.pos < self.bytes.len() && self.bytes[self.pos].is_ascii_whitespace() {
                self.pos += 1;
            }
            if self.bytes[self.pos..].starts_with(b"//") {
                while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
                    self.pos += 1;
                }
                continue;
            }
            break;
        }
    }

    fn take_while(&mut self, f: impl Fn(u8) -> bool) -> &'a str {
        let start = self.pos;
        while self.pos < self.bytes.len() && f(self.bytes[self.pos]) {
            self.pos += 1;
        }
        &self.src[start..self.pos]
    }

    fn err(&self, start: usize, msg: impl Into<String>) -> Diag {
        Diag::at(ErrorKind::Syntax, Span::new(start, start + 1), msg)
    }

    /// The next token.
    pub fn next_token(&mut self) -> DiagResult<Token> {
        self.skip_trivia();
        let start = self.pos;
        let Some(&b) = self.bytes.get(self.pos) else {
            return Ok(Token {
                tok: Tok::Eof,
                span: Span::new(start, start),
            });
        };
        let tok = match b {
            b'%' => {
                self.pos += 1;
                let name = self.take_while(is_suffix_char);
                if name.is_empty() {
                    return Err(self.err(start, "expected a value name after '%'"));
                }
                let mut name = name.to_string();
                if self.bytes.get(self.pos) == Some(&b'#')
                    && self
                        .bytes
                        .get(self.pos + 1)
                        .is_some_and(|c| c.is_ascii_digit())
                {
                    self.pos += 1;
                    let idx = self.take_while(|c| c.is_ascii_digit());
                    name = format!("{name}#{idx}");
                }
                Tok::Value(name)
            }
            b'@' => {
                self.pos += 1;
                if self.bytes.get(self.pos) == Some(&b'"') {
                    Tok::Symbol(self.string(start)?)
                } else {
                    let name = self.take_while(is_suffix_char);
                    if name.is_empty() {
                        return Err(self.err(start, "expected a symbol name after '@'"));
                    }
                    Tok::Symbol(name.to_string())
                }
            }
            b'^' => {
                self.pos += 1;
                let name = self.take_while(is_suffix_char);
                if name.is_empty() {
                    return Err(self.err(start, "expected a block name after '^'"));
                }
                Tok::BlockLabel(name.to_string())
            }
            b'!' | b'#' => {
                self.pos += 1;
                let name = self.take_while(is_suffix_char);
                if name.is_empty() && b == b'!' {
                    return Err(self.err(start, "expected a type name after '!'"));
                }
                if b == b'!' {
                    Tok::Bang(name.to_string())
                } else {
                    Tok::Hash(name.to_string())
                }
            }
            b'"' => Tok::Str(self.string(start)?),
            b'-' if self.bytes.get(self.pos + 1) == Some(&b'>') => {
                self.pos += 2;
                Tok::Arrow
            }
            b'0'..=b'9' => self.number(),
            _ if is_ident_start(b) => Tok::Ident(self.take_while(is_ident_char).to_string()),
            b'(' | b')' | b'{' | b'}' | b'[' | b']' | b'<' | b'>' | b',' | b':' | b'=' | b'*'
            | b'?' | b'+' | b'-' => {
                self.pos += 1;
                Tok::Punct(b as char)
            }
            _ => {
                let c = self.src[start..].chars().next().unwrap_or('?');
                return Err(Diag::at(
                    ErrorKind::Syntax,
                    Span::new(start, start + c.len_utf8()),
                    format!("unexpected character '{}'", c.escape_debug()),
                ));
            }
        };
        Ok(Token {
            tok,
            span: Span::new(start, self.pos),
        })
    }

    fn number(&mut self) -> Tok {
        let start = self.pos;
        if self.bytes[self.pos..].starts_with(b"0x") || self.bytes[self.pos..].starts_with(b"0X") {
            self.pos += 2;
            self.take_while(|c| c.is_ascii_hexdigit());
            return Tok::Int(self.src[start..self.pos].to_string());
        }
        self.take_while(|c| c.is_ascii_digit());
        let mut float = false;
        if self.bytes.get(self.pos) == Some(&b'.')
            && self
                .bytes
                .get(self.pos + 1)
                .is_some_and(|c| c.is_ascii_digit())
        {
            float = true;
            self.pos += 1;
            self.take_while(|c| c.is_ascii_digit());
        } else if self.bytes.get(self.pos) == Some(&b'.') {
            // `1.` is a float in MLIR.
            float = true;
            self.pos += 1;
        }
        if float && matches!(self.bytes.get(self.pos), Some(b'e') | Some(b'E')) {
            let save = self.pos;
            self.pos += 1;
            if matches!(self.bytes.get(self.pos), Some(b'+') | Some(b'-')) {
                self.pos += 1;
            }
            if self.take_while(|c| c.is_ascii_digit()).is_empty() {
                self.pos = save;
            }
        }
        let text = self.src[start..self.pos].to_string();
        if float {
            Tok::Float(text)
        } else {
            Tok::Int(text)
        }
    }

    fn string(&mut self, start: usize) -> DiagResult<String> {
        // At the opening quote.
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(&b) = self.bytes.get(self.pos) else {
                return Err(self.err(start, "unterminated string"));
            };
            match b {
                b'"' => {
                    self.pos += 1;
                    return Ok(out);
                }
                b'\n' => return Err(self.err(start, "unterminated string")),
                b'\\' => {
                    let Some(&e) = self.bytes.get(self.pos + 1) else {
                        return Err(self.err(start, "unterminated string"));
                    };
                    self.pos += 2;
                    match e {
                        b'n' => out.push('\n'),
                        b't' => out.push('\t'),
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        _ if e.is_ascii_hexdigit()
                            && self
                                .bytes
                                .get(self.pos)
                                .is_some_and(|c| c.is_ascii_hexdigit()) =>
                        {
                            let hex = &self.src[self.pos - 1..self.pos + 1];
                            self.pos += 1;
                            out.push(u8::from_str_radix(hex, 16).map(char::from).unwrap_or('?'));
                        }
                        _ => return Err(self.err(self.pos - 2, "invalid escape in string")),
                    }
                }
                _ => {
                    let c = self.src[self.pos..].chars().next().unwrap_or('?');
                    out.push(c);
                    self.pos += c.len_utf8();
                }
            }
        }
    }

    /// Scans a dimension list at the current position: `(N|?)x` repeated. Returns the
    /// dimensions (`None` = `?`) and leaves the position after the last `x`.
    pub fn scan_dims(&mut self) -> DiagResult<Vec<Option<i64>>> {
        self.skip_trivia();
        let mut dims = Vec::new();
        loop {
            let save = self.pos;
            let dim = if self.bytes.get(self.pos) == Some(&b'?') {
                self.pos += 1;
                None
            } else {
                let digits = self.take_while(|c| c.is_ascii_digit());
                if digits.is_empty() {
                    self.pos = save;
                    break;
                }
                match digits.parse::<i64>() {
                    Ok(v) => Some(v),
                    Err(_) => {
                        return Err(self.err(save, format!("dimension {digits} is too large")))
                    }
                }
            };
            if self.bytes.get(self.pos) == Some(&b'x') {
                self.pos += 1;
                dims.push(dim);
                if dims.len() > 64 {
                    return Err(self.err(save, "more than 64 dimensions"));
                }
            } else {
                self.pos = save;
                break;
            }
        }
        Ok(dims)
    }
}
