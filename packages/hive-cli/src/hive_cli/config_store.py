"""``hive set``, ``get`` and ``unset``: reading and writing the global configuration file.

Only ``<home>/config.yaml`` is touched. Writing edits the file in place through ruamel.yaml's round-trip mode, so
every other key, the comments, the order, the quoting and the layout the user wrote are kept: only the value set
(or the key removed) changes. The home is created with mode 0700 and the file written with mode 0600, since it
holds API keys.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from pathlib import Path
from typing import cast

import msgspec
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from hive_core.config import ConfigError
from hive_core.config import FieldSpec
from hive_core.config import SectionSpec
from hive_core.config import display_value
from hive_core.config import flatten
from hive_core.config import global_config_path
from hive_core.config._values import infer_value
from hive_core.config._values import parse_for_field
from hive_core.config.structured import Document
from hive_core.config.structured import read_document
from hive_providers import CONFIG_SCHEMA

__all__ = ["SetResult", "get_value", "set_value", "unset_value"]

_DIR_MODE = 0o700
_FILE_MODE = 0o600


class SetResult(msgspec.Struct, frozen=True, kw_only=True):
    """What ``set`` wrote, for its echo."""

    key: str
    """The canonical dotted key written."""
    value: object
    """The value written, typed."""
    display: str
    """The value as echoed: masked when the key holds a secret."""
    path: Path
    """The file written."""
    warnings: tuple[str, ...] = ()
    """Notes for the user, such as a key hive does not know (written, but ignored when loading)."""
    used: bool = True
    """Whether this version of hive acts on the key (``False``: accepted, read by nothing yet)."""


def _read(path: Path) -> tuple[dict[object, object], Document | None]:
    document = read_document(path, error=ConfigError)
    if document is None or document.value is None:
        return {}, document
    if not isinstance(document.value, dict):
        raise ConfigError("the top level must be a mapping of sections", source=str(path), line=1, column=1)
    return cast("dict[object, object]", document.value), document


def _round_trip() -> YAML:
    editor = YAML(typ="rt")
    editor.preserve_quotes = True
    editor.width = 4096  # never fold a long value the user wrote on one line
    return editor


def _edit(path: Path) -> tuple[dict[object, object], Document | None]:
    """The file as an editable round-trip tree (a mapping that keeps comments and layout), and its document for
    error positions. Errors are those of :func:`_read`: the same reader judges the file first."""
    data, document = _read(path)
    if not data:
        return {}, document
    try:
        tree = _round_trip().load(path.read_text(encoding="utf-8"))  # pyright: ignore[reportUnknownMemberType]
    except (
        OSError,
        YAMLError,
    ) as error:  # read_document accepted it: only a race or a dialect gap lands here
        raise ConfigError(f"cannot edit the file ({error})", source=str(path)) from error
    return cast("dict[object, object]", tree), document


def _file_spelling(data: dict[object, object], segments: tuple[str, ...]) -> tuple[str, ...]:
    """The segments as the file spells the section: an alias section already in the file is kept."""
    if segments[0] in data:
        return segments
    for alias, canonical in CONFIG_SCHEMA.aliases.items():
        if canonical == segments[0] and alias in data:
            return (alias, *segments[1:])
    return segments


def _check_key(segments: tuple[str, ...]) -> list[str]:
    """Refuse a key that names a section or goes inside a value; a note for a key hive does not know."""
    dotted = ".".join(segments)
    spec = CONFIG_SCHEMA.lookup(segments)
    if isinstance(spec, SectionSpec):
        fields = ", ".join(field.name for field in spec.fields) or "its rules"
        raise ConfigError(f"'{dotted}' is a section; set one of its fields ({fields})", key=dotted)
    if spec is not None:
        return []
    top = CONFIG_SCHEMA.get(segments[0])
    if isinstance(top, FieldSpec):
        raise ConfigError(f"'{segments[0]}' is a value, not a section", key=dotted)
    if isinstance(top, SectionSpec):
        if top.free_form:
            return []
        if top.field(segments[1]) is not None:
            raise ConfigError(f"'{segments[0]}.{segments[1]}' is a value, not a section", key=dotted)
    return [
        f"'{dotted}' is not a key hive knows; it is written, but ignored when the configuration is loaded"
    ]


def set_value(key: str, value: str, *, home: Path | None = None) -> SetResult:
    """Write ``value`` at a dotted ``key`` of the global file (creating the file and the home if needed).

    The key's spelling is normalised (:meth:`~hive_core.config.ConfigSchema.normalize_key`). A known key's
    value must fit its type (``true``/``false``, a whole number, a number, text, or a comma-separated list); a
    key hive does not know gets a boolean, else a whole number, else a number, else the text, and a warning.
    Raises :class:`ConfigError` for a value that does not fit, a key that names a section, or a malformed
    existing file (which is left as it is).
    """
    path = global_config_path(home)
    segments = CONFIG_SCHEMA.normalize_key(key)
    dotted = ".".join(segments)
    notes = _check_key(segments)
    spec = CONFIG_SCHEMA.lookup(segments)
    parsed = parse_for_field(value, spec, dotted) if isinstance(spec, FieldSpec) else infer_value(value)
    data, document = _edit(path)
    node = data
    written = _file_spelling(data, segments)
    for depth, segment in enumerate(written[:-1]):
        child = node.get(segment)
        if child is None:
            child = node[segment] = {}
        if not isinstance(child, dict):
            where = document.value_mark(written[: depth + 1]) if document is not None else None
            raise ConfigError(
                f"cannot set '{dotted}': '{'.'.join(written[: depth + 1])}' holds a value, not a mapping",
                source=str(path),
                line=where.line if where else None,
                key=dotted,
            )
        node = cast("dict[object, object]", child)
    node[written[-1]] = parsed
    _write(path, data)
    return SetResult(
        key=dotted,
        value=parsed,
        display=display_value(dotted, parsed),
        path=path,
        warnings=tuple(notes),
        used=CONFIG_SCHEMA.is_used(dotted),
    )


def get_value(key: str | None = None, *, raw: bool = False, home: Path | None = None) -> dict[str, str]:
    """The global file's values as dotted key → shown value: all, or ``key`` and everything under it.

    Secrets (:func:`is_secret_key`) are masked unless ``raw``. A key that is not set gives an empty mapping; a
    section written under an alias (``local``) is shown under its canonical name (``lmsupply``).
    """
    data, _ = _read(global_config_path(home))
    view: dict[str, object] = {}
    for name, item in data.items():
        canonical = CONFIG_SCHEMA.aliases.get(str(name), str(name))
        view[canonical if canonical not in data else str(name)] = item
    flat = flatten(view)
    if key is not None:
        prefix = ".".join(CONFIG_SCHEMA.normalize_key(key))
        flat = {name: item for name, item in flat.items() if name == prefix or name.startswith(f"{prefix}.")}
    return {name: display_value(name, item, raw=raw) for name, item in flat.items()}


def unset_value(key: str, *, home: Path | None = None) -> bool:
    """Remove a dotted ``key`` (a value or a whole section) from the global file; sections left empty are
    removed too. ``False`` when the key was not set (the file is then not rewritten)."""
    path = global_config_path(home)
    data, _ = _edit(path)
    canonical = CONFIG_SCHEMA.normalize_key(key)
    as_written = tuple(segment.strip() for segment in key.strip().split("."))
    for segments in (_file_spelling(data, canonical), as_written):
        trail: list[dict[object, object]] = [data]
        for segment in segments[:-1]:
            child = trail[-1].get(segment)
            if not isinstance(child, dict):
                break
            trail.append(cast("dict[object, object]", child))
        else:
            if segments[-1] in trail[-1]:
                del trail[-1][segments[-1]]
                for depth in range(len(trail) - 1, 0, -1):
                    if trail[depth]:
                        break
                    del trail[depth - 1][segments[depth - 1]]
                _write(path, data)
                return True
    return False


def _write(path: Path, data: dict[object, object]) -> None:
    """Replace the file atomically with ``data`` as YAML (round-trip: what was read keeps its comments and
    layout), mode 0600, creating its directory with mode 0700."""
    text = ""
    if data:
        buffer = io.StringIO()
        _round_trip().dump(data, buffer)  # pyright: ignore[reportUnknownMemberType]
        text = buffer.getvalue()
    try:
        if not path.parent.exists():
            path.parent.mkdir(mode=_DIR_MODE, parents=True)
            path.parent.chmod(_DIR_MODE)  # mkdir's mode is narrowed by the umask; this is the mode asked for
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as error:
        raise ConfigError(f"cannot write the file ({error.strerror or error})", source=str(path)) from error
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(temporary, _FILE_MODE)
        os.replace(temporary, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise ConfigError(f"cannot write the file ({error.strerror or error})", source=str(path)) from error
