//! A build directory's tensor files, in either format it may use: NumPy
//! `.npy` (ours, D8) or torch `.pt` (what PyPTO writes).
//!
//! [`locate_tensor`] finds `<dir>/<name>.pt` or `<dir>/<name>.npy`, and
//! refuses a directory holding both (which one is meant cannot be told);
//! [`read_tensor`] and [`write_tensor`] pick the format from the extension.
//! Either way the tensor in memory is an [`NpyArray`] (C order,
//! little-endian).

use std::path::{Path, PathBuf};

use crate::npy::{read_npy, write_npy, NpyArray, NpyError};
use crate::pt::{read_pt, write_pt, PtError};

/// A tensor file's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TensorFormat {
    /// NumPy `.npy` (`numpy.save`).
    Npy,
    /// torch `.pt` (`torch.save`).
    Pt,
}

impl TensorFormat {
    /// Both formats, in the order their files are looked for.
    pub const ALL: [TensorFormat; 2] = [TensorFormat::Pt, TensorFormat::Npy];

    /// The file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            TensorFormat::Npy => "npy",
            TensorFormat::Pt => "pt",
        }
    }

    /// The format of `path`, from its extension.
    pub fn of_path(path: &Path) -> Option<TensorFormat> {
        match path.extension()?.to_str()? {
            "npy" => Some(TensorFormat::Npy),
            "pt" => Some(TensorFormat::Pt),
            _ => None,
        }
    }

    /// `<dir>/<name>.<ext>`.
    pub fn path_in(self, dir: &Path, name: &str) -> PathBuf {
        dir.join(format!("{name}.{}", self.extension()))
    }
}

/// Finding, reading or writing a tensor file failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TensorFileError {
    /// Both `<name>.pt` and `<name>.npy` exist.
    #[error("both {} and {} exist, so which one holds the tensor cannot be told; delete one of them", pt.display(), npy.display())]
    Ambiguous {
        /// The `.pt` file.
        pt: PathBuf,
        /// The `.npy` file.
        npy: PathBuf,
    },
    /// A path whose extension is neither `.npy` nor `.pt`.
    #[error("{}: a tensor file must end in .npy or .pt", path.display())]
    UnknownExtension {
        /// The file.
        path: PathBuf,
    },
    /// An `.npy` file.
    #[error(transparent)]
    Npy(#[from] NpyError),
    /// A `.pt` file.
    #[error(transparent)]
    Pt(#[from] PtError),
}

impl TensorFileError {
    /// True when the error means the file does not exist.
    pub fn is_not_found(&self) -> bool {
        match self {
            TensorFileError::Npy(e) => e.is_not_found(),
            TensorFileError::Pt(e) => e.is_not_found(),
            _ => false,
        }
    }
}

/// The tensor file `<dir>/<name>.pt` or `<dir>/<name>.npy` (`None`: neither
/// exists; both is [`TensorFileError::Ambiguous`]).
pub fn locate_tensor(
    dir: &Path,
    name: &str,
) -> Result<Option<(PathBuf, TensorFormat)>, TensorFileError> {
    let pt = TensorFormat::Pt.path_in(dir, name);
    let npy = TensorFormat::Npy.path_in(dir, name);
    match (pt.exists(), npy.exists()) {
        (true, true) => Err(TensorFileError::Ambiguous { pt, npy }),
        (true, false) => Ok(Some((pt, TensorFormat::Pt))),
        (false, true) => Ok(Some((npy, TensorFormat::Npy))),
        (false, false) => Ok(None),
    }
}

/// Reads a `.npy` or `.pt` file, by its extension.
pub fn read_tensor(path: &Path) -> Result<NpyArray, TensorFileError> {
    match TensorFormat::of_path(path) {
        Some(TensorFormat::Npy) => Ok(read_npy(path)?),
        Some(TensorFormat::Pt) => Ok(read_pt(path)?),
        None => Err(TensorFileError::UnknownExtension {
            path: path.to_path_buf(),
        }),
    }
}

/// [`read_tensor`], with `check(dtype, shape)` run before the data is used: on an `.npy`
/// file, on its header before any data is read ([`crate::npy::read_npy_checked`]); on a
/// `.pt` file, after reading (its shape lies in the pickle inside the zip). A refusal names
/// the file.
pub fn read_tensor_checked(
    path: &Path,
    check: &mut crate::npy::HeaderCheck<'_>,
) -> Result<NpyArray, TensorFileError> {
    match TensorFormat::of_path(path) {
        Some(TensorFormat::Npy) => Ok(crate::npy::read_npy_checked(path, check)?),
        Some(TensorFormat::Pt) => {
            let a = read_pt(path)?;
            check(a.dtype, &a.shape).map_err(|message| NpyError::Refused {
                path: path.to_path_buf(),
                message,
            })?;
            Ok(a)
        }
        None => Err(TensorFileError::UnknownExtension {
            path: path.to_path_buf(),
        }),
    }
}

/// Writes `array` to a `.npy` or `.pt` file, by its extension, atomically.
pub fn write_tensor(path: &Path, array: &NpyArray) -> Result<(), TensorFileError> {
    match TensorFormat::of_path(path) {
        Some(TensorFormat::Npy) => Ok(write_npy(path, array)?),
        Some(TensorFormat::Pt) => Ok(write_pt(path, array)?),
        None => Err(TensorFileError::UnknownExtension {
            path: path.to_path_buf(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;

    #[test]
    fn locates_either_and_refuses_both() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert!(locate_tensor(d, "a").unwrap().is_none());
        let a = NpyArray::from_f64(DType::Int16, &[2], &[1.0, -1.0]).unwrap();
        write_tensor(&d.join("a.pt"), &a).unwrap();
        let (path, format) = locate_tensor(d, "a").unwrap().unwrap();
        assert_eq!((path.clone(), format), (d.join("a.pt"), TensorFormat::Pt));
        assert_eq!(read_tensor(&path).unwrap(), a);
        write_tensor(&d.join("a.npy"), &a).unwrap();
        let err = locate_tensor(d, "a").unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "both {} and {} exist, so which one holds the tensor cannot be told; delete one of them",
                d.join("a.pt").display(),
                d.join("a.npy").display()
            )
        );
        std::fs::remove_file(d.join("a.pt")).unwrap();
        assert_eq!(locate_tensor(d, "a").unwrap().unwrap().1, TensorFormat::Npy);
        assert!(read_tensor(&d.join("a.txt")).is_err());
        assert!(read_tensor(&d.join("b.pt")).unwrap_err().is_not_found());
    }
}
