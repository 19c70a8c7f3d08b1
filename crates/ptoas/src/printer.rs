//! The canonical `.pto` printer: writes the IR back as PTO-AS text that this parser (and the
//! real ptoas's grammar) accepts. `parse(print(m)) == m` for every module `m` the parser
//! builds; the round-trip tests check it.

use std::fmt::Write;

use crate::ir::{Attr, Block, Func, Literal, Module, NamedAttr, Op, OpKind, ValueId, Visibility};
use crate::types::{ScalarType, TileLoc, Type};

/// Prints `module` as `.pto` text.
pub fn print_module(module: &Module) -> String {
    let mut p = Printer {
        out: String::new(),
        indent: 0,
    };
    p.out.push_str("module");
    if !module.attrs.is_empty() {
        p.out.push_str(" attributes ");
        p.attr_dict(&module.attrs);
    }
    p.out.push_str(" {\n");
    p.indent = 1;
    for f in &module.funcs {
        p.func(f);
    }
    p.out.push_str("}\n");
    p.out
}

struct Printer {
    out: String,
    indent: usize,
}

/// A float literal the lexer reads back as the same `f64`.
pub(crate) fn float_text(v: f64) -> String {
    let s = format!("{v:?}");
    if s.contains('e') && !s.contains('.') {
        s.replacen('e', ".0e", 1)
    } else {
        s
    }
}

