//! Task ids: `(ring_id << 32) | local_id` in every artifact.
//!
//! The artifacts serialize the same 64-bit value differently: a decimal
//! string in `deps.json`, a decimal number in `chip_swimlane_records.json`
//! and `"0x%016x"` (lower-case, 16 digits) in `args_dump.json` and
//! `pmu.csv`. Tools decode `ring = (raw >> 32) & 0xFF` and
//! `local = raw & 0xFFFFFFFF`; [`TaskId`] keeps the raw value intact.

use std::fmt;

/// A runtime task id, stored raw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskId(pub u64);

impl TaskId {
    /// The id of local task `local` in ring `ring`.
    pub const fn new(ring: u8, local: u32) -> Self {
        Self(((ring as u64) << 32) | local as u64)
    }

    /// The raw 64-bit value.
    pub const fn raw(self) -> u64 {
        self.0
    }

    /// The ring (scope depth ring) the tools decode: `(raw >> 32) & 0xFF`.
    pub const fn ring(self) -> u8 {
        ((self.0 >> 32) & 0xFF) as u8
    }

    /// The task's index within its ring: `raw & 0xFFFFFFFF`.
    pub const fn local(self) -> u32 {
        (self.0 & 0xFFFF_FFFF) as u32
    }

    /// The `"0x%016x"` form of `args_dump.json` and `pmu.csv`.
    pub fn to_hex(self) -> String {
        format_task_hex(self.0)
    }
}

/// Shows the swimlane / critical-path display form ([`format_task_display`]).
impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ring() == 0 {
            write!(f, "t{}", self.local())
        } else {
            write!(f, "r{}t{}", self.ring(), self.local())
        }
    }
}

/// `t{local}` for ring 0, otherwise `r{ring}t{local}`.
pub fn format_task_display(raw: u64) -> String {
    TaskId(raw).to_string()
}

/// `"0x%016x"`: `0x` and 16 lower-case hex digits.
pub fn format_task_hex(raw: u64) -> String {
    format!("0x{raw:016x}")
}

/// Parses `0x…` / `0X…` hex or plain decimal; `None` for anything else.
pub fn parse_task_id(text: &str) -> Option<u64> {
    let text = text.trim();
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
            u64::from_str_radix(hex, 16).ok()
        }
        Some(_) => None,
        None if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => text.parse().ok(),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_forms() {
        assert_eq!(format_task_display(0), "t0");
        assert_eq!(format_task_display(5), "t5");
        assert_eq!(format_task_display((1 << 32) | 3), "r1t3");
        // Bits above the ring byte are ignored by the decode, as the tools do.
        assert_eq!(format_task_display((0x101 << 32) | 2), "r1t2");
        assert_eq!(TaskId::new(2, 0xa00).to_hex(), "0x0000000200000a00");
        assert_eq!(TaskId::new(2, 7).ring(), 2);
        assert_eq!(TaskId::new(2, 7).local(), 7);
    }

    #[test]
    fn parse_forms() {
        assert_eq!(parse_task_id("0x0000000200000a00"), Some(0x2_0000_0a00));
        assert_eq!(parse_task_id("0XFF"), Some(255));
        assert_eq!(parse_task_id("4294967296"), Some(1 << 32));
        assert_eq!(parse_task_id("0x"), None);
        assert_eq!(parse_task_id("-1"), None);
        assert_eq!(parse_task_id(""), None);
        assert_eq!(parse_task_id("0x1_0"), None);
    }
}
