//! `pto scope-stats-plot`: `scope_stats.jsonl` → a self-contained
//! `scope_stats.html` beside it.
//!
//! Each `PTO2_SCOPE` wrote a `begin` and an `end` record; a matched pair
//! ([`pair_scopes`]) is one scope. Per scope and resource the page uses the
//! reference's risk metric (§6.3), compared with the capacity from the
//! metadata line:
//!
//! | Resource | Metric | Value | Capacity |
//! |---|---|---|---|
//! | task window | high water | `end.task_window_end − begin.task_window_start` | `task_window_max[ring]` |
//! | heap | high water | `end.heap_end − begin.heap_start` (shown in MiB) | `heap_max[ring]` |
//! | dep pool | high water | `end.dep_pool_end − begin.dep_pool_start` | `dep_pool_max[ring]` |
//! | TensorMap | live at exit | `end.tensormap` (global) | `tensormap_max` |
//!
//! The page has a header (file, dominant site, a status chip: fatal,
//! dropped records or healthy; record, scope and ring counts), a formula
//! guide, a **Top Peaks** table (one row per resource and ring, the
//! TensorMap once, with a use bar: `danger` ≥ 80 %, `warn` ≥ 50 %), one
//! **timeline per ring** (inline SVG: each resource's metric as a percentage
//! of its capacity over the ring's scopes in the order they closed, the
//! capacity line at 100 %), **resource panels** as Simpler draws them (per
//! ring for the task window, heap and dep pool: a *resource pressure* chart
//! with the high water and live-at-exit lines and a separate *alloc per
//! scope* chart, `end.X_end − begin.X_end`, so small per-scope changes stay
//! visible; one global live-entries chart for the TensorMap; each in the
//! resource's unit with the y axis to 1.1 × the peak and a legend with each
//! line's peak and capacity use), and a table of the **scopes with the
//! highest water marks**. Capacity use is printed with two decimals
//! (`93.75%`), as Simpler prints it. Unmatched records are listed as
//! warnings. The page loads nothing; every site name is escaped. With
//! `?selftest` it writes counts of what it rendered into
//! `#selftest-result`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::ToolError;
use crate::html::{escape, num, Page};
use pto_dfx::atomic::AtomicFile;
use pto_dfx::scope_stats::{pair_scopes, ScopePair, ScopeRecord, ScopeResource, ScopeStatsFile};

/// What the plot wrote.
#[derive(Clone, Debug)]
pub struct PlotReport {
    /// The page.
    pub output: PathBuf,
    /// Records read.
    pub n_records: usize,
    /// Matched begin/end pairs.
    pub n_scopes: usize,
    /// Rings with at least one scope.
    pub rings: Vec<usize>,
    /// Recoverable damage (bad lines, unmatched records), each naming the file.
    pub warnings: Vec<String>,
}

/// How many scopes the "highest water marks" table lists.
pub const TOP_SCOPES: usize = 20;

/// The default output beside `input`.
pub fn default_output(input: &Path) -> PathBuf {
    crate::parent_dir(input).join("scope_stats.html")
}

/// Writes the page for `input` to `output` (default beside it).
pub fn plot(input: &Path, output: Option<&Path>) -> Result<PlotReport, ToolError> {
    let loaded = pto_dfx::scope_stats::read(input)?;
    let mut warnings: Vec<String> = loaded
        .problems
        .iter()
        .map(|p| format!("{}: {p}", input.display()))
        .collect();
    let file = loaded.value;
    let (pairs, pair_problems) = pair_scopes(&file.records);
    warnings.extend(
        pair_problems
            .iter()
            .map(|p| format!("{}: {p}", input.display())),
    );
    let output = match output {
        Some(p) => p.to_path_buf(),
        None => default_output(input),
    };
    let name = input
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (html, rings) = render(&file, &pairs, &name, &warnings);
    let mut out = AtomicFile::create(&output)?;
    out.write_all(html.as_bytes())?;
    out.commit()?;
    Ok(PlotReport {
        output,
        n_records: file.records.len(),
        n_scopes: pairs.len(),
        rings,
        warnings,
    })
}

