//! Data type names and sizes (`get_dtype_name`): Simpler's table is
//! [`pto_base::dtype`], re-exported here.
//!
//! Files spell dtypes by upper-case name (`FLOAT32`); the records in this
//! crate keep the name as written so that a file round-trips unchanged, and
//! [`DataType::from_name`] (case-insensitive, as the dump viewer matches)
//! turns it into a [`DataType`] when a consumer needs the element size.

pub use pto_base::dtype::{DataType, UNKNOWN_DTYPE_NAME};

/// Maximum number of tensor dimensions.
pub const MAX_TENSOR_DIMS: usize = 5;
