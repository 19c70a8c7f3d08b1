//! `pto dump-viewer`: list the tensors and scalars of an `args_dump/`
//! directory, and export them as `.npy`, torch `.pt` or text.
//!
//! [`load`] reads `args_dump.json` and its `args.bin` (the directory given,
//! or its `args_dump/` subdirectory, so a `dfx_outputs/` works too) and the
//! newest `name_map*.json` of the parent directory for kernel names.
//! [`select`] applies the filters (task id, stage, role, arg index, and the
//! `idx` column of the listing); a filter that matches nothing is a
//! [`ToolError::NoMatch`] that lists the valid values.
//!
//! [`render_list`] is the listing: `idx task_id kernel stage role arg dtype
//! shape bytes` plus a note for truncated or overwritten payloads.
//!
//! [`export`] writes one file per record with Simpler's names,
//! `<dump_dir>/<txt|npy>/task_<task_id>_<before|after>_<in|out|inout><arg_index>.<txt|npy>`
//! (and, beyond Simpler, `<dump_dir>/pt/<same stem>.pt`):
//!
//! - `.npy` (default): the logical tensor in its dtype (scalars as 0-d
//!   arrays of their `value`); FP8 / FP4 have no NumPy dtype and are skipped
//!   with a warning (use text), as are overwritten payloads; a truncated
//!   payload is exported as the 1-d prefix that was kept, with a warning;
//! - `.pt`: the same tensors as `.npy`, written as `torch.save` writes them
//!   (for `torch.load`, every dtype including bf16 and the unsigned ones);
//! - `.txt`: a `# key: value` header, `# Overview:` (one right-aligned row
//!   per last-dimension chunk) and `# Detail:` (`[i, j] v` per element).
//!   Floats print as `%g` with 6 (f32, f64), 4 (f16) or 3 (bf16)
//!   significant digits; FP8 / FP4 and unknown dtypes as hex bytes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use pto_build_output::pt::{encode_pt, ByteOrder};
use pto_build_output::{write_npy, DType, NpyArray};

use crate::error::ToolError;
use crate::names::{self, KernelNames, SiblingPolicy};
use pto_dfx::args_bin::ArgsBin;
use pto_dfx::args_dump::{ArgKind, ArgRecord, ArgRole, ArgsDumpManifest, DumpStage, ScalarValue};
use pto_dfx::atomic::AtomicFile;
use pto_dfx::dtype::DataType;
use pto_dfx::task_id::parse_task_id;

/// A loaded dump.
#[derive(Clone, Debug)]
pub struct Dump {
    /// The directory holding `args_dump.json`.
    pub dir: PathBuf,
    /// The manifest.
    pub manifest: ArgsDumpManifest,
    /// The payloads (`None` when the manifest has `"bin_file": null`).
    pub bin: Option<ArgsBin>,
    /// Kernel names.
    pub names: KernelNames,
    /// Recoverable damage, each naming its file.
    pub warnings: Vec<String>,
}

/// Reads a dump directory (see the module docs).
pub fn load(dir: &Path) -> Result<Dump, ToolError> {
    let dir = if dir.join(pto_dfx::args_dump::MANIFEST_FILE_NAME).is_file() {
        dir.to_path_buf()
    } else if dir.is_file() {
        crate::parent_dir(dir).to_path_buf()
    } else if dir
        .join(pto_dfx::args_dump::DIR_NAME)
        .join(pto_dfx::args_dump::MANIFEST_FILE_NAME)
        .is_file()
    {
        dir.join(pto_dfx::args_dump::DIR_NAME)
    } else {
        return Err(ToolError::Missing {
            path: dir.join(pto_dfx::args_dump::MANIFEST_FILE_NAME),
            hint: String::from("pass the `args_dump` directory of a run made with `--dump-args`"),
        });
    };
    let manifest_path = dir.join(pto_dfx::args_dump::MANIFEST_FILE_NAME);
    // The manifest and `args.bin` are read as one set: a run publishing into this
    // `dfx_outputs/` meanwhile waits (pto_dfx::set_lock).
    let set_lock = pto_dfx::set_lock::read_lock(crate::parent_dir(&dir));
    let loaded = pto_dfx::args_dump::read(&manifest_path)?;
    let mut warnings: Vec<String> = loaded
        .problems
        .iter()
        .map(|p| format!("{}: {p}", manifest_path.display()))
        .collect();
    let manifest = loaded.value;
    let bin = match &manifest.bin_file {
        Some(name) => {
            let path = bin_path_inside(&dir, name, &manifest_path)?;
            check_pairing(
                &path,
                &manifest_path,
                &manifest,
                &loaded.problems,
                &mut warnings,
            )?;
            let bin = ArgsBin::read_for(&path, &manifest.args)?;
            warnings.extend(
                bin.check(&manifest.args)
                    .iter()
                    .map(|p| format!("{}: {p}", manifest_path.display())),
            );
            Some(bin)
        }
        None => None,
    };
    drop(set_lock);
    let parent = crate::parent_dir(&dir);
    let (names, name_problems) = names::resolve(parent, None, None, SiblingPolicy::Newest)?;
    if let Some(src) = &names.source {
        warnings.extend(
            name_problems
                .iter()
                .map(|p| format!("{}: {p}", src.display())),
        );
    }
    Ok(Dump {
        dir,
        manifest,
        bin,
        names,
        warnings,
    })
}

