"""``benchmark()``: time repeated launches of a compiled program; :class:`BenchmarkStats`
with PyPTO's fields, summaries and texts.

The launches run in the runner (``pto_runner::benchmark``, the loop ``pto bench`` runs):
the build is loaded once, then ``warmup`` discarded and ``rounds`` measured launches run
from the same inputs. Each measured round gives a device wall time (orchestration start to
the last task's end, on the simulated chip's clock) and a host wall time (the whole
launch), in microseconds. This runtime emits no Simpler ``[STRACE]`` span tree, so
``invocations`` stays empty (as on PyPTO's ``*sim`` platforms) and the tree views say so;
unlike PyPTO's simulators, ``device_wall_us`` holds real values.

Typical use on a replayed build::

    rebuild_kernel_cpp_from_pto(work_dir)
    invalidate_binary_cache(work_dir)
    stats = benchmark(CompiledProgram.from_dir(work_dir), [a, b, c], rounds=100)
    print(stats)
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from pypto import _native
from pypto.runtime.runner import RunConfig

__all__ = ["BenchmarkStats", "TraceInvocation", "TraceSpan", "benchmark"]

_NO_TREE_MSG = "BenchmarkStats: no span tree captured (non-SIMPLER_HOST_STRACE build or *sim platform)"
_UNSTABLE_SLOTS_MSG = (
    "BenchmarkStats: per-dispatch view unavailable — a rank's dispatch order varies between "
    "rounds, so a slot does not identify one callable. The per-rank / per-round sums are "
    "unaffected."
)
_METRICS = {"device": "device_wall_us", "effective": "effective_us", "host": "host_wall_us"}
#: The span names of one launch: the whole run, the device wall, its two halves.
_SPAN_NAMES = {
    "host": "chip.run",
    "device": "chip.run.runner_run.device_wall",
    "orch": "chip.run.runner_run.device_wall.orch",
    "sched": "chip.run.runner_run.device_wall.sched",
}
_STR_MAX_DISPATCHES = 8


def _span_names() -> Dict[str, str]:
    """The span names a launch's tree uses (``host``, ``device``, ``orch``, ``sched``)."""
    return dict(_SPAN_NAMES)


@dataclass
class TraceSpan:
    """One span of a launch's call tree; times in nanoseconds."""

    pid: int
    tid: int
    inv: int
    hid: str
    depth: int
    name: str
    ts: int
    dur: int
    attrs: str

    @property
    def is_device(self) -> bool:
        """True for a span on the device clock (``clk=dev`` in ``attrs``)."""
        return "clk=dev" in self.attrs

    @property
    def dur_us(self) -> float:
        """The duration in microseconds."""
        return self.dur / 1000.0


