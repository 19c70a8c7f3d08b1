//! A strict reader for the small slice of Python syntax build files use.
//!
//! `kernel_config.py`, the `.npy` header dict and the tolerance lines of
//! `golden.py` are all Python, but only a declarative slice of it: literals
//! (strings, numbers, `True`/`False`/`None`, lists, tuples, dicts), dotted
//! names, calls and the `/` operator (for `str(_ROOT_DIR / "a" / "b")`).
//! This module turns text into tokens ([`tokenize`]) and tokens into an
//! expression tree ([`Parser::parse_expr`]); what an expression *means* is
//! decided by the module that reads the file. Anything outside the slice is a
//! [`SyntaxError`] with a 1-based line and column. Python itself is never run.
//!
//! The parser is a recursive descent, so its work is bounded: an expression
//! may nest at most [`MAX_DEPTH`] levels (brackets, signs, `.attr` and call
//! chains and `/` chains all count), which keeps both the parser's recursion
//! and the recursive drop of the tree far from the stack's end whatever the
//! input is.

use std::fmt;

/// How deep an expression may nest. PyPTO's files nest at most 4 levels
/// (`KERNELS = [{"signature": [_D.IN]}]`); CPython's own tokenizer stops at
/// 200 nested parentheses.
pub(crate) const MAX_DEPTH: usize = 100;

/// A 1-based position in the text (column counts characters; a tab is one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pos {
    /// Line number, from 1.
    pub line: usize,
    /// Column number, from 1.
    pub col: usize,
}

/// Text outside the supported Python slice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    /// Where the problem is.
    pub pos: Pos,
    /// What was found and what was expected.
    pub message: String,
}

impl SyntaxError {
    pub(crate) fn new(pos: Pos, message: impl Into<String>) -> Self {
        Self {
            pos,
            message: message.into(),
        }
    }
}

/// One token kind.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    /// An identifier or keyword.
    Name(String),
    /// An integer literal (sign not included).
    Int(i128),
    /// A float literal (sign not included).
    Float(f64),
    /// A string literal, escapes resolved.
    Str(String),
    /// One of `( ) [ ] { } , : = . / + -`.
    Punct(char),
    /// The end of a logical line.
    Newline,
    /// The end of the text.
    Eof,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Name(n) => write!(f, "name `{n}`"),
            Tok::Int(i) => write!(f, "number `{i}`"),
            Tok::Float(x) => write!(f, "number `{x}`"),
            Tok::Str(s) => write!(f, "string {}", crate::pyrepr::repr_str(s)),
            Tok::Punct(c) => write!(f, "`{c}`"),
            Tok::Newline => f.write_str("end of line"),
            Tok::Eof => f.write_str("end of file"),
        }
    }
}

/// A token with its position.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Token {
    /// The token.
    pub tok: Tok,
    /// Where it starts.
    pub pos: Pos,
    /// True for the first token of a logical line.
    pub line_start: bool,
}

struct Lexer {
    chars: Vec<char>,
    i: usize,
    line: usize,
    col: usize,
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.i + ahead).copied()
    }

    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            col: self.col,
        }
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.chars.get(self.i).copied()?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }
}