/// The manifest's `bin_file` inside the dump directory: a plain file name (one component,
/// no `/`, `..` or root) naming a regular file, not a link; anything else is refused
/// naming the key (a manifest could otherwise make the viewer open `../../../../etc/passwd`).
fn bin_path_inside(dir: &Path, name: &str, manifest_path: &Path) -> Result<PathBuf, ToolError> {
    let mut parts = Path::new(name).components();
    let plain = matches!(
        (parts.next(), parts.next()),
        (Some(std::path::Component::Normal(_)), None)
    );
    if !plain {
        return Err(ToolError::invalid(
            manifest_path,
            "bin_file",
            format!(
                "is \"{}\"; expected the name of a file inside the dump directory, such as \"args.bin\"",
                pto_dfx::printable::printable(name)
            ),
        ));
    }
    let path = dir.join(name);
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(ToolError::invalid(
            manifest_path,
            "bin_file",
            format!(
                "names {}, a symbolic link; the dump viewer reads only the payload file the run wrote inside the dump directory",
                path.display()
            ),
        ));
    }
    Ok(path)
}

/// Refuses an `args.bin` that is not the one its manifest was written with (another run's
/// file beside this manifest would export wrong tensors silently). Where the manifest
/// itself reports lost records, a gap may be a payload whose write failed: a warning then.
fn check_pairing(
    bin_path: &Path,
    manifest_path: &Path,
    manifest: &ArgsDumpManifest,
    manifest_problems: &[pto_dfx::Problem],
    warnings: &mut Vec<String>,
) -> Result<(), ToolError> {
    let len = match std::fs::metadata(bin_path) {
        Ok(m) => m.len(),
        // A missing or unreadable file is reported by the read that follows.
        Err(_) => return Ok(()),
    };
    let Some(problem) = ArgsBin::pairing_problem(len, &manifest.args) else {
        return Ok(());
    };
    if manifest.dropped_records > 0 {
        warnings.push(format!(
            "{}: {problem} (the manifest reports {} dropped records)",
            bin_path.display(),
            manifest.dropped_records
        ));
        return Ok(());
    }
    if let Some(first) = manifest_problems.first() {
        // The manifest is damaged: records it could not read leave gaps in the tiling, which
        // says nothing about the two files coming from different runs.
        return Err(ToolError::Invalid {
            path: manifest_path.to_path_buf(),
            key: first.key.clone(),
            reason: format!(
                "{} (and {} more problem(s)); the manifest is damaged, so its records no longer tile {} ({problem}) — fix that record or rerun with --dump-args to write a new pair",
                first.message,
                manifest_problems.len() - 1,
                bin_path.display()
            ),
        });
    }
    Err(ToolError::Invalid {
        path: bin_path.to_path_buf(),
        key: String::from("bin_offset / bin_size"),
        reason: format!(
            "does not belong to {}: {problem}; the two files come from different runs (or one was edited or truncated) — rerun with --dump-args to write a matching pair",
            manifest_path.display()
        ),
    })
}

/// Which records to show or export; `None` matches everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct DumpFilter<'a> {
    /// A task id, as in the manifest (`0x0000000100000001`) or any hex / decimal form.
    pub task: Option<&'a str>,
    /// `before_dispatch` or `after_completion`.
    pub stage: Option<DumpStage>,
    /// `input`, `output` or `inout`.
    pub role: Option<ArgRole>,
    /// The arg index.
    pub arg_index: Option<u32>,
    /// The `idx` column of the listing (the record's position in the manifest).
    pub index: Option<usize>,
}

fn valid_list<T: Ord + ToString>(mut values: Vec<T>) -> String {
    values.sort();
    values.dedup();
    let total = values.len();
    let mut shown: Vec<String> = values.iter().take(40).map(T::to_string).collect();
    if total > 40 {
        shown.push(format!("... ({total} in all)"));
    }
    shown.join(", ")
}

