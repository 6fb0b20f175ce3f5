"""``ufs data fetch`` through the real download code, against a local HTTPS server (a
self-signed certificate the test trusts through ``SSL_CERT_FILE``; no network): a file is
fetched, verified and cached with a progress bar on a terminal; a tampered one is refused;
a download cut short or killed leaves nothing at the data set's place and a second fetch
completes it (from the start: the server is not asked for a range)."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
import shutil
import signal
import ssl
import subprocess
import sys
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import ufs.datasets.availability as A
from ufs.cli import main
from ufs.datasets import get_dataset
from ufs.datasets.progress import DownloadWatch, progress_line, remove_stale_parts

PIECE = 1 << 19  # what the server sends between pauses


class Served:
    """What the server sends for ``/data/Yale.mat``: ``content`` in pieces of
    :data:`PIECE` with ``pause`` seconds between them; ``cut``: stop after that many bytes
    (the Content-Length promises all)."""

    def __init__(self, content: bytes) -> None:
        self.content, self.pause, self.cut = content, 0.0, None
        self.requests = 0


def _handler(served: Served) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def do_GET(self):
            served.requests += 1
            if self.path != "/data/Yale.mat":
                self.send_error(404)
                return
            body = served.content
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            end = len(body) if served.cut is None else served.cut
            try:
                for start in range(0, end, PIECE):
                    self.wfile.write(body[start : min(end, start + PIECE)])
                    self.wfile.flush()
                    time.sleep(served.pause)
            except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                return
            if served.cut is not None:
                self.close_connection = True

    return Handler


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed: no certificate for the local HTTPS server")
    d = tmp_path_factory.mktemp("tls")
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-keyout", str(d / "key.pem"), "-out", str(d / "cert.pem"),
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return d / "cert.pem", d / "key.pem"


@pytest.fixture
def https(certificate, tmp_path, monkeypatch):
    """A local HTTPS server for ``yale``'s pinned URL; the registry's ``yale`` points at it
    with the served content's sha256."""
    cert, key = certificate
    content = os.urandom(3 * PIECE + 1234)
    served = Served(content)
    server = ThreadingHTTPServer(("localhost", 0), _handler(served))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"https://localhost:{server.server_address[1]}/data/Yale.mat"
    spec = dataclasses.replace(
        get_dataset("yale"),
        url=url,
        sha256=hashlib.sha256(content).hexdigest(),
        url_sha256="",
        url_member="",
    )
    monkeypatch.setattr(A, "get_dataset", lambda n: spec if n == "yale" else get_dataset(n))
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    served.url, served.spec = url, spec
    empty = tmp_path / "no_mirror"
    empty.mkdir()
    served.mirror, served.cache = empty, tmp_path / "cache"
    yield served
    server.shutdown()
    server.server_close()


def _fetch_args(served: Served) -> list[str]:
    return [
        "data", "fetch", "yale",
        "--cache-dir", str(served.cache), "--mirror-dir", str(served.mirror),
    ]  # fmt: skip


def _left(served: Served) -> list[str]:
    folder = served.cache / "yale"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_a_served_file_is_fetched_verified_and_cached(https, capsys):
    assert main(_fetch_args(https)) == 0
    assert "ok, sha256 checked" in capsys.readouterr().out
    assert (https.cache / "yale" / "Yale.mat").read_bytes() == https.content
    assert _left(https) == ["Yale.mat"]
    assert A.data_state("yale", mirror=https.mirror, cache=https.cache).state == "cached"
    # cached: a second fetch does not ask the server again
    assert main(_fetch_args(https)) == 0
    assert https.requests == 1


def test_a_tampered_file_is_refused_and_nothing_is_kept(https, capsys):
    https.content = https.content[:-1] + b"!"
    assert main(_fetch_args(https)) == 1
    out = capsys.readouterr().out
    assert "failed" in out and "sha256" in out
    assert _left(https) == []


def test_a_download_cut_short_leaves_nothing_and_the_next_fetch_completes(https, capsys):
    """http.client ends a short read without an error, so the cut file reaches the sha256
    check, which refuses it."""
    https.cut = 2 * PIECE
    assert main(_fetch_args(https)) == 1
    out = capsys.readouterr().out
    assert "failed" in out and "sha256 mismatch" in out
    assert _left(https) == []  # neither the file nor its partial download
    https.cut = None
    assert main(_fetch_args(https)) == 0
    assert (https.cache / "yale" / "Yale.mat").read_bytes() == https.content


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_bar_follows_the_download_on_a_terminal(https):
    https.pause = 0.15
    screen = _Terminal()
    with DownloadWatch(
        https.cache / "yale", "Yale.mat", total=len(https.content), stream=screen,
        label="[1/1] yale ... ", interval=0.05,
    ):  # fmt: skip
        A.fetch("yale", mirror=https.mirror, cache=https.cache)
    frames = [f for f in screen.getvalue().split("\r") if "%" in f]
    assert len(frames) >= 2 and all(f.startswith("[1/1] yale ... [") for f in frames)
    percents = [int(f.split("]")[2].split("%")[0]) for f in frames]
    assert percents == sorted(percents) and 0 < percents[0] < 100
    assert screen.getvalue().endswith("\r[1/1] yale ... ")  # cleared for the caller's "ok"
    # not a terminal (a log, CI): nothing is drawn
    log = io.StringIO()
    with DownloadWatch(https.cache / "yale", "Yale.mat", total=1, stream=log, interval=0.01):
        time.sleep(0.05)
    assert log.getvalue() == ""


def test_progress_lines():
    assert progress_line(0, 100, 1.0, width=10) == "[..........]   0% 0.0 MB of 0.0 MB, 0.0 MB/s"
    assert progress_line(5_000_000, 10_000_000, 2.0, width=10).startswith("[#####.....]  50% 5.0")
    assert progress_line(12_000_000, 10_000_000, 1.0, width=4).startswith("[####] 100%")
    assert progress_line(3_000_000, None, 0.0) == "3.0 MB, -- MB/s"


def test_a_killed_fetch_leaves_nothing_in_place_and_its_leftover_is_removed(https, capsys):
    """A fetch process SIGKILLed mid-download leaves only its ``.part`` file; the next
    ``ufs data fetch`` removes it (once stale) and completes the file."""
    https.pause = 0.3
    script = textwrap.dedent(
        f"""
        import dataclasses, sys
        import ufs.datasets.availability as A
        from ufs.datasets import get_dataset
        spec = dataclasses.replace(get_dataset("yale"), url={https.url!r},
                                   sha256={https.spec.sha256!r}, url_sha256="", url_member="")
        A.get_dataset = lambda n: spec if n == "yale" else get_dataset(n)
        A.fetch("yale", mirror={str(https.mirror)!r}, cache={str(https.cache)!r})
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], env={**os.environ})
    deadline = time.monotonic() + 60
    while not any(n.endswith(".part") for n in _left(https)):
        assert proc.poll() is None and time.monotonic() < deadline, "no download started"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    left = _left(https)
    assert "Yale.mat" not in left and len(left) == 1 and left[0].endswith(".part")
    assert A.data_state("yale", mirror=https.mirror, cache=https.cache).state == "downloadable"
    part = https.cache / "yale" / left[0]
    assert remove_stale_parts(part.parent, "Yale.mat") == []  # fresh: could be live
    old = time.time() - 3600
    os.utime(part, (old, old))
    https.pause = 0.0
    assert main(_fetch_args(https)) == 0
    assert "left by a killed download" in capsys.readouterr().out
    assert _left(https) == ["Yale.mat"]