/// Splits `text` into tokens. Newlines inside brackets are skipped (Python's
/// implicit line joining); blank and comment-only lines yield nothing; the
/// result always ends with `Newline` (if there was any token) and `Eof`.
pub(crate) fn tokenize(text: &str) -> Result<Vec<Token>, SyntaxError> {
    let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut lx = Lexer {
        chars: normalized.chars().collect(),
        i: 0,
        line: 1,
        col: 1,
    };
    let mut tokens: Vec<Token> = Vec::new();
    let mut brackets: Vec<(char, Pos)> = Vec::new();
    let mut at_line_start = true;

    while let Some(c) = lx.peek(0) {
        let pos = lx.pos();
        match c {
            '\n' => {
                lx.bump();
                if brackets.is_empty() {
                    if tokens.last().is_some_and(|t| t.tok != Tok::Newline) {
                        tokens.push(Token {
                            tok: Tok::Newline,
                            pos,
                            line_start: false,
                        });
                    }
                    at_line_start = true;
                }
                continue;
            }
            ' ' | '\t' | '\x0c' => {
                lx.bump();
                continue;
            }
            '#' => {
                while lx.peek(0).is_some_and(|c| c != '\n') {
                    lx.bump();
                }
                continue;
            }
            '\\' => {
                return Err(SyntaxError::new(
                    pos,
                    "a backslash line continuation is not supported here; join the lines",
                ));
            }
            _ => {}
        }

        let tok = if c == '"' || c == '\'' {
            lex_string(&mut lx, false)?
        } else if c.is_ascii_digit() || (c == '.' && lx.peek(1).is_some_and(|d| d.is_ascii_digit()))
        {
            lex_number(&mut lx)?
        } else if c == '_' || c.is_alphabetic() {
            let mut name = String::new();
            while let Some(c) = lx.peek(0).filter(|c| *c == '_' || c.is_alphanumeric()) {
                name.push(c);
                lx.bump();
            }
            if lx.peek(0).is_some_and(|q| q == '"' || q == '\'') {
                match name.to_ascii_lowercase().as_str() {
                    "r" => lex_string(&mut lx, true)?,
                    "u" => lex_string(&mut lx, false)?,
                    _ => {
                        return Err(SyntaxError::new(
                            pos,
                            format!(
                                "string prefix `{name}` is not supported; only plain, r and u strings are"
                            ),
                        ))
                    }
                }
            } else {
                Tok::Name(name)
            }
        } else {
            lx.bump();
            match c {
                '(' | '[' | '{' => {
                    brackets.push((c, pos));
                    Tok::Punct(c)
                }
                ')' | ']' | '}' => {
                    let open = match c {
                        ')' => '(',
                        ']' => '[',
                        _ => '{',
                    };
                    match brackets.pop() {
                        Some((o, _)) if o == open => Tok::Punct(c),
                        Some((o, opos)) => {
                            return Err(SyntaxError::new(
                                pos,
                                format!(
                                    "`{c}` does not match `{o}` opened at line {} column {}",
                                    opos.line, opos.col
                                ),
                            ))
                        }
                        None => {
                            return Err(SyntaxError::new(pos, format!("unmatched `{c}`")));
                        }
                    }
                }
                ',' | ':' | '=' | '.' | '/' | '+' | '-' => Tok::Punct(c),
                other => {
                    return Err(SyntaxError::new(
                        pos,
                        format!(
                            "unexpected character {}",
                            crate::pyrepr::repr_str(&other.to_string())
                        ),
                    ))
                }
            }
        };
        // `at_line_start` is only ever set at bracket depth 0.
        let line_start = at_line_start;
        at_line_start = false;
        tokens.push(Token {
            tok,
            pos,
            line_start,
        });
    }

    if let Some((open, opos)) = brackets.last() {
        return Err(SyntaxError::new(*opos, format!("`{open}` is never closed")));
    }
    let end = lx.pos();
    if tokens.last().is_some_and(|t| t.tok != Tok::Newline) {
        tokens.push(Token {
            tok: Tok::Newline,
            pos: end,
            line_start: false,
        });
    }
    tokens.push(Token {
        tok: Tok::Eof,
        pos: end,
        line_start: true,
    });
    Ok(tokens)
}

