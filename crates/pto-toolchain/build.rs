//! Embeds the workspace's `include/pto/` headers and the runtime revision
//! into the crate.
//!
//! Headers: walks `<workspace>/include` (`pto/` and `pto-isa/`) recursively and generates
//! `$OUT_DIR/embedded_headers.rs`, a sorted static table of
//! `(relative path, include_bytes!(absolute path))`. Hidden files (names
//! starting with `.`, e.g. editor swap files) are skipped. A missing
//! directory yields an empty table (and, because the watched path does not
//! exist, cargo re-runs this script until it appears).
//!
//! Revision: sets `PTO_TOOLCHAIN_GIT_REVISION` to the workspace's
//! `git rev-parse HEAD` when `git status --porcelain=v1
//! --untracked-files=normal` reports a clean tree; in a dirty tree to
//! `<HEAD>.dirty-<16 hex digits>`, a SHA-256 over `git diff HEAD --binary`
//! and the names and contents of the untracked (not ignored) files, so one
//! dirty state has one identity and any further edit gives another; and to
//! the empty string when git is missing or the workspace is not a checkout.
//! The binary cache (`src/binary_cache.rs`) trusts cached binaries only
//! under a known revision. To keep the value current the script re-runs
//! when `.git/HEAD`, the index, the checked-out branch ref or `packed-refs`
//! change, and when any tracked or untracked (not ignored) file changes. A
//! new untracked file alone is noticed at the next change to one of those
//! (e.g. `git add`, or the edit that references it, which is also what
//! makes it part of the build).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    if let Err(e) = run() {
        // A build script reports failure by panicking / exiting non-zero.
        eprintln!("pto-toolchain build.rs: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let manifest_dir =
        std::env::var_os("CARGO_MANIFEST_DIR").ok_or("CARGO_MANIFEST_DIR not set")?;
    let out_dir = std::env::var_os("OUT_DIR").ok_or("OUT_DIR not set")?;
    let include_root = PathBuf::from(&manifest_dir).join("../../include");
    let include_root = include_root.canonicalize().unwrap_or(include_root);

    println!("cargo:rerun-if-changed={}", include_root.display());
    println!("cargo:rerun-if-changed=build.rs");

    let mut files = Vec::new();
    if include_root.is_dir() {
        walk(&include_root, &include_root, &mut files)?;
    }
    files.sort();

    let mut code = String::new();
    code.push_str(
        "/// Headers embedded from `include/`: `(relative path, contents)`, sorted by path.\n",
    );
    code.push_str("pub(crate) static EMBEDDED_HEADERS: &[(&str, &[u8])] = &[\n");
    for (rel, abs) in &files {
        let abs = abs
            .to_str()
            .ok_or_else(|| format!("non-UTF-8 header path {}", abs.display()))?;
        println!("cargo:rerun-if-changed={abs}");
        writeln!(code, "    ({rel:?}, include_bytes!({abs:?})),").map_err(|e| e.to_string())?;
    }
    code.push_str("];\n");

    let dest = Path::new(&out_dir).join("embedded_headers.rs");
    std::fs::write(&dest, code).map_err(|e| format!("writing {}: {e}", dest.display()))?;

    embed_revision(Path::new(&manifest_dir).join("../.."));
    Ok(())
}

/// Emits `PTO_TOOLCHAIN_GIT_REVISION` (a commit, a commit with the hash of
/// its dirty state, or empty) and the
/// `rerun-if-changed` lines that keep it current. Never fails: any problem
/// means "no identity".
fn embed_revision(workspace: PathBuf) {
    let workspace = workspace.canonicalize().unwrap_or(workspace);
    let untracked = untracked_files(&workspace);
    watch_workspace(&workspace, untracked.as_deref().unwrap_or_default());
    let revision = revision(&workspace, untracked.as_deref()).unwrap_or_default();
    println!("cargo:rustc-env=PTO_TOOLCHAIN_GIT_REVISION={revision}");
}

/// Runs `git <args>` in `dir` without taking optional locks (so `git status`
/// never rewrites the index this script watches); its standard output, or
/// `None` on any failure.
fn git_bytes(dir: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let out = std::process::Command::new("git")
        .arg("--no-optional-locks")
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

/// [`git_bytes`] as UTF-8 text.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    String::from_utf8(git_bytes(dir, args)?).ok()
}