fn escape(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\{:02X}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

impl Printer {
    fn line_start(&mut self) {
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
    }

    fn attr(&mut self, a: &Attr) {
        match a {
            Attr::Int(v, ty) => {
                let _ = write!(self.out, "{v}");
                if let Some(t) = ty {
                    let _ = write!(self.out, " : {}", t.name());
                }
            }
            Attr::Float(v, ty) => {
                self.out.push_str(&float_text(*v));
                if let Some(t) = ty {
                    let _ = write!(self.out, " : {}", t.name());
                }
            }
            Attr::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Attr::Str(s) => self.out.push_str(&escape(s)),
            Attr::Unit => self.out.push_str("unit"),
            Attr::Symbol(s) => {
                let _ = write!(self.out, "@{s}");
            }
            Attr::Pto {
                kind,
                value,
                dotted,
            } => {
                if kind.is_empty() {
                    let _ = write!(self.out, "<{value}>");
                } else if *dotted {
                    let _ = write!(self.out, "#pto.{kind}<{value}>");
                } else {
                    let _ = write!(self.out, "#pto<{kind} {value}>");
                }
            }
            Attr::Array(v) => {
                self.out.push('[');
                for (i, a) in v.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.attr(a);
                }
                self.out.push(']');
            }
            Attr::Type(t) => {
                let _ = write!(self.out, "{t}");
            }
        }
    }

    fn attr_dict(&mut self, attrs: &[NamedAttr]) {
        self.out.push('{');
        for (i, a) in attrs.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.out.push_str(&a.name);
            if a.value != Attr::Unit {
                self.out.push_str(" = ");
                self.attr(&a.value);
            }
        }
        self.out.push('}');
    }

    fn opt_attrs(&mut self, attrs: &[NamedAttr]) {
        if !attrs.is_empty() {
            self.out.push(' ');
            self.attr_dict(attrs);
        }
    }

    fn func(&mut self, f: &Func) {
        self.line_start();
        self.out.push_str("func.func ");
        if f.visibility == Visibility::Private {
            self.out.push_str("private ");
        }
        let _ = write!(self.out, "@{}(", f.name);
        for (i, a) in f.args.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            let _ = write!(self.out, "%{}: {}", f.name_of(*a), f.ty(*a));
        }
        self.out.push(')');
        if !f.results.is_empty() {
            self.out.push_str(" -> (");
            self.types(&f.results);
            self.out.push(')');
        }
        if !f.attrs.is_empty() {
            self.out.push_str(" attributes ");
            self.attr_dict(&f.attrs);
        }
        match &f.body {
            Some(b) => {
                self.out.push(' ');
                self.block(f, b, &[]);
                self.out.push('\n');
            }
            None => self.out.push('\n'),
        }
    }

    fn types(&mut self, ts: &[Type]) {
        for (i, t) in ts.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            let _ = write!(self.out, "{t}");
        }
    }

    fn vals(&mut self, f: &Func, vs: &[ValueId]) {
        for (i, v) in vs.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            let _ = write!(self.out, "%{}", f.name_of(*v));
        }
    }

    fn vals_types(&mut self, f: &Func, vs: &[ValueId]) {
        self.vals(f, vs);
        self.out.push_str(" : ");
        let ts: Vec<Type> = vs.iter().map(|v| f.ty(*v).clone()).collect();
        self.types(&ts);
    }

    /// `{ ops }`; `label_args` are printed as an entry label `^bb0(...)`.
    fn block(&mut self, f: &Func, b: &Block, label_args: &[ValueId]) {
        self.out.push_str("{\n");
        self.indent += 1;
        if !label_args.is_empty() {
            self.line_start();
            self.out.push_str("^bb0(");
            for (i, a) in label_args.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                let _ = write!(self.out, "%{}: {}", f.name_of(*a), f.ty(*a));
            }
            self.out.push_str("):\n");
        }
        for op in &b.ops {
            self.op(f, op);
        }
        self.indent -= 1;
        self.line_start();
        self.out.push('}');
    }

    fn results(&mut self, f: &Func, op: &Op) {
        if op.results.is_empty() {
            return;
        }
        let names: Vec<&str> = op.results.iter().map(|r| f.name_of(*r)).collect();
        let grouped = names.len() > 1
            && names[0].ends_with("#0")
            && names
                .iter()
                .enumerate()
                .all(|(i, n)| n.strip_suffix(&format!("#{i}")) == names[0].strip_suffix("#0"));
        if grouped {
            let base = names[0].strip_suffix("#0").unwrap_or(names[0]);
            let _ = write!(self.out, "%{base}:{} = ", names.len());
        } else {
            self.vals(f, &op.results);
            self.out.push_str(" = ");
        }
    }

    fn result_ty(&self, f: &Func, op: &Op) -> String {
        op.results
            .first()
            .map(|r| f.ty(*r).to_string())
            .unwrap_or_default()
    }

    /// One op: its results, its name, then the rest in its own syntax (a dispatch on its
    /// kind; the longer syntaxes have their own functions).
    fn op(&mut self, f: &Func, op: &Op) {
        self.line_start();
        self.results(f, op);
        let name = op.name();
        self.out.push_str(&name);
        let rt = self.result_ty(f, op);
        self.op_syntax(f, op, &rt);
        self.out.push('\n');
    }

    /// The part of an op after its name: scalar, control-flow and call ops here, the
    /// rest in [`Printer::data_op_syntax`].
    fn op_syntax(&mut self, f: &Func, op: &Op, rt: &str) {
        match &op.kind {
            OpKind::Constant { value, ty } => self.constant(value, *ty),
            OpKind::Binary { lhs, rhs, .. } => self.plain(f, &[*lhs, *rhs], rt),
            OpKind::NegF { operand } | OpKind::Math { operand, .. } => {
                self.plain(f, &[*operand], rt)
            }
            OpKind::Cmp { pred, lhs, rhs, .. } => self.cmp(f, pred, *lhs, *rhs),
            OpKind::Cast { operand, .. } => {
                self.plain(f, &[*operand], &format!("{} to {rt}", f.ty(*operand)))
            }
            OpKind::Select {
                cond,
                on_true,
                on_false,
            } => self.plain(f, &[*cond, *on_true, *on_false], rt),
            OpKind::For {
                lb,
                ub,
                step,
                iv,
                iter_args,
                body,
            } => self.for_loop(f, op, [*lb, *ub, *step], *iv, iter_args, body),
            OpKind::If {
                cond,
                then_block,
                else_block,
            } => self.if_else(f, op, *cond, then_block, else_block.as_ref()),
            OpKind::While {
                inits,
                before,
                after,
            } => self.while_loop(f, op, inits, before, after),
            OpKind::Yield(vs) | OpKind::Return(vs) => self.opt_vals_types(f, vs),
            OpKind::Condition { cond, args } => self.condition(f, *cond, args),
            OpKind::Call { callee, args } => self.call(f, op, callee, args),
            _ => self.data_op_syntax(f, op, rt),
        }
    }

    /// The part after the name of a view, tile, buffer, pipe or synchronisation op.
    fn data_op_syntax(&mut self, f: &Func, op: &Op, rt: &str) {
        match &op.kind {
            OpKind::MakeTensorView {
                ptr,
                shape,
                strides,
                attrs,
            } => self.make_tensor_view(f, *ptr, shape, strides, attrs, rt),
            OpKind::PartitionView {
                source,
                offsets,
                sizes,
            } => self.partition_view(f, *source, offsets, sizes, rt),
            OpKind::ViewQuery { view, dim, .. } => {
                self.plain(f, &[*view, *dim], &format!("{} -> {rt}", f.ty(*view)))
            }
            OpKind::AllocTile {
                addr,
                valid_row,
                valid_col,
            } => self.alloc_tile(f, [*addr, *valid_row, *valid_col], rt),
            OpKind::SubView {
                source,
                offsets,
                sizes,
                valid,
            } => self.subview(f, *source, offsets, sizes, *valid, rt),
            OpKind::Reinterpret { source, .. } => {
                self.plain(f, &[*source], &format!("{} -> {rt}", f.ty(*source)))
            }
            OpKind::TAssign { tile, addr } => {
                self.plain(f, &[*tile, *addr], &format!("{} -> {rt}", f.ty(*tile)))
            }
            OpKind::SetValidShape { tile, rows, cols } => {
                self.plain(f, &[*tile, *rows, *cols], &f.ty(*tile).to_string())
            }
            OpKind::AddPtr { ptr, offset } => {
                self.plain(f, &[*ptr, *offset], &format!("{} -> {rt}", f.ty(*ptr)))
            }
            OpKind::LoadScalar { ptr, offset } => self.load_scalar(f, *ptr, *offset, rt),
            OpKind::StoreScalar { value, ptr, offset } => {
                self.store_scalar(f, *value, *ptr, *offset)
            }
            OpKind::Tile {
                ins,
                outs,
                attrs,
                attrs_in_ins,
                ..
            } => {
                let result = (!op.results.is_empty()).then_some(rt);
                self.tile(f, ins, outs, attrs, *attrs_in_ins, result)
            }
            OpKind::ReserveBuffer {
                name,
                size,
                location,
                auto_alloc,
                base,
            } => self.reserve_buffer(name, *size, *location, *auto_alloc, *base, rt),
            OpKind::ImportReservedBuffer { name, peer_func } => {
                self.import_reserved_buffer(name, peer_func, rt)
            }
            OpKind::InitializePipe {
                attrs,
                gm_slot_buffer,
                c2v_consumer_buf,
                v2c_consumer_buf,
                ..
            } => self.initialize_pipe(
                f,
                attrs,
                *gm_slot_buffer,
                *c2v_consumer_buf,
                *v2c_consumer_buf,
            ),
            OpKind::TPush { tile, attrs, .. } => self.tpush(f, *tile, attrs),
            OpKind::TPop { valid, attrs, .. } => self.tpop(f, *valid, attrs, rt),
            OpKind::TFree { attrs, .. } => self.spaced(|p| p.attr_dict(attrs)),
            OpKind::Flag {
                src, dst, event, ..
            } => self.flag(src, dst, event),
            OpKind::Barrier { name, pipe } => self.barrier(name, pipe),
            OpKind::CacheInvalid { target, space } => {
                self.cache_invalid(f, *target, space.as_ref())
            }
            OpKind::Signal {
                signal,
                value,
                attrs,
                ..
            } => self.signal(f, *signal, *value, attrs),
            OpKind::CommCopy {
                dst,
                src,
                stages,
                attrs,
                ..
            } => self.comm_copy(f, *dst, *src, stages, attrs),
            OpKind::Fence { scope } => self.spaced(|p| p.attr(scope)),
            OpKind::Section { body, .. } => self.spaced(|p| p.block(f, body, &[])),
            OpKind::Query { .. } => {
                let _ = write!(self.out, " : {rt}");
            }
            // Printed by `op_syntax`, which hands only the kinds above to this function;
            // listed so that a new kind must be placed in one of the two.
            OpKind::Constant { .. }
            | OpKind::Binary { .. }
            | OpKind::NegF { .. }
            | OpKind::Math { .. }
            | OpKind::Cmp { .. }
            | OpKind::Cast { .. }
            | OpKind::Select { .. }
            | OpKind::For { .. }
            | OpKind::If { .. }
            | OpKind::While { .. }
            | OpKind::Yield(_)
            | OpKind::Return(_)
            | OpKind::Condition { .. }
            | OpKind::Call { .. } => {}
        }
    }

    /// `arith.constant`: the value (booleans as words, non-finite floats as hex bits) and its type.
    fn constant(&mut self, value: &Literal, ty: ScalarType) {
        match (value, ty) {
            (Literal::Int(v), ScalarType::I1) => {
                let _ = write!(self.out, " {}", if *v != 0 { "true" } else { "false" });
            }
            (Literal::Int(v), _) => {
                let _ = write!(self.out, " {v}");
            }
            (Literal::Float(v), _) if v.is_finite() => {
                let _ = write!(self.out, " {}", float_text(*v));
            }
            (Literal::Float(v), t) => {
                let bits: u64 = match t {
                    ScalarType::F64 => v.to_bits(),
                    ScalarType::BF16 => u64::from((*v as f32).to_bits() >> 16),
                    ScalarType::F16 => match (v.is_nan(), *v > 0.0) {
                        (true, _) => 0x7e00,
                        (false, true) => 0x7c00,
                        (false, false) => 0xfc00,
                    },
                    _ => u64::from((*v as f32).to_bits()),
                };
                let _ = write!(self.out, " 0x{bits:X}");
            }
        }
        let _ = write!(self.out, " : {}", ty.name());
    }

    /// `scf.for`: bounds, iter_args with their result types, the induction type when it differs, the body.
    fn for_loop(
        &mut self,
        f: &Func,
        op: &Op,
        bounds: [ValueId; 3],
        iv: ValueId,
        iter_args: &[(ValueId, ValueId)],
        body: &Block,
    ) {
        let [lb, ub, step] = bounds;
        let _ = write!(
            self.out,
            " %{} = %{} to %{} step %{}",
            f.name_of(iv),
            f.name_of(lb),
            f.name_of(ub),
            f.name_of(step)
        );
        if !iter_args.is_empty() {
            self.out.push_str(" iter_args(");
            for (i, (a, init)) in iter_args.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                let _ = write!(self.out, "%{} = %{}", f.name_of(*a), f.name_of(*init));
            }
            self.out.push_str(") -> (");
            let ts: Vec<Type> = op.results.iter().map(|r| f.ty(*r).clone()).collect();
            self.types(&ts);
            self.out.push(')');
        }
        if f.ty(iv) != f.ty(lb) {
            let _ = write!(self.out, " : {}", f.ty(iv));
        }
        self.out.push(' ');
        self.block(f, body, &[]);
    }

    /// `scf.if`: the condition, the result types, both regions.
    fn if_else(
        &mut self,
        f: &Func,
        op: &Op,
        cond: ValueId,
        then_block: &Block,
        else_block: Option<&Block>,
    ) {
        let _ = write!(self.out, " %{}", f.name_of(cond));
        if !op.results.is_empty() {
            self.out.push_str(" -> (");
            let ts: Vec<Type> = op.results.iter().map(|r| f.ty(*r).clone()).collect();
            self.types(&ts);
            self.out.push(')');
        }
        self.out.push(' ');
        self.block(f, then_block, &[]);
        if let Some(e) = else_block {
            self.out.push_str(" else ");
            self.block(f, e, &[]);
        }
    }

    /// `scf.while`: the initial values and types, the result types, the `before` and `do` regions.
    fn while_loop(&mut self, f: &Func, op: &Op, inits: &[ValueId], before: &Block, after: &Block) {
        self.out.push_str(" (");
        for (i, (a, init)) in before.args.iter().zip(inits).enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            let _ = write!(self.out, "%{} = %{}", f.name_of(*a), f.name_of(*init));
        }
        self.out.push_str(") : (");
        let ts: Vec<Type> = before.args.iter().map(|a| f.ty(*a).clone()).collect();
        self.types(&ts);
        self.out.push_str(") -> (");
        let rs: Vec<Type> = op.results.iter().map(|r| f.ty(*r).clone()).collect();
        self.types(&rs);
        self.out.push_str(") ");
        let before_body = Block {
            args: Vec::new(),
            ops: before.ops.clone(),
        };
        self.block(f, &before_body, &[]);
        self.out.push_str(" do ");
        let after_body = Block {
            args: Vec::new(),
            ops: after.ops.clone(),
        };
        self.block(f, &after_body, &after.args);
    }

    /// `func.call`: the callee, arguments and the function type.
    fn call(&mut self, f: &Func, op: &Op, callee: &str, args: &[ValueId]) {
        let _ = write!(self.out, " @{callee}(");
        self.vals(f, args);
        self.out.push_str(") : (");
        let ts: Vec<Type> = args.iter().map(|a| f.ty(*a).clone()).collect();
        self.types(&ts);
        self.out.push_str(") -> (");
        let rs: Vec<Type> = op.results.iter().map(|r| f.ty(*r).clone()).collect();
        self.types(&rs);
        self.out.push(')');
    }

    /// `pto.make_tensor_view`: base, shape and strides lists, attributes, the view type.
    fn make_tensor_view(
        &mut self,
        f: &Func,
        ptr: ValueId,
        shape: &[ValueId],
        strides: &[ValueId],
        attrs: &[NamedAttr],
        rt: &str,
    ) {
        let _ = write!(self.out, " %{}, shape = [", f.name_of(ptr));
        self.vals(f, shape);
        self.out.push_str("], strides = [");
        self.vals(f, strides);
        self.out.push(']');
        self.opt_attrs(attrs);
        let _ = write!(self.out, " : {rt}");
    }

    /// `pto.partition_view`: source, offsets and sizes lists, both view types.
    fn partition_view(
        &mut self,
        f: &Func,
        source: ValueId,
        offsets: &[ValueId],
        sizes: &[ValueId],
        rt: &str,
    ) {
        let _ = write!(self.out, " %{}, offsets = [", f.name_of(source));
        self.vals(f, offsets);
        self.out.push_str("], sizes = [");
        self.vals(f, sizes);
        let _ = write!(self.out, "] : {} -> {rt}", f.ty(source));
    }

    /// `pto.alloc_tile`: the `addr` / `valid_row` / `valid_col` operands given, the tile type.
    fn alloc_tile(&mut self, f: &Func, operands: [Option<ValueId>; 3], rt: &str) {
        let [addr, valid_row, valid_col] = operands;
        for (k, v) in [
            ("addr", addr),
            ("valid_row", valid_row),
            ("valid_col", valid_col),
        ] {
            if let Some(v) = v {
                let _ = write!(self.out, " {k} = %{}", f.name_of(v));
            }
        }
        let _ = write!(self.out, " : {rt}");
    }

    /// `pto.subview`: source and offsets, the static sizes, the optional valid operands, both tile types.
    fn subview(
        &mut self,
        f: &Func,
        source: ValueId,
        offsets: &[ValueId],
        sizes: &[i64],
        valid: Option<(ValueId, ValueId)>,
        rt: &str,
    ) {
        let _ = write!(self.out, " %{}[", f.name_of(source));
        self.vals(f, offsets);
        self.out.push_str("] sizes [");
        let s: Vec<String> = sizes.iter().map(|v| v.to_string()).collect();
        self.out.push_str(&s.join(", "));
        self.out.push(']');
        if let Some((r, c)) = valid {
            let _ = write!(self.out, " valid [%{}, %{}]", f.name_of(r), f.name_of(c));
        }
        let _ = write!(self.out, " : {} -> {rt}", f.ty(source));
    }

    /// `pto.load_scalar`: `%p[%off]` and the types.
    fn load_scalar(&mut self, f: &Func, ptr: ValueId, offset: ValueId, rt: &str) {
        let _ = write!(
            self.out,
            " %{}[%{}] : {} -> {rt}",
            f.name_of(ptr),
            f.name_of(offset),
            f.ty(ptr)
        );
    }

    /// `pto.store_scalar`: `%v, %p[%off]` and the types.
    fn store_scalar(&mut self, f: &Func, value: ValueId, ptr: ValueId, offset: ValueId) {
        let _ = write!(
            self.out,
            " %{}, %{}[%{}] : {}, {}",
            f.name_of(value),
            f.name_of(ptr),
            f.name_of(offset),
            f.ty(ptr),
            f.ty(value)
        );
    }

    /// A tile op: `ins(...)` (attributes inside it when they were), `outs(...)`, attributes, the result type if any.
    fn tile(
        &mut self,
        f: &Func,
        ins: &[ValueId],
        outs: &[ValueId],
        attrs: &[NamedAttr],
        attrs_in_ins: bool,
        result: Option<&str>,
    ) {
        self.out.push_str(" ins(");
        if !ins.is_empty() {
            self.vals(f, ins);
            if attrs_in_ins && !attrs.is_empty() {
                self.out.push(' ');
                self.attr_dict(attrs);
            }
            self.out.push_str(" : ");
            let ts: Vec<Type> = ins.iter().map(|v| f.ty(*v).clone()).collect();
            self.types(&ts);
        }
        self.out.push(')');
        if !outs.is_empty() {
            self.out.push_str(" outs(");
            self.vals_types(f, outs);
            self.out.push(')');
        }
        if !attrs_in_ins || ins.is_empty() {
            self.opt_attrs(attrs);
        }
        if let Some(rt) = result {
            let _ = write!(self.out, " -> {rt}");
        }
    }

    /// `pto.reserve_buffer`: its attribute dictionary and type.
    fn reserve_buffer(
        &mut self,
        name: &str,
        size: i64,
        location: TileLoc,
        auto_alloc: bool,
        base: Option<i64>,
        rt: &str,
    ) {
        let _ = write!(
            self.out,
            " {{name = {}, size = {size}, location = #pto.address_space<{}>, auto = {auto_alloc}",
            escape(name),
            location.name()
        );
        if let Some(b) = base {
            let _ = write!(self.out, ", base = {b}");
        }
        let _ = write!(self.out, "}} -> {rt}");
    }

    /// `pto.import_reserved_buffer`: its attribute dictionary and type.
    fn import_reserved_buffer(&mut self, name: &str, peer_func: &str, rt: &str) {
        let _ = write!(
            self.out,
            " {{name = {}, peer_func = @{peer_func}}} -> {rt}",
            escape(name)
        );
    }

    /// `pto.aic_initialize_pipe` / `aiv_`: attributes and the buffer operands.
    fn initialize_pipe(
        &mut self,
        f: &Func,
        attrs: &[NamedAttr],
        gm_slot_buffer: Option<ValueId>,
        c2v_consumer_buf: ValueId,
        v2c_consumer_buf: ValueId,
    ) {
        self.out.push(' ');
        self.attr_dict(attrs);
        self.out.push_str(" (");
        if let Some(g) = gm_slot_buffer {
            let _ = write!(
                self.out,
                "gm_slot_buffer = %{} : {}, ",
                f.name_of(g),
                f.ty(g)
            );
        }
        let _ = write!(
            self.out,
            "c2v_consumer_buf = %{} : {}, v2c_consumer_buf = %{} : {})",
            f.name_of(c2v_consumer_buf),
            f.ty(c2v_consumer_buf),
            f.name_of(v2c_consumer_buf),
            f.ty(v2c_consumer_buf)
        );
    }

    /// `pto.tpop_from_*`: the optional valid operands, attributes, the tile type.
    fn tpop(&mut self, f: &Func, valid: Option<(ValueId, ValueId)>, attrs: &[NamedAttr], rt: &str) {
        if let Some((r, c)) = valid {
            let _ = write!(self.out, "(%{}, %{})", f.name_of(r), f.name_of(c));
        }
        self.out.push(' ');
        self.attr_dict(attrs);
        let _ = write!(self.out, " -> {rt}");
    }

    /// `pto.set_flag` and its kin: `[src, dst, event]`.
    fn flag(&mut self, src: &Attr, dst: &Attr, event: &Attr) {
        self.out.push('[');
        self.attr(src);
        self.out.push_str(", ");
        self.attr(dst);
        self.out.push_str(", ");
        self.attr(event);
        self.out.push(']');
    }

    /// `pto.barrier <pipe>` or `pto.barrier_sync [<pipe>]`.
    fn barrier(&mut self, name: &str, pipe: &Attr) {
        if name == "barrier_sync" {
            self.out.push('[');
            self.attr(pipe);
            self.out.push(']');
        } else {
            self.out.push(' ');
            self.attr(pipe);
        }
    }

    /// `pto.cmo.cacheinvalid`: `%p single_cache_line : T` or `all [space]`.
    fn cache_invalid(&mut self, f: &Func, target: Option<ValueId>, space: Option<&Attr>) {
        match (target, space) {
            (Some(t), _) => {
                let _ = write!(
                    self.out,
                    " %{} single_cache_line : {}",
                    f.name_of(t),
                    f.ty(t)
                );
            }
            (None, space) => {
                self.out.push_str(" all");
                if let Some(a) = space {
                    self.out.push(' ');
                    self.attr(a);
                }
            }
        }
    }

    /// `pto.comm.tnotify` / `twait`: `(%signal, %value : T, T)` and attributes.
    fn signal(&mut self, f: &Func, signal: ValueId, value: ValueId, attrs: &[NamedAttr]) {
        let _ = write!(
            self.out,
            "(%{}, %{} : {}, {})",
            f.name_of(signal),
            f.name_of(value),
            f.ty(signal),
            f.ty(value)
        );
        self.opt_attrs(attrs);
    }

    /// `pto.comm.tput` / `tget`: `(%dst, %src, buf(...) : T, ...)` and attributes.
    fn comm_copy(
        &mut self,
        f: &Func,
        dst: ValueId,
        src: ValueId,
        stages: &[ValueId],
        attrs: &[NamedAttr],
    ) {
        let _ = write!(self.out, "(%{}, %{}, buf(", f.name_of(dst), f.name_of(src));
        self.vals(f, stages);
        self.out.push_str(") : ");
        let mut ts = vec![f.ty(dst).clone(), f.ty(src).clone()];
        ts.extend(stages.iter().map(|v| f.ty(*v).clone()));
        self.types(&ts);
        self.out.push(')');
        self.opt_attrs(attrs);
    }

    /// `arith.cmpi` / `arith.cmpf`: the predicate, the operands and their type.
    fn cmp(&mut self, f: &Func, pred: &str, lhs: ValueId, rhs: ValueId) {
        let _ = write!(self.out, " {pred}, ");
        self.vals(f, &[lhs, rhs]);
        let _ = write!(self.out, " : {}", f.ty(lhs));
    }

    /// `scf.condition`: `(%cond)` and the values passed on with their types.
    fn condition(&mut self, f: &Func, cond: ValueId, args: &[ValueId]) {
        let _ = write!(self.out, "(%{})", f.name_of(cond));
        self.opt_vals_types(f, args);
    }

    /// `pto.tpush_to_*`: `(%tile : T)` and attributes.
    fn tpush(&mut self, f: &Func, tile: ValueId, attrs: &[NamedAttr]) {
        let _ = write!(self.out, "(%{} : {}) ", f.name_of(tile), f.ty(tile));
        self.attr_dict(attrs);
    }

    /// A space, then what `then` prints.
    fn spaced(&mut self, then: impl FnOnce(&mut Self)) {
        self.out.push(' ');
        then(self);
    }

    /// ` %a, %b : <types>`: the operands of an op in the common form, then its types.
    fn plain(&mut self, f: &Func, vs: &[ValueId], types: &str) {
        self.out.push(' ');
        self.vals(f, vs);
        let _ = write!(self.out, " : {types}");
    }

    /// ` %a, %b : T, T` when `vs` is not empty (terminators).
    fn opt_vals_types(&mut self, f: &Func, vs: &[ValueId]) {
        if !vs.is_empty() {
            self.out.push(' ');
            self.vals_types(f, vs);
        }
    }
}
