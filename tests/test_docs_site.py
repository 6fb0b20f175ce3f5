"""The documentation site: its generated reference pages cover the code, it builds with
warnings as errors, and every page renders in a real browser with no broken internal link,
anchor or image."""

from __future__ import annotations

import contextlib
import functools
import http.server
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.browser_helpers import chromium, free_port, render

REPO = Path(__file__).resolve().parents[1]


def _hook():
    spec = importlib.util.spec_from_file_location(
        "docs_reference", REPO / "docs/hooks/reference.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _need_mkdocs() -> None:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        if os.environ.get("UFS_REQUIRE_DOCS"):
            pytest.fail("UFS_REQUIRE_DOCS is set but mkdocs / mkdocs-material is not installed")
        pytest.skip('mkdocs-material is not installed (pip install -e ".[docs]")')


# -- the generated reference pages ------------------------------------------------------------
def test_the_config_reference_names_every_schema_key():
    import yaml

    hook = _hook()
    page = hook.config_reference()
    schema = yaml.safe_load(hook.SCHEMA.read_text())
    top = set(schema["properties"])
    for key, _ in hook.schema_keys():
        assert f"| `{key}` |" in page, key
    assert top <= {k for k, _ in hook.schema_keys()}
    for nested in ("evaluation.restarts", "jobs.fit_budget_seconds", "mlflow.tracking_uri"):
        assert f"`{nested}`" in page, nested


def test_the_cli_reference_has_every_subcommand():
    from ufs.cli import _COMMANDS

    page = _hook().cli_reference()
    for name in _COMMANDS:
        assert f"## `ufs {name}`" in page, name


def test_the_methods_reference_has_every_registered_method():
    from ufs.registry import available_methods, get_method

    page = _hook().methods_reference()
    for name in available_methods():
        assert f"## {name} {{#{name}}}" in page, name
        assert get_method(name).reference.split(".")[0] in page


def test_a_link_to_a_repository_file_outside_docs_becomes_its_path():
    hook = _hook()

    class _File:
        src_uri = "guide/page.md"

    class _Page:
        file = _File()

    md = "see [the config](../../config/README.md), [ok](../benchmark.md), ![img](../img/x.png)"
    out = hook.on_page_markdown(md, _Page(), {"docs_dir": str(REPO / "docs")}, None)
    assert "the config (`config/README.md`)" in out
    assert "[ok](../benchmark.md)" in out and "![img](../img/x.png)" in out


# -- the link checker -------------------------------------------------------------------------
class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("href"):
            self.refs.append(a["href"])
        if tag in ("img", "script") and a.get("src"):
            self.refs.append(a["src"])
        if tag == "link" and a.get("href") and a.get("rel") != "canonical":
            self.refs.append(a["href"])


def broken_links(page_url: str, html: str, fetch) -> list[str]:
    """The internal links, anchors and images of ``html`` (at ``page_url``) that do not
    resolve: ``fetch(url) -> html or None`` reads a page of the same site."""
    parser = _Links()
    parser.feed(html)
    base = urllib.parse.urlsplit(page_url)
    broken = []
    for ref in parser.refs:
        url = urllib.parse.urljoin(page_url, ref)
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or parts.netloc != base.netloc:
            continue  # another site: not ours to check, and there is no network
        target = urllib.parse.urlunsplit(parts._replace(fragment=""))
        body = (
            html if target == urllib.parse.urlunsplit(base._replace(fragment="")) else fetch(target)
        )
        if body is None:
            broken.append(ref)
        elif parts.fragment and target.endswith(("/", ".html")):
            ids = _Links()
            ids.feed(body)
            if urllib.parse.unquote(parts.fragment) not in ids.ids:
                broken.append(ref)
    return broken


def _fetcher(cache: dict[str, str | None]):
    def fetch(url: str) -> str | None:
        if url not in cache:
            try:
                with urllib.request.urlopen(url, timeout=30) as r:
                    body = r.read()
                cache[url] = body.decode("utf-8", "replace")
            except (urllib.error.URLError, OSError):
                cache[url] = None
        return cache[url]

    return fetch


@contextlib.contextmanager
def _serve(root: Path):
    port = free_port()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_link_checker_finds_a_broken_link_anchor_and_image(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "index.html").write_text('<h1 id="top">A</h1>')
    (tmp_path / "img.png").write_bytes(b"\x89PNG")
    page = (
        '<a href="a/">ok</a><a href="a/#top">ok</a><img src="img.png">'
        '<a href="missing/">bad</a><a href="a/#nowhere">bad</a><img src="gone.png">'
        '<a href="https://example.org/x">elsewhere</a>'
    )
    (tmp_path / "index.html").write_text(page)
    with _serve(tmp_path) as url:
        broken = broken_links(url + "/", page, _fetcher({}))
    assert sorted(broken) == ["a/#nowhere", "gone.png", "missing/"]


# -- the site itself --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def site(tmp_path_factory):
    _need_mkdocs()
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out


def _pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("index.html") if "search" not in p.parts)


@pytest.mark.slow
def test_every_page_renders_with_no_broken_internal_link(site, tmp_path):
    if chromium() is None:
        if os.environ.get("UFS_REQUIRE_BROWSER"):
            pytest.fail("UFS_REQUIRE_BROWSER is set but no chromium is on PATH")
        pytest.skip("no chromium on PATH")
    pages = _pages(site)
    nav = [p for p in re.findall(r"^\s*- .*?: (\S+\.md)$", (REPO / "mkdocs.yml").read_text(), re.M)]
    assert len(pages) >= len(nav) >= 20, (len(pages), len(nav))
    cache: dict[str, str | None] = {}
    problems: dict[str, list[str]] = {}
    with _serve(site) as base:
        for i, page in enumerate(pages):
            rel = page.parent.relative_to(site).as_posix()
            url = f"{base}/{rel}/" if rel != "." else f"{base}/"
            dom = render(url, tmp_path / f"profile{i}", budget_ms=3000)
            title = re.search(r"<h1[^>]*>(.*?)</h1>", dom, re.S)
            if not title or "404" in title.group(1):
                problems[url] = ["no page title: the page did not render"]
                continue
            bad = broken_links(url, dom, _fetcher(cache))
            if bad:
                problems[url] = bad
    assert not problems, problems


def test_the_site_holds_every_page_of_the_nav(site):
    for md in re.findall(r":\s(\S+\.md)$", (REPO / "mkdocs.yml").read_text(), re.M):
        html = site / (md[: -len(".md")].removesuffix("index")) / "index.html"
        if md == "index.md":
            html = site / "index.html"
        assert html.exists(), md
    assert shutil.which("mkdocs") or importlib.util.find_spec("mkdocs")
