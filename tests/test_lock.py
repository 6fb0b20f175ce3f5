"""The environment can be rebuilt: ``requirements/lock.txt`` pins every dependency of
``pyproject.toml`` (its extras included) to one release inside the declared range, with
hashes, and CI installs from it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
LOCK = REPO / "requirements" / "lock.txt"


def _pins() -> dict[str, str]:
    text = LOCK.read_text()
    return {
        canonicalize_name(name): version
        for name, version in re.findall(r"^([A-Za-z0-9_.\-]+)==([^\s\\]+)", text, flags=re.M)
    }


#: extras installed apart from the lock: ``neural``'s PyTorch is the CPU build, which CI
#: installs itself (the lock is resolved from PyPI, whose Linux torch is the CUDA build)
UNLOCKED_EXTRAS = ("neural",)


def _project() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def _declared() -> list[Requirement]:
    project = _project()
    reqs = list(project["dependencies"])
    for name, extra in project["optional-dependencies"].items():
        if name not in UNLOCKED_EXTRAS:
            reqs += extra
    return [Requirement(r) for r in reqs]


def test_every_declared_dependency_is_pinned_inside_its_range():
    pins = _pins()
    for req in _declared():
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is not in {LOCK.relative_to(REPO)}"
        assert req.specifier.contains(pins[name], prereleases=True), (str(req), pins[name])


def test_every_pin_has_a_hash_and_no_machine_path_is_written():
    text = LOCK.read_text()
    blocks = re.split(r"\n(?=[A-Za-z0-9_.\-]+==)", text.split("\n\n", 1)[-1])
    pinned = [b for b in blocks if re.match(r"[A-Za-z0-9_.\-]+==", b)]
    assert len(pinned) == len(_pins()) > 50
    assert all("--hash=sha256:" in b for b in pinned)
    body = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#"))
    assert "file://" not in body and "--find-links" not in body and "index-url" not in body


def test_ci_installs_from_the_lock_and_still_resolves_the_ranges():
    ci = (REPO / ".ci" / "run").read_text()
    assert "--require-hashes -r requirements/lock.txt" in ci
    assert "--no-deps -e ." in ci and "--dry-run --ignore-installed" in ci


def test_ci_installs_a_cpu_torch_inside_the_neural_extras_range():
    """The one package outside the lock: CI pins PyTorch's CPU build, inside the range of
    the ``neural`` extra, and the lock does not hold it."""
    ci = (REPO / ".ci" / "run").read_text()
    pinned = re.findall(r"pip install --quiet torch==([0-9][^\s]*)", ci)
    assert len(pinned) == 1, "CI installs torch once, pinned"
    (torch,) = [Requirement(r) for r in _project()["optional-dependencies"]["neural"]]
    assert canonicalize_name(torch.name) == "torch"
    assert torch.specifier.contains(pinned[0])
    assert "torch" not in _pins()
