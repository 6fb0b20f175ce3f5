"""Methods that need an optional extra (a class's ``requires``, e.g. ``torch`` for the
neural selectors): the registry says whether each can be fitted here and, if not, how to
install what it needs; ``ufs methods`` marks it; the workflow's plan leaves it out with one
line; ``ufs compare`` and ``ufs demo`` refuse it with the install command."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.workflow_helpers import REPO, env, snakemake_cmd, write_config
from ufs.availability import missing_modules, module_installed, unavailable_note, unavailable_reason
from ufs.base import UFSSelector
from ufs.cli import main
from ufs.pipeline.config import build_plan
from ufs.pipeline.run_cost import run_cost
from ufs.pipeline.stability_step import stability_jobs
from ufs.registry import _REGISTRY, available_methods, get_method, register

MISSING = "ufs_no_such_module_xyz"
HINT = 'pip install "ufs-no-such-extra"'
NAME = "needy_test_only"
REASON = f"needs {MISSING}: {HINT}"
NOTE = f"note: skipped {NAME}: {MISSING} is not installed ({HINT})"
NEURAL = ("cae", "ipcae", "lscae")
TORCH_HINT = 'pip install "ufs-bench[neural]"'


class NeedySelector(UFSSelector):
    """A subset method whose fit needs a module that is installed nowhere."""

    kind = "subset"
    requires_n_clusters = False
    requires = (MISSING,)
    install_hint = HINT

    def __init__(self, n_features_to_select=2, random_state=None):
        self.n_features_to_select = n_features_to_select
        self.random_state = random_state

    def _fit(self, X):  # pragma: no cover - never fitted: its module is missing
        raise AssertionError("an unavailable method was fitted")


@pytest.fixture()
def needy():
    """``NAME`` registered for the test; the registry left as it was found."""
    get_method("mcfs")  # the built-in registry loaded first
    before = set(_REGISTRY)
    register(NAME, NeedySelector, reference="test only")
    yield NAME
    for name in set(_REGISTRY) - before:
        _REGISTRY.pop(name)


def _config(methods, **extra):
    return {
        "datasets": {"wine": {"h": [2, 4, 6]}},
        "methods": {m: {} for m in methods},
        "stability": {"enabled": True},
        **extra,
    }


def test_the_registry_tells_what_is_missing_and_how_to_install_it(needy, monkeypatch):
    spec = get_method(needy)
    assert missing_modules(spec.cls) == [MISSING]
    assert unavailable_reason(needy) == REASON
    assert missing_modules(get_method("mcfs").cls) == []
    assert unavailable_reason("mcfs") is None
    assert unavailable_note(["mcfs", needy]) == NOTE
    assert unavailable_note(["mcfs", "not_a_method"]) == ""
    # nothing imported to find out; a module set to None in sys.modules is hidden
    assert MISSING not in sys.modules
    assert module_installed("colorsys")
    monkeypatch.setitem(sys.modules, "colorsys", None)
    assert not module_installed("colorsys")


def test_ufs_methods_marks_the_unavailable_method_in_one_line(needy, capsys):
    assert main(["methods", "--brief"]) == 0
    lines = capsys.readouterr().out.splitlines()
    mine = [line for line in lines if line.startswith(needy)]
    assert mine == [f"{needy:<20}subset   [unavailable here: {REASON}] test only"]
    marked = [line.split()[0] for line in lines if "unavailable here" in line]
    assert marked == [needy]  # the available ones unchanged
    mcfs = get_method("mcfs")
    assert f"{'mcfs':<20}{mcfs.kind:<9}{mcfs.reference}" in lines

    assert main(["methods", needy, "mcfs"]) == 0
    out = capsys.readouterr().out
    assert out.count("unavailable here") == 1
    assert f"{needy}  (subset)  test only\n    unavailable here: {REASON}\n" in out


def test_the_plan_leaves_it_out_with_one_line(needy, capsys):
    config = _config(["laplacian_score", needy, "random"])
    plan = build_plan(config, skip_unavailable=True)
    assert sorted(plan.settings) == ["laplacian_score", "random"]
    assert plan.unavailable == {needy: REASON}
    assert capsys.readouterr().err.splitlines() == [NOTE]
    # the stability step and the run's cost follow the plan
    assert {m for _, m, _ in stability_jobs(plan, config)} == {"laplacian_score"}
    without = build_plan(_config(["laplacian_score", "random"]))
    assert {t.method for t in plan.tasks("wine")} == {"laplacian_score", "random"}
    assert plan.chunks("wine") == without.chunks("wine")
    cost = run_cost(plan, config, "/nonexistent")
    assert cost == run_cost(without, config, "/nonexistent")
    assert cost.stability_jobs == 1 and needy not in cost.unmodelled
    # the workflow logs it itself: nothing printed with warn=False
    again = build_plan(config, warn=False, skip_unavailable=True)
    assert again.unavailable == plan.unavailable and capsys.readouterr().err == ""
    # by default the plan is the config's, whatever is installed (an archive's curation,
    # a lineage migration and the reports read it so)
    full = build_plan(config)
    assert needy in full.settings and full.unavailable == {}
    assert capsys.readouterr().err == ""


def test_a_slice_of_unavailable_methods_plans_nothing(needy, capsys):
    config = _config(["laplacian_score", needy, "random"], only_methods=[needy])
    plan = build_plan(config, skip_unavailable=True)
    assert plan.settings == {} and plan.kept_references == [] and plan.n_tasks() == 0
    assert capsys.readouterr().err.splitlines() == [NOTE]
    assert stability_jobs(plan, config) == []
    # a slice with an available method keeps its references, as without the skip
    config["only_methods"] = [needy, "laplacian_score"]
    plan = build_plan(config, skip_unavailable=True)
    assert sorted(plan.settings) == ["laplacian_score", "random"]
    assert plan.kept_references == ["random"]


def test_compare_and_demo_refuse_it_with_the_install_command(needy, capsys, tmp_path):
    assert main(["compare", "--method", needy, "--archive", str(tmp_path / "none.tar")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # before anything is restored or planned
    assert captured.err == f"error: method {needy!r} cannot be fitted here: it {REASON}\n"
    assert main(["demo", "--dataset", "wine", "--methods", "random", needy]) == 2
    assert HINT in capsys.readouterr().err


def test_the_neural_selectors_are_unavailable_without_torch(monkeypatch, capsys):
    """``cae``, ``ipcae`` and ``lscae`` need PyTorch (``requires = ("torch",)``); hidden,
    each is reported unavailable with the extra that installs it. Their registration
    imports no torch, so this holds whether or not torch is installed."""
    assert set(NEURAL) <= set(available_methods())
    # only the registry and the CLI's listing run while torch is hidden: SciPy's array-API
    # checks read sys.modules["torch"] and would fail on None
    monkeypatch.setitem(sys.modules, "torch", None)
    for name in NEURAL:
        assert missing_modules(get_method(name).cls) == ["torch"]
        assert unavailable_reason(name) == f"needs torch: {TORCH_HINT}"
    assert unavailable_note(["mcfs", *NEURAL]) == (
        f"note: skipped cae, ipcae, lscae: torch is not installed ({TORCH_HINT})"
    )
    assert main(["methods", "--brief"]) == 0
    out = capsys.readouterr().out
    marked = sorted(line.split()[0] for line in out.splitlines() if "unavailable here" in line)
    assert marked == sorted(NEURAL)


PLUGIN = textwrap.dedent(
    f"""
    from ufs.base import UFSSelector


    class Needy(UFSSelector):
        kind = "subset"
        requires_n_clusters = False
        requires = ({MISSING!r},)
        install_hint = {HINT!r}

        def __init__(self, n_features_to_select=2, random_state=None):
            self.n_features_to_select = n_features_to_select
            self.random_state = random_state
    """
)


@pytest.mark.slow
def test_a_dry_run_skips_it_with_one_line_and_prices_the_rest(tmp_path):
    """The workflow: a config's method that cannot be fitted here makes no job (fit,
    evaluation, stability), the note is said once on stderr, the cost line counts the
    others; a slice of it alone has nothing to do."""
    (tmp_path / "needy_plugin.py").write_text(PLUGIN)
    config = {
        **_config(["laplacian_score", "random"]),
        "evaluation": {"restarts": 2, "reference_draws": 2},
        "mlflow": {"enabled": False},
        "protocols": ["label_free"],  # one fit job per method
    }
    config["methods"]["needy"] = {"class": "needy_plugin:Needy"}
    cfg = write_config(tmp_path, config)
    environ = {**env(), "PYTHONPATH": f"{tmp_path}:{REPO}"}

    def dry(*extra):
        proc = subprocess.run(
            snakemake_cmd(tmp_path, cfg, "-n", *extra),
            capture_output=True,
            text=True,
            env=environ,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        return proc

    note = f"note: skipped needy: {MISSING} is not installed ({HINT})"
    proc = dry()
    assert proc.stderr.splitlines().count(note) == 1
    assert note not in proc.stdout
    assert "run cost: 2 fit job(s) to run; 1 stability job(s)" in proc.stdout
    assert "needy" not in proc.stdout
    proc = dry("--config", "only_methods=[needy]")
    assert proc.stderr.splitlines().count(note) == 1
    assert "run cost: 0 fit job(s) to run; nothing to download" in proc.stdout
    assert "rule fit" not in proc.stdout and "fit on" not in proc.stdout