fn lex_string(lx: &mut Lexer, raw: bool) -> Result<Tok, SyntaxError> {
    let start = lx.pos();
    let quote = lx.bump().unwrap_or('"');
    if lx.peek(0) == Some(quote) && lx.peek(1) == Some(quote) {
        return Err(SyntaxError::new(
            start,
            "triple-quoted strings are not supported here",
        ));
    }
    let mut out = String::new();
    loop {
        let pos = lx.pos();
        match lx.bump() {
            None | Some('\n') => {
                return Err(SyntaxError::new(start, "unterminated string literal"));
            }
            Some(c) if c == quote => return Ok(Tok::Str(out)),
            Some('\\') if raw => {
                out.push('\\');
                match lx.bump() {
                    None | Some('\n') => {
                        return Err(SyntaxError::new(start, "unterminated string literal"))
                    }
                    Some(c) => out.push(c),
                }
            }
            Some('\\') => lex_escape(lx, pos, &mut out)?,
            Some(c) => out.push(c),
        }
    }
}

fn lex_escape(lx: &mut Lexer, pos: Pos, out: &mut String) -> Result<(), SyntaxError> {
    let Some(c) = lx.bump() else {
        return Err(SyntaxError::new(pos, "unterminated string literal"));
    };
    match c {
        '\n' => {}
        '\\' | '\'' | '"' => out.push(c),
        'n' => out.push('\n'),
        'r' => out.push('\r'),
        't' => out.push('\t'),
        'a' => out.push('\x07'),
        'b' => out.push('\x08'),
        'f' => out.push('\x0c'),
        'v' => out.push('\x0b'),
        '0'..='7' => {
            let mut value = c.to_digit(8).unwrap_or(0);
            for _ in 0..2 {
                match lx.peek(0).and_then(|d| d.to_digit(8)) {
                    Some(d) => {
                        value = value * 8 + d;
                        lx.bump();
                    }
                    None => break,
                }
            }
            out.push(char::from_u32(value).unwrap_or('\u{fffd}'));
        }
        'x' | 'u' | 'U' => {
            let width = match c {
                'x' => 2,
                'u' => 4,
                _ => 8,
            };
            let mut value: u32 = 0;
            for _ in 0..width {
                let digit = lx.peek(0).and_then(|d| d.to_digit(16)).ok_or_else(|| {
                    SyntaxError::new(
                        pos,
                        format!("truncated `\\{c}` escape: expected {width} hex digits"),
                    )
                })?;
                value = value * 16 + digit;
                lx.bump();
            }
            let ch = char::from_u32(value).ok_or_else(|| {
                SyntaxError::new(pos, format!("`\\{c}{value:x}` is not a valid character"))
            })?;
            out.push(ch);
        }
        'N' => {
            return Err(SyntaxError::new(
                pos,
                "named `\\N{...}` escapes are not supported; write the character itself",
            ))
        }
        other => {
            // Python keeps an unknown escape as written.
            out.push('\\');
            out.push(other);
        }
    }
    Ok(())
}