const RESOURCES: [(ScopeResource, &str, &str, &str); 4] = [
    (
        ScopeResource::TaskWindow,
        "task window",
        "High water",
        "#1f77b4",
    ),
    (ScopeResource::Heap, "heap", "High water", "#d62728"),
    (ScopeResource::DepPool, "dep pool", "High water", "#2ca02c"),
    (
        ScopeResource::Tensormap,
        "TensorMap",
        "Live at exit",
        "#9467bd",
    ),
];

/// One scope's metrics.
struct Scope<'a> {
    index: usize,
    ring: usize,
    begin: &'a ScopeRecord,
    end: &'a ScopeRecord,
    /// Per resource: (value, capacity, use fraction).
    values: [(i64, i64, f64); 4],
}

impl Scope<'_> {
    fn max_use(&self) -> f64 {
        self.values.iter().map(|v| v.2).fold(0.0, f64::max)
    }
}

fn fmt_value(resource: ScopeResource, v: i64) -> String {
    if resource == ScopeResource::Heap {
        format!("{:.2} MiB", v as f64 / (1024.0 * 1024.0))
    } else {
        v.to_string()
    }
}

fn use_class(f: f64) -> &'static str {
    if f >= 0.8 {
        "danger"
    } else if f >= 0.5 {
        "warn"
    } else {
        "ok"
    }
}

fn use_bar(f: f64) -> String {
    format!(
        "<div class=\"bar {}\"><span style=\"width:{}%\"></span><em>{:.2}%</em></div>",
        use_class(f),
        num((f * 100.0).clamp(0.0, 100.0)),
        f * 100.0
    )
}

/// The page (header, guide, warnings, peaks, a timeline per ring, resource panels, the top
/// scopes) and the rings it shows.
fn render(
    file: &ScopeStatsFile,
    pairs: &[ScopePair],
    name: &str,
    warnings: &[String],
) -> (String, Vec<usize>) {
    let scopes = measured_scopes(file, pairs);
    let mut rings: Vec<usize> = scopes.iter().map(|s| s.ring).collect();
    rings.sort_unstable();
    rings.dedup();

    let title = format!("Scope stats \u{2014} {name}");
    let mut body = String::with_capacity(4096 + 2000 * scopes.len().min(5000));
    push_header(&mut body, file, &title, scopes.len(), rings.len());
    body.push_str(FORMULA_GUIDE);
    push_warnings(&mut body, warnings);
    push_peaks(&mut body, &scopes, &rings);

    // One timeline per ring.
    body.push_str("<section><h2>Timelines per ring</h2><p class=\"note\">Each resource's metric as a percentage of its capacity, over the ring's scopes in the order they closed; the dashed line is the capacity.</p>\n");
    for &ring in &rings {
        let ring_scopes: Vec<&Scope<'_>> = scopes.iter().filter(|s| s.ring == ring).collect();
        chart(&mut body, ring, &ring_scopes);
    }
    if rings.is_empty() {
        body.push_str("<p>No complete scope (begin and end) in the file.</p>\n");
    }
    body.push_str("</section>\n");

    resource_panels(&mut body, file, pairs, &scopes, &rings);
    push_top_scopes(&mut body, &scopes);
    body.push_str("<pre id=\"selftest-result\" hidden></pre>\n");

    let page = Page {
        title: &title,
        style: STYLE,
        body: &body,
        script: SCRIPT,
    };
    (page.render(), rings)
}

/// Every pair with a ring, with each resource's value, capacity and use.
fn measured_scopes<'f>(file: &'f ScopeStatsFile, pairs: &[ScopePair]) -> Vec<Scope<'f>> {
    let meta = &file.meta;
    pairs
        .iter()
        .enumerate()
        .filter_map(|(index, p)| {
            let begin = &file.records[p.begin];
            let end = &file.records[p.end];
            let ring = end.ring_index()?;
            let mut values = [(0i64, 0i64, 0f64); 4];
            for (k, (res, ..)) in RESOURCES.iter().enumerate() {
                let v = res.risk(begin, end);
                let cap = meta.capacity(*res, ring).unwrap_or(0);
                let f = if cap > 0 { v as f64 / cap as f64 } else { 0.0 };
                values[k] = (v, cap, f);
            }
            Some(Scope {
                index,
                ring,
                begin,
                end,
                values,
            })
        })
        .collect()
}

