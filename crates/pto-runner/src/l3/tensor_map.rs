//! The host's TensorMap: which earlier dispatch produced the bytes a new dispatch touches.
//!
//! Semantics are Simpler's L3 map (reference `pypto-l3.md` §0.1):
//! - the key is the backing's identity (here the shared-memory region id: one host tensor
//!   storage, one snapshot, or one comm domain file), and each key holds a list of
//!   `(footprint, producer)`;
//! - a lookup returns every producer whose footprint overlaps the argument's; an insert
//!   drops only the entries the new footprint covers completely;
//! - overlap: disjoint byte ranges never overlap; with equal dtype, rank and strides the
//!   per-axis intervals decide; anything else counts as overlapping;
//! - tags: `INPUT` looks up; `INOUT` looks up and inserts; `OUTPUT` / `OUTPUT_EXISTING`
//!   insert only; `NO_DEP` does neither.

use std::collections::HashMap;

/// Simpler's `TensorArgType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    /// Read.
    Input,
    /// Written, runtime-allocated in Simpler (here: an existing tensor, as `OutputExisting`).
    Output,
    /// Read and written.
    InOut,
    /// Written into an existing tensor.
    OutputExisting,
    /// No dependency tracking.
    NoDep,
}

impl Tag {
    /// From `TensorArgType`'s integer value.
    pub fn from_code(code: i64) -> Option<Tag> {
        Some(match code {
            0 => Tag::Input,
            1 => Tag::Output,
            2 => Tag::InOut,
            3 => Tag::OutputExisting,
            4 => Tag::NoDep,
            _ => return None,
        })
    }

    /// Simpler's name.
    pub fn name(self) -> &'static str {
        match self {
            Tag::Input => "INPUT",
            Tag::Output => "OUTPUT",
            Tag::InOut => "INOUT",
            Tag::OutputExisting => "OUTPUT_EXISTING",
            Tag::NoDep => "NO_DEP",
        }
    }

    /// Whether the task writes the argument.
    pub fn writes(self) -> bool {
        matches!(self, Tag::Output | Tag::InOut | Tag::OutputExisting)
    }

    fn looks_up(self) -> bool {
        matches!(self, Tag::Input | Tag::InOut)
    }

    fn inserts(self) -> bool {
        self.writes()
    }

    /// Whether a backing granting `access` allows this tag (`INPUT` needs read,
    /// `OUTPUT_EXISTING` write, `INOUT` both; `OUTPUT` and `NO_DEP` are unconstrained).
    pub fn allowed_by(self, access: Access) -> bool {
        match self {
            Tag::Input => access.read,
            Tag::OutputExisting => access.write,
            Tag::InOut => access.read && access.write,
            Tag::Output | Tag::NoDep => true,
        }
    }
}

/// What a backing grants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// May be read.
    pub read: bool,
    /// May be written.
    pub write: bool,
}

impl Access {
    /// Read-only (a snapshot of a host tensor that is not in shared memory).
    pub const READ: Access = Access {
        read: true,
        write: false,
    };
    /// Read-write (shared host tensors, windows).
    pub const READ_WRITE: Access = Access {
        read: true,
        write: true,
    };
}

/// The bytes and elements a tensor argument touches in its backing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// Byte offset of element 0 in the backing.
    pub offset: u64,
    /// Element size in bytes.
    pub elem: u64,
    /// Element type code.
    pub dtype: u8,
    /// Shape.
    pub shape: Vec<u64>,
    /// Strides in elements.
    pub strides: Vec<u64>,
}

impl Footprint {
    /// A contiguous row-major view.
    pub fn contiguous(offset: u64, dtype: u8, shape: &[u64]) -> Footprint {
        let mut strides = vec![1u64; shape.len()];
        for k in (0..shape.len().saturating_sub(1)).rev() {
            strides[k] = strides[k + 1].saturating_mul(shape[k + 1]);
        }
        Footprint {
            offset,
            elem: pto_runtime::dtype::elem_size(dtype) as u64,
            dtype,
            shape: shape.to_vec(),
            strides,
        }
    }

    /// `[first byte, one past the last byte)`; empty for a zero-sized view.
    pub fn byte_range(&self) -> (u64, u64) {
        if self.shape.contains(&0) {
            return (self.offset, self.offset);
        }
        let last: u64 = self
            .shape
            .iter()
            .zip(&self.strides)
            .map(|(&n, &s)| (n - 1).saturating_mul(s))
            .fold(0u64, u64::saturating_add);
        let end = self
            .offset
            .saturating_add(last.saturating_add(1).saturating_mul(self.elem));
        (self.offset, end)
    }

    fn is_row_major(&self) -> bool {
        *self == Footprint::contiguous(self.offset, self.dtype, &self.shape)
    }

    /// Per-axis start coordinates, when the offset decomposes over the strides (strides
    /// strictly nested: each a multiple of the next).
    fn coords(&self) -> Option<Vec<u64>> {
        if self.elem == 0 || !self.offset.is_multiple_of(self.elem) {
            return None;
        }
        for w in self.strides.windows(2) {
            if w[1] == 0 || !w[0].is_multiple_of(w[1]) {
                return None;
            }
        }
        let mut rest = self.offset / self.elem;
        let mut out = Vec::with_capacity(self.strides.len());
        for &s in &self.strides {
            if s == 0 {
                return None;
            }
            out.push(rest / s);
            rest %= s;
        }
        (rest == 0).then_some(out)
    }