fn lex_number(lx: &mut Lexer) -> Result<Tok, SyntaxError> {
    let start = lx.pos();
    let mut text = String::new();
    let take_digits = |lx: &mut Lexer, text: &mut String, radix: u32| {
        while let Some(c) = lx.peek(0).filter(|c| *c == '_' || c.is_digit(radix)) {
            text.push(c);
            lx.bump();
        }
    };
    let bad = |text: &str| SyntaxError::new(start, format!("invalid number literal `{text}`"));

    if lx.peek(0) == Some('0') {
        if let Some(radix) = match lx.peek(1) {
            Some('x' | 'X') => Some(16),
            Some('o' | 'O') => Some(8),
            Some('b' | 'B') => Some(2),
            _ => None,
        } {
            lx.bump();
            lx.bump();
            take_digits(lx, &mut text, radix);
            let digits: String = text.chars().filter(|c| *c != '_').collect();
            if lx.peek(0).is_some_and(|c| c.is_alphanumeric()) {
                return Err(bad(&text));
            }
            return i128::from_str_radix(&digits, radix)
                .map(Tok::Int)
                .map_err(|_| bad(&text));
        }
    }

    take_digits(lx, &mut text, 10);
    let mut is_float = false;
    if lx.peek(0) == Some('.') {
        is_float = true;
        text.push('.');
        lx.bump();
        take_digits(lx, &mut text, 10);
    }
    if lx.peek(0).is_some_and(|c| c == 'e' || c == 'E') {
        let sign_len = usize::from(lx.peek(1).is_some_and(|c| c == '+' || c == '-'));
        if lx.peek(1 + sign_len).is_some_and(|c| c.is_ascii_digit()) {
            is_float = true;
            for _ in 0..=sign_len {
                text.push(lx.bump().unwrap_or('e'));
            }
            take_digits(lx, &mut text, 10);
        }
    }
    if let Some(c) = lx.peek(0).filter(|c| c.is_alphanumeric() || *c == '_') {
        text.push(c);
        return Err(bad(&text));
    }
    if text.contains("__") || text.ends_with('_') || text.contains("_.") || text.contains("._") {
        return Err(bad(&text));
    }
    let digits: String = text.chars().filter(|c| *c != '_').collect();
    if is_float {
        return digits
            .parse::<f64>()
            .map(Tok::Float)
            .map_err(|_| bad(&text));
    }
    if digits.len() > 1 && digits.starts_with('0') && digits.chars().any(|c| c != '0') {
        return Err(SyntaxError::new(
            start,
            format!("leading zeros are not permitted in decimal integer literals (`{text}`)"),
        ));
    }
    digits
        .parse::<i128>()
        .map(Tok::Int)
        .map_err(|_| SyntaxError::new(start, format!("integer literal `{text}` is out of range")))
}

/// An expression node.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ExprKind {
    /// `None`.
    None,
    /// `True` / `False`.
    Bool(bool),
    /// An integer literal, sign folded in.
    Int(i128),
    /// A float literal, sign folded in.
    Float(f64),
    /// A string literal.
    Str(String),
    /// `[a, b]`.
    List(Vec<Expr>),
    /// `(a, b)`, `(a,)`, `()`.
    Tuple(Vec<Expr>),
    /// `{k: v}`.
    Dict(Vec<(Expr, Expr)>),
    /// A bare name other than `True`/`False`/`None`.
    Name(String),
    /// `value.attr`.
    Attr(Box<Expr>, String),
    /// `callee(args)`, positional arguments only.
    Call(Box<Expr>, Vec<Expr>),
    /// `left / right`.
    Div(Box<Expr>, Box<Expr>),
}

/// An expression with the position of its first token.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Expr {
    /// What the expression is.
    pub kind: ExprKind,
    /// Where it starts.
    pub pos: Pos,
}

impl Expr {
    /// A short description for "expected X, found Y" messages.
    pub(crate) fn describe(&self) -> String {
        match &self.kind {
            ExprKind::None => "None".to_string(),
            ExprKind::Bool(b) => if *b { "True" } else { "False" }.to_string(),
            ExprKind::Int(i) => format!("int {i}"),
            ExprKind::Float(x) => format!("float {}", crate::pyrepr::repr_float(*x)),
            ExprKind::Str(s) => format!("str {}", crate::pyrepr::repr_str(s)),
            ExprKind::List(_) => "a list".to_string(),
            ExprKind::Tuple(_) => "a tuple".to_string(),
            ExprKind::Dict(_) => "a dict".to_string(),
            ExprKind::Name(n) => format!("name `{n}`"),
            ExprKind::Attr(..) => "an attribute expression".to_string(),
            ExprKind::Call(..) => "a call".to_string(),
            ExprKind::Div(..) => "a `/` expression".to_string(),
        }
    }
}

/// A recursive-descent parser over a token slice.
pub(crate) struct Parser<'a> {
    toks: &'a [Token],
    i: usize,
    /// Nesting levels open at the current token (see [`MAX_DEPTH`]).
    depth: usize,
}

impl<'a> Parser<'a> {
    /// A parser at the first of `toks` (which must end with `Eof`, as
    /// [`tokenize`] guarantees).
    pub(crate) fn new(toks: &'a [Token]) -> Self {
        Self {
            toks,
            i: 0,
            depth: 0,
        }
    }