@dataclass
class TraceInvocation:
    """Every span of one launch (one ``(pid, inv)``)."""

    pid: int
    inv: int
    hid: str
    spans: List[TraceSpan] = field(default_factory=list)

    def root(self) -> Optional[TraceSpan]:
        """The depth-0 span, if any."""
        return next((s for s in self.spans if s.depth == 0), None)

    def by_name(self) -> Dict[str, TraceSpan]:
        """Each span name's first span."""
        out: Dict[str, TraceSpan] = {}
        for s in self.spans:
            out.setdefault(s.name, s)
        return out

    @property
    def task(self) -> str:
        """The callable's identity (``hid``)."""
        return self.hid

    @property
    def task_name(self) -> str:
        """The callable's readable name; this runtime has only the ``hid``."""
        return self.hid

    def _span_us(self, key: str) -> float:
        span = self.by_name().get(_SPAN_NAMES[key])
        return span.dur_us if span is not None else 0.0

    @property
    def device_wall_us(self) -> float:
        """The device wall span (µs), 0 when absent."""
        return self._span_us("device")

    @property
    def host_wall_us(self) -> float:
        """The whole-run span (µs), 0 when absent."""
        return self._span_us("host")

    @property
    def effective_us(self) -> float:
        """The union of the orchestrator and scheduler spans (µs), 0 when both are absent."""
        by = self.by_name()
        spans = [by[n] for n in (_SPAN_NAMES["orch"], _SPAN_NAMES["sched"]) if n in by]
        if not spans:
            return 0.0
        return (max(s.ts + s.dur for s in spans) - min(s.ts for s in spans)) / 1000.0

    def format_tree(self, *, us: bool = True, value_fn: Optional[Callable[[TraceSpan], List[str]]] = None) -> str:
        """The span tree with ``|-`` / `` `- `` connectors: a span's parent is the span
        named by its longest dotted prefix, siblings in start order, device spans tagged
        ``[dev]``; names left-aligned, value columns (``value_fn``, default the duration)
        right-aligned."""
        by = self.by_name()

        def parent(name: str) -> Optional[str]:
            parts = name.split(".")
            for cut in range(len(parts) - 1, 0, -1):
                candidate = ".".join(parts[:cut])
                if candidate in by:
                    return candidate
            return None

        children: Dict[Optional[str], List[str]] = defaultdict(list)
        for name in by:
            children[parent(name)].append(name)
        rows: List[Tuple[str, List[str]]] = []
        # Depth-first without recursion: (name, prefix for the row, prefix for children).
        stack: List[Tuple[str, str, str]] = [
            (n, "", "") for n in reversed(sorted(children[None], key=lambda n: by[n].ts))
        ]
        while stack:
            name, prefix, child_prefix = stack.pop()
            up = parent(name)
            leaf = name[len(up) + 1 :] if up is not None else name
            tag = " [dev]" if by[name].is_device else ""
            span = by[name]
            cols = value_fn(span) if value_fn is not None else [f"{span.dur / 1000.0:.1f}us" if us else f"{span.dur}ns"]
            rows.append((f"{prefix}{leaf}{tag}", cols))
            kids = sorted(children[name], key=lambda n: by[n].ts)
            for i in reversed(range(len(kids))):
                last = i == len(kids) - 1
                stack.append(
                    (kids[i], child_prefix + ("`- " if last else "|- "), child_prefix + ("   " if last else "|  "))
                )
        width = max((len(label) for label, _ in rows), default=0)
        ncols = max((len(cols) for _, cols in rows), default=0)
        col_w = [max((len(cols[i]) for _, cols in rows if i < len(cols)), default=0) for i in range(ncols)]
        lines = []
        for label, cols in rows:
            line = label.ljust(width) + "".join("  " + c.rjust(col_w[i]) for i, c in enumerate(cols))
            lines.append(line.rstrip())
        return "\n".join(lines)


def _mean_of(invocations: Sequence[TraceInvocation]) -> Optional[TraceInvocation]:
    """One invocation whose spans' ``ts`` / ``dur`` are the means over ``invocations``
    (matched by name; ``inv`` -1)."""
    if not invocations:
        return None
    durs: Dict[str, List[int]] = defaultdict(list)
    tss: Dict[str, List[int]] = defaultdict(list)
    first: Dict[str, TraceSpan] = {}
    for inv in invocations:
        for s in inv.spans:
            durs[s.name].append(s.dur)
            tss[s.name].append(s.ts)
            first.setdefault(s.name, s)
    spans = [
        TraceSpan(t.pid, t.tid, -1, t.hid, t.depth, name, round(statistics.fmean(tss[name])), round(statistics.fmean(durs[name])), t.attrs)
        for name, t in first.items()
    ]
    return TraceInvocation(invocations[0].pid, -1, invocations[0].hid, spans)


def _metric(metric: str, caller: str) -> str:
    attr = _METRICS.get(metric)
    if attr is None:
        raise ValueError(f"{caller}: metric must be one of {sorted(_METRICS)}, got {metric!r}")
    return attr


