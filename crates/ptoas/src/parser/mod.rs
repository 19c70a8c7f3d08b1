//! The parser: tokens into the typed IR ([`crate::ir::Module`]). This module holds the
//! machinery (token stream, SSA scopes, nesting limit), the module and function structure,
//! types and attributes; `ops` parses each op's own syntax.
//!
//! Accepted: an optional `module [attributes {...}] { ... }` wrapper (or bare functions),
//! type aliases `!a = type`, attribute aliases `#a = attr` and location aliases
//! `#loc = loc(...)`, `func.func [private] @f(args) [-> results] [attributes {...}]`,
//! trailing `loc(...)` after any op or argument, and `//` comments.

mod ops;

use std::collections::HashMap;

use crate::error::{Diag, DiagResult, ErrorKind};
use crate::ir::{Attr, Block, Func, Module, NamedAttr, ValueId, ValueInfo, Visibility};
use crate::lexer::{Lexer, Tok, Token};
use crate::source::Span;
use crate::types::{
    Arch, BLayout, CompactMode, Dim, Layout, PadValue, SLayout, ScalarType, TileBufType, TileLoc,
    Type,
};

/// How deep regions, types and attributes may nest before the parser gives up.
pub const MAX_NESTING: u32 = 64;

/// Most results one op may define, and most elements of one list (guards allocations).
const MAX_LIST: usize = 1 << 16;

/// Parses a whole `.pto` text. `arch` only decides the default layout of a Left tile
/// written in the positional `!pto.tile_buf<left, ...>` form.
pub fn parse(text: &str, arch: Arch) -> DiagResult<Module> {
    let mut p = Parser::new(text, arch)?;
    p.module()
}

