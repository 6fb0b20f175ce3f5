"""Screenshots of the MLflow UI for the docs (docs/img), in headless Chromium.

    python benchmarks/mlflow_screenshots.py results            # after `snakemake --cores 2`

Starts ``mlflow server`` on ``<results>/mlflow.db`` and takes, at 1600 × 900:

* ``docs/img/mlflow_runs.png``: the runs-table link the workflow prints (its shared view:
  ACC, NMI, ... as columns, best ACC first);
* ``docs/img/mlflow_filter.png``: one data set at one h, methods side by side (the filter
  of docs/guide/mlflow-server.md).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import urllib.parse
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.browser_helpers import mlflow_ui, render  # noqa: E402
from ufs.fileio import read_json  # noqa: E402
from ufs.tracking import runs_table_path  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path, help="a results directory with its own mlflow.db")
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "img", help="where the PNGs go")
    ap.add_argument("--dataset", default="wine", help="data set of the filtered view")
    ap.add_argument("--h", default="4", help="h of the filtered view")
    args = ap.parse_args(argv)
    receipt = read_json(args.results / "mlflow" / "experiment.json")
    exp = receipt["experiment_id"]
    flt = f"tags.dataset = '{args.dataset}' and params.h = '{args.h}'"
    views = {
        "mlflow_runs.png": runs_table_path(exp),
        "mlflow_filter.png": runs_table_path(exp) + "&searchFilter=" + urllib.parse.quote(flt),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        uri = f"sqlite:///{(args.results / 'mlflow.db').resolve()}"
        with mlflow_ui(uri, Path(tmp) / "server") as base:
            for name, path in views.items():
                render(base + path, Path(tmp) / name, png=args.out / name)
                print(f"wrote {args.out / name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