    /// Whether the two views may touch a common byte (Simpler's `tensor_overlap`).
    pub fn overlaps(&self, other: &Footprint) -> bool {
        let (a0, a1) = self.byte_range();
        let (b0, b1) = other.byte_range();
        if a0 >= a1 || b0 >= b1 || a1 <= b0 || b1 <= a0 {
            return false;
        }
        if self.dtype == other.dtype
            && self.shape.len() == other.shape.len()
            && self.strides == other.strides
        {
            if let (Some(ca), Some(cb)) = (self.coords(), other.coords()) {
                // The leading axis absorbs offsets past the parent's extent; the others
                // must stay inside their stride's span to be comparable.
                return ca
                    .iter()
                    .zip(&cb)
                    .zip(self.shape.iter().zip(&other.shape))
                    .all(|((&x, &y), (&n, &m))| x < y + m && y < x + n);
            }
        }
        true
    }

    /// Whether every byte `other` touches is one this view touches (conservative: only
    /// decided for row-major views; anything else is "not covered").
    pub fn covers(&self, other: &Footprint) -> bool {
        if !self.is_row_major() || !other.is_row_major() {
            return false;
        }
        let (a0, a1) = self.byte_range();
        let (b0, b1) = other.byte_range();
        a0 <= b0 && b1 <= a1
    }
}

/// The map: per backing, the producers of its footprints.
#[derive(Default)]
pub struct TensorMap {
    entries: HashMap<u64, Vec<(Footprint, u64)>>,
}

impl TensorMap {
    /// An empty map (one per run).
    pub fn new() -> TensorMap {
        TensorMap::default()
    }

    /// Producers an argument with `tag` over `fp` of `backing` depends on, appended to
    /// `deps` (deduplicated by the caller).
    pub fn lookup(&self, backing: u64, fp: &Footprint, tag: Tag, deps: &mut Vec<u64>) {
        if !tag.looks_up() {
            return;
        }
        if let Some(list) = self.entries.get(&backing) {
            deps.extend(
                list.iter()
                    .filter(|(f, _)| f.overlaps(fp))
                    .map(|&(_, producer)| producer),
            );
        }
    }

    /// Records `producer` as the last writer of `fp` when `tag` writes.
    pub fn insert(&mut self, backing: u64, fp: &Footprint, tag: Tag, producer: u64) {
        if !tag.inserts() {
            return;
        }
        let list = self.entries.entry(backing).or_default();
        list.retain(|(f, _)| !fp.covers(f));
        list.push((fp.clone(), producer));
    }

    /// Producers recorded (all backings).
    pub fn len(&self) -> usize {
        self.entries.values().map(Vec::len).sum()
    }

    /// Whether nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const F32: u8 = 0;

    fn row(r: u64) -> Footprint {
        // x[r] of a [4, 8, 8] fp32 tensor.
        Footprint::contiguous(r * 256, F32, &[8, 8])
    }

    #[test]
    fn rows_of_one_tensor_carry_no_edge_and_the_whole_tensor_does() {
        let mut m = TensorMap::new();
        m.insert(7, &row(0), Tag::OutputExisting, 1);
        m.insert(7, &row(1), Tag::OutputExisting, 2);
        let mut deps = Vec::new();
        m.lookup(7, &row(1), Tag::Input, &mut deps);
        assert_eq!(deps, vec![2]);
        deps.clear();
        m.lookup(
            7,
            &Footprint::contiguous(0, F32, &[4, 8, 8]),
            Tag::InOut,
            &mut deps,
        );
        assert_eq!(deps, vec![1, 2]);
        deps.clear();
        m.lookup(8, &row(1), Tag::Input, &mut deps);
        assert!(deps.is_empty(), "another backing");
        // An insert drops only what it covers completely.
        m.insert(7, &Footprint::contiguous(0, F32, &[2, 8, 8]), Tag::InOut, 3);
        assert_eq!(m.len(), 1);
    }

    #[test]
    fn tags_decide_lookup_and_insert() {
        let mut m = TensorMap::new();
        m.insert(1, &row(0), Tag::Input, 1);
        m.insert(1, &row(0), Tag::NoDep, 2);
        assert!(m.is_empty());
        m.insert(1, &row(0), Tag::Output, 3);
        let mut deps = Vec::new();
        m.lookup(1, &row(0), Tag::OutputExisting, &mut deps);
        m.lookup(1, &row(0), Tag::NoDep, &mut deps);
        assert!(deps.is_empty());
        m.lookup(1, &row(0), Tag::InOut, &mut deps);
        assert_eq!(deps, vec![3]);
    }

    #[test]
    fn column_blocks_with_equal_strides_are_disjoint_and_other_layouts_conservative() {
        // x[:, 0:4] and x[:, 8:12] of a [4, 16] fp32 tensor.
        let a = Footprint {
            offset: 0,
            elem: 4,
            dtype: F32,
            shape: vec![4, 4],
            strides: vec![16, 1],
        };
        let b = Footprint {
            offset: 8 * 4,
            ..a.clone()
        };
        assert!(!a.overlaps(&b));
        let c = Footprint {
            offset: 2 * 4,
            ..a.clone()
        };
        assert!(a.overlaps(&c));
        // Another dtype over the same bytes: overlapping.
        let d = Footprint {
            dtype: 2,
            ..b.clone()
        };
        assert!(a.overlaps(&d));
        assert!(!a.covers(&b), "strided views never cover");
        assert!(!Footprint::contiguous(0, F32, &[0]).overlaps(&row(0)));
    }

    #[test]
    fn access_rules() {
        assert!(Tag::Input.allowed_by(Access::READ));
        assert!(!Tag::OutputExisting.allowed_by(Access::READ));
        assert!(!Tag::InOut.allowed_by(Access::READ));
        assert!(Tag::Output.allowed_by(Access::READ));
        assert!(Tag::InOut.allowed_by(Access::READ_WRITE));
        assert_eq!(Tag::from_code(3), Some(Tag::OutputExisting));
        assert_eq!(Tag::from_code(9), None);
    }
}
