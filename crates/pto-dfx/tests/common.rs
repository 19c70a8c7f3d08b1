//! Helpers shared by the artifact tests.

use std::path::{Path, PathBuf};

use pto_dfx::{ReadError, ReadErrorKind};

/// The path of a golden file.
pub fn data(name: &str) -> PathBuf {
    // Shared with `pto-dfx-view`'s tests (included by path), so named from the sibling
    // crate's directory rather than the including crate's.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../pto-dfx/tests/data")
        .join(name)
}

/// The bytes of a golden file.
pub fn golden(name: &str) -> Vec<u8> {
    std::fs::read(data(name)).unwrap()
}

/// The text of a golden file.
pub fn golden_text(name: &str) -> String {
    String::from_utf8(golden(name)).unwrap()
}

/// Asserts the error's message names `path` and (if given) `key`, and returns it.
pub fn assert_names(err: &ReadError, path: &Path, key: Option<&str>) -> String {
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("cannot read {}: ", path.display())),
        "{text}"
    );
    assert_eq!(err.path, path);
    if let Some(key) = key {
        assert_eq!(err.key(), Some(key), "{text}");
        assert!(text.contains(&format!("`{key}`")), "{text}");
    }
    text
}

/// Asserts a truncated-JSON error naming `path`.
pub fn assert_truncated(err: &ReadError, path: &Path) {
    let text = assert_names(err, path, None);
    assert!(
        matches!(
            err.kind,
            ReadErrorKind::Json {
                truncated: true,
                ..
            }
        ),
        "{text}"
    );
    assert!(text.contains("truncated JSON"), "{text}");
}

/// Asserts a missing-key error naming `path` and `key`.
pub fn assert_missing(err: &ReadError, path: &Path, key: &str) {
    let text = assert_names(err, path, Some(key));
    assert!(
        matches!(&err.kind, ReadErrorKind::MissingKey { key: k } if k == key),
        "{text}"
    );
    assert!(text.contains("missing key"), "{text}");
}

/// Asserts a wrong-type error naming `path` and `key`.
pub fn assert_wrong_type(err: &ReadError, path: &Path, key: &str) {
    let text = assert_names(err, path, Some(key));
    assert!(
        matches!(&err.kind, ReadErrorKind::WrongType { key: k, .. } if k == key),
        "{text}"
    );
}

/// Asserts an invalid-value error naming `path` and `key`.
pub fn assert_invalid(err: &ReadError, path: &Path, key: &str) {
    let text = assert_names(err, path, Some(key));
    assert!(
        matches!(&err.kind, ReadErrorKind::InvalidValue { key: k, .. } if k == key),
        "{text}"
    );
}

/// The problem keys, in order.
pub fn problem_keys(problems: &[pto_dfx::Problem]) -> Vec<&str> {
    problems.iter().map(|p| p.key.as_str()).collect()
}