    /// Opens one nesting level at `pos`, failing past [`MAX_DEPTH`]. The
    /// caller restores `depth` when the level closes.
    fn enter(&mut self, pos: Pos) -> Result<(), SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(SyntaxError::new(
                pos,
                format!(
                    "the expression nests more than {MAX_DEPTH} levels deep (brackets, signs, `.`, calls and `/` all count); the files ir.compile() writes nest at most 4"
                ),
            ));
        }
        Ok(())
    }

    /// The current token.
    pub(crate) fn peek(&self) -> &'a Token {
        let last = self.toks.len().saturating_sub(1);
        &self.toks[self.i.min(last)]
    }

    /// Consumes and returns the current token (stays on `Eof`).
    pub(crate) fn bump(&mut self) -> &'a Token {
        let tok = self.peek();
        if tok.tok != Tok::Eof {
            self.i += 1;
        }
        tok
    }

    /// Consumes `c` or fails naming what was found instead.
    pub(crate) fn expect_punct(&mut self, c: char, context: &str) -> Result<Pos, SyntaxError> {
        let tok = self.peek();
        if tok.tok == Tok::Punct(c) {
            self.bump();
            Ok(tok.pos)
        } else {
            Err(SyntaxError::new(
                tok.pos,
                format!("expected `{c}` {context}, found {}", tok.tok),
            ))
        }
    }

    /// Consumes a name token and returns it, or fails.
    pub(crate) fn expect_name(&mut self, context: &str) -> Result<(&'a str, Pos), SyntaxError> {
        let tok = self.peek();
        match &tok.tok {
            Tok::Name(n) => {
                self.bump();
                Ok((n.as_str(), tok.pos))
            }
            other => Err(SyntaxError::new(
                tok.pos,
                format!("expected a name {context}, found {other}"),
            )),
        }
    }

    /// Consumes the end of a logical line (or accepts the end of the text).
    pub(crate) fn expect_end_of_line(&mut self, context: &str) -> Result<(), SyntaxError> {
        let tok = self.peek();
        match tok.tok {
            Tok::Newline => {
                self.bump();
                Ok(())
            }
            Tok::Eof => Ok(()),
            ref other => Err(SyntaxError::new(
                tok.pos,
                format!("expected the end of the line {context}, found {other}"),
            )),
        }
    }

    /// Parses `unary ('/' unary)*`.
    pub(crate) fn parse_expr(&mut self) -> Result<Expr, SyntaxError> {
        let saved = self.depth;
        let res = self.parse_div_chain();
        self.depth = saved;
        res
    }

    /// `unary ('/' unary)*`; every `/` nests the tree one level deeper.
    fn parse_div_chain(&mut self) -> Result<Expr, SyntaxError> {
        let mut left = self.parse_unary()?;
        while self.peek().tok == Tok::Punct('/') {
            let slash = self.bump();
            self.enter(slash.pos)?;
            let right = self.parse_unary()?;
            let pos = left.pos;
            left = Expr {
                kind: ExprKind::Div(Box::new(left), Box::new(right)),
                pos,
            };
        }
        Ok(left)
    }

    fn parse_unary(&mut self) -> Result<Expr, SyntaxError> {
        let saved = self.depth;
        let res = self.parse_signed();
        self.depth = saved;
        res
    }

    /// `('-' | '+')* postfix`, one nesting level per sign and per operand.
    fn parse_signed(&mut self) -> Result<Expr, SyntaxError> {
        let tok = self.peek();
        self.enter(tok.pos)?;
        let negate = match tok.tok {
            Tok::Punct('-') => true,
            Tok::Punct('+') => false,
            _ => return self.parse_postfix(),
        };
        self.bump();
        let operand = self.parse_unary()?;
        let kind = match operand.kind {
            ExprKind::Int(i) => ExprKind::Int(if negate { -i } else { i }),
            ExprKind::Float(x) => ExprKind::Float(if negate { -x } else { x }),
            _ => {
                return Err(SyntaxError::new(
                    tok.pos,
                    format!(
                        "a sign is only allowed before a number, found it before {}",
                        operand.describe()
                    ),
                ))
            }
        };
        Ok(Expr { kind, pos: tok.pos })
    }

    fn parse_postfix(&mut self) -> Result<Expr, SyntaxError> {
        let mut expr = self.parse_atom()?;
        loop {
            let tok = self.peek();
            if matches!(tok.tok, Tok::Punct('.' | '(')) {
                self.enter(tok.pos)?;
            }
            match tok.tok {
                Tok::Punct('.') => {
                    self.bump();
                    let (attr, _) = self.expect_name("after `.`")?;
                    let pos = expr.pos;
                    expr = Expr {
                        kind: ExprKind::Attr(Box::new(expr), attr.to_string()),
                        pos,
                    };
                }
                Tok::Punct('(') => {
                    self.bump();
                    let args = self.parse_items(')', "in the argument list")?;
                    let pos = expr.pos;
                    expr = Expr {
                        kind: ExprKind::Call(Box::new(expr), args),
                        pos,
                    };
                }
                _ => return Ok(expr),
            }
        }
    }

    fn parse_atom(&mut self) -> Result<Expr, SyntaxError> {
        let tok = self.bump();
        let pos = tok.pos;
        let kind = match &tok.tok {
            Tok::Int(i) => ExprKind::Int(*i),
            Tok::Float(x) => ExprKind::Float(*x),
            Tok::Str(s) => ExprKind::Str(s.clone()),
            Tok::Name(n) => match n.as_str() {
                "True" => ExprKind::Bool(true),
                "False" => ExprKind::Bool(false),
                "None" => ExprKind::None,
                _ => ExprKind::Name(n.clone()),
            },
            Tok::Punct('[') => ExprKind::List(self.parse_items(']', "in the list")?),
            Tok::Punct('(') => return self.parse_paren(pos),
            Tok::Punct('{') => ExprKind::Dict(self.parse_dict_items()?),
            other => {
                return Err(SyntaxError::new(
                    pos,
                    format!("expected a value, found {other}"),
                ))
            }
        };
        Ok(Expr { kind, pos })
    }

    fn parse_paren(&mut self, pos: Pos) -> Result<Expr, SyntaxError> {
        if self.peek().tok == Tok::Punct(')') {
            self.bump();
            return Ok(Expr {
                kind: ExprKind::Tuple(Vec::new()),
                pos,
            });
        }
        let first = self.parse_expr()?;
        if self.peek().tok == Tok::Punct(')') {
            self.bump();
            return Ok(first);
        }
        self.expect_punct(',', "or `)` after the parenthesized value")?;
        let mut items = vec![first];
        items.extend(self.parse_items(')', "in the tuple")?);
        Ok(Expr {
            kind: ExprKind::Tuple(items),
            pos,
        })
    }

    /// Parses `item (',' item)* [','] close`, the opening bracket consumed.
    fn parse_items(&mut self, close: char, context: &str) -> Result<Vec<Expr>, SyntaxError> {
        let mut items = Vec::new();
        loop {
            if self.peek().tok == Tok::Punct(close) {
                self.bump();
                return Ok(items);
            }
            items.push(self.parse_expr()?);
            let tok = self.peek();
            match tok.tok {
                Tok::Punct(',') => {
                    self.bump();
                }
                Tok::Punct(c) if c == close => {}
                Tok::Punct('=') => {
                    return Err(SyntaxError::new(
                        tok.pos,
                        "keyword arguments are not supported here",
                    ))
                }
                ref other => {
                    return Err(SyntaxError::new(
                        tok.pos,
                        format!("expected `,` or `{close}` {context}, found {other}"),
                    ))
                }
            }
        }
    }

    fn parse_dict_items(&mut self) -> Result<Vec<(Expr, Expr)>, SyntaxError> {
        let mut items = Vec::new();
        loop {
            if self.peek().tok == Tok::Punct('}') {
                self.bump();
                return Ok(items);
            }
            let key = self.parse_expr()?;
            self.expect_punct(':', "after the dict key")?;
            let value = self.parse_expr()?;
            items.push((key, value));
            let tok = self.peek();
            match tok.tok {
                Tok::Punct(',') => {
                    self.bump();
                }
                Tok::Punct('}') => {}
                ref other => {
                    return Err(SyntaxError::new(
                        tok.pos,
                        format!("expected `,` or `}}` in the dict, found {other}"),
                    ))
                }
            }
        }
    }
}

