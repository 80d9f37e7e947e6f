"""``hive update``: is there a newer hive on the package index, and upgrading it the way it was installed.

The index is asked through its simple API (PEP 691 JSON, with PEP 503 HTML understood too), so no pip is needed.
Which index: ``PIP_INDEX_URL``, ``UV_INDEX_URL`` or ``UV_DEFAULT_INDEX`` (uv's first when uv installed hive),
else ``index-url`` in pip's configuration files, else the default of the pip installed here (read from pip at run
time: this file names no index). The extra indexes are asked too, after it: ``PIP_EXTRA_INDEX_URL`` (else pip's
``extra-index-url``), ``UV_EXTRA_INDEX_URL`` and ``UV_INDEX`` (each a space-separated list). The versions of every
index that answered are pooled and the newest wins; an index that fails is a warning while another answered. A
``file:`` index (a directory of ``<project>/index.html`` pages, as pip reads one) is read from the disk.
"""

from __future__ import annotations

import configparser
import importlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from importlib import metadata
from pathlib import Path
from typing import cast
from urllib.error import HTTPError
from urllib.error import URLError
from urllib.parse import urljoin
from urllib.parse import urlsplit
from urllib.request import Request
from urllib.request import url2pathname
from urllib.request import urlopen

from packaging.utils import InvalidSdistFilename
from packaging.utils import InvalidWheelFilename
from packaging.utils import canonicalize_name
from packaging.utils import parse_sdist_filename
from packaging.utils import parse_wheel_filename
from packaging.version import InvalidVersion
from packaging.version import Version

from hive_core.redaction import mask_urls
from hive_providers.installation import Installation
from hive_providers.installation import detect_installation

__all__ = ["UpdateError", "available_versions", "index_url", "index_urls", "update_main"]

_TIMEOUT = 15.0
_ACCEPT = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"
_PIP_DEFAULT = "import pip._internal.models.index as m; print(m.PyPI.simple_url)"

Runner = Callable[[Sequence[str]], int]
"""Runs an upgrade command and returns its exit status (tests record the command instead)."""


class UpdateError(Exception):
    """The index could not be found or asked, or said nothing usable."""


class _NotOnIndex(UpdateError):
    """The index answered that it does not hold the project (normal for an extra index)."""