/// The header: title, the health chip (fatal, dropped records or healthy), the file's
/// version, the counts and the site with the most `end` records.
fn push_header(
    body: &mut String,
    file: &ScopeStatsFile,
    title: &str,
    n_scopes: usize,
    n_rings: usize,
) {
    let meta = &file.meta;
    let mut sites: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for r in &file.records {
        if r.phase == pto_dfx::scope_stats::ScopePhase::End {
            *sites.entry(r.site.as_str()).or_default() += 1;
        }
    }
    let dominant = sites
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        .map(|(s, n)| format!("{s} ({n} scopes)"))
        .unwrap_or_else(|| String::from("none"));
    let (chip_class, chip) = if meta.fatal {
        ("danger", String::from("Fatal"))
    } else if meta.dropped > 0 {
        (
            "warn",
            format!("Dropped records: {} of {}", meta.dropped, meta.total),
        )
    } else {
        ("ok", String::from("Healthy: no fatal, no dropped"))
    };
    let _ = writeln!(
        body,
        "<header><h1>{}</h1><p><span class=\"chip {chip_class}\">{}</span> {} \u{b7} {} records \u{b7} {} scopes \u{b7} {} ring(s) \u{b7} dominant site <code>{}</code></p></header>",
        escape(title),
        escape(&chip),
        match meta.version {
            Some(v) => format!("version {v}"),
            None => format!("generation {}", file.schema()),
        },
        file.records.len(),
        n_scopes,
        n_rings,
        escape(&dominant)
    );
}

/// The formula guide under the header.
const FORMULA_GUIDE: &str = "<details class=\"guide\"><summary>Formula guide</summary><ul>\
<li><b>High water</b> (task window, heap, dep pool): <code>end.X_end \u{2212} begin.X_start</code>, what the scope needed at most; compared with <code>X_max[ring]</code>.</li>\
<li><b>Live at exit</b>: <code>end.X_end \u{2212} end.X_start</code>; <b>Alloc per scope</b>: <code>end.X_end \u{2212} begin.X_end</code>.</li>\
<li><b>TensorMap</b>: live entries at the scope's end (<code>end.tensormap</code>), one global pool against <code>tensormap_max</code>.</li>\
<li>Use bars: red \u{2265} 80 %, amber \u{2265} 50 %. Heap values in MiB.</li></ul></details>\n";

/// The reader's warnings, the first 200 of them.
fn push_warnings(body: &mut String, warnings: &[String]) {
    if warnings.is_empty() {
        return;
    }
    body.push_str("<section class=\"warnings\"><h2>Warnings</h2><ul>");
    for w in warnings.iter().take(200) {
        let _ = write!(body, "<li>{}</li>", escape(w));
    }
    if warnings.len() > 200 {
        let _ = write!(body, "<li>... and {} more</li>", warnings.len() - 200);
    }
    body.push_str("</ul></section>\n");
}