/// The HEAD commit when the checkout is clean (untracked files count as
/// dirty); `<HEAD>.dirty-<hash>` of the dirty state otherwise.
fn revision(workspace: &Path, untracked: Option<&[String]>) -> Option<String> {
    let head = git(workspace, &["rev-parse", "HEAD"])?;
    let head = head.trim();
    if head.is_empty() || !head.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let status = git(
        workspace,
        &["status", "--porcelain=v1", "--untracked-files=normal"],
    )?;
    if status.trim().is_empty() {
        return Some(head.to_owned());
    }
    let dirty = dirty_state_hash(workspace, untracked?)?;
    Some(format!("{head}.dirty-{dirty}"))
}

/// SHA-256 (first 16 hex digits) of what makes the tree differ from HEAD:
/// the binary diff of tracked files, then each untracked, not ignored file's
/// path and contents (length-prefixed, in git's order). Files are hashed in
/// chunks, so nothing large is held in memory.
fn dirty_state_hash(workspace: &Path, untracked: &[String]) -> Option<String> {
    use sha2::{Digest, Sha256};
    use std::io::Read as _;
    let mut hash = Sha256::new();
    let diff = git_bytes(workspace, &["diff", "HEAD", "--binary", "--no-ext-diff"])?;
    hash.update((diff.len() as u64).to_le_bytes());
    hash.update(&diff);
    for rel in untracked {
        hash.update((rel.len() as u64).to_le_bytes());
        hash.update(rel.as_bytes());
        let Ok(mut file) = std::fs::File::open(workspace.join(rel)) else {
            hash.update([0xff]);
            continue;
        };
        let mut chunk = vec![0u8; 1 << 16];
        loop {
            match file.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => hash.update(&chunk[..n]),
                Err(_) => {
                    hash.update([0xfe]);
                    break;
                }
            }
        }
    }
    let digest = hash.finalize();
    Some(pto_base::hash::hex(&digest[..8]))
}

/// Untracked files that git does not ignore, relative to the workspace.
fn untracked_files(workspace: &Path) -> Option<Vec<String>> {
    let files = git(
        workspace,
        &["ls-files", "-z", "--others", "--exclude-standard"],
    )?;
    Some(
        files
            .split('\0')
            .filter(|f| !f.is_empty())
            .map(str::to_owned)
            .collect(),
    )
}

/// Watches the git metadata that moves with commits and checkouts, and
/// every tracked and untracked (not ignored) file (an edit to one makes the tree dirty without touching
/// the index). Ignored run outputs (`*.so`, `examples/*/cache/`) are not
/// watched, so replays do not re-run this script. Only existing paths are
/// watched: cargo treats a missing one as always changed.
fn watch_workspace(workspace: &Path, untracked: &[String]) {
    let watch = |p: &Path| {
        if p.exists() {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    };
    let git_path = |args: &[&str]| {
        git(workspace, args).map(|s| {
            let p = PathBuf::from(s.trim());
            if p.is_absolute() {
                p
            } else {
                workspace.join(p)
            }
        })
    };
    if let Some(git_dir) = git_path(&["rev-parse", "--git-dir"]) {
        watch(&git_dir.join("HEAD"));
        watch(&git_dir.join("index"));
    }
    if let Some(common) = git_path(&["rev-parse", "--git-common-dir"]) {
        watch(&common.join("packed-refs"));
        if let Some(branch) = git(workspace, &["symbolic-ref", "-q", "HEAD"]) {
            watch(&common.join(branch.trim()));
        }
    }
    if let Some(files) = git(workspace, &["ls-files", "-z"]) {
        for rel in files.split('\0').filter(|f| !f.is_empty()) {
            watch(&workspace.join(rel));
        }
    }
    for rel in untracked {
        watch(&workspace.join(rel));
    }
}

/// Collects `(relative path with '/' separators, absolute path)` for every
/// regular file under `dir`.
fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("reading {}: {e}", dir.display()))?;
        let path = entry.path();
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        // Follow symlinks: embed what the compiler would see.
        let meta = std::fs::metadata(&path).map_err(|e| format!("stat {}: {e}", path.display()))?;
        if meta.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            walk(root, &path, out)?;
        } else if meta.is_file() {
            let rel = path
                .strip_prefix(root)
                .map_err(|e| e.to_string())?
                .components()
                .map(|c| {
                    c.as_os_str()
                        .to_str()
                        .map(str::to_owned)
                        .ok_or_else(|| format!("non-UTF-8 header path {}", path.display()))
                })
                .collect::<Result<Vec<_>, _>>()?
                .join("/");
            out.push((rel, path));
        }
    }
    Ok(())
}
