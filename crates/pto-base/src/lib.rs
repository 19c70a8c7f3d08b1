//! The helpers every crate of the project shares, each written once so that a policy (how a
//! file is written atomically, how much a reader may allocate, how a size is printed) has
//! one owner.
//!
//! * [`fs`]: atomic writes ([`fs::AtomicFile`], [`fs::write_atomic`], [`fs::copy_atomic`])
//!   with one naming and durability policy, and bounded reads ([`fs::read_limited`]).
//! * [`human_size`]: a byte count as `4 GiB` / `8 MiB` / `64 KiB` / `100 bytes`.
//! * [`dtype`]: Simpler's element types (enum value, name, size), the one table of them.
//! * [`pyrepr`]: Python's `repr` of strings and floats, and float literals.
//! * [`json`]: JSON string literals, as Python's `json.dumps` writes them.
//! * [`hash`]: lower-case hex and SHA-256 (plain, and of framed fields).
//! * [`idmap`]: hash maps and sets keyed by ids, with a fast non-cryptographic hasher.
//! * [`thread`]: two pieces of work at once ([`thread::beside`]).
//! * [`fnv1a64`]: a hash of bytes that is stable across Rust releases (for pinned outputs).

pub mod dtype;
pub mod fs;
pub mod hash;
pub mod idmap;
pub mod json;
pub mod pyrepr;
pub mod thread;

/// `bytes` as a short human size: `4 GiB`, `8 MiB`, `64 KiB`, `100 bytes` (the larger unit only when
/// it divides the count exactly, so the text is never rounded).
pub fn human_size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (unit, name) in UNITS {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{} {name}", bytes / unit);
        }
    }
    format!("{bytes} bytes")
}

/// FNV-1a, 64 bits, of `bytes`: stable across Rust releases and platforms (std's hasher is
/// not), for tests that pin output bytes as a length and a hash.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::{fnv1a64, human_size};

    #[test]
    fn fnv1a64_matches_the_published_test_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn human_size_uses_the_largest_exact_unit() {
        assert_eq!(human_size(4 << 30), "4 GiB");
        assert_eq!(human_size(8 << 20), "8 MiB");
        assert_eq!(human_size(1536 << 10), "1536 KiB");
        assert_eq!(human_size(64 << 10), "64 KiB");
        assert_eq!(human_size(100), "100 bytes");
        assert_eq!(human_size(1025), "1025 bytes");
    }
}
