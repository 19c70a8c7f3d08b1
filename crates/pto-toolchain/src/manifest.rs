//! Direct-mode manifests: for one source (content, flags, compiler, directory)
//! the header sets seen by previous compiles and the object each produced.
//!
//! On-disk format (text, one manifest per file, newest entry first):
//!
//! ```text
//! pto-toolchain-manifest 1
//! entry <object key>
//! dep <sha256 hex> <absolute header path>
//! end
//! ```

use std::path::{Path, PathBuf};

const MAGIC: &str = "pto-toolchain-manifest 1";

/// At most this many header sets are remembered per source, so that toggling
/// a header between versions keeps hitting the cache.
pub(crate) const MAX_ENTRIES: usize = 32;

/// One previous compile: the headers it read and the object it produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Object key: the object lives at `<objects>/<object_key>.so`.
    pub(crate) object_key: String,
    /// `(header path, sha256 hex of its content)` in dependency-file order.
    pub(crate) deps: Vec<(PathBuf, String)>,
}

/// All remembered compiles of one source, newest first.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Manifest {
    pub(crate) entries: Vec<Entry>,
}

impl Manifest {
    /// Loads a manifest; a missing, unreadable or malformed file is an empty
    /// manifest (the cache then simply misses).
    pub(crate) fn load(path: &Path) -> Manifest {
        match std::fs::read_to_string(path) {
            Ok(text) => Manifest::parse(&text).unwrap_or_else(|| {
                tracing::debug!(manifest = %path.display(), "ignoring malformed manifest");
                Manifest::default()
            }),
            Err(e) => {
                if e.kind() != std::io::ErrorKind::NotFound {
                    tracing::debug!(manifest = %path.display(), error = %e, "ignoring unreadable manifest");
                }
                Manifest::default()
            }
        }
    }

    fn parse(text: &str) -> Option<Manifest> {
        let mut lines = text.lines();
        if lines.next()? != MAGIC {
            return None;
        }
        let mut entries = Vec::new();
        let mut current: Option<Entry> = None;
        for line in lines {
            if let Some(key) = line.strip_prefix("entry ") {
                if current.is_some() || !is_hex_key(key) {
                    return None;
                }
                current = Some(Entry {
                    object_key: key.to_owned(),
                    deps: Vec::new(),
                });
            } else if let Some(rest) = line.strip_prefix("dep ") {
                let (hash, path) = rest.split_once(' ')?;
                if !is_hex_key(hash) || path.is_empty() {
                    return None;
                }
                current
                    .as_mut()?
                    .deps
                    .push((PathBuf::from(path), hash.to_owned()));
            } else if line == "end" {
                entries.push(current.take()?);
            } else if !line.is_empty() {
                return None;
            }
        }
        if current.is_some() {
            return None;
        }
        Some(Manifest { entries })
    }

    /// Serializes the manifest, or `None` if a path cannot be represented
    /// (not UTF-8, or containing a newline); such compiles are not cached.
    pub(crate) fn serialize(&self) -> Option<String> {
        let mut s = String::from(MAGIC);
        s.push('\n');
        for e in &self.entries {
            s.push_str("entry ");
            s.push_str(&e.object_key);
            s.push('\n');
            for (path, hash) in &e.deps {
                let p = path.to_str()?;
                if p.contains(['\n', '\r']) {
                    return None;
                }
                s.push_str("dep ");
                s.push_str(hash);
                s.push(' ');
                s.push_str(p);
                s.push('\n');
            }
            s.push_str("end\n");
        }
        Some(s)
    }

    /// Puts `entry` first, dropping older entries for the same object and
    /// the oldest entries beyond [`MAX_ENTRIES`].
    pub(crate) fn insert(&mut self, entry: Entry) {
        self.entries.retain(|e| e.object_key != entry.object_key);
        self.entries.insert(0, entry);
        self.entries.truncate(MAX_ENTRIES);
    }
}

fn is_hex_key(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(c: char) -> String {
        c.to_string().repeat(64)
    }

    #[test]
    fn round_trip() {
        let mut m = Manifest::default();
        m.insert(Entry {
            object_key: key('a'),
            deps: vec![
                (PathBuf::from("/inc/with space.h"), key('1')),
                (PathBuf::from("/x.h"), key('2')),
            ],
        });
        m.insert(Entry {
            object_key: key('b'),
            deps: vec![],
        });
        let text = m.serialize().unwrap_or_default();
        assert_eq!(Manifest::parse(&text), Some(m.clone()));
        assert_eq!(m.entries[0].object_key, key('b'));
    }

    #[test]
    fn insert_dedupes_and_bounds() {
        let mut m = Manifest::default();
        for i in 0..(MAX_ENTRIES + 5) {
            m.insert(Entry {
                object_key: format!("{i:064x}"),
                deps: vec![],
            });
        }
        m.insert(Entry {
            object_key: format!("{:064x}", MAX_ENTRIES + 4),
            deps: vec![],
        });
        assert_eq!(m.entries.len(), MAX_ENTRIES);
        assert_eq!(m.entries[0].object_key, format!("{:064x}", MAX_ENTRIES + 4));
        assert_ne!(m.entries[1].object_key, m.entries[0].object_key);
    }

    #[test]
    fn malformed_is_rejected() {
        assert_eq!(Manifest::parse(""), None);
        assert_eq!(Manifest::parse("garbage\n"), None);
        assert_eq!(
            Manifest::parse(&format!("{MAGIC}\nentry {}\n", key('a'))),
            None
        );
        assert_eq!(
            Manifest::parse(&format!("{MAGIC}\ndep {} /x.h\n", key('a'))),
            None
        );
        assert_eq!(
            Manifest::parse(&format!("{MAGIC}\nentry short\nend\n")),
            None
        );
    }

    #[test]
    fn unrepresentable_paths_are_not_serialized() {
        let mut m = Manifest::default();
        m.insert(Entry {
            object_key: key('a'),
            deps: vec![(PathBuf::from("/a\nb.h"), key('1'))],
        });
        assert_eq!(m.serialize(), None);
    }
}
