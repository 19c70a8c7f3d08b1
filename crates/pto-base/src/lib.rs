//! The helpers every crate of the project shares, each written once so that a policy (how a
//! file is written atomically, how much a reader may allocate, how a size is printed) has
//! one owner.
//!
//! * [`fs`]: atomic writes ([`fs::AtomicFile`], [`fs::write_atomic`]) with one naming and
//!   durability policy, and bounded reads ([`fs::read_limited`]).
//! * [`human_size`]: a byte count as `4 GiB` / `8 MiB` / `64 KiB` / `100 bytes`.
//! * [`dtype`]: Simpler's element types (enum value, name, size), the one table of them.

pub mod dtype;
pub mod fs;

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

#[cfg(test)]
mod tests {
    use super::human_size;

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
