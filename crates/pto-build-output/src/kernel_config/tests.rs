//! Tests of the `kernel_config.py` reader, writer and name map.

use super::*;

/// A `kernel_config.py` exactly as PyPTO writes it (two AIV kernels).
const PYPTO_SAMPLE: &str = "# Kernel and Orchestration Configuration

from pathlib import Path

from simpler.task_interface import ArgDirection as _D

_ROOT_DIR = Path(__file__).parent

# Runtime configuration for tensormap_and_ringbuffer.
# AICPU thread count 0 selects the runtime's architecture default (a2a3: 4; a5: 5).
RUNTIME_CONFIG = {
\t\"runtime\": \"tensormap_and_ringbuffer\",
\t\"aicpu_thread_num\": 0,
}

ORCHESTRATION = {
\t\"source\": str(_ROOT_DIR / \"orchestration\" / \"main.cpp\"),
\t\"function_name\": \"aicpu_orchestration_entry\",
\t\"signature\": [_D.IN, _D.INOUT, _D.OUT],
}

KERNELS = [
\t{\"func_id\": 0, \"name\": \"stage1\", \"source\": str(_ROOT_DIR / \"kernels\" / \"aiv\" / \"stage1.cpp\"), \"core_type\": \"aiv\", \"signature\": [_D.IN, _D.INOUT]},
\t{\"func_id\": 1, \"name\": \"stage2\", \"source\": str(_ROOT_DIR / \"kernels\" / \"aiv\" / \"stage2.cpp\"), \"core_type\": \"aiv\", \"signature\": [_D.IN, _D.OUT]},
]
";

/// No signatures (so no `_D` import), SDMA on, an external kernel.
const PYPTO_EXTERNAL_SAMPLE: &str = "# Kernel and Orchestration Configuration

from pathlib import Path

_ROOT_DIR = Path(__file__).parent

# Runtime configuration for host_build_graph.
# AICPU thread count 0 selects the runtime's architecture default (a2a3: 4; a5: 5).
RUNTIME_CONFIG = {
\t\"runtime\": \"host_build_graph\",
\t\"aicpu_thread_num\": 0,
\t\"enable_sdma\": True,
}

ORCHESTRATION = {
\t\"source\": str(_ROOT_DIR / \"orchestration\" / \"main.cpp\"),
\t\"function_name\": \"aicpu_orchestration_entry\",
}

KERNELS = [
\t{\"func_id\": 0, \"name\": \"matmul\", \"source\": str(_ROOT_DIR / \"kernels\" / \"aic\" / \"matmul.cpp\"), \"core_type\": \"aic\"},
\t{\"func_id\": 1, \"name\": \"ext\", \"source\": '/src/ext/k.cpp', \"core_type\": \"aiv\", \"external\": True, \"extra_include_dirs\": ['/src/inc', \"/src/it's\"]},
]
";

/// The builtin-collective template's shape: spaces, one key per line, an
/// unknown `block_dim` key.
const TEMPLATE_SAMPLE: &str = "# Kernel and Orchestration Configuration
from pathlib import Path

from simpler.task_interface import ArgDirection as _D

_ROOT_DIR = Path(__file__).parent

RUNTIME_CONFIG = {
    \"runtime\": \"tensormap_and_ringbuffer\",
    \"aicpu_thread_num\": 4,
    \"block_dim\": 1,
}

ORCHESTRATION = {
    \"source\": str(_ROOT_DIR / \"orchestration\" / \"ag.cpp\"),
    \"function_name\": \"aicpu_orchestration_entry\",
    \"signature\": [_D.IN, _D.INOUT, _D.INOUT],
}

KERNELS = [
    {
        \"func_id\": 0,
        \"name\": \"ag_kernel\",
        \"source\": str(_ROOT_DIR / \"kernels\" / \"aiv\" / \"ag_kernel.cpp\"),
        \"core_type\": \"aiv\",
        \"signature\": [_D.IN, _D.INOUT, _D.INOUT],
    },
]
";

fn root() -> PathBuf {
    PathBuf::from("/b")
}

fn kernel(func_id: i32, name: &str, core: CoreType, sig: Option<Vec<ArgDirection>>) -> KernelEntry {
    KernelEntry {
        func_id,
        name: name.to_string(),
        source: root()
            .join("kernels")
            .join(core.as_str())
            .join(format!("{name}.cpp")),
        core_type: core,
        signature: sig,
        extra_include_dirs: Vec::new(),
        external: false,
    }
}

fn sample_config() -> KernelConfig {
    use ArgDirection::{In, InOut, Out};
    KernelConfig {
        runtime: RuntimeConfig::default(),
        orchestration: OrchestrationConfig {
            source: root().join("orchestration/main.cpp"),
            function_name: DEFAULT_ORCHESTRATION_FUNCTION.to_string(),
            config_name: None,
            signature: Some(vec![In, InOut, Out]),
        },
        kernels: vec![
            kernel(0, "stage1", CoreType::Aiv, Some(vec![In, InOut])),
            kernel(1, "stage2", CoreType::Aiv, Some(vec![In, Out])),
        ],
    }
}

fn external_config() -> KernelConfig {
    KernelConfig {
        runtime: RuntimeConfig {
            runtime: "host_build_graph".to_string(),
            aicpu_thread_num: 0,
            enable_sdma: true,
        },
        orchestration: OrchestrationConfig {
            source: root().join("orchestration/main.cpp"),
            function_name: DEFAULT_ORCHESTRATION_FUNCTION.to_string(),
            config_name: None,
            signature: None,
        },
        kernels: vec![
            kernel(0, "matmul", CoreType::Aic, None),
            KernelEntry {
                func_id: 1,
                name: "ext".to_string(),
                source: PathBuf::from("/src/ext/k.cpp"),
                core_type: CoreType::Aiv,
                signature: None,
                extra_include_dirs: vec![PathBuf::from("/src/inc"), PathBuf::from("/src/it's")],
                external: true,
            },
        ],
    }
}

fn parse(text: &str) -> Result<KernelConfig, KernelConfigError> {
    KernelConfig::parse(text, &root(), Path::new("/b/kernel_config.py"))
}

fn check_parse(text: &str, expected: &KernelConfig) {
    let cfg = parse(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(&cfg, expected);
}

#[test]
fn reads_pypto_output() {
    check_parse(PYPTO_SAMPLE, &sample_config());
    check_parse(PYPTO_EXTERNAL_SAMPLE, &external_config());
}

#[test]
fn reads_the_builtin_template_shape() {
    use ArgDirection::{In, InOut};
    let expected = KernelConfig {
        runtime: RuntimeConfig {
            aicpu_thread_num: 4,
            ..RuntimeConfig::default()
        },
        orchestration: OrchestrationConfig {
            source: root().join("orchestration/ag.cpp"),
            function_name: DEFAULT_ORCHESTRATION_FUNCTION.to_string(),
            config_name: None,
            signature: Some(vec![In, InOut, InOut]),
        },
        kernels: vec![kernel(
            0,
            "ag_kernel",
            CoreType::Aiv,
            Some(vec![In, InOut, InOut]),
        )],
    };
    check_parse(TEMPLATE_SAMPLE, &expected);
}

/// Keys nothing reads are warned about with their line (PyPTO ignores them); the known
/// ones, the template's `block_dim` included, are not.
#[test]
fn unknown_keys_are_warnings_naming_key_and_line() {
    let warn = |text: &str| {
        KernelConfig::parse_with_warnings(text, &root(), Path::new("/b/kernel_config.py"))
            .unwrap()
            .1
    };
    assert!(warn(PYPTO_SAMPLE).is_empty());
    assert!(warn(PYPTO_EXTERNAL_SAMPLE).is_empty());
    assert!(warn(TEMPLATE_SAMPLE).is_empty());
    let misspelt = PYPTO_SAMPLE
        .replace(
            "\"core_type\": \"aiv\", \"signature\": [_D.IN, _D.OUT]",
            "\"core_type\": \"aiv\", \"sigature\": [_D.IN, _D.OUT]",
        )
        .replace("\t\"aicpu_thread_num\": 0,", "\t\"aicpu_threads\": 0,");
    let (cfg, warnings) =
        KernelConfig::parse_with_warnings(&misspelt, &root(), Path::new("/b/kernel_config.py"))
            .unwrap();
    assert_eq!(
        cfg.kernels[1].signature, None,
        "the misspelt key is not read"
    );
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].starts_with("/b/kernel_config.py:13:")
            && warnings[0]
                .contains("RUNTIME_CONFIG has the key 'aicpu_threads' that nothing reads"),
        "{warnings:?}"
    );
    assert!(
        warnings[1].starts_with("/b/kernel_config.py:24:")
            && warnings[1].contains("KERNELS[1] has the key 'sigature'")
            && warnings[1].contains("\"signature\""),
        "{warnings:?}"
    );
}

fn check_source(config: &KernelConfig, expected: &str) {
    let text = config
        .to_python_source(&root(), Path::new("/b/kernel_config.py"))
        .unwrap();
    assert_eq!(text, expected);
}

#[test]
fn writes_pypto_layout_byte_for_byte() {
    check_source(&sample_config(), PYPTO_SAMPLE);
    check_source(&external_config(), PYPTO_EXTERNAL_SAMPLE);

    let mut shuffled = sample_config();
    shuffled.kernels.reverse();
    check_source(&shuffled, PYPTO_SAMPLE);

    let mut empty_sigs = external_config();
    empty_sigs.orchestration.signature = Some(Vec::new());
    check_source(&empty_sigs, PYPTO_EXTERNAL_SAMPLE);
}

#[test]
fn paths_outside_the_build_dir_are_literals() {
    let mut cfg = sample_config();
    cfg.orchestration.source = PathBuf::from("/elsewhere/o.cpp");
    cfg.kernels[0].source = PathBuf::from("kernels/aiv/rel.cpp");
    cfg.kernels[1].source = PathBuf::from("/b/../x.cpp");
    let text = cfg
        .to_python_source(&root(), Path::new("/b/kernel_config.py"))
        .unwrap();
    assert!(
        text.contains("\t\"source\": '/elsewhere/o.cpp',\n"),
        "{text}"
    );
    assert!(
        text.contains("\"source\": str(_ROOT_DIR / \"kernels\" / \"aiv\" / \"rel.cpp\")"),
        "{text}"
    );
    assert!(text.contains("\"source\": '/b/../x.cpp'"), "{text}");
}

#[test]
fn write_then_load_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(KERNEL_CONFIG_FILE);
    for mut cfg in [sample_config(), external_config()] {
        for k in &mut cfg.kernels {
            if !k.external {
                k.source = dir.path().join(k.source.strip_prefix("/b").unwrap());
            }
        }
        cfg.orchestration.source = dir.path().join("orchestration/main.cpp");
        cfg.write(&path).unwrap();
        assert_eq!(KernelConfig::load(&path).unwrap(), cfg);
    }
}

fn check_err(text: &str, expected: &str) {
    let err = parse(text).expect_err("must fail").to_string();
    let tail = "; kernel_config.py must stay in the declarative form ir.compile() writes; fix that line or recompile via ir.compile() to regenerate the file";
    let shown = err.strip_suffix(tail).unwrap_or(&err);
    assert_eq!(shown, expected);
}

const HEAD: &str = "from pathlib import Path\nfrom simpler.task_interface import ArgDirection as _D\n_ROOT_DIR = Path(__file__).parent\nORCHESTRATION = {\"source\": str(_ROOT_DIR / \"o.cpp\"), \"function_name\": \"f\"}\n";

#[test]
fn validation_errors_name_line_column_and_field() {
    check_err(
        HEAD,
        "/b/kernel_config.py: KERNELS is not defined; a kernel_config.py needs ORCHESTRATION and KERNELS — recompile via ir.compile() to regenerate the file",
    );
    check_err(
        "KERNELS = []",
        "/b/kernel_config.py: ORCHESTRATION is not defined; a kernel_config.py needs ORCHESTRATION and KERNELS — recompile via ir.compile() to regenerate the file",
    );
    check_err(
        &format!("{HEAD}KERNELS = []\nBLOCK_DIM = 4"),
        "/b/kernel_config.py:6:1: unknown top-level name `BLOCK_DIM`; kernel_config.py defines only _ROOT_DIR, RUNTIME_CONFIG, ORCHESTRATION and KERNELS",
    );
    check_err(
        &format!("{HEAD}KERNELS = []\nKERNELS = []"),
        "/b/kernel_config.py:6:1: `KERNELS` is assigned twice (first on line 5)",
    );
    check_err(
        &format!("{HEAD}KERNELS = {{}}"),
        "/b/kernel_config.py:5:11: KERNELS must be a list of dicts, found a dict",
    );
    check_err(
        &format!("{HEAD}KERNELS = [\n\t{{\"func_id\": 0, \"name\": \"k\", \"source\": \"k.cpp\"}},\n]"),
        "/b/kernel_config.py:6:2: KERNELS[0] has no \"core_type\" key; each kernel needs \"func_id\", \"name\", \"source\" and \"core_type\"",
    );
    check_err(
        &format!("{HEAD}KERNELS = [{{\"func_id\": \"0\", \"name\": \"k\", \"source\": \"k.cpp\", \"core_type\": \"aiv\"}}]"),
        "/b/kernel_config.py:5:24: KERNELS[0][\"func_id\"] must be an int, found str '0'",
    );
    check_err(
        &format!("{HEAD}KERNELS = [{{\"func_id\": -1, \"name\": \"k\", \"source\": \"k.cpp\", \"core_type\": \"aiv\"}}]"),
        "/b/kernel_config.py:5:24: KERNELS[0][\"func_id\"] must be a non-negative 32-bit int, found -1",
    );
    check_err(
        &format!("{HEAD}KERNELS = [{{\"func_id\": 0, \"name\": \"k\", \"source\": \"k.cpp\", \"core_type\": \"mix\"}}]"),
        "/b/kernel_config.py:5:72: KERNELS[0][\"core_type\"] must be \"aic\" or \"aiv\", found 'mix'",
    );
    check_err(
        &format!("{HEAD}KERNELS = [\n{{\"func_id\": 3, \"name\": \"a\", \"source\": \"a.cpp\", \"core_type\": \"aiv\"}},\n{{\"func_id\": 3, \"name\": \"b\", \"source\": \"b.cpp\", \"core_type\": \"aiv\"}},\n]"),
        "/b/kernel_config.py:7:13: KERNELS[1] reuses func_id 3 of KERNELS[0] ('a'); func_ids must be unique",
    );
    check_err(
        &format!("{HEAD}KERNELS = [{{\"func_id\": 0, \"name\": 5, \"source\": \"k.cpp\", \"core_type\": \"aiv\"}}]"),
        "/b/kernel_config.py:5:35: KERNELS[0][\"name\"] must be a string, found int 5",
    );
    check_err(
        &format!("{HEAD}KERNELS = [{{\"func_id\": 0, \"name\": \"k\", \"source\": 1, \"core_type\": \"aiv\"}}]"),
        "/b/kernel_config.py:5:50: KERNELS[0][\"source\"] must be a path string or str(_ROOT_DIR / ...), found int 1",
    );
    check_err(
        &format!("{HEAD}KERNELS = [{{\"func_id\": 0, \"name\": \"k\", \"source\": \"k.cpp\", \"core_type\": \"aiv\", \"signature\": [_D.IN, \"OUT\"]}}]"),
        "/b/kernel_config.py:5:100: KERNELS[0][\"signature\"][1] must be _D.IN, _D.OUT, _D.INOUT or _D.SCALAR, found str 'OUT'",
    );
    check_err(
        &format!("RUNTIME_CONFIG = {{\"enable_sdma\": 1}}\n{HEAD}KERNELS = []"),
        "/b/kernel_config.py:1:34: RUNTIME_CONFIG[\"enable_sdma\"] must be True or False, found int 1",
    );
    check_err(
        "from pathlib import Path\n_ROOT_DIR = Path(__file__).parent\nORCHESTRATION = {\"source\": str(_ROOT_DIR / \"o.cpp\")}\nKERNELS = []",
        "/b/kernel_config.py:3:17: ORCHESTRATION has no \"function_name\" key; ORCHESTRATION needs \"source\" and \"function_name\"",
    );
    check_err(
        "ORCHESTRATION = {\n\t\"source\": str(_ROOT_DIR / \"o.cpp\"),\n}",
        "/b/kernel_config.py:2:16: `_ROOT_DIR` is used before `_ROOT_DIR = Path(__file__).parent`",
    );
}

#[test]
fn unknown_keys_inside_entries_are_ignored() {
    let text = format!(
        "{HEAD}KERNELS = [{{\"func_id\": 7, \"name\": \"k\", \"source\": \"k.cpp\", \"core_type\": \"aiv\", \"block_dim\": 2, \"signature\": None}}]"
    );
    let cfg = parse(&text).unwrap();
    assert_eq!(
        cfg.kernels,
        vec![KernelEntry {
            func_id: 7,
            name: "k".to_string(),
            source: PathBuf::from("/b/k.cpp"),
            core_type: CoreType::Aiv,
            signature: None,
            extra_include_dirs: Vec::new(),
            external: false,
        }]
    );
    assert_eq!(cfg.name_map(), BTreeMap::from([(7, "k".to_string())]));
    assert_eq!(cfg.kernel(7).map(|k| k.name.as_str()), Some("k"));
}

fn check_name_map(text: &str, expected: &[(i32, &str)], expected_skipped: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(KERNEL_CONFIG_FILE);
    std::fs::write(&path, text).unwrap();
    let map = load_name_map(&path).unwrap();
    let names: Vec<(i32, &str)> = map.names.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_eq!(names, expected);
    assert_eq!(map.skipped, expected_skipped);
}

#[test]
fn name_map_is_lenient_about_entries() {
    check_name_map(PYPTO_SAMPLE, &[(0, "stage1"), (1, "stage2")], &[]);
    check_name_map(
        "KERNELS = [\n{\"func_id\": 2, \"name\": \"a\"},\n{\"name\": \"no_id\"},\n5,\n{\"func_id\": 2, \"name\": \"b\"},\n]",
        &[(2, "b")],
        &[
            "KERNELS[1] (line 3): skipped, it needs an int \"func_id\" and a string \"name\"",
            "KERNELS[2] (line 4): skipped, it needs an int \"func_id\" and a string \"name\"",
            "KERNELS[3] (line 5): func_id 2 repeats an earlier entry; 'b' replaces it",
        ],
    );
}

#[test]
fn file_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join(KERNEL_CONFIG_FILE);
    let err = KernelConfig::load(&missing).unwrap_err();
    assert!(err.is_not_found());
    assert!(err
        .to_string()
        .starts_with(&format!("cannot read {}: ", missing.display())));
    assert!(load_name_map(&missing).unwrap_err().is_not_found());

    std::fs::write(&missing, b"X = '\xff'").unwrap();
    let err = KernelConfig::load(&missing).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!("{} is not valid UTF-8 text;", missing.display())),
        "{err}"
    );

    std::fs::write(&missing, "ORCHESTRATION = {}").unwrap();
    let err = load_name_map(&missing).unwrap_err().to_string();
    assert!(err.contains("KERNELS is not defined"), "{err}");
}