/// The manifest positions of the records `filter` selects, in manifest order.
pub fn select(dump: &Dump, filter: &DumpFilter<'_>) -> Result<Vec<usize>, ToolError> {
    let args = &dump.manifest.args;
    let mut chosen: Vec<usize> = (0..args.len()).collect();
    if let Some(task) = filter.task {
        let want = parse_task_id(task).ok_or_else(|| ToolError::NoMatch {
            filter: format!("--task {task} (not a task id)"),
            valid: valid_list(args.iter().map(|a| a.task_id.to_hex()).collect()),
        })?;
        let before = chosen.clone();
        chosen.retain(|&i| args[i].task_id.raw() == want);
        if chosen.is_empty() {
            return Err(ToolError::NoMatch {
                filter: format!("--task {task}"),
                valid: valid_list(before.iter().map(|&i| args[i].task_id.to_hex()).collect()),
            });
        }
    }
    if let Some(stage) = filter.stage {
        let before = chosen.clone();
        chosen.retain(|&i| args[i].stage == stage);
        if chosen.is_empty() {
            return Err(ToolError::NoMatch {
                filter: format!("--stage {}", stage.as_str()),
                valid: valid_list(before.iter().map(|&i| args[i].stage.as_str()).collect()),
            });
        }
    }
    if let Some(role) = filter.role {
        let before = chosen.clone();
        chosen.retain(|&i| args[i].role == role);
        if chosen.is_empty() {
            return Err(ToolError::NoMatch {
                filter: format!("--role {}", role.as_str()),
                valid: valid_list(before.iter().map(|&i| args[i].role.as_str()).collect()),
            });
        }
    }
    if let Some(arg) = filter.arg_index {
        let before = chosen.clone();
        chosen.retain(|&i| args[i].arg_index == arg);
        if chosen.is_empty() {
            return Err(ToolError::NoMatch {
                filter: format!("--arg {arg}"),
                valid: valid_list(before.iter().map(|&i| args[i].arg_index).collect()),
            });
        }
    }
    if let Some(index) = filter.index {
        if !chosen.contains(&index) {
            return Err(ToolError::NoMatch {
                filter: format!("--index {index}"),
                valid: if chosen.is_empty() {
                    String::from("none")
                } else {
                    format!(
                        "{}..={} (the idx column)",
                        chosen[0],
                        chosen[chosen.len() - 1]
                    )
                },
            });
        }
        chosen = vec![index];
    }
    Ok(chosen)
}

fn kernel_of(dump: &Dump, a: &ArgRecord) -> String {
    let parts: Vec<String> = a
        .func_id
        .iter()
        .map(|&f| {
            if f < 0 {
                String::from("?")
            } else {
                dump.names.label(i64::from(f))
            }
        })
        .collect();
    if parts.is_empty() {
        String::from("?")
    } else {
        parts.join("+")
    }
}

fn shape_text(shape: &[u64]) -> String {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    format!("[{}]", dims.join(", "))
}

/// The listing of `chosen` records.
pub fn render_list(dump: &Dump, chosen: &[usize]) -> String {
    let rows: Vec<[String; 9]> = chosen
        .iter()
        .map(|&i| {
            let a = &dump.manifest.args[i];
            let mut bytes = a.bin_size.to_string();
            if a.overwritten {
                bytes.push_str(" (overwritten)");
            } else if a.truncated {
                bytes.push_str(" (truncated)");
            } else if a.kind == ArgKind::Scalar {
                bytes = match &a.value {
                    Some(v) => format!("value={}", scalar_text(v)),
                    None => String::from("scalar"),
                };
            }
            [
                i.to_string(),
                a.task_id.to_hex(),
                kernel_of(dump, a),
                a.stage.as_str().to_string(),
                a.role.as_str().to_string(),
                a.arg_index.to_string(),
                a.dtype.clone(),
                shape_text(&a.shape),
                bytes,
            ]
        })
        .collect();
    let head = [
        "idx", "task_id", "kernel", "stage", "role", "arg", "dtype", "shape", "bytes",
    ];
    let mut widths: Vec<usize> = head.iter().map(|h| h.len()).collect();
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r.iter()) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cells: &[&str]| {
        let mut text = String::new();
        for (k, c) in cells.iter().enumerate() {
            if k > 0 {
                text.push_str("  ");
            }
            if k == 0 || k == 5 {
                let _ = write!(text, "{c:>w$}", w = widths[k]);
            } else {
                let _ = write!(text, "{c:<w$}", w = widths[k]);
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(&mut out, &head);
    for r in &rows {
        let cells: Vec<&str> = r.iter().map(String::as_str).collect();
        line(&mut out, &cells);
    }
    let _ = writeln!(
        out,
        "{} of {} records \u{b7} {} (level {}, bin_file {})",
        chosen.len(),
        dump.manifest.args.len(),
        dump.dir.display(),
        dump.manifest.dump_args_level,
        dump.manifest.bin_file.as_deref().unwrap_or("null")
    );
    out
}

/// Export format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// NumPy `.npy` under `npy/`.
    Npy,
    /// Text under `txt/`.
    Txt,
    /// torch `.pt` under `pt/` (what `torch.load` reads).
    Pt,
}

impl ExportFormat {
    /// The subdirectory of the dump directory the files go to (also their extension).
    pub fn subdir(self) -> &'static str {
        match self {
            ExportFormat::Npy => "npy",
            ExportFormat::Txt => "txt",
            ExportFormat::Pt => "pt",
        }
    }
}