/// The top peaks: per resource and ring (the TensorMap once, global), the scope with the
/// highest value (ties: the earlier scope).
fn push_peaks(body: &mut String, scopes: &[Scope<'_>], rings: &[usize]) {
    body.push_str("<section><h2>Top peaks</h2><table id=\"peaks\"><thead><tr><th>Resource</th><th>ring_depth</th><th>Metric</th><th>Peak</th><th>Capacity</th><th>Use</th><th>Site</th><th>Scope index</th></tr></thead><tbody>\n");
    for (k, (res, label, metric, _)) in RESOURCES.iter().enumerate() {
        let ring_groups: Vec<Option<usize>> = if *res == ScopeResource::Tensormap {
            vec![None]
        } else {
            rings.iter().map(|&r| Some(r)).collect()
        };
        for ring in ring_groups {
            let peak = scopes
                .iter()
                .filter(|s| ring.is_none_or(|r| s.ring == r))
                .max_by(|a, b| {
                    a.values[k]
                        .0
                        .cmp(&b.values[k].0)
                        .then(b.index.cmp(&a.index))
                });
            let Some(s) = peak else { continue };
            let (v, cap, f) = s.values[k];
            let _ = writeln!(
                body,
                "<tr><td>{label}</td><td>{}</td><td>{metric}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td><code>{}</code></td><td class=\"n\">{}</td></tr>",
                ring.map_or_else(|| String::from("global"), |r| r.to_string()),
                fmt_value(*res, v),
                fmt_value(*res, cap),
                use_bar(f),
                escape(&s.end.site),
                s.index
            );
        }
    }
    body.push_str("</tbody></table></section>\n");
}

/// The [`TOP_SCOPES`] scopes with the highest use of any resource.
fn push_top_scopes(body: &mut String, scopes: &[Scope<'_>]) {
    let mut top: Vec<&Scope<'_>> = scopes.iter().collect();
    top.sort_by(|a, b| {
        b.max_use()
            .total_cmp(&a.max_use())
            .then(a.index.cmp(&b.index))
    });
    top.truncate(TOP_SCOPES);
    let _ = writeln!(
        body,
        "<section><h2>Scopes with the highest water marks (top {})</h2><table id=\"top\"><thead><tr><th>#</th><th>Scope index</th><th>Site</th><th>ring</th><th>depth</th><th>task window</th><th>heap</th><th>dep pool</th><th>TensorMap</th><th>Max use</th></tr></thead><tbody>",
        top.len()
    );
    for (rank, s) in top.iter().enumerate() {
        let _ = write!(
            body,
            "<tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n\">{}</td>",
            rank + 1,
            s.index,
            escape(&s.end.site),
            s.ring,
            s.begin.depth
        );
        for (k, (res, ..)) in RESOURCES.iter().enumerate() {
            let (v, cap, f) = s.values[k];
            let _ = write!(
                body,
                "<td class=\"n\">{} / {} <small>({:.2}%)</small></td>",
                fmt_value(*res, v),
                fmt_value(*res, cap),
                f * 100.0
            );
        }
        let _ = writeln!(body, "<td>{}</td></tr>", use_bar(s.max_use()));
    }
    body.push_str("</tbody></table></section>\n");
}

/// One line of a resource panel chart.
struct Line {
    label: &'static str,
    class: &'static str,
    /// Per scope, in the resource's unit (MiB for the heap).
    values: Vec<f64>,
}

/// `v` bytes or entries in the unit the panels show.
fn unit_value(resource: ScopeResource, v: i64) -> f64 {
    if resource == ScopeResource::Heap {
        v as f64 / (1024.0 * 1024.0)
    } else {
        v as f64
    }
}

fn fmt_unit(resource: ScopeResource, v: f64) -> String {
    if resource == ScopeResource::Heap {
        format!("{v:.2} MiB")
    } else if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The panels: per resource, one group per ring (the TensorMap: one global).
fn resource_panels(
    body: &mut String,
    file: &ScopeStatsFile,
    pairs: &[ScopePair],
    scopes: &[Scope<'_>],
    rings: &[usize],
) {
    body.push_str("<section id=\"panels\"><h2>Resource panels</h2><p class=\"note\">Per resource and ring: resource pressure (high water and live at exit) and, in its own chart, what each scope allocated; scopes in the order they closed.</p>\n");
    for (res, label, _, _) in RESOURCES {
        let groups: Vec<Option<usize>> = if res == ScopeResource::Tensormap {
            vec![None]
        } else {
            rings.iter().map(|&r| Some(r)).collect()
        };
        for ring in groups {
            let mut members: Vec<&Scope<'_>> = scopes
                .iter()
                .filter(|s| ring.is_none_or(|r| s.ring == r))
                .collect();
            if members.is_empty() {
                continue;
            }
            // The global TensorMap chart merges every ring in record order.
            members.sort_by_key(|s| pairs[s.index].end);
            let cap = file
                .meta
                .capacity(res, ring.unwrap_or(0))
                .map(|c| unit_value(res, c));
            let ring_label =
                ring.map_or_else(|| String::from("global"), |r| format!("ring_depth {r}"));
            let _ = write!(
                body,
                "<div class=\"rpanel\" data-resource=\"{label}\" data-ring=\"{}\"><h3>{label} \u{b7} {ring_label} \u{b7} {} scope(s)</h3>",
                ring.map_or_else(|| String::from("global"), |r| r.to_string()),
                members.len()
            );
            let metrics: Vec<_> = members
                .iter()
                .map(|s| res.metrics(s.begin, s.end))
                .collect();
            if res == ScopeResource::Tensormap {
                let live = Line {
                    label: "Live entries",
                    class: "m-tensormap_live",
                    values: members.iter().map(|s| f64::from(s.end.tensormap)).collect(),
                };
                line_chart(body, res, "Live entries", &[live], cap, &members);
            } else {
                let pick = |f: fn(&pto_dfx::scope_stats::RingMetrics) -> i64| -> Vec<f64> {
                    metrics
                        .iter()
                        .map(|m| m.as_ref().map_or(0.0, |m| unit_value(res, f(m))))
                        .collect()
                };
                let pressure = [
                    Line {
                        label: "High water",
                        class: "m-scope_high_water",
                        values: pick(|m| m.scope_high_water),
                    },
                    Line {
                        label: "Live at exit",
                        class: "m-real_occupancy",
                        values: pick(|m| m.real_occupancy),
                    },
                ];
                line_chart(body, res, "Resource pressure", &pressure, cap, &members);
                let alloc = Line {
                    label: "Alloc per scope",
                    class: "m-scope_alloc",
                    values: pick(|m| m.scope_alloc),
                };
                line_chart(body, res, "Alloc per scope", &[alloc], cap, &members);
            }
            body.push_str("</div>\n");
        }
    }
    body.push_str("</section>\n");
}

/// One panel chart: `lines` over `scopes`, y from 0 to 1.1 × the peak, and
/// a legend with each line's peak and its use of `cap`.
fn line_chart(
    body: &mut String,
    res: ScopeResource,
    title: &str,
    lines: &[Line],
    cap: Option<f64>,
    scopes: &[&Scope<'_>],
) {
    let n = scopes.len();
    let peak = lines
        .iter()
        .flat_map(|l| l.values.iter().copied())
        .fold(0.0, f64::max);
    let y_max = if peak > 0.0 { peak * 1.1 } else { 1.0 };
    let plot_w = CHART_W - PAD_L - PAD_R;
    let plot_h = CHART_H - PAD_T - PAD_B;
    let x_of = |i: usize| {
        if n <= 1 {
            PAD_L + plot_w / 2.0
        } else {
            PAD_L + plot_w * i as f64 / (n - 1) as f64
        }
    };
    let y_of = |v: f64| PAD_T + plot_h * (1.0 - (v / y_max).clamp(0.0, 1.0));
    let _ = write!(
        body,
        "<figure class=\"rchart\"><figcaption>{}</figcaption><svg viewBox=\"0 0 {CHART_W} {CHART_H}\" role=\"img\" aria-label=\"{}\" xmlns=\"http://www.w3.org/2000/svg\">",
        escape(title),
        escape(title)
    );
    for k in 0..=5 {
        let v = y_max * f64::from(k) / 5.0;
        let y = y_of(v);
        let _ = write!(
            body,
            "<line class=\"grid\" x1=\"{PAD_L}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/><text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            CHART_W - PAD_R,
            num(y),
            num(y),
            PAD_L - 6.0,
            num(y + 4.0),
            fmt_unit(res, v)
        );
    }
    let _ = write!(
        body,
        "<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">scope index</text>",
        num(PAD_L + plot_w / 2.0),
        num(CHART_H - 12.0)
    );
    let step = (n / 2000).max(1);
    let mut legend = String::new();
    for line in lines {
        let mut points = String::new();
        let mut i = 0;
        while i < n {
            let v = line.values[i..(i + step).min(n)]
                .iter()
                .copied()
                .fold(0.0, f64::max);
            let _ = write!(points, "{},{} ", num(x_of(i)), num(y_of(v)));
            i += step;
        }
        let _ = write!(
            body,
            "<polyline class=\"line {}\" fill=\"none\" stroke-width=\"1.5\" points=\"{}\"/>",
            line.class,
            points.trim_end()
        );
        let top = line
            .values
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1).then(b.0.cmp(&a.0)));
        let use_text = |v: f64| match cap {
            Some(c) if c > 0.0 => format!("{:.2}%", v * 100.0 / c),
            _ => String::from("n/a"),
        };
        if let Some((i, &v)) = top {
            let s = scopes[i];
            let _ = write!(
                body,
                "<circle class=\"peak {}\" cx=\"{}\" cy=\"{}\" r=\"4\"><title>{} peak: {} at scope #{} ({}), use {}</title></circle>",
                line.class,
                num(x_of(i)),
                num(y_of(v)),
                line.label,
                fmt_unit(res, v),
                s.index,
                escape(&s.end.site),
                use_text(v)
            );
            let _ = write!(
                legend,
                "<li><i class=\"{}\"></i>{} \u{b7} peak {} \u{b7} use {}</li>",
                line.class,
                line.label,
                fmt_unit(res, v),
                use_text(v)
            );
        }
    }
    let _ = write!(body, "</svg><ul class=\"legend\">{legend}</ul></figure>");
}

const CHART_W: f64 = 900.0;
const CHART_H: f64 = 300.0;
const PAD_L: f64 = 74.0;
const PAD_R: f64 = 24.0;
const PAD_T: f64 = 28.0;
const PAD_B: f64 = 48.0;

/// One ring's SVG timeline.
fn chart(body: &mut String, ring: usize, scopes: &[&Scope<'_>]) {
    let n = scopes.len();
    let peak = scopes.iter().map(|s| s.max_use()).fold(0.0, f64::max);
    // Small peaks get a zoomed axis (the capacity line is then off scale);
    // from 50 % up the axis always reaches the capacity.
    let y_max = if peak * 1.1 >= 0.5 {
        (peak * 1.1).max(1.0)
    } else {
        (peak * 1.25).max(0.001)
    };
    let cap_visible = y_max >= 1.0;
    let pct_digits = if y_max >= 0.2 {
        0
    } else if y_max >= 0.02 {
        1
    } else {
        2
    };
    let plot_w = CHART_W - PAD_L - PAD_R;
    let plot_h = CHART_H - PAD_T - PAD_B;
    let x_of = |i: usize| {
        if n <= 1 {
            PAD_L + plot_w / 2.0
        } else {
            PAD_L + plot_w * i as f64 / (n - 1) as f64
        }
    };
    let y_of = |f: f64| PAD_T + plot_h * (1.0 - (f / y_max).clamp(0.0, 1.0));
    let _ = write!(
        body,
        "<figure class=\"chart\" data-ring=\"{ring}\"><figcaption>ring {ring} \u{b7} {n} scope(s) \u{b7} peak use {:.2}%{}</figcaption>\
<svg viewBox=\"0 0 {CHART_W} {CHART_H}\" role=\"img\" aria-label=\"ring {ring} timeline\" xmlns=\"http://www.w3.org/2000/svg\">",
        peak * 100.0,
        if cap_visible { "" } else { " \u{b7} axis zoomed: the capacity (100 %) is far above" }
    );
    // Axes and grid.
    for k in 0..=4 {
        let f = y_max * f64::from(k) / 4.0;
        let y = y_of(f);
        let _ = write!(
            body,
            "<line class=\"grid\" x1=\"{PAD_L}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/><text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{:.*}%</text>",
            CHART_W - PAD_R,
            num(y),
            num(y),
            PAD_L - 6.0,
            num(y + 4.0),
            pct_digits,
            f * 100.0
        );
    }
    let cap_y = y_of(1.0);
    if cap_visible {
        let _ = write!(
        body,
        "<line class=\"cap\" x1=\"{PAD_L}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/><text class=\"axis cap-label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">capacity</text>",
        CHART_W - PAD_R,
        num(cap_y),
        num(cap_y),
        CHART_W - PAD_R,
        num(cap_y - 4.0)
    );
    }
    let _ = write!(
        body,
        "<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">scope (order of closing, {n} in ring {ring})</text>",
        num(PAD_L + plot_w / 2.0),
        num(CHART_H - 12.0)
    );
    // One series per resource; points are thinned to at most ~2000 per line.
    let step = (n / 2000).max(1);
    for (k, (res, label, _, color)) in RESOURCES.iter().enumerate() {
        let mut points = String::new();
        let mut i = 0;
        while i < n {
            // The maximum of each thinned bucket, so no peak is lost.
            let bucket = &scopes[i..(i + step).min(n)];
            let f = bucket.iter().map(|s| s.values[k].2).fold(0.0, f64::max);
            let _ = write!(points, "{},{} ", num(x_of(i)), num(y_of(f)));
            i += step;
        }
        let _ = write!(
            body,
            "<polyline class=\"series\" data-resource=\"{label}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"1.5\" points=\"{}\"/>",
            points.trim_end()
        );
        // Mark the resource's peak with a tooltip.
        if let Some((i, s)) = scopes.iter().enumerate().max_by(|a, b| {
            a.1.values[k]
                .2
                .total_cmp(&b.1.values[k].2)
                .then(b.0.cmp(&a.0))
        }) {
            let (v, cap, f) = s.values[k];
            let _ = write!(
                body,
                "<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{color}\"><title>{label} peak: {} of {} ({:.2}%) at scope {} ({})</title></circle>",
                num(x_of(i)),
                num(y_of(f)),
                fmt_value(*res, v),
                fmt_value(*res, cap),
                f * 100.0,
                s.index,
                escape(&s.end.site)
            );
        }
    }
    // Legend.
    for (k, (_, label, _, color)) in RESOURCES.iter().enumerate() {
        let x = PAD_L + 10.0 + 150.0 * k as f64;
        let _ = write!(
            body,
            "<rect x=\"{}\" y=\"8\" width=\"12\" height=\"8\" fill=\"{color}\"/><text class=\"axis\" x=\"{}\" y=\"16\">{label}</text>",
            num(x),
            num(x + 16.0)
        );
    }
    body.push_str("</svg></figure>\n");
}

/// The scope-stats page's CSS (`scope_stats_plot/page.css`, included at build time; the file's final
/// newline is dropped, as the page shell adds its own).
const STYLE: &str = include_str!("scope_stats_plot/page.css").trim_ascii_end();

/// The scope-stats page's script (`scope_stats_plot/page.js`, included at build time; the final newline
/// is dropped, as for [`STYLE`]).
const SCRIPT: &str = include_str!("scope_stats_plot/page.js").trim_ascii_end();

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = "{\"version\": 6, \"fatal\": false, \"dropped\": 0, \"total\": 7, \"task_window_max\": [16, 16, 16, 16], \"heap_max\": [1048576, 1048576, 1048576, 1048576], \"dep_pool_max\": [100, 100, 100, 100], \"tensormap_max\": 10}\n";

    fn rec(
        site: &str,
        phase: &str,
        depth: i32,
        tw: (i32, i32),
        heap: (u64, u64),
        tm: i32,
    ) -> String {
        format!(
            "{{\"site\": \"{site}\", \"phase\": \"{phase}\", \"depth\": {depth}, \"ring\": {}, \"task_window_start\": {}, \"task_window_end\": {}, \"heap_start\": {}, \"heap_end\": {}, \"dep_pool_start\": 0, \"dep_pool_end\": 5, \"tensormap\": {tm}}}\n",
            depth.min(3),
            tw.0,
            tw.1,
            heap.0,
            heap.1
        )
    }

    #[test]
    fn page_has_peaks_timelines_and_top_scopes() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("scope_stats.jsonl");
        let mut text = String::from(META);
        text += &rec("<script>alert(1)</script>:1", "begin", 0, (0, 0), (0, 0), 0);
        text += &rec("a.cpp:7", "begin", 1, (0, 0), (0, 0), 0);
        text += &rec("a.cpp:7", "end", 1, (0, 14), (0, 524288), 3);
        text += &rec("a.cpp:7", "begin", 1, (0, 14), (0, 524288), 3);
        text += &rec("a.cpp:7", "end", 1, (10, 15), (262144, 786432), 9);
        text += &rec("<script>alert(1)</script>:1", "end", 0, (0, 2), (0, 0), 9);
        text += &rec("b.cpp:9", "end", 2, (0, 1), (0, 1), 0);
        std::fs::write(&input, text).unwrap();
        let report = plot(&input, None).unwrap();
        assert_eq!(report.output, dir.path().join("scope_stats.html"));
        assert_eq!(report.n_records, 7);
        assert_eq!(report.n_scopes, 3);
        assert_eq!(report.rings, [0, 1]);
        assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
        assert!(report.warnings[0].contains("no matching begin"));
        let html = std::fs::read_to_string(&report.output).unwrap();
        assert!(!html.contains("<script>alert(1)</script>"));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;:1"));
        assert!(html.contains("Healthy: no fatal, no dropped"));
        assert_eq!(html.matches("<figure class=\"chart\"").count(), 2);
        // Ring 1's task-window peak: 15 − 0 of 16 = 93.8 % → danger.
        assert!(html.contains("<td>task window</td><td>1</td><td>High water</td><td class=\"n\">15</td><td class=\"n\">16</td><td><div class=\"bar danger\">"), "{html}");
        // Heap in MiB: 786432 − 0 bytes = 0.75 MiB.
        assert!(html.contains("0.75 MiB"));
        assert!(html.contains(
            "<td>TensorMap</td><td>global</td><td>Live at exit</td><td class=\"n\">9</td>"
        ));
        assert!(html.contains("dominant site <code>a.cpp:7 (2 scopes)</code>"));
        // Simpler's precision: 15 of 16 is 93.75%.
        assert!(html.contains("<em>93.75%</em>"), "{html}");
        // Panels: 3 ring resources × 2 rings + the global TensorMap; two charts each but one.
        assert_eq!(html.matches("<div class=\"rpanel\"").count(), 7);
        assert_eq!(html.matches("<figure class=\"rchart\">").count(), 13);
        // Ring 1, task window: live at exit is 14 − 0 then 15 − 10, alloc per scope
        // 14 − 0 then 15 − 14: both peak at 14 of 16.
        assert!(
            html.contains("Live at exit \u{b7} peak 14 \u{b7} use 87.50%"),
            "{html}"
        );
        assert!(
            html.contains("Alloc per scope \u{b7} peak 14 \u{b7} use 87.50%"),
            "{html}"
        );
        // Heap, ring 1: live at exit 524288 − 0, then 786432 − 262144 bytes: 0.50 MiB.
        assert!(
            html.contains("Live at exit \u{b7} peak 0.50 MiB \u{b7} use 50.00%"),
            "{html}"
        );
    }

    #[test]
    fn fatal_and_dropped_chips() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("s.jsonl");
        std::fs::write(&input, META.replace("\"fatal\": false", "\"fatal\": true")).unwrap();
        plot(&input, None).unwrap();
        let html = std::fs::read_to_string(dir.path().join("scope_stats.html")).unwrap();
        assert!(html.contains("chip danger\">Fatal<"));
        assert!(html.contains("No complete scope"));
        std::fs::write(&input, META.replace("\"dropped\": 0", "\"dropped\": 2")).unwrap();
        let out = dir.path().join("x.html");
        plot(&input, Some(&out)).unwrap();
        assert!(std::fs::read_to_string(&out)
            .unwrap()
            .contains("Dropped records: 2 of 7"));
    }

    #[test]
    fn unreadable_metadata_names_file_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("scope_stats.jsonl");
        std::fs::write(&input, "{\"version\": 6}\n").unwrap();
        let msg = plot(&input, None).unwrap_err().to_string();
        assert!(msg.contains(&input.display().to_string()), "{msg}");
        assert!(msg.contains('`'), "{msg}");
    }
}