/// A file over the size limit is refused before it is read, naming the file,
/// its size and the limit (the file is sparse: nothing is written).
#[test]
fn oversized_files_are_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(KERNEL_CONFIG_FILE);
    let file = std::fs::File::create(&path).unwrap();
    file.set_len(MAX_KERNEL_CONFIG_BYTES + 1).unwrap();
    for err in [
        KernelConfig::load(&path).unwrap_err(),
        load_name_map(&path).unwrap_err(),
    ] {
        assert!(!err.is_not_found());
        assert_eq!(
            err.to_string(),
            format!(
                "{}: the file is 8388609 bytes, more than the 8 MiB a kernel_config.py may have; {FIX}",
                path.display()
            )
        );
    }
    // At the limit it is read (and rejected for its content, all NUL bytes).
    file.set_len(MAX_KERNEL_CONFIG_BYTES).unwrap();
    let err = KernelConfig::load(&path).unwrap_err().to_string();
    assert!(err.contains("unexpected character"), "{err}");
}

/// Deep nesting is a located error with the fix, for the strict reader and
/// the name map alike, however deep the file nests.
#[test]
fn deep_nesting_is_a_located_error() {
    let deep = format!(
        "KERNELS = {}{}\n",
        "[".repeat(1_000_000),
        "]".repeat(1_000_000)
    );
    let expected = format!(
        "/b/kernel_config.py:1:111: the expression nests more than 100 levels deep (brackets, signs, `.`, calls and `/` all count); the files ir.compile() writes nest at most 4; {FIX}"
    );
    assert_eq!(parse(&deep).unwrap_err().to_string(), expected);
    let err = parse_name_map(&deep, &root(), Path::new("/b/kernel_config.py")).unwrap_err();
    assert_eq!(err.to_string(), expected);
}

