"""ufs command line: list the registered methods, run a small end-to-end demo, write the
reproduction, benchmark and parity reports, archive, annotate, migrate and restore benchmark
results, place a new method in the archived benchmark (compare), and draw a method's scores
over two of its parameters (sensitivity-figure), and say where each data set comes from
or fetch it (data).

Size (~760 lines): one ``argparse`` sub-command per job (methods, demo, the reproduction
and benchmark reports, archive, note, migrate, restore, compare, parity,
sensitivity-figure, data), each a thin adapter over the library; they share the argument
conventions and the user-error handling (no traceback for a user error), so they stay in
one entry point.
"""

from __future__ import annotations

import argparse
import sys
import time


def _unknown_methods(names: list[str]) -> str:
    """An error line for the names that are not registered methods ("" if none), each
    with the closest registered names."""
    import difflib

    from .registry import available_methods

    known = available_methods()
    parts = []
    for n in names:
        if n in known:
            continue
        close = difflib.get_close_matches(n, known, n=2, cutoff=0.6)
        hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
        parts.append(f"{n!r}{hint}")
    if not parts:
        return ""
    return (
        f"error: unknown method{'s' if len(parts) > 1 else ''} {', '.join(parts)}; "
        "`ufs methods --brief` lists the registered ones"
    )


def _unavailable(name: str) -> str:
    """An error line when the registered method ``name`` cannot be fitted here (a module
    of an optional extra missing), with the command that installs it; "" otherwise (a
    name the registry does not know is left to the command's own checks)."""
    from .availability import unavailable_reason

    try:
        reason = unavailable_reason(name)
    except ValueError:
        return ""
    return f"error: method {name!r} cannot be fitted here: it {reason}" if reason else ""


def _demo(args: argparse.Namespace) -> int:
    from .datasets import load_dataset
    from .evaluation import evaluate_clustering
    from .preprocessing import input_matrix, standardize
    from .registry import make_estimator

    error = _unknown_methods(args.methods) or "\n".join(
        filter(None, (_unavailable(m) for m in args.methods))
    )
    if error:
        print(error, file=sys.stderr)
        return 2
    data = load_dataset(args.dataset)
    X, y = data.X, data.y
    k = data.n_classes
    std = standardize(X)
    Z = std.X
    usable = int((~std.constant).sum())
    if args.h < 1:
        print(f"error: --h must be >= 1; got {args.h}", file=sys.stderr)
        return 2
    if args.h > usable:
        print(
            f"note: --h {args.h} exceeds the {usable} non-constant features of "
            f"{args.dataset}; using h = {usable} (all of them)",
            file=sys.stderr,
        )
        args.h = usable
    print(f"{args.dataset}: n={X.shape[0]} p={X.shape[1]} k={k} h={args.h} R={args.restarts}")
    print(f"{'method':<18}{'ACC %':>14}{'NMI %':>14}{'seconds':>10}")
    for name in args.methods:
        est = make_estimator(name, n_features_to_select=args.h, n_clusters=k, random_state=0)
        data = input_matrix(est.input_space, X, Z)
        t0 = time.perf_counter()
        est.fit(data)
        dt = time.perf_counter() - t0
        res = evaluate_clustering(Z[:, est.get_support()], y, n_restarts=args.restarts)
        print(
            f"{name:<18}{100 * res.mean('acc'):>8.1f} ± {100 * res.std('acc'):<4.1f}"
            f"{100 * res.mean('nmi'):>7.1f} ± {100 * res.std('nmi'):<4.1f}{dt:>10.3f}"
        )
    return 0