pub(crate) struct Parser<'a> {
    lex: Lexer<'a>,
    tok: Token,
    arch: Arch,
    depth: u32,
    type_aliases: HashMap<String, Type>,
    attr_aliases: HashMap<String, Attr>,
    // Per function.
    values: Vec<ValueInfo>,
    scopes: Vec<HashMap<String, ValueId>>,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str, arch: Arch) -> DiagResult<Parser<'a>> {
        let mut lex = Lexer::new(text);
        let tok = lex.next_token()?;
        Ok(Parser {
            lex,
            tok,
            arch,
            depth: 0,
            type_aliases: HashMap::new(),
            attr_aliases: HashMap::new(),
            values: Vec::new(),
            scopes: Vec::new(),
        })
    }

    // ----- token stream -----

    pub(crate) fn peek(&self) -> &Tok {
        &self.tok.tok
    }

    pub(crate) fn span(&self) -> Span {
        self.tok.span
    }

    pub(crate) fn bump(&mut self) -> DiagResult<Token> {
        let next = self.lex.next_token()?;
        Ok(std::mem::replace(&mut self.tok, next))
    }

    pub(crate) fn err<T>(&self, msg: impl Into<String>) -> DiagResult<T> {
        Err(Diag::at(ErrorKind::Syntax, self.tok.span, msg))
    }

    pub(crate) fn err_at<T>(&self, span: Span, msg: impl Into<String>) -> DiagResult<T> {
        Err(Diag::at(ErrorKind::Syntax, span, msg))
    }

    pub(crate) fn expected<T>(&self, what: &str) -> DiagResult<T> {
        self.err(format!(
            "expected {what}, found {}",
            self.tok.tok.describe()
        ))
    }

    pub(crate) fn is_punct(&self, c: char) -> bool {
        self.tok.tok == Tok::Punct(c)
    }

    pub(crate) fn is_ident(&self, s: &str) -> bool {
        matches!(&self.tok.tok, Tok::Ident(i) if i == s)
    }

    pub(crate) fn eat_punct(&mut self, c: char) -> DiagResult<bool> {
        if self.is_punct(c) {
            self.bump()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    pub(crate) fn expect_punct(&mut self, c: char) -> DiagResult<Span> {
        if self.is_punct(c) {
            Ok(self.bump()?.span)
        } else {
            self.expected(&format!("'{c}'"))
        }
    }

    pub(crate) fn eat_ident(&mut self, s: &str) -> DiagResult<bool> {
        if self.is_ident(s) {
            self.bump()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    pub(crate) fn expect_ident(&mut self, s: &str) -> DiagResult<()> {
        if self.eat_ident(s)? {
            Ok(())
        } else {
            self.expected(&format!("'{s}'"))
        }
    }

    pub(crate) fn expect_arrow(&mut self) -> DiagResult<()> {
        if self.tok.tok == Tok::Arrow {
            self.bump()?;
            Ok(())
        } else {
            self.expected("'->'")
        }
    }

    pub(crate) fn ident(&mut self) -> DiagResult<String> {
        match &self.tok.tok {
            Tok::Ident(s) => {
                let s = s.clone();
                self.bump()?;
                Ok(s)
            }
            _ => self.expected("an identifier"),
        }
    }

    pub(crate) fn enter(&mut self) -> DiagResult<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return self.err(format!(
                "nesting deeper than {MAX_NESTING} levels (regions, types or attributes)"
            ));
        }
        Ok(())
    }

    pub(crate) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Parses `a, b, c` (at least one) with `f`, capped at [`MAX_LIST`] elements.
    pub(crate) fn comma_list<T>(
        &mut self,
        mut f: impl FnMut(&mut Self) -> DiagResult<T>,
    ) -> DiagResult<Vec<T>> {
        let mut out = vec![f(self)?];
        while self.eat_punct(',')? {
            if out.len() >= MAX_LIST {
                return self.err("list too long");
            }
            out.push(f(self)?);
        }
        Ok(out)
    }

    /// Skips `loc(...)` if present.
    pub(crate) fn skip_loc(&mut self) -> DiagResult<()> {
        if self.is_ident("loc") {
            self.bump()?;
            self.skip_balanced('(', ')')?;
        }
        Ok(())
    }

    /// Skips a balanced `open ... close` group starting at the current token.
    pub(crate) fn skip_balanced(&mut self, open: char, close: char) -> DiagResult<()> {
        let start = self.expect_punct(open)?;
        let mut depth = 1usize;
        loop {
            match &self.tok.tok {
                Tok::Eof => return self.err_at(start, format!("unclosed '{open}'")),
                Tok::Punct(c) if *c == open => depth += 1,
                Tok::Punct(c) if *c == close => {
                    depth -= 1;
                    if depth == 0 {
                        self.bump()?;
                        return Ok(());
                    }
                }
                _ => {}
            }
            self.bump()?;
        }
    }

    // ----- SSA values -----

    pub(crate) fn push_scope(&mut self) {
        self.scopes.push(HashMap::new());
    }

    pub(crate) fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    /// Defines `%name` of type `ty` in the innermost scope.
    pub(crate) fn define(&mut self, name: &str, ty: Type, span: Span) -> DiagResult<ValueId> {
        if self.scopes.last().is_some_and(|s| s.contains_key(name)) {
            return self.err_at(span, format!("redefinition of SSA value '%{name}'"));
        }
        let id = ValueId(u32::try_from(self.values.len()).unwrap_or(u32::MAX));
        self.values.push(ValueInfo {
            name: name.to_string(),
            ty,
        });
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), id);
        }
        Ok(id)
    }

    pub(crate) fn lookup(&self, name: &str, span: Span) -> DiagResult<ValueId> {
        for s in self.scopes.iter().rev() {
            if let Some(v) = s.get(name) {
                return Ok(*v);
            }
        }
        self.err_at(span, format!("use of undefined value '%{name}'"))
    }

    pub(crate) fn ty_of(&self, v: ValueId) -> &Type {
        &self.values[v.index()].ty
    }

    /// Parses a value use `%x`.
    pub(crate) fn use_value(&mut self) -> DiagResult<(ValueId, Span)> {
        match &self.tok.tok {
            Tok::Value(n) => {
                let n = n.clone();
                let span = self.tok.span;
                let v = self.lookup(&n, span)?;
                self.bump()?;
                Ok((v, span))
            }
            _ => self.expected("an SSA value"),
        }
    }

    /// Parses `%x` and checks its type against `ty` when given after a `:`.
    pub(crate) fn value(&mut self) -> DiagResult<ValueId> {
        Ok(self.use_value()?.0)
    }

    // ----- module and functions -----

    fn module(&mut self) -> DiagResult<Module> {
        let mut module = Module::default();
        self.aliases()?;
        if self.eat_ident("module")? {
            if let Tok::Symbol(_) = self.peek() {
                self.bump()?;
            }
            if self.eat_ident("attributes")? {
                module.attrs = self.attr_dict()?;
            }
            self.expect_punct('{')?;
            self.enter()?;
            while !self.is_punct('}') {
                if *self.peek() == Tok::Eof {
                    return self.expected("'}' closing the module");
                }
                module.funcs.push(self.func()?);
            }
            self.leave();
            self.bump()?;
            self.skip_loc()?;
            self.aliases()?;
        } else {
            while matches!(self.peek(), Tok::Ident(s) if s == "func.func") {
                module.funcs.push(self.func()?);
                self.aliases()?;
            }
        }
        if *self.peek() != Tok::Eof {
            return self.expected("end of input");
        }
        Ok(module)
    }

    /// Parses `!a = type`, `#a = attr` definitions.
    fn aliases(&mut self) -> DiagResult<()> {
        loop {
            match self.peek().clone() {
                Tok::Bang(name) => {
                    let span = self.span();
                    self.bump()?;
                    if !self.is_punct('=') {
                        return self.err_at(span, "expected '=' after a type alias name");
                    }
                    self.bump()?;
                    let ty = self.ty()?;
                    self.type_aliases.insert(name, ty);
                }
                Tok::Hash(name) => {
                    self.bump()?;
                    self.expect_punct('=')?;
                    if self.is_ident("loc") {
                        self.skip_loc()?;
                        self.attr_aliases.insert(name, Attr::Unit);
                    } else {
                        let a = self.attr()?;
                        self.attr_aliases.insert(name, a);
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn func(&mut self) -> DiagResult<Func> {
        let span = self.span();
        match self.peek() {
            Tok::Ident(s) if s == "func.func" => {
                self.bump()?;
            }
            _ => return self.expected("'func.func'"),
        }
        let visibility = if self.eat_ident("private")? {
            Visibility::Private
        } else {
            self.eat_ident("public")?;
            Visibility::Public
        };
        let name = match self.peek().clone() {
            Tok::Symbol(s) => {
                self.bump()?;
                s
            }
            _ => return self.expected("a function name '@name'"),
        };
        self.values.clear();
        self.scopes.clear();
        self.push_scope();
        self.expect_punct('(')?;
        let mut args = Vec::new();
        if !self.is_punct(')') {
            args = self.comma_list(|p| {
                let (n, span) = match p.peek().clone() {
                    Tok::Value(n) => (n, p.bump()?.span),
                    _ => return p.expected("an argument '%name: type'"),
                };
                p.expect_punct(':')?;
                let ty = p.ty()?;
                if p.is_punct('{') {
                    p.attr_dict()?;
                }
                p.skip_loc()?;
                p.define(&n, ty, span)
            })?;
        }
        self.expect_punct(')')?;
        let mut results = Vec::new();
        if *self.peek() == Tok::Arrow {
            self.bump()?;
            if self.eat_punct('(')? {
                if !self.is_punct(')') {
                    results = self.comma_list(|p| {
                        let t = p.ty()?;
                        if p.is_punct('{') {
                            p.attr_dict()?;
                        }
                        Ok(t)
                    })?;
                }
                self.expect_punct(')')?;
            } else {
                results.push(self.ty()?);
            }
        }
        let mut attrs = Vec::new();
        if self.eat_ident("attributes")? {
            attrs = self.attr_dict()?;
        }
        let body = if self.is_punct('{') {
            Some(self.region_block(&[])?)
        } else {
            None
        };
        self.skip_loc()?;
        self.pop_scope();
        Ok(Func {
            name,
            visibility,
            args,
            results,
            attrs,
            body,
            values: std::mem::take(&mut self.values),
            span,
        })
    }

    /// Parses `{ ops }` as one block, with `args` (already defined values) as its
    /// arguments. An entry label `^bb0(...)` with arguments is parsed too.
    pub(crate) fn region_block(&mut self, args: &[ValueId]) -> DiagResult<Block> {
        let open = self.expect_punct('{')?;
        self.enter()?;
        let mut block = Block {
            args: args.to_vec(),
            ops: Vec::new(),
        };
        if let Tok::BlockLabel(_) = self.peek() {
            self.bump()?;
            if self.eat_punct('(')? {
                if !self.is_punct(')') {
                    let extra = self.comma_list(|p| {
                        let (n, span) = match p.peek().clone() {
                            Tok::Value(n) => (n, p.bump()?.span),
                            _ => return p.expected("a block argument"),
                        };
                        p.expect_punct(':')?;
                        let ty = p.ty()?;
                        p.skip_loc()?;
                        p.define(&n, ty, span)
                    })?;
                    block.args.extend(extra);
                }
                self.expect_punct(')')?;
            }
            self.expect_punct(':')?;
        }
        loop {
            match self.peek() {
                Tok::Punct('}') => break,
                Tok::Eof => return self.err_at(open, "unclosed '{': the region never ends"),
                Tok::BlockLabel(_) => {
                    return self.err(
                        "regions with several blocks are not supported (use scf control flow)",
                    )
                }
                _ => {
                    let op = self.op()?;
                    block.ops.push(op);
                }
            }
        }
        self.bump()?;
        self.leave();
        Ok(block)
    }

    // ----- types -----

    /// Parses a type.
    pub(crate) fn ty(&mut self) -> DiagResult<Type> {
        self.enter()?;
        let r = self.ty_inner();
        self.leave();
        r
    }

    fn ty_inner(&mut self) -> DiagResult<Type> {
        let span = self.span();
        match self.peek().clone() {
            Tok::Ident(name) => {
                if let Some(s) = ScalarType::from_name(&name) {
                    self.bump()?;
                    return Ok(Type::Scalar(s));
                }
                if name == "memref" {
                    self.bump()?;
                    return self.memref_ty();
                }
                self.err(format!("unsupported type '{name}'"))
            }
            Tok::Bang(name) => {
                self.bump()?;
                match name.as_str() {
                    "pto.ptr" => self.ptr_ty(),
                    "pto.tensor_view" | "pto.partition_tensor_view" => {
                        self.expect_punct('<')?;
                        let (shape, elem) = self.shape_and_elem()?;
                        let mut layout = None;
                        if self.eat_punct(',')? {
                            let a = self.attr()?;
                            layout = match &a {
                                Attr::Pto { kind, value, .. } if kind == "layout" => {
                                    Layout::from_name(value)
                                }
                                _ => None,
                            };
                            if layout.is_none() {
                                return self
                                    .err_at(span, "expected '#pto.layout<...>' in a view type");
                            }
                        }
                        self.expect_punct('>')?;
                        Ok(if name == "pto.tensor_view" {
                            Type::TensorView {
                                shape,
                                elem,
                                layout,
                            }
                        } else {
                            Type::PartitionView {
                                shape,
                                elem,
                                layout,
                            }
                        })
                    }
                    "pto.tile_buf" => self.tile_buf_ty(span).map(Type::TileBuf),
                    "pto.pipe" => Ok(Type::Pipe),
                    _ => match self.type_aliases.get(&name) {
                        Some(t) => Ok(t.clone()),
                        None if name.starts_with("pto.") => {
                            self.err_at(span, format!("unsupported type '!{name}'"))
                        }
                        None => self.err_at(span, format!("undefined type alias '!{name}'")),
                    },
                }
            }
            Tok::Punct('<') => self.elided_ty(span),
            _ => self.expected("a type"),
        }
    }

    /// A `!pto` type written without its `!pto.NAME` prefix, as MLIR prints the type of an
    /// operand or result whose op allows one type class only: `<loc=vec, dtype=f32, ...>` or
    /// `<vec, 16x16xf32>` is a `!pto.tile_buf`, `<f32[, gm]>` a `!pto.ptr`. The first word
    /// inside the brackets tells which.
    fn elided_ty(&mut self, span: Span) -> DiagResult<Type> {
        const TILE_KEYS: [&str; 11] = [
            "loc", "dtype", "rows", "cols", "v_row", "v_col", "blayout", "slayout", "fractal",
            "pad", "compact",
        ];
        self.bump()?;
        let (tile, ptr) = match self.peek() {
            Tok::Ident(n) => (
                TILE_KEYS.contains(&n.as_str()) || TileLoc::from_name(n).is_some(),
                ScalarType::from_name(n).is_some_and(|s| s != ScalarType::Index),
            ),
            _ => (false, false),
        };
        self.lex.reset(span.start as usize);
        self.tok = self.lex.next_token()?;
        if tile {
            self.tile_buf_ty(span).map(Type::TileBuf)
        } else if ptr {
            self.ptr_ty()
        } else {
            self.err_at(
                span,
                "cannot tell which !pto type '<...>' abbreviates; write it in full (!pto.tile_buf<...>, !pto.ptr<...>, !pto.tensor_view<...>)",
            )
        }
    }

    fn elem_ty(&mut self) -> DiagResult<ScalarType> {
        match self.peek().clone() {
            Tok::Ident(n) => match ScalarType::from_name(&n) {
                Some(s) if s != ScalarType::Index => {
                    self.bump()?;
                    Ok(s)
                }
                _ => self.err(format!("unsupported element type '{n}'")),
            },
            Tok::Bang(n) => self.err(format!("unsupported element type '!{n}'")),
            _ => self.expected("an element type"),
        }
    }

    /// `(N|?)x...xT` at the current token.
    fn shape_and_elem(&mut self) -> DiagResult<(Vec<Dim>, ScalarType)> {
        self.lex.reset(self.tok.span.start as usize);
        let dims = self.lex.scan_dims()?;
        self.tok = self.lex.next_token()?;
        let shape = dims
            .into_iter()
            .map(|d| d.map(Dim::Static).unwrap_or(Dim::Dynamic))
            .collect();
        let elem = self.elem_ty()?;
        Ok((shape, elem))
    }

    fn ptr_ty(&mut self) -> DiagResult<Type> {
        self.expect_punct('<')?;
        let elem = self.elem_ty()?;
        let mut ub = false;
        if self.eat_punct(',')? {
            let s = self.ident()?;
            match s.as_str() {
                "gm" => {}
                "ub" => ub = true,
                _ => return self.err(format!("unknown pointer memory space '{s}'")),
            }
        }
        self.expect_punct('>')?;
        Ok(Type::Ptr { elem, ub })
    }

    fn memref_ty(&mut self) -> DiagResult<Type> {
        self.expect_punct('<')?;
        let (shape, elem) = self.shape_and_elem()?;
        while self.eat_punct(',')? {
            match self.peek().clone() {
                Tok::Hash(n) if n == "pto.address_space" => {
                    let span = self.span();
                    let a = self.attr()?;
                    match a.pto_value() {
                        Some("gm") | Some("zero") => {}
                        _ => {
                            return self.err_at(
                                span,
                                "only GM memrefs are supported (as function arguments)",
                            )
                        }
                    }
                }
                Tok::Ident(n) if n == "strided" => {
                    self.bump()?;
                    self.skip_balanced('<', '>')?;
                }
                _ => return self.expected("'#pto.address_space<gm>' in a memref type"),
            }
        }
        self.expect_punct('>')?;
        Ok(Type::MemRef { shape, elem })
    }

    fn int_literal(&mut self) -> DiagResult<i64> {
        let neg = self.eat_punct('-')?;
        match self.peek().clone() {
            Tok::Int(t) => {
                let span = self.span();
                self.bump()?;
                let v = parse_int(&t).ok_or_else(|| {
                    Diag::at(
                        ErrorKind::Syntax,
                        span,
                        format!("integer {t} is out of range"),
                    )
                })?;
                Ok(if neg { v.wrapping_neg() } else { v })
            }
            _ => self.expected("an integer"),
        }
    }

    fn dim_value(&mut self) -> DiagResult<Dim> {
        if self.eat_punct('?')? {
            return Ok(Dim::Dynamic);
        }
        let span = self.span();
        let v = self.int_literal()?;
        if v < 0 {
            return self.err_at(
                span,
                format!("a dimension must be positive or '?', got {v}"),
            );
        }
        Ok(Dim::Static(v))
    }

    /// `!pto.tile_buf<...>` after its `!pto.tile_buf`: the positional memory and
    /// `RxCxT` parts and the `key=value` parameters, each given at most once, then the
    /// defaults of the memory and the checks of the whole.
    fn tile_buf_ty(&mut self, start: Span) -> DiagResult<TileBufType> {
        self.expect_punct('<')?;
        let mut parts = TileBufParts::default();
        let mut first = true;
        loop {
            if self.is_punct('>') {
                break;
            }
            if !first {
                self.expect_punct(',')?;
            }
            let item_span = self.span();
            // Positional parts: `vec`, `16x16xf16`.
            if first {
                if let Some(l) = self.positional_loc(item_span)? {
                    parts.loc = Some(l);
                    first = false;
                    continue;
                }
            }
            first = false;
            if matches!(self.peek(), Tok::Int(_)) {
                self.tile_buf_shape(&mut parts, item_span)?;
            } else {
                self.tile_buf_param(&mut parts, item_span)?;
            }
        }
        let end = self.expect_punct('>')?;
        self.tile_buf_finish(parts, start.to(end))
    }

    /// A memory name as the first part of a tile_buf (`vec`), if it is one.
    fn positional_loc(&mut self, item_span: Span) -> DiagResult<Option<TileLoc>> {
        let Tok::Ident(n) = self.peek().clone() else {
            return Ok(None);
        };
        let Some(l) = TileLoc::from_name(&n) else {
            return Ok(None);
        };
        self.bump()?;
        if !self.is_punct('=') {
            return Ok(Some(l));
        }
        self.err_at(item_span, "expected 'loc=...' or a memory name")
    }

    /// The positional `RxCxT` part: rows, columns and element type.
    fn tile_buf_shape(&mut self, parts: &mut TileBufParts, item_span: Span) -> DiagResult<()> {
        let (shape, elem) = self.shape_and_elem()?;
        if shape.len() != 2 {
            return self.err_at(item_span, "a tile shape must be 2-D (RxCxT)");
        }
        set_once(
            self,
            &mut parts.rows,
            shape[0].value().unwrap_or(-1),
            "rows",
            item_span,
        )?;
        set_once(
            self,
            &mut parts.cols,
            shape[1].value().unwrap_or(-1),
            "cols",
            item_span,
        )?;
        set_once(self, &mut parts.dtype, elem, "dtype", item_span)
    }

    /// One `key=value` parameter of a tile_buf.
    fn tile_buf_param(&mut self, parts: &mut TileBufParts, item_span: Span) -> DiagResult<()> {
        let key = self.ident()?;
        self.expect_punct('=')?;
        let vspan = self.span();
        match key.as_str() {
            "loc" => {
                let n = self.ident()?;
                let l = TileLoc::from_name(&n).ok_or_else(|| {
                    Diag::at(ErrorKind::Syntax, vspan, format!("unknown tile loc '{n}'"))
                })?;
                set_once(self, &mut parts.loc, l, "loc", item_span)?;
            }
            "dtype" => {
                let t = self.elem_ty()?;
                set_once(self, &mut parts.dtype, t, "dtype", item_span)?;
            }
            "rows" | "cols" => {
                let v = self.int_literal()?;
                if v <= 0 {
                    return self.err_at(vspan, format!("'{key}' must be positive, got {v}"));
                }
                let slot = if key == "rows" {
                    &mut parts.rows
                } else {
                    &mut parts.cols
                };
                set_once(self, slot, v, &key, item_span)?;
            }
            "v_row" | "v_col" => {
                let d = self.dim_value()?;
                let slot = if key == "v_row" {
                    &mut parts.v_row
                } else {
                    &mut parts.v_col
                };
                set_once(self, slot, d, &key, item_span)?;
            }
            "valid" => self.tile_buf_valid(parts, vspan, item_span)?,
            "blayout" => {
                let n = self.ident()?;
                let b = BLayout::from_name(&n).ok_or_else(|| {
                    Diag::at(ErrorKind::Syntax, vspan, format!("unknown blayout '{n}'"))
                })?;
                set_once(self, &mut parts.blayout, b, "blayout", item_span)?;
            }
            "slayout" => {
                let n = self.ident()?;
                let s = SLayout::from_name(&n).ok_or_else(|| {
                    Diag::at(ErrorKind::Syntax, vspan, format!("unknown slayout '{n}'"))
                })?;
                set_once(self, &mut parts.slayout, s, "slayout", item_span)?;
            }
            "fractal" => {
                let v = self.int_literal()?;
                if v != 512 && v != 1024 && v != 32 && v != 16 {
                    return self.err_at(vspan, format!("unsupported fractal size {v}"));
                }
                set_once(self, &mut parts.fractal, v, "fractal", item_span)?;
            }
            "pad" | "compact" => self.tile_buf_pad_or_compact(parts, &key, vspan, item_span)?,
            _ => return self.err_at(item_span, format!("unknown tile_buf parameter '{key}'")),
        }
        Ok(())
    }

    /// `valid=RxC`: both valid dimensions (`?` for a dynamic one); the lexer reads `RxC`
    /// again as dimensions.
    fn tile_buf_valid(
        &mut self,
        parts: &mut TileBufParts,
        vspan: Span,
        item_span: Span,
    ) -> DiagResult<()> {
        self.lex.reset(self.tok.span.start as usize);
        let dims = self.lex.scan_dims()?;
        self.tok = self.lex.next_token()?;
        if dims.len() != 1 {
            return self.err_at(vspan, "expected 'valid=RxC'");
        }
        let r = dims[0].map(Dim::Static).unwrap_or(Dim::Dynamic);
        let c = self.dim_value()?;
        set_once(self, &mut parts.v_row, r, "v_row", item_span)?;
        set_once(self, &mut parts.v_col, c, "v_col", item_span)
    }

    /// `pad=...` or `compact=...` (`key`): a name or a number.
    fn tile_buf_pad_or_compact(
        &mut self,
        parts: &mut TileBufParts,
        key: &str,
        vspan: Span,
        item_span: Span,
    ) -> DiagResult<()> {
        let text = match self.peek().clone() {
            Tok::Int(t) => {
                self.bump()?;
                t
            }
            Tok::Ident(t) => {
                self.bump()?;
                t
            }
            _ => return self.expected("a pad or compact value"),
        };
        if key == "pad" {
            let p = PadValue::from_name(&text).ok_or_else(|| {
                Diag::at(
                    ErrorKind::Syntax,
                    vspan,
                    format!("unknown pad value '{text}'"),
                )
            })?;
            set_once(self, &mut parts.pad, p, "pad", item_span)
        } else {
            let c = CompactMode::from_name(&text).ok_or_else(|| {
                Diag::at(
                    ErrorKind::Syntax,
                    vspan,
                    format!("unknown compact mode '{text}'"),
                )
            })?;
            set_once(self, &mut parts.compact, c, "compact", item_span)
        }
    }

    /// The tile_buf type of `parts`: `loc`, `dtype`, `rows` and `cols` required, static
    /// valid dimensions within the physical ones, the rest defaulted by memory and arch.
    fn tile_buf_finish(&self, parts: TileBufParts, span: Span) -> DiagResult<TileBufType> {
        let Some(loc) = parts.loc else {
            return self.err_at(span, "tile_buf needs 'loc'");
        };
        let Some(dtype) = parts.dtype else {
            return self.err_at(span, "tile_buf needs 'dtype'");
        };
        let (Some(rows), Some(cols)) = (parts.rows, parts.cols) else {
            return self.err_at(span, "tile_buf needs 'rows' and 'cols'");
        };
        if rows <= 0 || cols <= 0 || rows > i64::from(i32::MAX) || cols > i64::from(i32::MAX) {
            return self.err_at(
                span,
                "tile_buf rows and cols must be static and in [1, 2^31)",
            );
        }
        let (bl, sl, fr) = TileBufType::defaults(loc, self.arch);
        let v_row = parts.v_row.unwrap_or(Dim::Static(rows));
        let v_col = parts.v_col.unwrap_or(Dim::Static(cols));
        for (d, max, what) in [(v_row, rows, "v_row"), (v_col, cols, "v_col")] {
            if let Dim::Static(v) = d {
                if v > max {
                    return self.err_at(
                        span,
                        format!("{what}={v} exceeds the physical extent {max}"),
                    );
                }
            }
        }
        Ok(TileBufType {
            loc,
            dtype,
            rows,
            cols,
            v_row,
            v_col,
            blayout: parts.blayout.unwrap_or(bl),
            slayout: parts.slayout.unwrap_or(sl),
            fractal: parts.fractal.unwrap_or(fr),
            pad: parts.pad.unwrap_or(PadValue::Null),
            compact: parts.compact.unwrap_or(CompactMode::Null),
        })
    }

    /// Parses `(T, ...)` or a single type.
    pub(crate) fn type_list_maybe_paren(&mut self) -> DiagResult<Vec<Type>> {
        if self.eat_punct('(')? {
            let mut v = Vec::new();
            if !self.is_punct(')') {
                v = self.comma_list(|p| p.ty())?;
            }
            self.expect_punct(')')?;
            Ok(v)
        } else {
            Ok(vec![self.ty()?])
        }
    }

    // ----- attributes -----

    /// Parses `{name [= value], ...}`.
    pub(crate) fn attr_dict(&mut self) -> DiagResult<Vec<NamedAttr>> {
        self.expect_punct('{')?;
        self.enter()?;
        let mut out = Vec::new();
        if !self.is_punct('}') {
            out = self.comma_list(|p| {
                let name = match p.peek().clone() {
                    Tok::Ident(n) | Tok::Str(n) => {
                        p.bump()?;
                        n
                    }
                    _ => return p.expected("an attribute name"),
                };
                let value = if p.eat_punct('=')? {
                    p.attr()?
                } else {
                    Attr::Unit
                };
                Ok(NamedAttr { name, value })
            })?;
        }
        self.expect_punct('}')?;
        self.leave();
        Ok(out)
    }

    /// Parses one attribute value.
    pub(crate) fn attr(&mut self) -> DiagResult<Attr> {
        self.enter()?;
        let r = self.attr_inner();
        self.leave();
        r
    }

    fn attr_inner(&mut self) -> DiagResult<Attr> {
        let span = self.span();
        match self.peek().clone() {
            Tok::Int(_) | Tok::Punct('-') | Tok::Float(_) => {
                let neg = self.eat_punct('-')?;
                let a = match self.peek().clone() {
                    Tok::Int(t) => {
                        self.bump()?;
                        let v = parse_int(&t).ok_or_else(|| {
                            Diag::at(
                                ErrorKind::Syntax,
                                span,
                                format!("integer {t} is out of range"),
                            )
                        })?;
                        Attr::Int(if neg { v.wrapping_neg() } else { v }, None)
                    }
                    Tok::Float(t) => {
                        self.bump()?;
                        let v: f64 = t.parse().map_err(|_| {
                            Diag::at(ErrorKind::Syntax, span, format!("bad float literal {t}"))
                        })?;
                        Attr::Float(if neg { -v } else { v }, None)
                    }
                    _ => return self.expected("a number"),
                };
                if self.eat_punct(':')? {
                    let t = self.ty()?;
                    let s = t.scalar();
                    return Ok(match a {
                        Attr::Int(v, _) => Attr::Int(v, s),
                        Attr::Float(v, _) => Attr::Float(v, s),
                        other => other,
                    });
                }
                Ok(a)
            }
            Tok::Ident(n) if n == "true" || n == "false" => {
                self.bump()?;
                Ok(Attr::Bool(n == "true"))
            }
            Tok::Ident(n) if n == "unit" => {
                self.bump()?;
                Ok(Attr::Unit)
            }
            Tok::Ident(n) if ScalarType::from_name(&n).is_some() || n == "memref" => {
                Ok(Attr::Type(self.ty()?))
            }
            Tok::Str(s) => {
                self.bump()?;
                Ok(Attr::Str(s))
            }
            Tok::Symbol(s) => {
                self.bump()?;
                Ok(Attr::Symbol(s))
            }
            Tok::Punct('[') => {
                self.bump()?;
                let mut v = Vec::new();
                if !self.is_punct(']') {
                    v = self.comma_list(|p| p.attr())?;
                }
                self.expect_punct(']')?;
                Ok(Attr::Array(v))
            }
            Tok::Punct('<') => {
                // `<VALUE>`: a PTO enum whose kind the position implies.
                self.bump()?;
                let value = self.ident()?;
                self.expect_punct('>')?;
                Ok(Attr::Pto {
                    kind: String::new(),
                    value,
                    dotted: true,
                })
            }
            Tok::Bang(_) => Ok(Attr::Type(self.ty()?)),
            Tok::Hash(name) => {
                self.bump()?;
                if name == "pto" {
                    // `#pto<KIND VALUE>`
                    self.expect_punct('<')?;
                    let kind = self.ident()?;
                    let value = self.enum_body()?;
                    self.expect_punct('>')?;
                    return Ok(Attr::Pto {
                        kind,
                        value,
                        dotted: false,
                    });
                }
                if let Some(kind) = name.strip_prefix("pto.") {
                    self.expect_punct('<')?;
                    let value = self.enum_body()?;
                    self.expect_punct('>')?;
                    return Ok(Attr::Pto {
                        kind: kind.to_string(),
                        value,
                        dotted: true,
                    });
                }
                match self.attr_aliases.get(&name) {
                    Some(a) => Ok(a.clone()),
                    None => self.err_at(span, format!("undefined attribute alias '#{name}'")),
                }
            }
            _ => self.expected("an attribute value"),
        }
    }

    /// The value inside `#pto.kind<...>`: an identifier or integer (several words are
    /// joined by spaces, so `#pto.tile_buf_config<...>` style bodies keep their text).
    fn enum_body(&mut self) -> DiagResult<String> {
        let mut parts = Vec::new();
        loop {
            match self.peek().clone() {
                Tok::Ident(s) | Tok::Int(s) => {
                    self.bump()?;
                    parts.push(s);
                }
                Tok::Punct(',') if !parts.is_empty() => {
                    self.bump()?;
                    parts.push(",".into());
                }
                _ => break,
            }
            if parts.len() > 64 {
                return self.err("attribute body too long");
            }
        }
        if parts.is_empty() {
            return self.expected("an enum value");
        }
        Ok(parts.join(" ").replace(" ,", ","))
    }
}

/// The parts of a `!pto.tile_buf<...>` read so far (each at most once).
#[derive(Default)]
struct TileBufParts {
    loc: Option<TileLoc>,
    dtype: Option<ScalarType>,
    rows: Option<i64>,
    cols: Option<i64>,
    v_row: Option<Dim>,
    v_col: Option<Dim>,
    blayout: Option<BLayout>,
    slayout: Option<SLayout>,
    fractal: Option<i64>,
    pad: Option<PadValue>,
    compact: Option<CompactMode>,
}

/// Stores `v` in `slot`; a second value for the tile_buf parameter `what` is an error.
fn set_once<T>(
    p: &Parser<'_>,
    slot: &mut Option<T>,
    v: T,
    what: &str,
    span: Span,
) -> DiagResult<()> {
    if slot.is_some() {
        return p.err_at(span, format!("conflicting '{what}' in tile_buf"));
    }
    *slot = Some(v);
    Ok(())
}

/// Parses a decimal or `0x` integer literal (hex literals may use the full 64 bits).
pub(crate) fn parse_int(text: &str) -> Option<i64> {
    if let Some(h) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).ok().map(|v| v as i64);
    }
    text.parse::<i64>().ok().or_else(|| {
        // 9223372036854775808 for `-9223372036854775808`.
        text.parse::<u64>().ok().map(|v| v as i64)
    })
}