/// What an export wrote.
#[derive(Clone, Debug, Default)]
pub struct ExportReport {
    /// Files written, in record order.
    pub files: Vec<PathBuf>,
    /// Records skipped or exported partially, and why.
    pub warnings: Vec<String>,
}

/// Simpler's export stem: `task_<task_id>_<before|after>_<in|out|inout><arg_index>`.
pub fn export_stem(a: &ArgRecord) -> String {
    let stage = match a.stage {
        DumpStage::BeforeDispatch => "before",
        DumpStage::AfterCompletion => "after",
    };
    let role = match a.role {
        ArgRole::Input => "in",
        ArgRole::Output => "out",
        ArgRole::Inout => "inout",
    };
    format!("task_{}_{stage}_{role}{}", a.task_id.to_hex(), a.arg_index)
}

/// Writes one file per chosen record (see the module docs).
pub fn export(
    dump: &Dump,
    chosen: &[usize],
    format: ExportFormat,
) -> Result<ExportReport, ToolError> {
    let mut report = ExportReport::default();
    let out_dir = dump.dir.join(format.subdir());
    if !chosen.is_empty() {
        std::fs::create_dir_all(&out_dir)
            .map_err(|e| pto_dfx::error::WriteError::io(&out_dir, "creating the directory", e))?;
    }
    for &i in chosen {
        let a = &dump.manifest.args[i];
        let stem = export_stem(a);
        let payload: &[u8] = match (&dump.bin, a.bin_size) {
            (_, 0) => &[],
            (Some(bin), _) => match bin.payload(a) {
                Ok(p) => p,
                Err(e) => {
                    report.warnings.push(format!("{stem}: {e}; skipped it"));
                    continue;
                }
            },
            (None, _) => {
                report
                    .warnings
                    .push(format!("{stem}: the manifest has no bin_file; skipped it"));
                continue;
            }
        };
        match format {
            ExportFormat::Txt => {
                let path = out_dir.join(format!("{stem}.txt"));
                let text = render_txt(dump, a, payload);
                let mut f = AtomicFile::create(&path)?;
                f.write_all(text.as_bytes())?;
                f.commit()?;
                report.files.push(path);
            }
            ExportFormat::Npy => {
                let path = out_dir.join(format!("{stem}.npy"));
                match npy_array(a, payload) {
                    Ok((array, note)) => {
                        write_npy(&path, &array).map_err(|source| ToolError::Export {
                            path: path.clone(),
                            source,
                        })?;
                        if let Some(n) = note {
                            report.warnings.push(format!("{stem}: {n}"));
                        }
                        report.files.push(path);
                    }
                    Err(why) => report.warnings.push(format!("{stem}: {why}; skipped it")),
                }
            }
            ExportFormat::Pt => {
                let path = out_dir.join(format!("{stem}.pt"));
                let encoded = npy_array(a, payload).and_then(|(array, note)| {
                    encode_pt(&array, ByteOrder::Little)
                        .map(|bytes| (bytes, note))
                        .map_err(|e| e.to_string())
                });
                match encoded {
                    Ok((bytes, note)) => {
                        let mut f = AtomicFile::create(&path)?;
                        f.write_all(&bytes)?;
                        f.commit()?;
                        if let Some(n) = note {
                            report.warnings.push(format!("{stem}: {n}"));
                        }
                        report.files.push(path);
                    }
                    Err(why) => report.warnings.push(format!("{stem}: {why}; skipped it")),
                }
            }
        }
    }
    Ok(report)
}

fn npy_dtype(a: &ArgRecord) -> Result<DType, String> {
    let dt = a
        .data_type()
        .ok_or_else(|| format!("dtype {} is unknown", a.dtype))?;
    DType::from_simpler_name(dt.name()).map_err(|_| {
        format!(
            "dtype {} has no NumPy type (export it with --format txt)",
            dt.name()
        )
    })
}

/// The `.npy` array of a record, plus a note when only part could be kept.
fn npy_array(a: &ArgRecord, payload: &[u8]) -> Result<(NpyArray, Option<String>), String> {
    let dtype = npy_dtype(a)?;
    let size = dtype.elem_size();
    if a.kind == ArgKind::Scalar {
        let Some(v) = &a.value else {
            return Err(String::from("a scalar without a value"));
        };
        let mut data = Vec::with_capacity(size);
        match *v {
            ScalarValue::F32(f) => dtype.encode_f64(f64::from(f), &mut data),
            ScalarValue::I64(i) => data.extend_from_slice(&i.to_le_bytes()[..size.min(8)]),
            ScalarValue::U64(u) => data.extend_from_slice(&u.to_le_bytes()[..size.min(8)]),
            ScalarValue::Bool(b) => dtype.encode_f64(if b { 1.0 } else { 0.0 }, &mut data),
        }
        data.resize(size, 0);
        return NpyArray::new(dtype, Vec::new(), data)
            .map(|x| (x, None))
            .map_err(|e| e.to_string());
    }
    if a.overwritten {
        return Err(String::from("the payload was overwritten (host too slow)"));
    }
    let shape: Vec<usize> = a
        .shape
        .iter()
        .map(|&d| usize::try_from(d).unwrap_or(usize::MAX))
        .collect();
    let expected = a.numel.saturating_mul(size as u64);
    if payload.len() as u64 == expected && !a.truncated {
        return NpyArray::new(dtype, shape, payload.to_vec())
            .map(|x| (x, None))
            .map_err(|e| e.to_string());
    }
    if a.truncated || (payload.len() as u64) < expected {
        let n = payload.len() / size;
        let data = payload[..n * size].to_vec();
        return NpyArray::new(dtype, vec![n], data)
            .map(|x| {
                (
                    x,
                    Some(format!(
                        "truncated: exported the first {n} of {} elements as a 1-d array",
                        a.numel
                    )),
                )
            })
            .map_err(|e| e.to_string());
    }
    Err(format!(
        "bin_size {} does not match numel {} x {size} bytes",
        payload.len(),
        a.numel
    ))
}

