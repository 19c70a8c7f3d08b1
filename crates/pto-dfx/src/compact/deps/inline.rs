//! `deps.bin` of format versions 1–3: every argument and edge carries its views
//! inline, each behind a `present` byte. Read so that a run recorded by an
//! earlier `pto` still exports and views; nothing writes this layout any more
//! (tests aside).
//!
//! | record | layout |
//! |---|---|
//! | task | as in version 4 ([`super::TASK_BYTES`]) |
//! | arg | `type` u8, view |
//! | edge | `pred` u64, `succ` u64, `arg` i32, `source` u8, `flags` u8, `overlap` u8, consumer view, producer region |
//! | view | `present` u8, then a version-4 view record |
//! | region | `present` u8, then a version-4 region record |

use super::{bad, read_region, read_view, DepsVisitor, Geometry, View};
use crate::compact::{CompactError, Cursor};

/// Bytes of an inline view (with its `present` byte).
pub(super) const VIEW_BYTES: usize = 1 + super::VIEW_BYTES;
/// Bytes of an inline region (with its `present` byte).
pub(super) const REGION_BYTES: usize = 1 + super::REGION_BYTES;
/// Bytes of one argument record.
pub(super) const ARG_BYTES: usize = 1 + VIEW_BYTES;
/// Bytes of one edge record.
pub(super) const EDGE_BYTES: usize = 8 + 8 + 4 + 3 + VIEW_BYTES + REGION_BYTES;

fn present<R: std::io::Read>(
    c: &mut Cursor<'_, R>,
    field: &'static str,
) -> Result<bool, CompactError> {
    match c.u8(field)? {
        0 => Ok(false),
        1 => Ok(true),
        v => Err(bad(c, field, v, "is not 0 or 1")),
    }
}

fn view<R: std::io::Read>(c: &mut Cursor<'_, R>) -> Result<Option<View>, CompactError> {
    let p = present(c, "view")?;
    let v = read_view(c)?;
    Ok(p.then_some(v))
}

fn region<R: std::io::Read>(c: &mut Cursor<'_, R>) -> Result<Option<Geometry>, CompactError> {
    let p = present(c, "producer")?;
    let g = read_region(c)?;
    Ok(p.then_some(g))
}

/// The sections after the header: tasks, then arguments and edges with their
/// views inline.
pub(super) fn walk_sections<R: std::io::Read>(
    c: &mut Cursor<'_, R>,
    visitor: &mut impl DepsVisitor,
) -> Result<(), CompactError> {
    super::walk_records(c, visitor, [ARG_BYTES, EDGE_BYTES], view, |c, e| {
        e.consumer = view(c)?;
        e.producer = region(c)?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::super::{
        parse,
        tests::{sample, write_sample},
        ARG_BYTES as ARG4, EDGE_BYTES as EDGE4, NONE, TASK_BYTES,
    };
    use super::*;

    /// `v4` (a version-4 file) rewritten in the inline layout of version `version`.
    fn inline_form(v4: &[u8], version: u32) -> Vec<u8> {
        let u64_at = |at: usize| u64::from_le_bytes(v4[at..at + 8].try_into().unwrap()) as usize;
        let u32_at = |at: usize| u32::from_le_bytes(v4[at..at + 4].try_into().unwrap());
        let mut out = v4[..13].to_vec();
        out[8..12].copy_from_slice(&version.to_le_bytes());
        let mut at = 13;
        let n_views = u64_at(at);
        let views: Vec<&[u8]> = (0..n_views)
            .map(|i| &v4[at + 8 + i * super::super::VIEW_BYTES..][..super::super::VIEW_BYTES])
            .collect();
        at += 8 + n_views * super::super::VIEW_BYTES;
        let n_regions = u64_at(at);
        let regions: Vec<&[u8]> = (0..n_regions)
            .map(|i| &v4[at + 8 + i * super::super::REGION_BYTES..][..super::super::REGION_BYTES])
            .collect();
        at += 8 + n_regions * super::super::REGION_BYTES;
        let put = |out: &mut Vec<u8>, table: &[&[u8]], bytes: usize, index: u32| {
            if index == NONE {
                out.push(0);
                out.extend(std::iter::repeat_n(0u8, bytes));
            } else {
                out.push(1);
                out.extend_from_slice(table[index as usize]);
            }
        };
        let n_tasks = u64_at(at);
        out.extend_from_slice(&v4[at..at + 8 + n_tasks * TASK_BYTES]);
        at += 8 + n_tasks * TASK_BYTES;
        let n_args = u64_at(at);
        out.extend_from_slice(&v4[at..at + 8]);
        for k in 0..n_args {
            let rec = at + 8 + k * ARG4;
            out.push(v4[rec]);
            put(&mut out, &views, super::super::VIEW_BYTES, u32_at(rec + 1));
        }
        at += 8 + n_args * ARG4;
        let n_edges = u64_at(at);
        out.extend_from_slice(&v4[at..at + 8]);
        for i in 0..n_edges {
            let rec = at + 8 + i * EDGE4;
            out.extend_from_slice(&v4[rec..rec + 23]);
            put(&mut out, &views, super::super::VIEW_BYTES, u32_at(rec + 23));
            put(
                &mut out,
                &regions,
                super::super::REGION_BYTES,
                u32_at(rec + 27),
            );
        }
        assert_eq!(at + 8 + n_edges * EDGE4, v4.len());
        out
    }

    #[test]
    fn a_file_of_versions_1_to_3_reads_as_the_same_records() {
        let dir = tempfile::tempdir().unwrap();
        let r = sample();
        let path = write_sample(dir.path(), &r);
        let v4 = std::fs::read(&path).unwrap();
        for version in 2..super::super::FIRST_VERSION {
            let old = inline_form(&v4, version);
            let n_args: usize = r.tasks.iter().map(|t| t.args.len()).sum();
            assert!(old.len() > 13 + 3 * 8 + r.tasks.len() * TASK_BYTES + n_args * ARG_BYTES);
            assert_eq!(parse(&old, &path).unwrap(), r, "version {version}");
            // Damage is still named: a present byte that is neither 0 nor 1.
            let first_arg = 13 + 8 + r.tasks.len() * TASK_BYTES + 8;
            let mut bad = old.clone();
            bad[first_arg + 1] = 7;
            let e = parse(&bad, &path).unwrap_err();
            assert_eq!((e.section, e.field), ("args", "view"), "{e}");
        }
        // Version 1 has no generation byte.
        let mut v1 = inline_form(&v4, 1);
        v1.remove(12);
        let back = parse(&v1, &path).unwrap();
        assert_eq!((back.tasks, back.edges), (r.tasks, r.edges));
    }
}
