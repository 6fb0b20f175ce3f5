"""Where the cross-data-set benchmark's CPU time went, from its results archive alone.

    python benchmarks/benchmark_compute.py [--archive benchmarks/results/benchmark.tar.xz]
        [--held-out ar,pie,...] [--before <an earlier archive of the run>]

Prints (markdown) the fit CPU time of the archived run split by protocol, the fits kept from
an earlier, smaller budget (their ``budget_seconds``), the methods and (method, data set)
pairs that took most, and, with ``--held-out``, how well :mod:`ufs.pipeline.cost_estimate`
predicts data sets it has not seen: its models are fitted on every *other* data set's
label-free fits (as the report's "not run yet" section does before those sets are run) and
compared with the measured label-free CPU time of the held-out sets; with ``--before``, the
fit CPU-h of each method whose chunks were re-run since that archive (a solver change), before
and after, and the totals. Nothing is fitted or timed here; the numbers are the run's own
(``time.process_time`` of each fit job, one BLAS thread). ``docs/performance.md`` quotes this
script's output.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import tempfile
from pathlib import Path

from ufs.fileio import read_json
from ufs.pipeline.archive import read_archive, restore_archive


def evaluations(folder: Path) -> list[dict]:
    """Every evaluation entry of the restored run (one per fit chunk and setting)."""
    out = []
    for path in sorted((folder / "evaluations").glob("*/*.json")):
        out.extend(read_json(path)["evaluations"])
    return out


def shapes(folder: Path) -> dict[str, tuple[int, int, int]]:
    """``(n, p, classes)`` of each data set from the archived data records."""
    out = {}
    for path in sorted((folder / "data").glob("*.json")):
        d = read_json(path)
        out[path.stem] = (d["n_samples"], d["n_features"], d["n_classes"])
    return out


def _h(seconds: float) -> str:
    return f"{seconds / 3600:.2f}"


def split_section(evs: list[dict], budget: float) -> list[str]:
    """Fit CPU-h by protocol and by the budget the fit ran under."""
    lf = tuned = 0.0
    by_budget: dict[float, list[float]] = collections.defaultdict(lambda: [0, 0.0])
    for e in evs:
        cpu = float(e.get("fit_cpu_seconds_total") or 0.0)
        if e.get("label_free"):
            lf += cpu
        else:
            tuned += cpu
        nfits = len(e["results"]) if e["kind"] == "subset" else 1
        by_budget[float(e.get("budget_seconds") or 0)][0] += nfits
        by_budget[float(e.get("budget_seconds") or 0)][1] += cpu
    lines = [
        f"- fit CPU-h: {_h(lf + tuned)} in total; label-free settings {_h(lf)}, "
        f"settings only the label-tuned grid needs {_h(tuned)}",
    ]
    for b, (nfits, cpu) in sorted(by_budget.items()):
        what = "the run's budget" if b == budget else "kept from an earlier budget"
        lines.append(f"- fits under a {b:g} CPU-s budget ({what}): {nfits}, {_h(cpu)} CPU-h")
    return lines


def method_section(evs: list[dict], top: int = 8) -> list[str]:
    """The methods and (method, data set) pairs with the most fit CPU time."""
    per_method: collections.Counter = collections.Counter()
    per_pair: collections.Counter = collections.Counter()
    for e in evs:
        cpu = float(e.get("fit_cpu_seconds_total") or 0.0)
        per_method[e["method"]] += cpu
        per_pair[(e["method"], e["dataset_base"])] += cpu
    total = sum(per_method.values()) or 1.0
    lines = ["", "| method | fit CPU-h | share |", "|---|---:|---:|"]
    for m, cpu in per_method.most_common(top):
        lines.append(f"| `{m}` | {_h(cpu)} | {100 * cpu / total:.0f} % |")
    lines += ["", "| method | data set | fit CPU-s |", "|---|---|---:|"]
    for (m, d), cpu in per_pair.most_common(top):
        lines.append(f"| `{m}` | {d} | {cpu:.0f} |")
    return lines


def dataset_section(evs: list[dict], top: int = 6) -> list[str]:
    """Label-free fit CPU-h per data set: the spread and the most expensive sets."""
    per_set: collections.Counter = collections.Counter()
    for e in evs:
        if e.get("label_free"):
            per_set[e["dataset_base"]] += float(e.get("fit_cpu_seconds_total") or 0.0)
    if not per_set:
        return []
    values = sorted(per_set.values())
    median = statistics.median(values)
    largest = ", ".join(f"{d} {_h(c)}" for d, c in per_set.most_common(top))
    return [
        f"- label-free fit CPU-h per data set ({len(values)} sets): {_h(values[0])} to "
        f"{_h(values[-1])}, median {_h(median)}; the largest: {largest}",
    ]


def thinning_section(evs: list[dict], config: dict) -> list[str]:
    """What the label-tuned protocol would cost on the full registry grids: each method's
    measured mean fit CPU time per (data set, grid setting) on the tuned data sets, times
    the full grid's size, against what the thinned grids took."""
    from ufs.pipeline.config import thin_grid
    from ufs.registry import expand_grid, get_method

    tuned = set(config.get("oracle_datasets") or [])
    cap = config.get("grid_max_settings")
    cpu: collections.Counter = collections.Counter()
    chunks: collections.Counter = collections.Counter()
    for e in evs:
        if e["dataset_base"] in tuned and e.get("in_grid"):
            cpu[e["method"]] += float(e.get("fit_cpu_seconds_total") or 0.0)
            chunks[e["method"]] += 1
    lines = [
        "",
        f"Label-tuned protocol on {len(tuned)} data sets, grids thinned to ≤ {cap} settings:",
        "",
        "| method | full grid | thinned | measured CPU-h | full grid, CPU-h (scaled) |",
        "|---|---:|---:|---:|---:|",
    ]
    total_thin = total_full = 0.0
    for m in config.get("methods") or {}:
        spec = get_method(m)
        if not spec.grid or not chunks[m]:
            continue
        full, thin = len(expand_grid(spec.grid)), len(expand_grid(thin_grid(spec.grid, cap)))
        scaled = cpu[m] / chunks[m] * full * len(tuned)
        total_thin, total_full = total_thin + cpu[m], total_full + scaled
        lines.append(f"| `{m}` | {full} | {thin} | {_h(cpu[m])} | {_h(scaled)} |")
    lines.append(f"| **total** | | | **{_h(total_thin)}** | **{_h(total_full)}** |")
    return lines