fn float_text(v: f64, digits: usize) -> String {
    if v.is_nan() {
        String::from("nan")
    } else if v.is_infinite() {
        String::from(if v > 0.0 { "inf" } else { "-inf" })
    } else {
        pto_dfx::args_dump::format_general(v, digits)
    }
}

fn scalar_text(v: &ScalarValue) -> String {
    match *v {
        ScalarValue::F32(f) => float_text(f64::from(f), 6),
        ScalarValue::I64(i) => i.to_string(),
        ScalarValue::U64(u) => u.to_string(),
        ScalarValue::Bool(b) => String::from(if b { "True" } else { "False" }),
    }
}

/// One element's text, per the dtype's rule.
fn element_text(dt: Option<DataType>, bytes: &[u8]) -> String {
    fn arr<const N: usize>(b: &[u8]) -> [u8; N] {
        let mut out = [0u8; N];
        for (o, x) in out.iter_mut().zip(b) {
            *o = *x;
        }
        out
    }
    let via = |d: DType, digits: usize| {
        d.decode_f64(bytes)
            .map_or_else(|| String::from("?"), |v| float_text(v, digits))
    };
    match dt {
        Some(DataType::Float32) => float_text(f64::from(f32::from_le_bytes(arr(bytes))), 6),
        Some(DataType::Float16) => via(DType::Float16, 4),
        Some(DataType::BFloat16) => via(DType::BFloat16, 3),
        Some(DataType::Int8) => i8::from_le_bytes(arr(bytes)).to_string(),
        Some(DataType::Int16) => i16::from_le_bytes(arr(bytes)).to_string(),
        Some(DataType::Int32) => i32::from_le_bytes(arr(bytes)).to_string(),
        Some(DataType::Int64) => i64::from_le_bytes(arr(bytes)).to_string(),
        Some(DataType::UInt8) => u8::from_le_bytes(arr(bytes)).to_string(),
        Some(DataType::UInt16) => u16::from_le_bytes(arr(bytes)).to_string(),
        Some(DataType::UInt32) => u32::from_le_bytes(arr(bytes)).to_string(),
        Some(DataType::UInt64) => u64::from_le_bytes(arr(bytes)).to_string(),
        Some(DataType::Bool) => String::from(if bytes.first().is_some_and(|&b| b != 0) {
            "True"
        } else {
            "False"
        }),
        _ => {
            let mut s = String::from("0x");
            for b in bytes {
                let _ = write!(s, "{b:02x}");
            }
            s
        }
    }
}