def _methods(args: argparse.Namespace) -> int:
    """One block per registered method: kind, reference, label-free defaults, the paper's
    grid (settings count) and fixed parameters; ``--brief`` gives one line each. A method
    that cannot be fitted here (a module of an optional extra missing) says so, with the
    command that installs it, in one line."""
    from .availability import unavailable_reason
    from .registry import available_methods, expand_grid, get_method

    names = args.names or available_methods()
    error = _unknown_methods(names)
    if error:
        print(error, file=sys.stderr)
        return 2
    for name in names:
        spec = get_method(name)
        reason = unavailable_reason(name)
        if args.brief:
            mark = f"[unavailable here: {reason}] " if reason else ""
            print(f"{name:<20}{spec.kind:<9}{mark}{spec.reference}")
            continue
        print(f"{name}  ({spec.kind})  {spec.reference}")
        if reason:
            print(f"    unavailable here: {reason}")
        fmt = lambda d: ", ".join(f"{k}={v}" for k, v in d.items()) or "-"  # noqa: E731
        print(f"    label-free defaults: {fmt(spec.defaults)}")
        if spec.grid:
            n = len(expand_grid(spec.grid))
            grid = "; ".join(f"{k} in {v}" for k, v in spec.grid.items())
            print(f"    label-tuned grid ({n} settings): {grid}")
        else:
            print("    label-tuned grid: none (no parameters to tune)")
        if spec.fixed:
            print(f"    fixed: {fmt(spec.fixed)}")
    return 0


def _reproduction(args: argparse.Namespace) -> int:
    """Write the reproduction report (:func:`ufs.report.reproduction_report.reproduction_markdown`)
    from the runs under ``--results`` or from ``--archives`` alone.

    From ``--results``, a run with no results there keeps its section of the existing
    report (``--out``), with a line saying so: results computed on another machine or in
    an earlier session are not erased by regenerating the report from the runs at hand;
    ``--drop-missing`` removes them instead. From the archives nothing is kept."""
    import tempfile
    from pathlib import Path

    if not args.archives:
        return _write_reproduction(
            args,
            Path(args.results),
            source="the workflow results",
            where=f"`{args.results}`",
            previous=None if args.drop_missing else Path(args.out),
        )
    from .pipeline.archive import ArchiveError
    from .report.reproduction import restore_reproductions

    with tempfile.TemporaryDirectory(prefix="ufs-reproduction-") as tmp:
        try:
            runs = restore_reproductions(args.archives, tmp, figures=False)
        except (ArchiveError, ValueError, OSError) as exc:  # a user's file: no traceback
            print(f"ufs reproduction: {exc}; {args.out} left as it is", file=sys.stderr)
            return 2
        return _write_reproduction(
            args,
            Path(tmp),
            source="the archives",
            where="the archives given",
            labels={n: f"the archive `{a.as_posix()}`" for n, a in runs.items()},
            archives={n: a.as_posix() for n, a in runs.items()},
        )


def _write_reproduction(args: argparse.Namespace, root, *, previous=None, **inputs) -> int:
    from pathlib import Path

    from .fileio import write_text
    from .report.reproduction_report import NoRunsError, reproduction_markdown

    try:
        text, runs, kept = reproduction_markdown(
            root, previous=previous if previous and previous.exists() else None, **inputs
        )
    except NoRunsError as exc:  # never rewrite the tracked report from nothing
        print(
            f"error: {exc}; {args.out} left as it is. "
            "Run `snakemake --cores 2 --configfile config/experiments/<paper>.yaml` first.",
            file=sys.stderr,
        )
        return 2
    write_text(Path(args.out), text)
    msg = f"wrote {args.out} from {len(runs)} run(s)"
    print(msg + (f"; kept {', '.join(kept)} from the previous report" if kept else ""))
    return 0