def held_out_section(folder: Path, config: dict, held_out: list[str]) -> list[str]:
    """The cost model's prediction for each held-out data set, fitted without it
    (:func:`ufs.pipeline.cost_estimate.held_out_ratios`, as the report checks its estimate)."""
    from ufs.pipeline.config import resolve_h
    from ufs.pipeline.cost_estimate import fit_costs, held_out_ratios
    from ufs.report.benchmark_report import method_kinds

    shp = shapes(folder)
    files = sorted((folder / "evaluations").glob("*/*.json"))
    grids = config.get("datasets") or {}
    hs = {d: list(resolve_h((grids.get(d) or {}).get("h"), shp[d][1])) for d in held_out}
    budget = float((config.get("jobs") or {}).get("fit_budget_seconds") or 600)
    checked = held_out_ratios(fit_costs(files, shp), hs, method_kinds(config), budget, held_out)
    lines = [
        "",
        "| data set (n × p) | estimated CPU-h | measured CPU-h | measured / estimated |",
        "|---|---:|---:|---:|",
    ]
    for r in checked.itertuples():
        lines.append(
            f"| {r.dataset} ({r.n} × {r.p}) | {_h(r.estimated)} | {_h(r.measured)} "
            f"| {r.ratio:.2f} |"
        )
    return lines


def _cpu_by(evs: list[dict], key) -> collections.Counter:
    out: collections.Counter = collections.Counter()
    for e in evs:
        out[key(e)] += float(e.get("fit_cpu_seconds_total") or 0.0)
    return out


def before_after_section(before: list[dict], after: list[dict]) -> list[str]:
    """Fit CPU time of the same plan in two archives of the run (before and after a solver
    change re-ran that solver's chunks): per re-run method, and in total."""
    b_m, a_m = _cpu_by(before, lambda e: e["method"]), _cpu_by(after, lambda e: e["method"])
    b_lf = _cpu_by(before, lambda e: bool(e.get("label_free")))[True]
    a_lf = _cpu_by(after, lambda e: bool(e.get("label_free")))[True]
    rerun = sorted(m for m in set(b_m) | set(a_m) if b_m[m] != a_m[m])
    lines = [
        "",
        "| method (re-run) | before, fit CPU-h | after, fit CPU-h | before / after |",
        "|---|---:|---:|---:|",
    ]
    for m in rerun:
        ratio = f"{b_m[m] / a_m[m]:.1f}" if a_m[m] else "—"
        lines.append(f"| `{m}` | {_h(b_m[m])} | {_h(a_m[m])} | {ratio} |")
    tb, ta = sum(b_m.values()), sum(a_m.values())
    lines.append(f"| **all methods** | **{_h(tb)}** | **{_h(ta)}** | **{tb / ta:.2f}** |")
    lines.append(f"| label-free settings | {_h(b_lf)} | {_h(a_lf)} | {b_lf / a_lf:.2f} |")
    return lines


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--archive", default="benchmarks/results/benchmark.tar.xz")
    ap.add_argument("--held-out", default="", help="comma-separated data sets to predict")
    ap.add_argument("--before", default="", help="an earlier archive of the run: before/after")
    args = ap.parse_args(argv)
    import yaml

    manifest, _ = read_archive(args.archive)
    config = yaml.safe_load(manifest["config"]["text"]) or {}
    budget = float((config.get("jobs") or {}).get("fit_budget_seconds") or 600)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "run"
        restore_archive(args.archive, folder)
        evs = evaluations(folder)
        lines = [f"Archive {args.archive} (commit {manifest.get('commit', '?')[:12]})", ""]
        lines += split_section(evs, budget)
        lines += dataset_section(evs)
        lines += method_section(evs)
        if config.get("oracle_datasets"):
            lines += thinning_section(evs, config)
        held = [d for d in args.held_out.split(",") if d]
        if held:
            lines += held_out_section(folder, config, held)
        if args.before:
            restore_archive(args.before, Path(tmp) / "before")
            lines += before_after_section(evaluations(Path(tmp) / "before"), evs)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
