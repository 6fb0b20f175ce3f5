"""A sliced run's tables (ufs.pipeline.slices): every evaluation of the config on
disk, and what is left out, said."""

from __future__ import annotations

from ufs.pipeline.config import build_plan
from ufs.pipeline.slices import full_config, slice_note, slice_view

CONFIG = {
    "output_dir": "results",
    "datasets": {"wine": {"h": [2, 4]}, "breast_cancer": {"h": [2, 4]}},
    "methods": {"max_variance": {}, "laplacian_score": {}, "random": {}},
}


def _view(tmp_path, config, present=()):
    out = tmp_path / "results"
    full = build_plan(full_config(config), warn=False) if full_config(config) else None
    for dataset, chunk in present:
        path = out / "evaluations" / dataset / f"{chunk}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
    return slice_view(config, build_plan(config, warn=False), full, out)


def test_a_whole_run_is_no_slice(tmp_path):
    view = _view(tmp_path, CONFIG)
    assert not view.sliced and view.earlier == {} and view.left_out == {}
    assert slice_note(view) == [] and slice_note(view, "wine") == []


def test_a_method_slice_runs_the_references_its_verdicts_need(tmp_path):
    config = {**CONFIG, "only_methods": ["laplacian_score"]}
    plan = build_plan(config, warn=False)
    assert plan.kept_references == ["max_variance", "random"]
    assert {s.method for _, s in plan.jobs()} == {"laplacian_score", "max_variance", "random"}
    view = _view(tmp_path, config)
    assert view.left_out == {}
    (wine,) = [ln for ln in slice_note(view, "wine") if ln]
    assert "references too, for its verdicts: max_variance, random" in wine
    alone = build_plan({**config, "slice_references": "false"}, warn=False)
    assert alone.kept_references == [] and {s.method for _, s in alone.jobs()} == {
        "laplacian_score"
    }
    # a data set slice runs every method already: nothing is "kept"
    assert build_plan({**CONFIG, "only_datasets": ["wine"]}, warn=False).kept_references == []


def test_a_method_slice_adds_what_is_on_disk_and_names_the_rest(tmp_path):
    config = {**CONFIG, "only_methods": ["max_variance"], "slice_references": False}
    full = build_plan(full_config(config), warn=False)
    ls_chunks = [c for c in full.chunks("wine") if c.startswith("laplacian_score")]
    view = _view(tmp_path, config, [("wine", c) for c in ls_chunks])
    assert view.sliced and view.datasets_left_out == []
    assert [p.rsplit("/", 1)[1] for p in view.earlier["wine"]] == [f"{c}.json" for c in ls_chunks]
    assert view.left_out == {"breast_cancer": ["laplacian_score", "random"], "wine": ["random"]}
    (wine,) = [ln for ln in slice_note(view, "wine") if ln]
    assert "`only_methods=['max_variance']`" in wine
    assert "laplacian_score from earlier runs" in wine
    assert wine.endswith(
        "Left out (no evaluation on disk; a run of the whole config makes them): random."
    )
    (summary,) = [ln for ln in slice_note(view) if ln]
    assert "breast_cancer: laplacian_score, random; wine: random." in summary


def test_a_data_set_slice_names_the_data_sets_outside_it(tmp_path):
    view = _view(tmp_path, {**CONFIG, "only_datasets": ["wine"]})
    assert (
        view.datasets_left_out == ["breast_cancer"] and view.earlier == {} and view.left_out == {}
    )
    assert "not in this summary: breast_cancer." in slice_note(view)[0]