def _benchmark_report(args: argparse.Namespace) -> int:
    """Write the benchmark report (``docs/benchmark.md``) and its CD diagrams from a
    benchmark run's results; exit 2 with one line when there is nothing to report."""
    from pathlib import Path

    from .pipeline.archive import ArchiveError
    from .report.benchmark_report import (
        NoResultsError,
        benchmark_report,
        benchmark_report_from_archive,
        scope_of,
    )

    if args.archive:  # the archive alone: its config, note and tables
        print(
            f"reading {args.archive}: its evaluations are restored and aggregated, then the "
            "statistics and the CD diagrams are computed (about two minutes for the "
            "benchmark archive)",
            file=sys.stderr,
            flush=True,
        )
        try:
            text = benchmark_report_from_archive(
                args.archive,
                args.out,
                img_dir=args.img_dir,
                note=args.note or None,
                include_variants=args.include_variants,
                min_h_values=args.min_h_values,
                absolute_h=args.absolute_h,
                absolute_h_report=args.absolute_h_report,
            )
        except (ArchiveError, FileNotFoundError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"wrote {args.out} from {args.archive} (CD diagrams in {args.img_dir})")
        print(scope_of(text))
        return 0
    if not Path(args.config).is_file():
        print(f"error: no config file {args.config}", file=sys.stderr)
        return 2
    try:
        text = benchmark_report(
            args.results,
            args.config,
            args.out,
            img_dir=args.img_dir,
            note=args.note,
            include_variants=args.include_variants,
            min_h_values=args.min_h_values,
            input_scaling=args.input_scaling,
            absolute_h=args.absolute_h,
            absolute_h_report=args.absolute_h_report,
        )
    except (NoResultsError, ArchiveError) as exc:
        print(f"error: {exc}; run the benchmark workflow first", file=sys.stderr)
        return 2
    print(f"wrote {args.out} (CD diagrams in {args.img_dir})")
    print(scope_of(text))
    return 0


