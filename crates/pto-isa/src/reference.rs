//! Scalar references for the header's numerics: rounding to f32 / f16 / bf16 in every
//! `RoundMode`, float-to-integer conversion with saturation or wrapping, and bf16 / f16
//! encodings.
//!
//! Rounding to a floating format takes the nearest-even value from the `half` crate (or
//! Rust's `as f32`), finds its two neighbours from the bit patterns and picks one by the mode,
//! so it shares no code path with the header's scale-and-round implementation.

use half::{bf16, f16};

/// `RoundMode` of the C++ API, in its declaration order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Round {
    /// `CAST_NONE`: nearest, ties to even.
    None,
    /// `CAST_RINT`: nearest, ties to even.
    Rint,
    /// `CAST_FLOOR`: toward negative infinity.
    Floor,
    /// `CAST_CEIL`: toward positive infinity.
    Ceil,
    /// `CAST_ROUND`: nearest, ties away from zero.
    Round,
    /// `CAST_TRUNC`: toward zero.
    Trunc,
    /// `CAST_ODD`: round to odd (an inexact result gets an odd last bit).
    Odd,
}

impl Round {
    /// Every mode.
    pub const ALL: [Round; 7] = [
        Round::None,
        Round::Rint,
        Round::Floor,
        Round::Ceil,
        Round::Round,
        Round::Trunc,
        Round::Odd,
    ];

    /// The C++ spelling, `RoundMode::CAST_...`.
    pub fn cpp(self) -> &'static str {
        match self {
            Round::None => "RoundMode::CAST_NONE",
            Round::Rint => "RoundMode::CAST_RINT",
            Round::Floor => "RoundMode::CAST_FLOOR",
            Round::Ceil => "RoundMode::CAST_CEIL",
            Round::Round => "RoundMode::CAST_ROUND",
            Round::Trunc => "RoundMode::CAST_TRUNC",
            Round::Odd => "RoundMode::CAST_ODD",
        }
    }
}

/// A floating-point destination format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// IEEE binary32.
    F32,
    /// IEEE binary16.
    F16,
    /// bfloat16.
    Bf16,
}

impl Format {
    /// Value of an encoding.
    fn value(self, bits: u32) -> f64 {
        match self {
            Format::F32 => f64::from(f32::from_bits(bits)),
            Format::F16 => f16::from_bits(bits as u16).to_f64(),
            Format::Bf16 => bf16::from_bits(bits as u16).to_f64(),
        }
    }
    /// Sign bit of an encoding.
    fn sign(self) -> u32 {
        match self {
            Format::F32 => 0x8000_0000,
            _ => 0x8000,
        }
    }
    /// Encoding of +infinity.
    fn inf(self) -> u32 {
        match self {
            Format::F32 => 0x7f80_0000,
            Format::F16 => 0x7c00,
            Format::Bf16 => 0x7f80,
        }
    }
    /// Nearest-even encoding of `x`.
    fn nearest_even(self, x: f64) -> u32 {
        match self {
            Format::F32 => (x as f32).to_bits(),
            Format::F16 => u32::from(f16::from_f64(x).to_bits()),
            Format::Bf16 => u32::from(bf16::from_f64(x).to_bits()),
        }
    }
    /// The encoding of the next larger value.
    fn next_up(self, bits: u32) -> u32 {
        let sign = self.sign();
        if bits == self.inf() {
            bits
        } else if bits & !sign == 0 {
            1
        } else if bits & sign == 0 {
            bits + 1
        } else {
            bits - 1
        }
    }
    /// The encoding of the next smaller value.
    fn next_down(self, bits: u32) -> u32 {
        self.next_up(bits ^ self.sign()) ^ self.sign()
    }
    /// Largest finite value.
    pub fn max(self) -> f64 {
        self.value(self.next_down(self.inf()))
    }
}

/// `x` rounded to `format` by `mode` (infinities on overflow when rounding away from zero,
/// the largest finite value otherwise), as an exact f64.
pub fn round_to(format: Format, x: f64, mode: Round) -> f64 {
    if x.is_nan() || x.is_infinite() || x == 0.0 {
        return x;
    }
    let r = format.nearest_even(x);
    let rv = format.value(r);
    if rv == x {
        return x;
    }
    let (lo, hi) = if rv < x {
        (r, format.next_up(r))
    } else {
        (format.next_down(r), r)
    };
    let (lov, hiv) = (format.value(lo), format.value(hi));
    match mode {
        Round::None | Round::Rint => rv,
        Round::Floor => lov,
        Round::Ceil => hiv,
        Round::Trunc => {
            if x > 0.0 {
                lov
            } else {
                hiv
            }
        }
        Round::Round => {
            if hiv.is_finite() && lov.is_finite() && x - lov == hiv - x {
                if x > 0.0 {
                    hiv
                } else {
                    lov
                }
            } else {
                rv
            }
        }
        Round::Odd => {
            if lo & 1 == 1 {
                lov
            } else {
                hiv
            }
        }
    }
}

