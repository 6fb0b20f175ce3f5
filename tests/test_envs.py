"""The workflow's conda environments (``workflow/envs/*.yaml``) agree with pyproject.toml:
every dependency is there, pinned to a range inside pyproject's bounds; nothing else is."""

from __future__ import annotations

import copy
import re
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.workflow_helpers import REPO

ENV_FILES = sorted((REPO / "workflow" / "envs").glob("*.yaml"))
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
#: conda packages that are no distribution of pyproject (pip itself)
TOOLS = {"pip"}
#: pip options an env file may use (pip refuses most options in a requirements file:
#: ``--no-deps`` is "no such option")
PIP_OPTIONS = ("-e ", "--editable ")


#: conda-forge's names of packages PyPI names otherwise
PYPI_NAME = {"pytorch": "torch"}


def _conda_requirement(spec: str) -> tuple[str, SpecifierSet]:
    """``name`` and version range of a conda dependency; the range must be in the syntax
    conda and pip share (``>=2.4.6,<2.5``), not conda's own (``=2.4``, ``2.4.*``)."""
    m = re.fullmatch(r"([A-Za-z0-9_.\-]+)\s*(.*)", spec.strip())
    assert m, f"cannot read the conda dependency {spec!r}"
    try:
        name = canonicalize_name(m.group(1))
        return PYPI_NAME.get(name, name), SpecifierSet(m.group(2).replace(" ", ""))
    except InvalidSpecifier:
        raise AssertionError(f"{spec!r}: write the range as pip does (>=X,<Y)") from None


def env_packages(env: dict) -> tuple[dict[str, SpecifierSet], list[str]]:
    """``{name: range}`` of an env's conda and pip dependencies, and its pip option lines
    (the editable install of the package itself)."""
    packages: dict[str, SpecifierSet] = {}
    options: list[str] = []
    for dep in env.get("dependencies", []):
        if isinstance(dep, dict):
            for line in dep.get("pip", []):
                if line.startswith("-"):
                    options.append(line)
                else:
                    req = Requirement(line)
                    packages[canonicalize_name(req.name)] = req.specifier
        else:
            name, spec = _conda_requirement(dep)
            packages[name] = spec
    return packages, options


def _bounds(spec: SpecifierSet) -> tuple[Version | None, Version | None]:
    """The lowest version ``spec`` allows (``>=`` / ``==``) and its upper bound (``<`` /
    ``<=`` / ``==``), ``None`` where it has none (wildcards ``==X.*`` are no bound)."""
    lo = hi = None
    for s in spec:
        if s.version.endswith(".*"):
            continue
        v = Version(s.version)
        if s.operator in (">=", "=="):
            lo = v if lo is None else max(lo, v)
        if s.operator in ("<", "<=", "=="):
            hi = v if hi is None else min(hi, v)
    return lo, hi


def pin_problems(name: str, env_spec: SpecifierSet, project_spec: SpecifierSet) -> list[str]:
    """Why an env's range of ``name`` is not a pin inside pyproject's range (empty: it is).
    A pin has a lower and an upper bound (``>=X,<Y`` or ``==X``); its lowest version must
    satisfy pyproject, and its upper bound may not pass pyproject's."""
    lo, hi = _bounds(env_spec)
    if lo is None or hi is None:
        return [f"{name}{env_spec} is not pinned (give >=X,<Y or ==X)"]
    if not project_spec.contains(lo, prereleases=True):
        return [f"{name}{env_spec} allows {lo}, outside pyproject's {name}{project_spec}"]
    project_hi = _bounds(project_spec)[1]
    if project_hi is not None and hi > project_hi:
        return [f"{name}{env_spec} goes past pyproject's {name}{project_spec}"]
    return []