def _benchmark_archive(args: argparse.Namespace) -> int:
    """Archive a benchmark run's evaluations, benchmark files and data records."""
    from .fileio import DamagedFileError
    from .pipeline.archive import ArchiveError, describe_commits, write_archive

    try:
        manifest = write_archive(
            args.results,
            args.config,
            args.out,
            note=args.note,
            input_scaling=args.input_scaling,
        )
    except (ArchiveError, DamagedFileError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    c = manifest["counts"]
    print(
        f"wrote {args.out}: {c['evaluations']} evaluations of {c['datasets']} data sets, "
        f"{c['benchmark_files']} benchmark files, {c['data_records']} data records "
        f"(written at commit {manifest['commit'][:12] or 'unknown'}; results computed at "
        f"{describe_commits(manifest['computed_at'])})"
    )
    return 0


def _benchmark_note(args: argparse.Namespace) -> int:
    """Print an archive's note (how its run was made), or replace it (--set-file)."""
    from .pipeline.archive import ArchiveError, read_archive, set_archive_note

    try:
        if args.set_file is None:
            print(read_archive(args.archive)[0].get("note", ""))
            return 0
        with open(args.set_file, encoding="utf-8") as fh:
            manifest = set_archive_note(args.archive, fh.read())
    except (ArchiveError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.archive}: note of {len(manifest['note'])} characters, members unchanged")
    return 0


def _data_scope(args: argparse.Namespace) -> tuple[list[str] | None, str | None, str]:
    """The data sets (``names``, else the config's registered ones, else all), the mirror
    and the cache ``ufs data`` looks at."""
    from .datasets import available_datasets
    from .datasets.availability import default_mirror
    from .datasets.locations import data_cache

    config: dict = {}
    if args.config:
        import yaml

        with open(args.config, encoding="utf-8") as fh:
            config = yaml.safe_load(fh) or {}
    names = list(args.names) or None
    if names is None and args.config:
        names = [d for d in (config.get("datasets") or {}) if d in set(available_datasets())]
    unknown = sorted(set(names or ()) - set(available_datasets()))
    if unknown:
        raise ValueError(f"not registered data sets: {', '.join(unknown)} (ufs data list)")
    mirror = default_mirror(args.mirror_dir or config.get("mirror_dir"))
    cache = args.cache_dir or data_cache(config)
    return names, mirror, cache


def _data(args: argparse.Namespace) -> int:
    """List the data sets' states, or fetch them into the cache."""
    import contextlib

    from .datasets.availability import STATES, cache_file, data_states, download_size, fetch
    from .datasets.mirror import DownloadError
    from .datasets.progress import DownloadWatch, remove_stale_parts

    try:
        names, mirror, cache = _data_scope(args)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    states = data_states(names, mirror=mirror, cache=cache)
    if args.action == "list":
        width = max((len(s.name) for s in states), default=4)
        for s in states:
            print(f"{s.name:<{width}}  {s.state:<12}  {s.detail}")
        counts = {k: sum(s.state == k for s in states) for k in STATES}
        print(
            f"{len(states)} data sets: "
            + ", ".join(f"{n} {k}" for k, n in counts.items() if n)
            + f" (mirror: {mirror or 'none'}; cache: {cache})"
        )
        return 0
    failed = 0
    todo = [s for s in states if s.state in ("downloadable", "in mirror", "cached")]
    for i, s in enumerate(todo, 1):
        target = cache_file(s.name, cache)
        label = f"[{i}/{len(todo)}] {s.name}: {s.state} ... "
        for stale in remove_stale_parts(target.parent, target.name) if target else ():
            print(f"removed {stale}, left by a killed download")
        print(label, end="", flush=True)
        watch = (  # a bar on a terminal while the file downloads
            DownloadWatch(
                target.parent,
                target.name,
                total=download_size(s.name),
                stream=sys.stdout,
                label=label,
            )
            if target
            else contextlib.nullcontext()  # in a mirror only: nothing is downloaded
        )
        try:
            with watch:
                path = fetch(s.name, mirror=mirror, cache=cache)
        except (DownloadError, ValueError) as exc:
            failed += 1
            print(f"failed\n  {exc}")
            continue
        print(f"ok, sha256 checked ({path.stat().st_size / 1e6:.1f} MB, {path})")
    others = [s for s in states if s not in todo and not s.available]
    for s in others:
        print(f"{s.name}: {s.state}: {s.detail}")
    return 1 if failed else 0


def _benchmark_migrate(args: argparse.Namespace) -> int:
    """Translate archived lineages to the current scheme (ufs.pipeline.lineage)."""
    from .pipeline.archive import ArchiveError
    from .pipeline.config import ConfigError
    from .pipeline.lineage import SCHEME, migrate_archive

    try:
        before = None
        if args.before:
            from .fileio import read_json

            before = read_json(args.before)
            if not isinstance(before, dict):
                raise ValueError(f"{args.before}: not a mapping of chunk -> lineage")
        counts = migrate_archive(args.archive, args.out, mirror_dir=args.mirror_dir, before=before)
    except (ArchiveError, ConfigError, FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    where = args.out or args.archive
    what = (
        "re-keyed across the declared refactor"
        if before
        else f"migrated to lineage scheme {SCHEME}"
    )
    wrote = counts["migrated"] or counts["stability_migrated"]
    print(
        f"{counts['migrated']} evaluations {what}, "
        f"{counts['current']} already current, {counts['stale']} stale (re-fitted by the "
        f"next run), {counts['absent']} chunks without evaluation; stability records: "
        f"{counts['stability_migrated']} translated, {counts['stability_current']} already "
        f"current, {counts['stability_stale']} stale (made again by the next run)"
        + (f"; wrote {where}" if wrote else "; nothing written")
    )
    if before and (counts["stale"] or counts["stability_stale"]):
        stale = f"{counts['stale']} evaluations'" + (
            f" and {counts['stability_stale']} stability records'"
            if counts["stability_stale"]
            else ""
        )
        print(
            f"note: {stale} recorded lineages are not the --before "
            "file's: their inputs changed before the refactor, or the file was computed on "
            "another plan (data lineages hash the mirror's files: give plan_lineages.py and "
            "this command the same --mirror-dir); a stale record keeps its old key, so a "
            "second migration with the right file still translates it",
            file=sys.stderr,
        )
    return 0


def _compare(args: argparse.Namespace) -> int:
    """Place one method in the archived benchmark (ufs.report.placement)."""
    from pathlib import Path

    import yaml

    from .pipeline.archive import ArchiveError
    from .pipeline.config import ConfigError
    from .plugins import PluginError
    from .report.placement import compare_method, cpu_text

    overlay = {}
    if args.config:
        overlay = yaml.safe_load(Path(args.config).read_text()) or {}
    error = _unavailable(args.method)
    if error:
        print(error, file=sys.stderr)
        return 2
    results = Path(args.results or f"results/compare-{args.method}")
    out = Path(args.out or f"{results}.md")
    print(
        f"placing {args.method} in {args.archive}: restore into {results}, fit and evaluate "
        f"{args.method} only, then the report {out}",
        flush=True,
    )
    try:
        done = compare_method(
            args.method,
            args.archive,
            results,
            out,
            overlay=overlay,
            cores=args.cores,
            mirror=args.mirror_dir,
            fetch=args.fetch,
            say=lambda line: print(line, flush=True),
        )
    except (ArchiveError, ConfigError, PluginError, FileNotFoundError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    fitted = done["jobs"]["fit"]
    others = sorted(set(fitted) - {args.method})
    print(
        f"fit jobs: {sum(fitted.values())} ({', '.join(f'{m} {n}' for m, n in sorted(fitted.items())) or 'none'}); "
        f"{cpu_text(done['cpu']['total'])} of fits and k-means, against "
        f"{cpu_text(done['full_cpu']['total'])} for the whole benchmark; wrote {out}"
    )
    if others:
        print(f"warning: other methods were fitted too: {others}", file=sys.stderr)
    return 0


def _benchmark_restore(args: argparse.Namespace) -> int:
    """Restore an archive into a results folder: the workflow then resumes the run."""
    from .pipeline.archive import ArchiveError, restore_archive

    try:
        counts = restore_archive(args.archive, args.results, force=args.force)
    except (ArchiveError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(
        f"restored {args.archive} into {args.results}: {counts['written']} written, "
        f"{counts['unchanged']} already there, {counts['replaced']} replaced. "
        "`snakemake -n` with the run's config now lists only what is not done "
        "(evaluations whose data, code, parameters or budget changed are re-fitted)."
    )
    return 0


def _parity(args: argparse.Namespace) -> int:
    """Run every parity case against the authors' reference outputs; write the report."""
    from pathlib import Path

    from .parity.cases import all_cases
    from .parity.core import default_root
    from .parity.report import write_report

    root = args.root or default_root()
    cases = all_cases()
    if args.only:
        unknown = sorted(set(args.only) - set(cases))
        if unknown:
            print(f"unknown parity case(s) {unknown}; known: {sorted(cases)}", file=sys.stderr)
            return 2
        cases = {t: cases[t] for t in args.only}
    try:
        mirror = Path(args.mirror) if args.mirror else Path(root).parent / "datasets"
        outcomes = write_report(args.out, cases.values(), root, mirror=mirror)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    failed = [o.case.tag for o in outcomes if not o.passed]
    print(f"wrote {args.out}: {len(outcomes) - len(failed)} of {len(outcomes)} cases pass")
    for tag in failed:
        print(f"  FAIL {tag}", file=sys.stderr)
    return 1 if failed else 0


#: the distribution whose version ``ufs --version`` prints (``[project] name`` in pyproject.toml)
DISTRIBUTION = "ufs-bench"


def package_version() -> str:
    """The installed version of :data:`DISTRIBUTION` (``importlib.metadata``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return f"unknown ({DISTRIBUTION} is not installed; pip install -e .)"


def _add_data(sub) -> None:
    data = sub.add_parser(
        "data",
        help="where each data set comes from here (list), or download them ahead of a run "
        "into the cache, sha256-checked (fetch)",
    )
    data.add_argument("action", choices=("list", "fetch"), help="list the states, or fetch")
    data.add_argument("names", nargs="*", help="only these data sets (default: the config's)")
    data.add_argument(
        "--config",
        default=None,
        help="a workflow config: its data sets, mirror_dir and data_cache (default: every "
        "registered data set)",
    )
    data.add_argument(
        "--mirror-dir", default=None, help="a mirror folder to look in first (or UFS_MIRROR)"
    )
    data.add_argument(
        "--cache-dir",
        default=None,
        help="the download cache (default: the config's data_cache, else UFS_DATA, else the "
        "user cache folder)",
    )


def _add_methods(sub) -> None:
    met = sub.add_parser(
        "methods", help="list registered methods: kind, paper, label-free defaults, grid"
    )
    met.add_argument("names", nargs="*", help="only these methods (default: all)")
    met.add_argument("--brief", action="store_true", help="one line per method")


def _add_demo(sub) -> None:
    demo = sub.add_parser("demo", help="select features on a bundled dataset and evaluate")
    demo.add_argument(
        "--dataset",
        default="digits",
        choices=["digits", "wine", "breast_cancer"],
        help="bundled dataset to select from (default: %(default)s)",
    )
    demo.add_argument(
        "--h", type=int, default=20, help="features to select (at most the dataset's features)"
    )
    demo.add_argument(
        "--restarts",
        type=int,
        default=20,
        help="k-means restarts of the clustering evaluation (default: %(default)s)",
    )
    methods = ["all_features", "random", "kmeans_ufs", "kmeans_ufs_exact"]
    demo.add_argument(
        "--methods",
        nargs="+",
        default=methods,
        help=f"registered methods to run ('ufs methods' lists them; default: {' '.join(methods)})",
    )


def _add_reproduction(sub) -> None:
    rep = sub.add_parser("reproduction", help="collect paper comparisons into one markdown report")
    rep.add_argument(
        "--results", default="results", help="folder of the runs' results (default: %(default)s)"
    )
    rep.add_argument("--out", default="docs/reproduction.md", help="the report to write")
    rep.add_argument(
        "--archives",
        nargs="+",
        default=None,
        help="write the report from these run archives alone (benchmarks/results/"
        "reproduction-<paper>.tar.xz): tables, timing and comparisons rebuilt from each; "
        "--results is then not read and no section is kept from the previous report",
    )
    rep.add_argument(
        "--drop-missing",
        action="store_true",
        help="drop sections of runs without results under --results (default: keep them)",
    )


def _add_benchmark_report(sub) -> None:
    bench = sub.add_parser(
        "benchmark-report", help="write the benchmark report from a benchmark run's results"
    )
    bench.add_argument(
        "--results",
        default="results/benchmark",
        help="the benchmark run's results folder (default: %(default)s)",
    )
    bench.add_argument(
        "--config",
        default="config/experiments/benchmark.yaml",
        help="the config the run was made with (default: %(default)s)",
    )
    bench.add_argument(
        "--archive",
        default=None,
        help="write the report from a results archive alone (ufs benchmark-archive): its "
        "config, note and tables; --results and --config are then not read",
    )
    bench.add_argument("--out", default="docs/benchmark.md", help="the report to write")
    bench.add_argument("--img-dir", default="docs/img", help="where the CD diagrams go")
    bench.add_argument(
        "--note", default="", help="how the run was made (overrides, slices): shown under the scope"
    )
    bench.add_argument(
        "--include-variants",
        action="store_true",
        help="rank the declared variants (kmeans_ufs_exact, spcafs_raw, ...) with the methods",
    )
    bench.add_argument(
        "--min-h-values",
        type=int,
        default=3,
        help="flag and leave out of the ranks data sets with fewer values of h (default 3)",
    )
    bench.add_argument(
        "--input-scaling",
        default=None,
        help="results of the input-scaling overlays (<dir>/<space>/tables): compare the "
        "ranking of the seed methods on z-scored, raw and [0, 1] inputs",
    )
    bench.add_argument(
        "--absolute-h",
        default=None,
        help="the archive of the absolute h view's run (config/experiments/overrides/"
        "benchmark_absolute_h.yaml): compare its verdicts with the relative grid's",
    )
    bench.add_argument(
        "--absolute-h-report",
        default="",
        help="a link to the absolute h run's own report, printed in its section",
    )


def _add_benchmark_archive(sub) -> None:
    arc = sub.add_parser(
        "benchmark-archive",
        help="archive a benchmark run's evaluations (the source of truth) in one .tar.xz",
    )
    arc.add_argument(
        "--results", default="results/benchmark", help="the run's results folder (%(default)s)"
    )
    arc.add_argument(
        "--config",
        nargs="+",
        default=["config/experiments/benchmark.yaml"],
        help="the config the run was made with, stored in the archive (%(default)s); "
        "a base and overlays (as given to snakemake --configfile) are stored merged",
    )
    arc.add_argument(
        "--out",
        default="benchmarks/results/benchmark.tar.xz",
        help="the archive to write (%(default)s)",
    )
    arc.add_argument(
        "--note", default="", help="how the run was made (overlays, slices): the report shows it"
    )
    arc.add_argument(
        "--input-scaling",
        default=None,
        help="also archive the tables of the input-scaling runs (<dir>/<space>/tables)",
    )
    note = sub.add_parser(
        "benchmark-note",
        help="print an archive's note (how its run was made, shown by its report), or "
        "replace it; the archived results stay byte for byte",
    )
    note.add_argument("archive", help="the archive (ufs benchmark-archive)")
    note.add_argument(
        "--set-file",
        default=None,
        metavar="NOTE.txt",
        help="replace the note by this file's text (white space collapsed to single spaces)",
    )
    mig = sub.add_parser(
        "benchmark-migrate",
        help="translate an archive's lineages to the current code-version scheme "
        "(no re-fit; ufs.pipeline.lineage)",
    )
    mig.add_argument("archive", help="the archive (ufs benchmark-archive)")
    mig.add_argument("--out", default=None, help="write here (default: the archive, in place)")
    mig.add_argument(
        "--mirror-dir",
        default=None,
        help="the data mirror, if not the archive's config's mirror_dir",
    )
    mig.add_argument(
        "--before",
        default=None,
        metavar="LINEAGES.json",
        help="re-key across a declared refactor: the plan's lineages computed by the code "
        "before it (benchmarks/plan_lineages.py run in that checkout); an evaluation or "
        "stability record current there becomes current here",
    )
    cmp = sub.add_parser(
        "compare",
        help="place a new method in the archived benchmark: fit and evaluate it alone on every "
        "data set, restore the others, and report its ranks and paired tests",
    )
    cmp.add_argument(
        "--method", required=True, help="the method (registered, or defined in --config)"
    )
    cmp.add_argument(
        "--config",
        default=None,
        help="a YAML overlay, e.g. methods: {mine: {class: 'pkg.mod:Selector', grid: ..., "
        "defaults: ...}}",
    )
    cmp.add_argument(
        "--archive",
        default="benchmarks/results/benchmark.tar.xz",
        help="the benchmark archive (%(default)s)",
    )
    cmp.add_argument("--results", default=None, help="results folder (results/compare-<method>)")
    cmp.add_argument("--out", default=None, help="the report (<results>.md)")
    cmp.add_argument("--cores", type=int, default=2, help="Snakemake cores (%(default)s)")
    cmp.add_argument(
        "--mirror-dir", default=None, help="a mirror folder of the data sets (or UFS_MIRROR)"
    )
    cmp.add_argument(
        "--fetch",
        action="store_true",
        help="download the archive's data sets this machine lacks (into the data cache) and "
        "place the method on them too; without it, the method is placed on the data sets "
        "here, and the report says which",
    )
    res = sub.add_parser(
        "benchmark-restore",
        help="restore a results archive so that the workflow resumes without re-fitting",
    )
    res.add_argument("archive", help="the archive (ufs benchmark-archive)")
    res.add_argument(
        "--results", default="results/benchmark", help="the results folder (%(default)s)"
    )
    res.add_argument(
        "--force",
        action="store_true",
        help="replace files that differ from the archive's (default: refuse)",
    )


def _add_parity(sub) -> None:
    par = sub.add_parser("parity", help="compare with the authors' code's reference outputs")
    par.add_argument("--root", default=None, help="shared/parity folder (default: beside the repo)")
    par.add_argument("--out", default="docs/parity.md", help="the report to write")
    par.add_argument(
        "--mirror",
        default=None,
        help="data mirror holding ORL for the second (disconnected-graph) input "
        "(default: the datasets folder beside the parity root)",
    )
    par.add_argument("--only", nargs="+", help="run only these case tags")


def _sensitivity_figure(args: argparse.Namespace) -> int:
    """A method's scores over two parameters of its grid, and its label-free setting's
    convergence curve (:mod:`ufs.report.param_grid`; the K-means UFS paper's Figs. 3-4),
    from a run's results folder or from its archive alone."""
    import glob
    import tempfile
    from pathlib import Path

    from .pipeline.archive import ArchiveError, restore_archive
    from .report.param_grid import write_grid_report

    def write(root: Path) -> list[Path]:
        files = sorted(glob.glob(str(root / "evaluations" / "*" / "*.json")))
        if not files:
            raise ValueError(f"no evaluation files under {root / 'evaluations'}")
        return write_grid_report(
            files,
            args.method,
            args.x,
            args.y,
            args.out_dir,
            cols=args.cols,
            title=args.title,
            reference=args.curve_reference,
        )

    try:
        if args.archive:
            with tempfile.TemporaryDirectory(prefix="ufs-sensitivity-") as tmp:
                restore_archive(args.archive, tmp)
                paths = write(Path(tmp))
        else:
            paths = write(Path(args.results))
    except (ValueError, ArchiveError, OSError) as exc:
        print(f"ufs sensitivity-figure: {exc}", file=sys.stderr)
        return 2
    for p in paths:
        print(f"wrote {p}")
    return 0


def _add_sensitivity_figure(sub) -> None:
    sen = sub.add_parser(
        "sensitivity-figure",
        help="a method's scores over two of its parameters (heat maps, tables) and its "
        "label-free convergence curve",
    )
    src = sen.add_mutually_exclusive_group()
    src.add_argument(
        "--results",
        default="results/kmeans_ufs_sensitivity",
        help="the run's results folder (%(default)s)",
    )
    src.add_argument(
        "--archive", default=None, help="read the run's archive instead (ufs benchmark-archive)"
    )
    sen.add_argument("--method", required=True, help="the method (a registry name)")
    sen.add_argument("--x", required=True, help="the parameter along the columns")
    sen.add_argument("--y", required=True, help="the parameter along the rows")
    sen.add_argument(
        "--cols",
        nargs="+",
        default=["acc_mean", "nmi_mean"],
        help="the quantities shown: metric means (acc_mean, nmi_mean, ari_mean, "
        "ne_mean) or a fit's recorded facts (n_iter, optimality_gap, ...)",
    )
    sen.add_argument(
        "--out-dir",
        default="docs/sensitivity",
        help="folder of the figures and the markdown (%(default)s)",
    )
    sen.add_argument("--title", default=None, help="the markdown's heading")
    sen.add_argument(
        "--curve-reference",
        default=None,
        help="a recorded fact of the fit drawn as a dashed line on the convergence "
        "curve (K-means UFS: exact_objective, its model's global optimum)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The ``ufs`` argument parser: every option and subcommand has a help text."""
    parser = argparse.ArgumentParser(prog="ufs", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s {package_version()}",
        help="print the installed version of ufs-bench and exit",
    )
    sub = parser.add_subparsers(
        dest="cmd", required=True, metavar="COMMAND", help="what to do (COMMAND -h: its options)"
    )
    for add in (
        _add_methods,
        _add_data,
        _add_demo,
        _add_reproduction,
        _add_benchmark_report,
        _add_benchmark_archive,
        _add_parity,
        _add_sensitivity_figure,
    ):
        add(sub)
    return parser


_COMMANDS = {
    "reproduction": _reproduction,
    "benchmark-report": _benchmark_report,
    "benchmark-archive": _benchmark_archive,
    "benchmark-migrate": _benchmark_migrate,
    "benchmark-note": _benchmark_note,
    "compare": _compare,
    "benchmark-restore": _benchmark_restore,
    "parity": _parity,
    "sensitivity-figure": _sensitivity_figure,
    "methods": _methods,
    "data": _data,
    "demo": _demo,
}


def main(argv: list[str] | None = None) -> int:
    """Run the ``ufs`` command line with ``argv`` (default ``sys.argv[1:]``); the exit code."""
    args = build_parser().parse_args(argv)
    try:
        return _COMMANDS[args.cmd](args)
    except BrokenPipeError:  # e.g. `ufs methods --brief | head -5`: the reader left
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so that the exit flush does not fail
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