/// Duplicate keys and func_ids are found with hash maps: a dict of many keys
/// or a long KERNELS list costs linear time, not quadratic (the old pairwise
/// scans took minutes on these in a debug build).
#[test]
fn many_keys_and_kernels_take_linear_time() {
    let (n_keys, n) = (100_000, 10_000);
    let keys: String = (0..n_keys).map(|i| format!("\"k{i}\": {i}, ")).collect();
    let kernels: String = (0..n)
        .map(|i| {
            format!("{{\"func_id\": {i}, \"name\": \"k{i}\", \"source\": \"k.cpp\", \"core_type\": \"aiv\"}},\n")
        })
        .collect();
    let text = format!(
        "RUNTIME_CONFIG = {{{keys}}}\nORCHESTRATION = {{\"source\": \"o.cpp\", \"function_name\": \"f\"}}\nKERNELS = [\n{kernels}]\n"
    );
    let start = std::time::Instant::now();
    let config = parse(&text).unwrap();
    assert_eq!(config.kernels.len(), n);
    let elapsed = start.elapsed();
    eprintln!("{n_keys} keys and {n} kernels read in {elapsed:?}");
    assert!(elapsed < std::time::Duration::from_secs(20), "{elapsed:?}");
    // The duplicate messages are unchanged.
    let dup = text.replace("\"k7\": 7,", "\"k7\": 7, \"k3\": 0,");
    assert_eq!(
        parse(&dup).unwrap_err().to_string(),
        format!("/b/kernel_config.py:1:91: duplicate key \"k3\" (first given on line 1); {FIX}")
    );
    let dup = text.replace("\"func_id\": 9,", "\"func_id\": 4,");
    let err = parse(&dup).unwrap_err().to_string();
    assert!(
        err.contains("KERNELS[9] reuses func_id 4 of KERNELS[4] ('k4'); func_ids must be unique"),
        "{err}"
    );
}

#[test]
fn name_maps_parse_from_text() {
    let map = parse_name_map(PYPTO_SAMPLE, &root(), Path::new("/b/kernel_config.py")).unwrap();
    assert_eq!(
        map.names,
        BTreeMap::from([(0, "stage1".to_string()), (1, "stage2".to_string())])
    );
}