def env_problems(env: dict, project: dict) -> list[str]:
    """Every disagreement of a conda env with pyproject's ``project`` table: a dependency
    missing, a range not pinned or outside pyproject's, a package pyproject does not
    list, a pip option pip refuses in a requirements file."""
    packages, options = env_packages(env)
    required = {canonicalize_name(r.name): r for r in map(Requirement, project["dependencies"])}
    optional = {
        canonicalize_name(r.name): r
        for deps in project.get("optional-dependencies", {}).values()
        for r in map(Requirement, deps)
    }
    problems = [
        f"{name} (a dependency of pyproject) is missing"
        for name in required.keys() - packages.keys()
    ]
    for name, spec in sorted(packages.items()):
        if name == "python":
            problems += pin_problems(name, spec, SpecifierSet(project["requires-python"]))
        elif name in required or name in optional:
            problems += pin_problems(name, spec, (required.get(name) or optional[name]).specifier)
        elif name not in TOOLS:
            problems.append(f"{name} is not a dependency of pyproject")
    if "python" not in packages:
        problems.append("python is not pinned")
    problems += [
        f"pip option {o!r}: pip refuses it in an env file"
        for o in options
        if not o.startswith(PIP_OPTIONS)
    ]
    return problems


def test_the_workflow_env_is_checked():
    assert REPO / "workflow" / "envs" / "ufs.yaml" in ENV_FILES


@pytest.mark.parametrize("path", ENV_FILES, ids=lambda p: p.name)
def test_env_agrees_with_pyproject(path):
    env = yaml.safe_load(path.read_text())
    assert env_problems(env, PROJECT) == []


@pytest.mark.parametrize("path", ENV_FILES, ids=lambda p: p.name)
def test_env_installs_the_repository_and_cites_existing_files(path):
    """``-e ../..`` is the repository seen from the env file's directory (see the file's
    comment for Snakemake's copy under .snakemake/conda), and every test file the env's
    comments cite exists."""
    env = yaml.safe_load(path.read_text())
    _, options = env_packages(env)
    targets = [Path(o.split(maxsplit=1)[1]) for o in options if o.startswith(PIP_OPTIONS)]
    assert [(path.parent / t).resolve() for t in targets] == [REPO]
    for cited in re.findall(r"tests/[\w/]+\.py", path.read_text()):
        assert (REPO / cited).is_file(), f"{path.name} cites {cited}, which does not exist"


def _env() -> dict:
    return yaml.safe_load((REPO / "workflow" / "envs" / "ufs.yaml").read_text())


def _replace(env: dict, old: str, new: str | dict | None) -> dict:
    """A copy of ``env`` with the conda dependency ``old`` replaced by ``new`` (``None``:
    removed)."""
    env = copy.deepcopy(env)
    deps = env["dependencies"]
    i = deps.index(old)
    deps[i : i + 1] = [] if new is None else [new]
    return env


@pytest.mark.parametrize(
    "old, new, problem",
    [
        ("numpy>=2.4.6,<2.5", "numpy>=1.20,<2", "allows 1.20, outside pyproject's numpy>=1.26"),
        ("numpy>=2.4.6,<2.5", "numpy>=2.4.6", "numpy>=2.4.6 is not pinned"),
        ("numpy>=2.4.6,<2.5", "numpy=2.4", "write the range as pip does"),
        ("scipy>=1.17.1,<1.18", None, "scipy (a dependency of pyproject) is missing"),
        ("python>=3.11,<3.12", "python>=3.10,<3.11", "allows 3.10"),
        ("pip", "polars>=1.0,<2", "polars is not a dependency of pyproject"),
        ("pip", {"pip": ["--no-deps -e ../.."]}, "pip option '--no-deps -e ../..'"),
    ],
)
def test_the_check_finds_each_disagreement(old, new, problem):
    """The check itself: each broken variant of the real env file is reported."""
    env = _replace(_env(), old, new)
    try:
        problems = env_problems(env, PROJECT)
    except AssertionError as exc:  # a range conda and pip do not share
        problems = [str(exc)]
    assert any(problem in p for p in problems), problems


def test_an_upper_bound_of_pyproject_bounds_the_pin():
    assert pin_problems("numpy", SpecifierSet(">=2.0,<2.5"), SpecifierSet(">=1.26,<2.4"))
    assert not pin_problems("numpy", SpecifierSet(">=2.0,<2.1"), SpecifierSet(">=1.26,<2.4"))
    assert not pin_problems("numpy", SpecifierSet("==2.4.6"), SpecifierSet(">=1.26"))
