"""Project trust: which project settings lower protection, and the user's record of the projects they trust.

A project's own files can lower what protects the user: a sandbox mode that confines less, network access, more
writable paths or passed variables, an endpoint or key that sends the user's prompts (and keys) elsewhere, rules
that allow more than the defaults, MCP servers that run programs. Such settings take effect only for a project the
user trusted (``hive trust``, or one answer at a terminal); anywhere else they are ignored and reported as
:class:`IgnoredSetting`. The record is kept in the hive home (``trusted-projects.json``) with a hash of the files
that can lower protection (:func:`protection_files`): when one of them changes, the project is asked about again.

:func:`lowers_protection` is the one list of configuration keys that need trust.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Final
from typing import Literal

import msgspec

from .keys import is_secret_key
from .paths import AGENT_FILE_NAME
from .paths import CONFIG_FILE_NAME
from .paths import ENV_FILE_NAME
from .paths import HIVE_DIR_NAME
from .paths import RULES_FILE_NAMES

__all__ = [
    "PROTECTION_FILE_NAMES",
    "TRUST_FILE_NAME",
    "IgnoredSetting",
    "TrustRecord",
    "TrustState",
    "TrustStore",
    "content_hash",
    "is_endpoint_key",
    "lowers_protection",
    "protection_files",
]

TRUST_FILE_NAME: Final = "trusted-projects.json"
"""The trust store's file name, in the hive home."""

PROTECTION_FILE_NAMES: Final = (
    f"{HIVE_DIR_NAME}/{CONFIG_FILE_NAME}",
    *(f"{HIVE_DIR_NAME}/{name}" for name in RULES_FILE_NAMES),
    f"{HIVE_DIR_NAME}/plugins.yaml",
    f"{HIVE_DIR_NAME}/plugins.yml",
    f"{HIVE_DIR_NAME}/plugins.json",
    ENV_FILE_NAME,
)
"""The project files (relative to its root) whose settings can lower protection; their content is hashed."""

TrustState = Literal["trusted", "changed", "declined", "unknown"]
"""What the store says of a project: ``trusted`` (and its files are as they were), ``changed`` (trusted, but a
file changed since), ``declined`` (the user said no to these very files), ``unknown`` (never asked, or declined
files that changed since)."""

_SANDBOX_STRICTNESS: Final = {"off": 0, "auto": 1, "workspace-write": 2, "read-only": 3}
_ENDPOINT_NAME: Final = re.compile(r"(endpoint|base_?url|url|host)$", re.IGNORECASE)


class IgnoredSetting(msgspec.Struct, frozen=True, kw_only=True):
    """A project setting that lowers protection, ignored because the project is not trusted."""

    setting: str
    """What it is, for the user: ``sandbox.mode: off``, ``OPENAI_BASE_URL``, ``permissions allow rule 'curl *'``."""
    source: str
    """The file it is in."""
    line: int | None = None
    """The 1-based line in that file, when known."""

    @property
    def where(self) -> str:
        """``file:line`` (or the file alone)."""
        return self.source if self.line is None else f"{self.source}:{self.line}"

    def __str__(self) -> str:
        return f"{self.setting} ({self.where})"


def is_endpoint_key(key: str) -> bool:
    """Whether a dotted key names where requests go (``openai.endpoint``, a ``baseUrl``, a ``url``)."""
    return _ENDPOINT_NAME.search(key.rsplit(".", 1)[-1]) is not None


def lowers_protection(key: str, value: object, below: object = None) -> bool:
    """Whether a project setting ``key`` (canonical, dotted) with ``value`` lowers protection, compared with
    ``below`` (the value the layers under the project give it, ``None`` for unset).

    The list: ``sandbox.mode`` confining less than ``below`` (``off`` < ``auto`` < ``workspace-write`` <
    ``read-only``); ``sandbox.networkAccess`` on; any ``sandbox.writablePaths`` or ``sandbox.passVariables``;
    every endpoint (where prompts and keys are sent), ``sessions.store`` (where every transcript is written) and
    every key or token (whose account sees the prompts). The
    ``permissions`` section is judged by its loader, rule by rule
    (:func:`~hive_core.permissions.loosening_settings`), and a project's plugins always need trust.
    """
    if key == "sandbox.mode":
        floor = below if isinstance(below, str) and below in _SANDBOX_STRICTNESS else "auto"
        mine = _SANDBOX_STRICTNESS.get(value, 0) if isinstance(value, str) else 0
        return mine < _SANDBOX_STRICTNESS[floor]
    if key == "sandbox.networkAccess":
        return value is True
    if key in ("sandbox.writablePaths", "sandbox.passVariables"):
        return bool(value)
    if key == "permissions" or key.startswith("permissions."):
        return False
    if key == "sessions.store":
        return bool(value)
    return is_endpoint_key(key) or is_secret_key(key)