def _pip_config_files(env: Mapping[str, str]) -> list[Path]:
    """pip's configuration files from the least to the most specific (later ones win)."""
    dirs = env.get("XDG_CONFIG_DIRS") or "/etc/xdg"
    files = [Path(d) / "pip" / "pip.conf" for d in reversed(dirs.split(os.pathsep)) if d]
    files.append(Path("/etc/pip.conf"))
    files.append(Path.home() / ".pip" / "pip.conf")
    files.append(Path(env.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "pip" / "pip.conf")
    files.append(Path(sys.prefix) / "pip.conf")
    if chosen := env.get("PIP_CONFIG_FILE"):
        if chosen == os.devnull:
            return []
        files.append(Path(chosen))
    return files


def _pip_configured(env: Mapping[str, str], option: str = "index-url") -> str | None:
    """The value of ``option`` in pip's configuration files (the most specific file and section winning)."""
    found: str | None = None
    for path in _pip_config_files(env):
        parser = configparser.RawConfigParser()
        try:
            parser.read(path, encoding="utf-8")
        except (OSError, configparser.Error):
            continue
        for section in ("global", "install"):
            if parser.has_option(section, option):
                found = parser.get(section, option).strip()
    return found or None


def _pip_default() -> str | None:
    """The default index of a pip: the one importable here (pipx's environments share one), else that of the
    ``python3`` on ``PATH``. pip is optional, hence imported by name."""
    try:
        models = importlib.import_module("pip._internal.models.index")
        return str(models.PyPI.simple_url)
    except (ImportError, AttributeError):
        pass
    python = shutil.which("python3") or shutil.which("python")
    if python is None or Path(python).resolve() == Path(sys.executable).resolve():
        return None
    try:
        done = subprocess.run(
            [python, "-c", _PIP_DEFAULT], capture_output=True, text=True, timeout=_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (done.stdout.strip() or None) if done.returncode == 0 else None


def index_url(installation: Installation, env: Mapping[str, str] = os.environ) -> str:
    """The simple-API root of the index to ask (see the module's docstring for the order)."""
    names = ["PIP_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX"]
    if installation.method in ("uv", "uv-tool"):
        names = [*names[1:], names[0]]
    for name in names:
        if value := env.get(name, "").strip():
            return value.split()[0]
    found = _pip_configured(env) or _pip_default()
    if found is None:
        raise UpdateError("no package index is known here: set PIP_INDEX_URL to the index's simple URL")
    return found


def _index_entry(entry: str) -> str:
    """The URL of one entry of ``UV_INDEX``, which may name it: ``name=https://...``."""
    name, equals, rest = entry.partition("=")
    return rest if equals and rest and not any(mark in name for mark in ":/") else entry


def index_urls(installation: Installation, env: Mapping[str, str] = os.environ) -> list[str]:
    """Every index to ask, the default one (:func:`index_url`) first, then the extra ones, each once."""
    extra = (
        env.get("PIP_EXTRA_INDEX_URL", "").strip() or _pip_configured(env, "extra-index-url") or ""
    ).split()
    extra += env.get("UV_EXTRA_INDEX_URL", "").split()
    extra += [_index_entry(entry) for entry in env.get("UV_INDEX", "").split()]
    urls = [index_url(installation, env), *extra]
    return list(dict.fromkeys(url for url in urls if url))


class _Links(HTMLParser):
    """The file names of a PEP 503 project page, yanked files left out."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []
        self._open: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a" and not any(name == "data-yanked" for name, _ in attrs):
            href = dict(attrs).get("href") or ""
            self._open = href.split("#", 1)[0].rsplit("/", 1)[-1]

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._open is not None:
            self.names.append(self._open)
            self._open = None


def _file_names(body: bytes, content_type: str) -> list[str]:
    if "json" in content_type:
        try:
            document = json.loads(body)
        except ValueError as exc:
            raise UpdateError(f"the index answered with malformed JSON ({exc})") from None
        files = cast("dict[str, object]", document).get("files") if isinstance(document, dict) else None
        if not isinstance(files, list):
            raise UpdateError("the index's answer has no list of files")
        names: list[str] = []
        for item in cast("list[object]", files):
            if isinstance(item, dict):
                entry = cast("dict[str, object]", item)
                if not entry.get("yanked") and isinstance(name := entry.get("filename"), str):
                    names.append(name)
        return names
    links = _Links()
    links.feed(body.decode("utf-8", "replace"))
    return links.names


def _version_of(filename: str, project: str) -> Version | None:
    try:
        if filename.endswith(".whl"):
            name, version, *_ = parse_wheel_filename(filename)
        elif filename.endswith((".tar.gz", ".zip")):
            name, version = parse_sdist_filename(filename)
        else:
            return None
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None
    return version if name == project else None


def _local_page(index: str, project: str, distribution: str) -> bytes:
    """The project page of a ``file:`` index (a directory of ``<project>/index.html``, as pip reads one)."""
    page = Path(url2pathname(urlsplit(index).path)) / project / "index.html"
    try:
        return page.read_bytes()
    except FileNotFoundError:
        raise _NotOnIndex(f"{distribution} is not on the index {mask_urls(index)}") from None
    except OSError as exc:
        raise UpdateError(f"the index {mask_urls(index)} cannot be read ({exc.strerror or exc})") from None


def available_versions(index: str, distribution: str) -> list[Version]:
    """Every version of ``distribution`` with a file on the index that is not yanked, oldest first."""
    project = canonicalize_name(distribution)
    scheme = urlsplit(index).scheme
    if scheme == "file":
        body, content_type = _local_page(index, project, distribution), "text/html"
    elif scheme not in ("http", "https"):
        raise UpdateError(f"only an HTTP(S) or file: index can be asked, not {mask_urls(index)}")
    else:
        body, content_type = _fetch_page(index, project, distribution)
    versions = {
        v for name in _file_names(body, content_type) if (v := _version_of(name, project)) is not None
    }
    return sorted(versions)


def _fetch_page(index: str, project: str, distribution: str) -> tuple[bytes, str]:
    """The project page of an HTTP(S) index, and its content type."""
    url = urljoin(index.rstrip("/") + "/", f"{project}/")
    request = Request(url, headers={"Accept": _ACCEPT, "User-Agent": "hive-update"})
    try:
        with urlopen(request, timeout=_TIMEOUT) as response:
            return cast("bytes", response.read()), str(response.headers.get("Content-Type", ""))
    except HTTPError as exc:
        if exc.code == 404:
            raise _NotOnIndex(f"{distribution} is not on the index {mask_urls(index)}") from None
        raise UpdateError(f"the index {mask_urls(index)} answered HTTP {exc.code}") from None
    except (URLError, OSError) as exc:
        reason = exc.reason if isinstance(exc, URLError) else exc
        raise UpdateError(f"the index {mask_urls(index)} cannot be reached ({reason})") from None


def _ask_every(indexes: Sequence[str], distribution: str) -> tuple[list[Version] | None, list[str]]:
    """The versions of ``distribution`` on all of ``indexes`` together (asked at once), oldest first, and why
    each index that failed did; ``None`` when none answered. An index that does not hold the project is no
    failure while another does."""

    def ask(index: str) -> list[Version] | UpdateError:
        try:
            return available_versions(index, distribution)
        except UpdateError as exc:
            return exc

    with ThreadPoolExecutor(max_workers=min(len(indexes), 8)) as pool:
        answers = list(pool.map(ask, indexes))
    pooled: set[Version] = set()
    answered = False
    failures: list[str] = []
    absent: list[str] = []
    for index, answer in zip(indexes, answers, strict=True):
        if isinstance(answer, _NotOnIndex):
            absent.append(index)
        elif isinstance(answer, UpdateError):
            failures.append(str(answer))
        else:
            answered = True
            pooled.update(answer)
    if answered:
        return sorted(pooled), failures
    if absent:
        where = ", ".join(mask_urls(index) for index in absent)
        failures.insert(0, f"{distribution} is not on the index{'es' if len(absent) > 1 else ''} {where}")
    return None, failures


def _run(command: Sequence[str]) -> int:
    try:
        return subprocess.run(list(command), check=False).returncode
    except OSError as exc:
        sys.stderr.write(f"hive: cannot run {command[0]}: {exc.strerror or exc}\n")
        return 1


def update_main(
    *,
    check: bool,
    pre: bool = False,
    force: bool = False,
    dry_run: bool = False,
    installation: Installation | None = None,
    runner: Runner = _run,
) -> int:
    """Check the index; with ``check`` only say (exit 2 when a newer version exists), else upgrade the way hive
    was installed (``force``: reinstall even when up to date). Exit 1 when the check fails."""
    found = detect_installation() if installation is None else installation
    name = found.distribution
    try:
        installed = Version(metadata.version(name))
    except (metadata.PackageNotFoundError, InvalidVersion) as exc:
        sys.stderr.write(f"hive: cannot read the installed version of {name}: {exc}\n")
        return 1
    try:
        indexes = index_urls(found)
    except UpdateError as exc:
        sys.stderr.write(f"hive {installed}: could not check for updates: {exc}\n")
        return 1
    versions, failures = _ask_every(indexes, name)
    if versions is None:
        sys.stderr.write(f"hive {installed}: could not check for updates: {'; '.join(failures)}\n")
        return 1
    for failure in failures:
        sys.stderr.write(f"hive: warning: {failure}\n")
    stable = [v for v in versions if pre or not v.is_prerelease]
    if not stable:
        shown_indexes = ", ".join(mask_urls(index) for index in indexes)
        offer = (
            f"the index {shown_indexes} offers" if len(indexes) == 1 else f"the indexes {shown_indexes} offer"
        )
        sys.stderr.write(f"hive {installed}: {offer} no release of {name}\n")
        return 1
    latest = stable[-1]
    command = found.upgrade_command(force=force, pre=pre)
    shown = shlex.join(command) if command is not None else None
    if latest <= installed and (check or not force):
        sys.stdout.write(f"hive {installed} is up to date ({name} {latest} is the newest on the index).\n")
        if versions[-1] > installed and not pre:
            sys.stdout.write(f"{name} {versions[-1]} is a pre-release: `hive update --pre` installs it.\n")
        return 0
    if latest > installed:
        sys.stdout.write(f"{name} {latest} is available (you have {installed}).\n")
    if check:
        if latest > installed:
            advice = f"`hive update` runs: {shown}" if shown else f"update the checkout at {found.source}"
            sys.stdout.write(f"{advice}\n")
            return 2
        return 0
    if command is None:
        sys.stdout.write(f"hive runs from a source checkout ({found.source}): update it with git pull.\n")
        return 1
    sys.stdout.write(f"{'would run' if dry_run else 'running'}: {shown}\n")
    sys.stdout.flush()
    return 0 if dry_run else runner(command)