@dataclass
class BenchmarkStats:
    """Per-round timings of :func:`benchmark`, in microseconds (PyPTO's
    ``BenchmarkStats``; mutable, every field defaulted).

    ``device_wall_us`` / ``host_wall_us``: one value per measured round. ``invocations``:
    each launch's span tree (empty here, see the module docs); ``rounds_dispatches``,
    ``fallback_flattened``, ``unstable_dispatch_slots``: the L3 per-rank grid and its
    flags. ``samples`` *is* ``device_wall_us``. The summaries (``device_us_*``, aliased
    ``device_wall_us_*``) are 0.0 for no samples; ``stdev`` needs two.
    """

    device_wall_us: List[float] = field(default_factory=list)
    host_wall_us: List[float] = field(default_factory=list)
    rounds: int = 0
    warmup: int = 0
    invocations: List[TraceInvocation] = field(default_factory=list)
    rounds_dispatches: List[Dict[int, List[TraceInvocation]]] = field(default_factory=list)
    fallback_flattened: bool = False
    unstable_dispatch_slots: bool = False

    # --- the per-dispatch, per-rank and per-round views ---------------------------------

    def dispatch_groups(self) -> Dict[Tuple[int, int], List[TraceInvocation]]:
        """``{(pid, slot): [round0, round1, ...]}`` of the L3 grid (``{}`` for L2, the
        flattened fallback, and unstable slots)."""
        if self.unstable_dispatch_slots:
            return {}
        out: Dict[Tuple[int, int], List[TraceInvocation]] = {}
        for ranks in self.rounds_dispatches:
            for pid, dispatches in ranks.items():
                for slot, dispatch in enumerate(dispatches):
                    out.setdefault((pid, slot), []).append(dispatch)
        return {k: out[k] for k in sorted(out)}

    def dispatch_tasks(self) -> Dict[Tuple[int, int], str]:
        """``{(pid, slot): task name}`` from each dispatch's first round."""
        return {k: g[0].task_name for k, g in self.dispatch_groups().items() if g}

    def per_dispatch(self, metric: str = "device") -> Dict[Tuple[int, int], List[float]]:
        """Each dispatch's own per-round value of ``metric`` (``device``, ``effective``,
        ``host``)."""
        attr = _metric(metric, "per_dispatch()")
        return {k: [getattr(d, attr) for d in g] for k, g in self.dispatch_groups().items()}

    def per_rank(self, metric: str = "device") -> Dict[int, List[float]]:
        """Each rank's per-round sum of its dispatches' ``metric``."""
        attr = _metric(metric, "per_rank()")
        n = len(self.rounds_dispatches)
        out: Dict[int, List[float]] = {}
        for k, ranks in enumerate(self.rounds_dispatches):
            for pid, dispatches in ranks.items():
                out.setdefault(pid, [0.0] * n)[k] = sum(getattr(d, attr) for d in dispatches)
        return out

    def per_round(self, metric: str = "device") -> List[float]:
        """One value per measured round: ``device`` / ``host`` (the stored lists),
        ``effective`` (L3: the slowest rank's; else each launch's), ``union`` (L3: the
        host-timeline window across ranks)."""
        if metric == "device":
            return list(self.device_wall_us)
        if metric == "host":
            return list(self.host_wall_us)
        if metric == "effective":
            ranks = self.per_rank("effective")
            if ranks:
                return [max(v[k] for v in ranks.values()) for k in range(len(self.rounds_dispatches))]
            return [inv.effective_us for inv in self.invocations]
        if metric == "union":
            out = []
            for grid in self.rounds_dispatches:
                spans = [
                    d.by_name()[_SPAN_NAMES["host"]]
                    for dispatches in grid.values()
                    for d in dispatches
                    if _SPAN_NAMES["host"] in d.by_name()
                ]
                out.append((max(s.ts + s.dur for s in spans) - min(s.ts for s in spans)) / 1000.0 if spans else 0.0)
            return out
        raise ValueError(f"per_round(): unknown metric {metric!r}")

    # --- span trees ---------------------------------------------------------------------

    def _coords(self) -> Dict[int, Tuple[int, int]]:
        return {
            id(d): (k, slot)
            for k, ranks in enumerate(self.rounds_dispatches)
            for dispatches in ranks.values()
            for slot, d in enumerate(dispatches)
        }

    def format_tree(self, launch: Optional[int] = None, *, us: bool = True) -> str:
        """Each measured launch's span tree (or launch ``launch``'s)."""
        if not self.invocations:
            return _NO_TREE_MSG
        chosen = list(enumerate(self.invocations)) if launch is None else [(launch, self.invocations[launch])]
        where = self._coords()
        out: List[str] = []
        for i, inv in chosen:
            coord = where.get(id(inv))
            tag = f" round={coord[0]} slot={coord[1]}" if coord is not None else ""
            if inv.task_name != inv.hid:
                tag += f" task={inv.task_name}"
            out.append(f"launch[{i}] (pid={inv.pid} inv={inv.inv} hid={inv.hid}{tag}):")
            out.append(inv.format_tree(us=us))
        return "\n".join(out)

    def print_tree(self, launch: Optional[int] = None, *, us: bool = True, file: Any = None) -> None:
        """Prints :meth:`format_tree`."""
        print(self.format_tree(launch, us=us), file=file)

    def _mean_groups(self, pid: Optional[int], slot: Optional[int]) -> List[Tuple[Optional[str], List[TraceInvocation]]]:
        if self.unstable_dispatch_slots:
            return []
        groups = self.dispatch_groups()
        if not groups:
            if pid is not None or slot is not None:
                return []
            return [(None, self.invocations)] if self.invocations else []
        tasks = self.dispatch_tasks()
        return [
            (f"pid={k[0]} slot={k[1]} task={tasks[k]}", g)
            for k, g in groups.items()
            if (pid is None or k[0] == pid) and (slot is None or k[1] == slot)
        ]

    def mean_invocation(self, *, pid: Optional[int] = None, slot: Optional[int] = None) -> Optional[TraceInvocation]:
        """One launch whose every span is the mean over the measured launches of one
        dispatch; ``None`` without trees. ``ValueError`` when the selectors leave several
        L3 dispatches."""
        groups = self._mean_groups(pid, slot)
        if not groups:
            return None
        if len(groups) > 1:
            raise ValueError(
                f"mean_invocation(): {len(groups)} dispatches match pid={pid} slot={slot} "
                f"({sorted(self.dispatch_groups())}); averaging them by span name would fuse "
                "distinct dispatches. Pass pid=/slot= to select one, or use format_mean_tree()."
            )
        return _mean_of(groups[0][1])

    def format_mean_tree(
        self, *, us: bool = True, spread: str = "stdev", pid: Optional[int] = None, slot: Optional[int] = None
    ) -> str:
        """The mean span tree per dispatch, each node with its spread (``stdev``,
        ``minmax``, ``both`` or ``none``)."""
        groups = self._mean_groups(pid, slot)
        if not groups:
            if self.unstable_dispatch_slots:
                return _UNSTABLE_SLOTS_MSG
            if self.invocations:
                return f"BenchmarkStats: no dispatch matches pid={pid} slot={slot}"
            return _NO_TREE_MSG
        scale, unit = (1000.0, "us") if us else (1.0, "ns")
        legend = "mean" + (" ±stdev" if spread in ("stdev", "both") else "")
        legend += " [min..max]" if spread in ("minmax", "both") else ""
        out: List[str] = []
        for label, invs in groups:
            mean = _mean_of(invs)
            if mean is None:
                continue
            durs: Dict[str, List[int]] = defaultdict(list)
            for inv in invs:
                for s in inv.spans:
                    durs[s.name].append(s.dur)

            def columns(span: TraceSpan, durs: Dict[str, List[int]] = durs) -> List[str]:
                ds = durs[span.name]
                cols = [f"{statistics.fmean(ds) / scale:.1f}{unit}"]
                if spread in ("stdev", "both"):
                    cols.append(f"±{(statistics.stdev(ds) if len(ds) > 1 else 0.0) / scale:.1f}")
                if spread in ("minmax", "both"):
                    cols.append(f"[{min(ds) / scale:.1f}..{max(ds) / scale:.1f}]")
                return cols

            if out:
                out.append("")
            head = f"dispatch {label} — " if label is not None else ""
            out.append(f"{head}mean of {len(invs)} launches (warmup {self.warmup} excluded); each node: {legend}:")
            out.append(mean.format_tree(us=us, value_fn=columns))
        return "\n".join(out)

    def print_mean_tree(
        self,
        *,
        us: bool = True,
        spread: str = "stdev",
        pid: Optional[int] = None,
        slot: Optional[int] = None,
        file: Any = None,
    ) -> None:
        """Prints :meth:`format_mean_tree`."""
        print(self.format_mean_tree(us=us, spread=spread, pid=pid, slot=slot), file=file)

    # --- summaries ----------------------------------------------------------------------

    @property
    def samples(self) -> List[float]:
        """``device_wall_us`` itself (the same list)."""
        return self.device_wall_us

    # Every summary is the runner's (``pto bench``'s) computation over the current samples:
    # one implementation of the statistics (crates/pto-runner/src/bench_stats.rs).

    @property
    def device_us_min(self) -> float:
        """Smallest device wall time (µs; 0.0 for no samples)."""
        return self._runner_stats().device_us_min

    @property
    def device_us_median(self) -> float:
        """Median device wall time (µs; the mean of the two middle ones for an even count)."""
        return self._runner_stats().device_us_median

    @property
    def device_us_mean(self) -> float:
        """Mean device wall time (µs)."""
        return self._runner_stats().device_us_mean

    @property
    def device_us_max(self) -> float:
        """Largest device wall time (µs)."""
        return self._runner_stats().device_us_max

    @property
    def device_us_stdev(self) -> float:
        """Sample standard deviation of the device wall times (µs; 0.0 below two)."""
        return self._runner_stats().device_us_stdev

    device_wall_us_min = device_us_min
    device_wall_us_median = device_us_median
    device_wall_us_mean = device_us_mean
    device_wall_us_max = device_us_max
    device_wall_us_stdev = device_us_stdev

    @property
    def device_us_p90(self) -> float:
        """90th percentile of the device wall times (this runtime's; linear interpolation
        between closest ranks, NumPy's default)."""
        return self._runner_stats().device_us_p90

    @property
    def device_us_p99(self) -> float:
        """99th percentile of the device wall times (this runtime's; as ``device_us_p90``)."""
        return self._runner_stats().device_us_p99

    @property
    def host_us_min(self) -> float:
        """Smallest host wall time (µs; this runtime's)."""
        return self._runner_stats().host_us_min

    @property
    def host_us_median(self) -> float:
        """Median host wall time (µs; this runtime's)."""
        return self._runner_stats().host_us_median

    @property
    def host_us_mean(self) -> float:
        """Mean host wall time (µs; this runtime's)."""
        return self._runner_stats().host_us_mean

    @property
    def host_us_max(self) -> float:
        """Largest host wall time (µs; this runtime's)."""
        return self._runner_stats().host_us_max

    @property
    def host_us_stdev(self) -> float:
        """Sample standard deviation of the host wall times (µs; this runtime's)."""
        return self._runner_stats().host_us_stdev

    @property
    def all_zero_device(self) -> bool:
        """True when there are samples and every one is 0."""
        return bool(self.device_wall_us) and not any(self.device_wall_us)

    def __str__(self) -> str:
        if not self.device_wall_us:
            return f"BenchmarkStats(rounds={self.rounds}: no samples)"
        if self.all_zero_device:
            return (
                f"BenchmarkStats(rounds={self.rounds}): device_wall_us all 0 — runtime built "
                "without SIMPLER_HOST_STRACE or sim platform (use host_wall_us)"
            )
        suffix = ""
        if self.rounds_dispatches:
            n_ranks = len({pid for ranks in self.rounds_dispatches for pid in ranks})
            suffix = f" [L3: {n_ranks} ranks, per-round max across ranks"
            union = self.per_round("union")
            if union:
                suffix += f"; host-union mean={statistics.fmean(union):.1f}us"
            suffix += "]"
        elif self.fallback_flattened:
            suffix = " [L3: flattened per-dispatch pool — non-deterministic dispatch shape]"
        return (
            f"BenchmarkStats(rounds={self.rounds}, warmup={self.warmup}): device_wall_us "
            f"min={self.device_us_min:.1f} median={self.device_us_median:.1f} "
            f"mean={self.device_us_mean:.1f} max={self.device_us_max:.1f} "
            f"stdev={self.device_us_stdev:.1f}{suffix}{self._per_dispatch_line()}"
        )

    def _per_dispatch_line(self) -> str:
        per = self.per_dispatch("device")
        if len(per) <= len(self.per_rank("device")):
            return ""
        tasks = self.dispatch_tasks()
        shown = list(per.items())[:_STR_MAX_DISPATCHES]
        cells = [f"(pid={p},slot={s},task={tasks[p, s]})={statistics.fmean(v):.1f}" for (p, s), v in shown]
        if len(per) > len(shown):
            cells.append(f"... +{len(per) - len(shown)} more")
        return "\n  per-dispatch device mean us: " + "  ".join(cells)

    def to_json(self) -> str:
        """The samples and summaries as JSON (this runtime's; the form ``pto bench --json``
        prints)."""
        return self._runner_stats().to_json()

    def _runner_stats(self) -> _native.BenchmarkStats:
        """The runner's statistics of the current samples (``pto bench``'s computation)."""
        return _native.BenchmarkStats(self.device_wall_us, self.host_wall_us, self.rounds, self.warmup)