/// As [`round_to`], then clamped to the largest finite magnitude when `saturate`.
pub fn convert_float(format: Format, x: f64, mode: Round, saturate: bool) -> f64 {
    let r = round_to(format, x, mode);
    if saturate && !r.is_nan() {
        r.clamp(-format.max(), format.max())
    } else {
        r
    }
}

/// bfloat16 encoding of a value representable in bfloat16.
pub fn bf16_bits(x: f64) -> u16 {
    bf16::from_f64(x).to_bits()
}

/// f16 encoding of a value representable in f16.
pub fn f16_bits(x: f64) -> u16 {
    f16::from_f64(x).to_bits()
}

/// Value of a bfloat16 encoding.
pub fn bf16_value(bits: u16) -> f32 {
    bf16::from_bits(bits).to_f32()
}

/// Value of an f16 encoding.
pub fn f16_value(bits: u16) -> f32 {
    f16::from_bits(bits).to_f32()
}

/// Nearest-even bfloat16 encoding of an f32 (what every bf16 result of the header is).
pub fn bf16_rne(x: f32) -> u16 {
    bf16::from_f32(x).to_bits()
}

/// Nearest-even f16 encoding of an f32.
pub fn f16_rne(x: f32) -> u16 {
    f16::from_f32(x).to_bits()
}

/// `x` rounded to an integer by `mode`.
pub fn round_integral(x: f64, mode: Round) -> f64 {
    match mode {
        Round::None | Round::Rint => x.round_ties_even(),
        Round::Round => x.round(),
        Round::Floor => x.floor(),
        Round::Ceil => x.ceil(),
        Round::Trunc => x.trunc(),
        Round::Odd => {
            let f = x.floor();
            if f == x {
                x
            } else if f.rem_euclid(2.0) == 1.0 {
                f
            } else {
                f + 1.0
            }
        }
    }
}

/// Float to a `bits`-wide (un)signed integer: rounded by `mode`, then clamped to the range
/// (`saturate`; NaN gives 0) or wrapped modulo 2^bits.
pub fn float_to_int(x: f64, mode: Round, saturate: bool, bits: u32, signed: bool) -> i64 {
    if x.is_nan() {
        return 0;
    }
    let r = round_integral(x, mode);
    let (lo, hi) = if signed {
        (
            -(2f64.powi(bits as i32 - 1)),
            2f64.powi(bits as i32 - 1) - 1.0,
        )
    } else {
        (0.0, 2f64.powi(bits as i32) - 1.0)
    };
    if saturate || bits == 64 {
        return r.clamp(lo, hi) as i64;
    }
    let wide = r.clamp(i64::MIN as f64, i64::MAX as f64) as i64;
    wrap(wide, bits, signed)
}

/// `v` wrapped to a `bits`-wide (un)signed integer.
pub fn wrap(v: i64, bits: u32, signed: bool) -> i64 {
    if bits >= 64 {
        return v;
    }
    let mask = (1u64 << bits) - 1;
    let u = (v as u64) & mask;
    if signed && u >> (bits - 1) == 1 {
        (u | !mask) as i64
    } else {
        u as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_modes_pick_the_right_neighbour() {
        // 1 + 2^-8 is halfway between two bf16 values (1 and 1 + 2^-7).
        let x = 1.0 + 2f64.powi(-8);
        assert_eq!(round_to(Format::Bf16, x, Round::Rint), 1.0);
        assert_eq!(round_to(Format::Bf16, x, Round::Round), 1.0 + 2f64.powi(-7));
        assert_eq!(round_to(Format::Bf16, x, Round::Floor), 1.0);
        assert_eq!(round_to(Format::Bf16, x, Round::Ceil), 1.0 + 2f64.powi(-7));
        assert_eq!(round_to(Format::Bf16, -x, Round::Trunc), -1.0);
        assert_eq!(round_to(Format::Bf16, x, Round::Odd), 1.0 + 2f64.powi(-7));
        assert_eq!(round_to(Format::F16, 70000.0, Round::Rint), f64::INFINITY);
        assert_eq!(round_to(Format::F16, 70000.0, Round::Floor), 65504.0);
        assert_eq!(
            round_to(Format::F32, 16_777_217.0, Round::Ceil),
            16_777_218.0
        );
        assert_eq!(convert_float(Format::F16, 1e6, Round::Rint, true), 65504.0);
    }

    #[test]
    fn integer_conversions_saturate_or_wrap() {
        assert_eq!(float_to_int(2.5, Round::Rint, true, 32, true), 2);
        assert_eq!(float_to_int(2.5, Round::Round, true, 32, true), 3);
        assert_eq!(float_to_int(-2.5, Round::Odd, true, 32, true), -3);
        assert_eq!(float_to_int(300.0, Round::Rint, true, 8, true), 127);
        assert_eq!(float_to_int(300.0, Round::Rint, false, 8, true), 44);
        assert_eq!(float_to_int(f64::NAN, Round::Rint, true, 8, true), 0);
        assert_eq!(wrap(-1, 8, false), 255);
    }
}