/// The `.txt` export of one record.
fn render_txt(dump: &Dump, a: &ArgRecord, payload: &[u8]) -> String {
    let py_bool = |b: bool| if b { "True" } else { "False" };
    let mut out = String::new();
    let _ = writeln!(out, "# task_id: {}", a.task_id.to_hex());
    let _ = writeln!(out, "# role: {}", a.role.as_str());
    let _ = writeln!(out, "# stage: {}", a.stage.as_str());
    let _ = writeln!(out, "# arg_index: {}", a.arg_index);
    let _ = writeln!(out, "# dtype: {}", a.dtype);
    let _ = writeln!(out, "# kind: {}", a.kind.as_str());
    let _ = writeln!(out, "# is_contiguous: {}", py_bool(a.is_contiguous));
    let _ = writeln!(out, "# shape: {}", shape_text(&a.shape));
    let _ = writeln!(out, "# strides: {}", shape_text(&a.strides));
    let _ = writeln!(out, "# start_offset: {}", a.start_offset);
    let ids: Vec<String> = a.func_id.iter().map(i32::to_string).collect();
    let _ = writeln!(out, "# func_id: [{}]", ids.join(", "));
    let _ = writeln!(
        out,
        "# kernel: {}",
        pto_dfx::printable::printable(&kernel_of(dump, a)).replace('\n', " ")
    );
    if a.kind == ArgKind::Scalar {
        if let Some(v) = &a.value {
            let _ = writeln!(out, "# value: {}", scalar_text(v));
        }
        return out;
    }
    if a.overwritten {
        out.push_str("# DATA OVERWRITTEN (host too slow)\n");
        return out;
    }
    let dt = a.data_type();
    let size = dt.map_or(1, DataType::elem_size).max(1);
    if a.truncated {
        let _ = writeln!(
            out,
            "# DATA TRUNCATED (only the first {} of {} bytes were stored)",
            payload.len(),
            a.numel.saturating_mul(size as u64)
        );
    }
    let n = payload.len() / size;
    let values: Vec<String> = payload
        .chunks_exact(size)
        .map(|b| element_text(dt, b))
        .collect();
    let last = a.shape.last().copied().unwrap_or(1).max(1) as usize;
    let width = values.iter().map(String::len).max().unwrap_or(1);
    out.push_str("\n# Overview:\n");
    for row in values.chunks(last) {
        let cells: Vec<String> = row.iter().map(|v| format!("{v:>width$}")).collect();
        out.push_str(&cells.join(" "));
        out.push('\n');
    }
    out.push_str("\n# Detail:\n");
    let dims: Vec<usize> = if a.shape.is_empty() {
        vec![n.max(1)]
    } else {
        a.shape.iter().map(|&d| d as usize).collect()
    };
    let mut index = vec![0usize; dims.len()];
    for v in values.iter() {
        let idx: Vec<String> = index.iter().map(usize::to_string).collect();
        let _ = writeln!(out, "[{}] {v}", idx.join(", "));
        for d in (0..dims.len()).rev() {
            index[d] += 1;
            if index[d] < dims[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = r#"{
  "run_dir": "args_dump",
  "bin_format": {
    "type": "logical_contiguous",
    "byte_order": "little_endian"
  },
  "dump_args_level": 2,
  "total_args": 3,
  "before_dispatch": 3,
  "after_completion": 0,
  "input_args": 3,
  "output_args": 0,
  "inout_args": 0,
  "truncated_args": 0,
  "dropped_records": 0,
  "dropped_overwrite": 0,
  "bin_file": "args.bin",
  "args": [
    {"task_id": "0x0000000000000000", "func_id": [0], "arg_index": 0, "role": "input", "stage": "before_dispatch", "kind": "tensor", "dtype": "FLOAT32", "is_contiguous": true, "shape": [2, 2], "strides": [2, 1], "start_offset": 0, "numel": 4, "bin_offset": 0, "bin_size": 16, "truncated": false, "overwritten": false},
    {"task_id": "0x0000000000000000", "func_id": [0], "arg_index": 3, "role": "input", "stage": "before_dispatch", "kind": "scalar", "dtype": "FLOAT32", "value": 1.5, "is_contiguous": true, "shape": [], "strides": [], "start_offset": 0, "numel": 1, "bin_offset": 0, "bin_size": 0, "truncated": false, "overwritten": false},
    {"task_id": "0x0000000100000002", "func_id": [1], "arg_index": 1, "role": "inout", "stage": "after_completion", "kind": "tensor", "dtype": "BFLOAT16", "is_contiguous": true, "shape": [3], "strides": [1], "start_offset": 0, "numel": 3, "bin_offset": 16, "bin_size": 6, "truncated": false, "overwritten": false}
  ]
}
"#;

    fn setup() -> (tempfile::TempDir, PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("args_dump");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("args_dump.json"), MANIFEST).unwrap();
        let mut bin: Vec<u8> = [1.0f32, 2.0, 3.0, 4.5]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        // bf16: 1.0, -2.0, 0.5
        for bits in [0x3f80u16, 0xc000, 0x3f00] {
            bin.extend_from_slice(&bits.to_le_bytes());
        }
        std::fs::write(dir.join("args.bin"), bin).unwrap();
        std::fs::write(
            root.path().join("name_map_x.json"),
            r#"{"0": "ADD", "1": "<b>"}"#,
        )
        .unwrap();
        (root, dir)
    }

    /// The pair is read under the set's lock held shared: a run publishing a new pair
    /// (the lock held exclusively) finishes before the viewer reads.
    #[test]
    fn the_pair_is_read_while_no_run_publishes() {
        let (root, dir) = setup();
        let publisher = pto_dfx::set_lock::lock(root.path(), true).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            let _ = tx.send(load(&dir).map(|d| d.manifest.args.len()));
        });
        assert!(
            rx.recv_timeout(std::time::Duration::from_millis(200))
                .is_err(),
            "the viewer read the pair while a run was publishing"
        );
        drop(publisher);
        let n = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("the viewer reads once the run has published")
            .unwrap();
        assert!(n > 0);
        t.join().unwrap();
    }

    #[test]
    fn lists_with_kernel_names_and_filters() {
        let (root, dir) = setup();
        // The parent directory works too.
        let dump = load(root.path()).unwrap();
        assert_eq!(dump.dir, dir);
        let all = select(&dump, &DumpFilter::default()).unwrap();
        let text = render_list(&dump, &all);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "idx  task_id             kernel  stage             role   arg  dtype     shape   bytes");
        assert_eq!(
            lines[1],
            "  0  0x0000000000000000  ADD     before_dispatch   input    0  FLOAT32   [2, 2]  16"
        );
        assert_eq!(lines[2], "  1  0x0000000000000000  ADD     before_dispatch   input    3  FLOAT32   []      value=1.5");
        assert_eq!(
            lines[3],
            "  2  0x0000000100000002  <b>     after_completion  inout    1  BFLOAT16  [3]     6"
        );
        let f = DumpFilter {
            task: Some("0x100000002"),
            ..DumpFilter::default()
        };
        assert_eq!(select(&dump, &f).unwrap(), [2]);
        let f = DumpFilter {
            stage: Some(DumpStage::BeforeDispatch),
            arg_index: Some(3),
            ..DumpFilter::default()
        };
        assert_eq!(select(&dump, &f).unwrap(), [1]);
        let f = DumpFilter {
            task: Some("0x7"),
            ..DumpFilter::default()
        };
        let msg = select(&dump, &f).unwrap_err().to_string();
        assert_eq!(
            msg,
            "no record matches --task 0x7; valid values: 0x0000000000000000, 0x0000000100000002"
        );
        let f = DumpFilter {
            role: Some(ArgRole::Output),
            ..DumpFilter::default()
        };
        assert!(matches!(select(&dump, &f), Err(ToolError::NoMatch { .. })));
    }

    #[test]
    fn exports_txt_with_simpler_names() {
        let (_root, dir) = setup();
        let dump = load(&dir).unwrap();
        let report = export(&dump, &[0, 1, 2], ExportFormat::Txt).unwrap();
        let names: Vec<String> = report
            .files
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "task_0x0000000000000000_before_in0.txt",
                "task_0x0000000000000000_before_in3.txt",
                "task_0x0000000100000002_after_inout1.txt"
            ]
        );
        assert!(report.files[0].starts_with(dir.join("txt")));
        let t0 = std::fs::read_to_string(&report.files[0]).unwrap();
        assert!(t0.starts_with("# task_id: 0x0000000000000000\n# role: input\n# stage: before_dispatch\n# arg_index: 0\n# dtype: FLOAT32\n# kind: tensor\n# is_contiguous: True\n# shape: [2, 2]\n# strides: [2, 1]\n# start_offset: 0\n"), "{t0}");
        assert!(t0.contains("\n# Overview:\n  1   2\n  3 4.5\n\n# Detail:\n[0, 0] 1\n[0, 1] 2\n[1, 0] 3\n[1, 1] 4.5\n"), "{t0}");
        let t1 = std::fs::read_to_string(&report.files[1]).unwrap();
        assert!(t1.ends_with("# value: 1.5\n"), "{t1}");
        let t2 = std::fs::read_to_string(&report.files[2]).unwrap();
        assert!(t2.contains("[0] 1\n[1] -2\n[2] 0.5\n"), "{t2}");
    }

    #[test]
    fn exports_npy_including_bf16_and_scalars() {
        let (_root, dir) = setup();
        let dump = load(&dir).unwrap();
        let report = export(&dump, &[0, 1, 2], ExportFormat::Npy).unwrap();
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
        let a = pto_build_output::npy::read_npy(&report.files[0]).unwrap();
        assert_eq!(a.shape, [2, 2]);
        assert_eq!(a.to_f64_vec(), [1.0, 2.0, 3.0, 4.5]);
        let s = pto_build_output::npy::read_npy(&report.files[1]).unwrap();
        assert!(s.shape.is_empty());
        assert_eq!(s.to_f64_vec(), [1.5]);
        let b = pto_build_output::npy::read_npy(&report.files[2]).unwrap();
        assert_eq!(b.dtype, DType::BFloat16);
        assert_eq!(b.to_f64_vec(), [1.0, -2.0, 0.5]);
        assert!(report.files[2].ends_with("npy/task_0x0000000100000002_after_inout1.npy"));
    }

    /// The `.pt` export holds the `.npy` export's tensors, file for file.
    #[test]
    fn exports_pt_like_npy() {
        let (_root, dir) = setup();
        let dump = load(&dir).unwrap();
        let npy = export(&dump, &[0, 1, 2], ExportFormat::Npy).unwrap();
        let pt = export(&dump, &[0, 1, 2], ExportFormat::Pt).unwrap();
        assert!(pt.warnings.is_empty(), "{:?}", pt.warnings);
        assert_eq!(pt.files.len(), 3);
        for (n, p) in npy.files.iter().zip(&pt.files) {
            assert_eq!(p.extension().unwrap(), "pt");
            assert_eq!(p.parent().unwrap(), dir.join("pt"));
            assert_eq!(p.file_stem(), n.file_stem());
            assert_eq!(
                pto_build_output::read_pt(p).unwrap(),
                pto_build_output::read_npy(n).unwrap()
            );
        }
    }

    #[test]
    fn formats_like_the_python_viewer() {
        assert_eq!(
            element_text(Some(DataType::Float32), &1.234_567_8f32.to_le_bytes()),
            "1.23457"
        );
        assert_eq!(
            element_text(Some(DataType::Float32), &1e-5f32.to_le_bytes()),
            "1e-05"
        );
        assert_eq!(
            element_text(Some(DataType::Float32), &f32::NAN.to_le_bytes()),
            "nan"
        );
        assert_eq!(
            element_text(Some(DataType::Int32), &(-7i32).to_le_bytes()),
            "-7"
        );
        assert_eq!(element_text(Some(DataType::Fp8E4M3Fn), &[0x3c]), "0x3c");
        assert_eq!(element_text(Some(DataType::Bool), &[1]), "True");
    }

    #[test]
    fn missing_dump_is_a_clear_error() {
        let root = tempfile::tempdir().unwrap();
        let msg = load(root.path()).unwrap_err().to_string();
        assert!(msg.contains("args_dump.json not found"), "{msg}");
    }

    /// An `args.bin` from another run beside this manifest is refused, not exported: a
    /// longer or shorter file, or one whose payloads would overlap, does not fit.
    #[test]
    fn a_bin_file_outside_the_dump_directory_is_refused() {
        let (_root, dir) = setup();
        let outside = dir.parent().unwrap().join("secret");
        std::fs::write(&outside, std::fs::read(dir.join("args.bin")).unwrap()).unwrap();
        for name in [
            "../secret",
            "/etc/passwd",
            "../../../../etc/passwd",
            "a/../args.bin",
            "",
        ] {
            let m = MANIFEST.replace(
                "\"bin_file\": \"args.bin\"",
                &format!("\"bin_file\": \"{name}\""),
            );
            std::fs::write(dir.join("args_dump.json"), m).unwrap();
            let msg = load(&dir).unwrap_err().to_string();
            assert!(
                msg.contains("bin_file")
                    && msg.contains(&format!(
                        "is \"{name}\"; expected the name of a file inside the dump directory"
                    )),
                "{name}: {msg}"
            );
        }
        // A link inside the directory that leads out is refused too.
        std::fs::write(
            dir.join("args_dump.json"),
            MANIFEST.replace("\"bin_file\": \"args.bin\"", "\"bin_file\": \"link.bin\""),
        )
        .unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("link.bin")).unwrap();
        let msg = load(&dir).unwrap_err().to_string();
        assert!(msg.contains("a symbolic link"), "{msg}");
    }

    /// A malformed task id was diagnosed as "the two files come from different runs": the
    /// manifest's own problem is named instead.
    #[test]
    fn a_damaged_manifest_record_is_named_not_blamed_on_another_run() {
        let (_root, dir) = setup();
        let bad = MANIFEST.replace(
            "\"task_id\": \"0x0000000100000002\"",
            "\"task_id\": \"0xZZ\"",
        );
        std::fs::write(dir.join("args_dump.json"), bad).unwrap();
        let msg = load(&dir).unwrap_err().to_string();
        assert!(!msg.contains("different runs"), "{msg}");
        assert!(
            msg.contains("`args[2].task_id` is \"0xZZ\"")
                && msg.contains("the manifest is damaged, so its records no longer tile"),
            "{msg}"
        );
    }

    #[test]
    fn an_args_bin_from_another_run_is_refused() {
        let (_root, dir) = setup();
        assert!(load(&dir).unwrap().warnings.is_empty());
        let bin = dir.join("args.bin");
        let good = std::fs::read(&bin).unwrap();
        for (what, bytes) in [
            ("longer", [&good[..], &[0u8; 8][..]].concat()),
            ("shorter", good[..20].to_vec()),
        ] {
            std::fs::write(&bin, &bytes).unwrap();
            let msg = load(&dir).unwrap_err().to_string();
            assert!(
                msg.contains("does not belong to") && msg.contains("different runs"),
                "{what}: {msg}"
            );
        }
        std::fs::write(&bin, &good).unwrap();
        let overlapping = MANIFEST.replace("\"bin_offset\": 16", "\"bin_offset\": 12");
        std::fs::write(dir.join("args_dump.json"), overlapping).unwrap();
        let msg = load(&dir).unwrap_err().to_string();
        assert!(msg.contains("overlaps"), "{msg}");
        // A manifest that reports dropped records may have a hole: a warning.
        let dropped = MANIFEST.replace("\"dropped_records\": 0", "\"dropped_records\": 1");
        std::fs::write(dir.join("args_dump.json"), dropped).unwrap();
        std::fs::write(&bin, [&good[..], &[0u8; 8][..]].concat()).unwrap();
        let dump = load(&dir).unwrap();
        assert!(
            dump.warnings
                .iter()
                .any(|w| w.contains("1 dropped records")),
            "{:?}",
            dump.warnings
        );
    }
}