def protection_files(root: Path) -> tuple[Path, ...]:
    """The project's files that can lower protection (:data:`PROTECTION_FILE_NAMES`), whether they exist or not."""
    return tuple(Path(root) / name for name in PROTECTION_FILE_NAMES)


def content_hash(root: Path) -> str:
    """A SHA-256 of the project's :func:`protection_files` and its subagent definitions (every
    ``.hive/*/*/agent.yaml``, which can name an endpoint): each one's name and bytes (or that it is absent, not a
    regular file, or unreadable), so that creating, changing or removing any of them changes the hash.

    A file is opened without blocking and read only when it is a regular file: a FIFO planted as ``.env``
    cannot hang hive here.
    """
    digest = hashlib.sha256()
    for name, path in zip(PROTECTION_FILE_NAMES, protection_files(root), strict=True):
        digest.update(name.encode() + b"\0" + _file_token(path) + b"\0")
    hive_dir = Path(root) / HIVE_DIR_NAME
    for path in sorted(hive_dir.glob(f"*/*/{AGENT_FILE_NAME}")):
        name = path.relative_to(root).as_posix()
        digest.update(name.encode() + b"\0" + _file_token(path) + b"\0")
    return digest.hexdigest()


def _file_token(path: Path) -> bytes:
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return b"absent"
    except OSError as error:
        return f"unreadable {error.errno}".encode()
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return b"not a file"
        chunks: list[bytes] = []
        while chunk := os.read(descriptor, 1 << 16):
            chunks.append(chunk)
        content = b"".join(chunks)
        return b"%d\0" % len(content) + content
    except OSError as error:
        return f"unreadable {error.errno}".encode()
    finally:
        os.close(descriptor)


class TrustRecord(msgspec.Struct, frozen=True, kw_only=True):
    """What the store holds for one project."""

    root: str
    """The project root, absolute and resolved."""
    digest: str
    """:func:`content_hash` of its files when the user answered."""
    trusted: bool
    """Whether the user trusted it (``False``: declined at the prompt)."""
    at: float
    """When (seconds since the epoch)."""


class _StoreFile(msgspec.Struct, kw_only=True):
    projects: list[TrustRecord] = msgspec.field(default_factory=list[TrustRecord])


class TrustStore:
    """The projects the user trusted (or declined), in ``<hive home>/trusted-projects.json``.

    A store that cannot be read or parsed trusts nothing (it is rewritten whole at the next change).
    """

    def __init__(self, home: Path) -> None:
        self.path: Path = Path(home) / TRUST_FILE_NAME
        """The store's file."""

    def records(self) -> dict[str, TrustRecord]:
        """Every record, by project root."""
        try:
            data = self.path.read_bytes()
        except OSError:
            return {}
        try:
            stored = msgspec.json.decode(data, type=_StoreFile)
        except msgspec.DecodeError:  # a ValidationError too
            return {}
        return {record.root: record for record in stored.projects}

    def state(self, root: Path) -> TrustState:
        """What the store says of the project at ``root`` (see :data:`TrustState`)."""
        record = self.records().get(_key(root))
        if record is None:
            return "unknown"
        same = record.digest == content_hash(Path(record.root))
        if record.trusted:
            return "trusted" if same else "changed"
        return "declined" if same else "unknown"

    def is_trusted(self, root: Path) -> bool:
        """Whether the project at ``root`` is trusted with its files as they are now."""
        return self.state(root) == "trusted"

    def trust(self, root: Path) -> TrustRecord:
        """Record the project at ``root`` as trusted with its files as they are now."""
        return self._put(root, trusted=True)

    def decline(self, root: Path) -> TrustRecord:
        """Record that the user declined the project at ``root`` with its files as they are now."""
        return self._put(root, trusted=False)

    def revoke(self, root: Path) -> bool:
        """Forget the project at ``root``; whether there was a record."""
        records = self.records()
        found = records.pop(_key(root), None) is not None
        if found:
            self._write(records)
        return found

    def _put(self, root: Path, *, trusted: bool) -> TrustRecord:
        key = _key(root)
        record = TrustRecord(root=key, digest=content_hash(Path(key)), trusted=trusted, at=time.time())
        records = self.records()
        records[key] = record
        self._write(records)
        return record

    def _write(self, records: Mapping[str, TrustRecord]) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        data = msgspec.json.format(
            msgspec.json.encode(_StoreFile(projects=sorted(records.values(), key=lambda item: item.root)))
        )
        handle, temporary = tempfile.mkstemp(prefix=".trusted-", dir=self.path.parent)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data + b"\n")
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise


def _key(root: Path) -> str:
    return str(Path(root).expanduser().resolve())