/// Parses `text` as exactly one expression (trailing newlines allowed).
pub(crate) fn parse_single_expr(text: &str) -> Result<Expr, SyntaxError> {
    let toks = tokenize(text)?;
    let mut parser = Parser::new(&toks);
    let expr = parser.parse_expr()?;
    parser.expect_end_of_line("after the value")?;
    let tok = parser.peek();
    if tok.tok != Tok::Eof {
        return Err(SyntaxError::new(
            tok.pos,
            format!("expected the end of the text, found {}", tok.tok),
        ));
    }
    Ok(expr)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Renders an expression compactly so tests can state expectations as text.
    fn show(e: &Expr) -> String {
        let list = |items: &[Expr]| items.iter().map(show).collect::<Vec<_>>().join(" ");
        match &e.kind {
            ExprKind::None => "None".into(),
            ExprKind::Bool(b) => b.to_string(),
            ExprKind::Int(i) => format!("i{i}"),
            ExprKind::Float(x) => format!("f{x:e}"),
            ExprKind::Str(s) => format!("{s:?}"),
            ExprKind::List(items) => format!("[{}]", list(items)),
            ExprKind::Tuple(items) => format!("({})", list(items)),
            ExprKind::Dict(items) => {
                let parts: Vec<String> = items
                    .iter()
                    .map(|(k, v)| format!("{}:{}", show(k), show(v)))
                    .collect();
                format!("{{{}}}", parts.join(" "))
            }
            ExprKind::Name(n) => n.clone(),
            ExprKind::Attr(v, a) => format!("{}.{a}", show(v)),
            ExprKind::Call(f, args) => format!("{}<{}>", show(f), list(args)),
            ExprKind::Div(l, r) => format!("({} / {})", show(l), show(r)),
        }
    }

    fn check(input: &str, expected: &str) {
        let res = match parse_single_expr(input) {
            Ok(e) => show(&e),
            Err(e) => format!("error {}:{}: {}", e.pos.line, e.pos.col, e.message),
        };
        assert_eq!(res, expected, "input: {input:?}");
    }

    #[test]
    fn literals() {
        check("0", "i0");
        check("-12", "i-12");
        check("1_000", "i1000");
        check("0x1F", "i31");
        check("1e-05", "f1e-5");
        check("-2.5", "f-2.5e0");
        check(".5", "f5e-1");
        check("5.", "f5e0");
        check("True", "true");
        check("None", "None");
        check("'a\\'b'", "\"a'b\"");
        check("\"tab\\tx\"", "\"tab\\tx\"");
        check("r'a\\d'", "\"a\\\\d\"");
        check("'\\x41\\u00e9\\101'", "\"AéA\"");
        check("'\\q'", "\"\\\\q\"");
    }

    #[test]
    fn containers() {
        check("[1, 2,]", "[i1 i2]");
        check("[]", "[]");
        check("()", "()");
        check("(5,)", "(i5)");
        check("(5)", "i5");
        check("(2, 3)", "(i2 i3)");
        check("{'a': 1, 'b': [True],}", "{\"a\":i1 \"b\":[true]}");
        check("{\n\t'a':\n\t\t1,\n}", "{\"a\":i1}");
    }

    #[test]
    fn names_calls_and_paths() {
        check("_D.IN", "_D.IN");
        check(
            "str(_ROOT_DIR / 'k' / 'x.cpp')",
            "str<((_ROOT_DIR / \"k\") / \"x.cpp\")>",
        );
        check("Path(__file__).parent", "Path<__file__>.parent");
    }

    #[test]
    fn errors_name_line_and_column() {
        check("[1, 2", "error 1:1: `[` is never closed");
        check(
            "[1 2]",
            "error 1:4: expected `,` or `]` in the list, found number `2`",
        );
        check(
            "{'a' 1}",
            "error 1:6: expected `:` after the dict key, found number `1`",
        );
        check("'abc", "error 1:1: unterminated string literal");
        check(
            "f'x'",
            "error 1:1: string prefix `f` is not supported; only plain, r and u strings are",
        );
        check(
            "1 + 2",
            "error 1:3: expected the end of the line after the value, found `+`",
        );
        check(
            "-x",
            "error 1:1: a sign is only allowed before a number, found it before name `x`",
        );
        check(
            "007",
            "error 1:1: leading zeros are not permitted in decimal integer literals (`007`)",
        );
        check("1x", "error 1:1: invalid number literal `1x`");
        check("a * b", "error 1:3: unexpected character '*'");
        check(
            "(1]",
            "error 1:3: `]` does not match `(` opened at line 1 column 1",
        );
        check(
            "f(x=1)",
            "error 1:4: keyword arguments are not supported here",
        );
        check(
            "'''doc'''",
            "error 1:1: triple-quoted strings are not supported here",
        );
        check(
            "[1,\n 2 \\\n]",
            "error 2:4: a backslash line continuation is not supported here; join the lines",
        );
        check("99999999999999999999999999999999999999999", "error 1:1: integer literal `99999999999999999999999999999999999999999` is out of range");
    }

    #[test]
    fn nesting_is_bounded() {
        // The deepest nesting accepted, and one level more.
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse_single_expr(&ok).is_ok());
        let over = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        check(
            &over,
            "error 1:101: the expression nests more than 100 levels deep (brackets, signs, `.`, calls and `/` all count); the files ir.compile() writes nest at most 4",
        );
        // Far past the limit, every way of nesting: a recursive parser (or the
        // recursive drop of a deep tree) would overflow the test thread's stack.
        let n = 200_000;
        let deep = [
            format!("{}1{}", "(".repeat(n), ")".repeat(n)),
            format!("{}1", "-".repeat(n)),
            format!("{}1", "+-".repeat(n)),
            format!("a{}", " / 'x'".repeat(n)),
            format!("a{}", ".b".repeat(n)),
            format!("f{}", "()".repeat(n)),
            format!("{}{}", "{'k': ".repeat(n), "}".repeat(n)),
            format!("{}{}", "[(".repeat(n), ",)]".repeat(n)),
        ];
        for text in &deep {
            let err = parse_single_expr(text).unwrap_err();
            assert!(
                err.message
                    .starts_with("the expression nests more than 100 levels deep"),
                "{}...: {}",
                &text[..20],
                err.message
            );
            assert_eq!(err.pos.line, 1);
        }
        // Long flat sequences are not nesting.
        let wide = format!("[{}]", "1, ".repeat(n));
        match parse_single_expr(&wide).unwrap().kind {
            ExprKind::List(items) => assert_eq!(items.len(), n),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn tokens_mark_logical_line_starts() {
        let toks = tokenize("# c\n\nA = [\n  1,\n]\n  B = 2").unwrap();
        let starts: Vec<(usize, usize)> = toks
            .iter()
            .filter(|t| t.line_start && t.tok != Tok::Eof)
            .map(|t| (t.pos.line, t.pos.col))
            .collect();
        assert_eq!(starts, vec![(3, 1), (6, 3)]);
    }
}
