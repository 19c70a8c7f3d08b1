//! Core types: `AIC = 0`, `AIV = 1`, spelt `"aic"` / `"aiv"` in JSON.

/// The kind of AICore a task ran on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CoreType {
    /// The cube core (`"aic"`, 0).
    Aic = 0,
    /// The vector core (`"aiv"`, 1).
    Aiv = 1,
}

impl CoreType {
    /// The JSON name: `"aic"` or `"aiv"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Aic => "aic",
            Self::Aiv => "aiv",
        }
    }

    /// The numeric value `pmu.csv` writes.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The type named `name` (exact, lower-case).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "aic" => Some(Self::Aic),
            "aiv" => Some(Self::Aiv),
            _ => None,
        }
    }

    /// The type with numeric value `code`.
    pub fn from_code(code: u64) -> Option<Self> {
        match code {
            0 => Some(Self::Aic),
            1 => Some(Self::Aiv),
            _ => None,
        }
    }
}