def benchmark(
    compiled: Any,
    args: Sequence[Any],
    *,
    rounds: int = 100,
    warmup: int = 3,
    platform: Optional[str] = None,
    device_id: Optional[int] = None,
    config: Optional[RunConfig] = None,
    persistent: bool = False,
    reset_persistent_windows: Optional[bool] = None,
) -> BenchmarkStats:
    """Loads ``compiled`` once, runs ``warmup`` discarded and ``rounds`` measured launches
    with ``args`` (as ``compiled(*args)`` takes them: every parameter, or the inputs of a
    program that returns something) and returns the timings. Outputs hold the last
    launch's values.

    ``config`` (or ``platform`` / ``device_id``, not both) selects the platform and run
    options; ``persistent`` / ``reset_persistent_windows`` apply only to distributed
    programs. Raises ``ValueError`` for ``rounds <= 0``, ``warmup < 0`` or conflicting
    options, with PyPTO's texts.
    """
    if rounds <= 0:
        raise ValueError(f"rounds must be positive, got {rounds}")
    if warmup < 0:
        raise ValueError(f"warmup must be non-negative, got {warmup}")
    if persistent or reset_persistent_windows is not None:
        raise ValueError(
            "benchmark(): persistent/reset_persistent_windows apply only to an L3 "
            "DistributedCompiledProgram"
        )
    if config is not None and (platform is not None or device_id is not None):
        raise ValueError("benchmark(): pass either config=... or platform=/device_id=, not both")
    if not callable(getattr(compiled, "build_orch_args", None)):
        raise TypeError(
            "benchmark() expects a compiled program (CompiledProgram.from_dir(...) or "
            f"ir.compile(...)), got {type(compiled).__name__}"
        )
    if config is None:
        kwargs: Dict[str, Any] = {"platform": platform or compiled.platform}
        if device_id is not None:
            kwargs["device_id"] = device_id
        config = RunConfig(**kwargs)
    orch_args, _, _ = compiled.build_orch_args(*args)
    program = compiled.chip_callable
    if config.platform != compiled.platform:
        from pypto.runtime.device_runner import _load_program

        program = _load_program(compiled.output_dir, config.platform)
    raw = program.benchmark(orch_args, config.native_options(), rounds, warmup)
    return BenchmarkStats(
        device_wall_us=list(raw.device_wall_us),
        host_wall_us=list(raw.host_wall_us),
        rounds=raw.rounds,
        warmup=raw.warmup,
    )
