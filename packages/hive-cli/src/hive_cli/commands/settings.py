"""``hive set``, ``get``, ``unset`` and ``config``."""

from __future__ import annotations

import getpass
import sys
from collections.abc import Sequence
from pathlib import Path

from hive_cli.config_entries import ConfigEntry
from hive_cli.config_entries import config_entries
from hive_cli.config_store import set_value
from hive_cli.config_store import unset_value
from hive_cli.errors import USER_ERRORS
from hive_cli.output import print_document
from hive_cli.output import print_records
from hive_cli.project_trust import settings_needing_trust
from hive_core.config import ConfigError
from hive_core.config import IgnoredSetting
from hive_core.config import find_project_root
from hive_core.config import global_config_path
from hive_core.config import is_secret_key
from hive_core.config import load_config
from hive_core.config import project_config_path
from hive_core.config import project_env_path
from hive_providers import CONFIG_SCHEMA

__all__ = ["config_main", "get_main", "set_main", "unset_main"]


def _ask_hidden(key: str) -> str | None:
    """The value of a secret ``key`` typed at the terminal without echo; ``None`` (after saying why) when there
    is no terminal, nothing was typed, or the user gave up."""
    if not sys.stdin.isatty():
        sys.stderr.write(
            f"hive: {key} is asked for at a terminal, and there is none: run `hive set {key}` in one, "
            f"or give the value (`hive set {key} VALUE`)\n"
        )
        return None
    try:
        value = getpass.getpass(f"{key} (hidden): ").strip()
    except (EOFError, KeyboardInterrupt):
        sys.stderr.write(f"\nhive: {key} not changed\n")
        return None
    if not value:
        sys.stderr.write(f"hive: nothing entered; {key} not changed\n")
        return None
    return value


def set_main(key: str, value: str | None) -> int:
    """Write ``key`` in the global file; the echo masks secrets. A secret key without a value is asked for
    hidden (:func:`getpass.getpass`); any other key needs its value."""
    if value is None:
        try:
            dotted = ".".join(CONFIG_SCHEMA.normalize_key(key))
        except USER_ERRORS as exc:
            sys.stderr.write(f"hive: {exc}\n")
            return 1
        if not is_secret_key(dotted):
            sys.stderr.write(f"hive: {dotted} needs a value: hive set {dotted} VALUE\n")
            return 2
        value = _ask_hidden(dotted)
        if value is None:
            return 1
    try:
        result = set_value(key, value)
    except USER_ERRORS as exc:
        sys.stderr.write(f"hive: {exc}\n")
        return 1
    for warning in result.warnings:
        sys.stderr.write(f"hive: warning: {warning}\n")
    if not result.used:
        sys.stderr.write(f"hive: note: {result.key} is accepted but not used by this version of hive yet\n")
    sys.stdout.write(f"{result.key} = {result.display}  ({result.path})\n")
    return 0


def _entry_document(entry: ConfigEntry) -> dict[str, object]:
    """One key as ``-o json|jsonl`` prints it: ``key``, ``value`` (as shown: masked unless raw), ``origin`` (as the
    text form says it), ``layer``, ``source``, ``line``, ``variable``, ``used``."""
    origin = entry.origin
    return {
        "key": entry.key,
        "value": entry.value,
        "origin": str(origin),
        "layer": origin.layer,
        "source": origin.source,
        "line": origin.line,
        "variable": origin.variable,
        "used": entry.used,
    }


def _print_entries(
    entries: Sequence[ConfigEntry], output: str, ignored: Sequence[IgnoredSetting] | None = None
) -> None:
    """The keys in a machine format: ``json`` one document ``{"entries": [...]}`` (with ``config show``, also
    ``"ignored": [{setting, source, line}]``, the untrusted project's settings), ``jsonl`` a record per key
    (``{"type": "entry", ...}``) and per ignored setting (``{"type": "ignored", ...}``)."""
    documents = [_entry_document(entry) for entry in entries]
    skipped = [{"setting": item.setting, "source": item.source, "line": item.line} for item in ignored or ()]
    if output == "json":
        print_document({"entries": documents, **({"ignored": skipped} if ignored is not None else {})})
        return
    print_records(
        [
            *({"type": "entry", **document} for document in documents),
            *({"type": "ignored", **item} for item in skipped),
        ]
    )


def get_main(key: str | None, *, raw: bool, output: str = "text") -> int:
    """Print the effective value of ``key`` (and everything under it), or every key set anywhere, each with where
    it came from (file:line, environment variable, default); secrets masked unless ``raw``."""
    try:
        dotted = ".".join(CONFIG_SCHEMA.normalize_key(key)) if key is not None else None
        loaded = load_config(find_project_root(Path.cwd()), schema=CONFIG_SCHEMA)
    except (*USER_ERRORS, ConfigError) as exc:
        sys.stderr.write(f"hive: {exc}\n")
        return 1
    for warning in loaded.warnings:
        sys.stderr.write(f"hive: warning: {warning}\n")
    # One key: its value wherever it comes from, the default included; everything: what is set, defaults left out.
    entries = config_entries(loaded, raw=raw, include_defaults=dotted is not None)
    if dotted is not None:
        entries = [e for e in entries if e.key == dotted or e.key.startswith(f"{dotted}.")]
        if not entries:
            sys.stderr.write(
                f"hive: {dotted} is not set (no file, environment variable or default gives it a value); "
                f"`hive set {dotted} VALUE` sets it\n"
            )
            return 1
    elif not entries and output == "text":
        sys.stderr.write(
            "hive: nothing is set; `hive set KEY VALUE` sets a key, `hive config show` lists defaults\n"
        )
        return 0
    if output != "text":
        _print_entries(entries, output)
        return 0
    for entry in entries:
        sys.stdout.write(f"{entry.key} = {entry.value}  # {entry.origin}\n")
    return 0


def unset_main(key: str) -> int:
    """Remove ``key`` from the global file."""
    try:
        removed = unset_value(key)
    except USER_ERRORS as exc:
        sys.stderr.write(f"hive: {exc}\n")
        return 1
    if not removed:
        sys.stderr.write(f"hive: {key} was not set\n")
        return 1
    sys.stdout.write(f"removed {key}\n")
    return 0


def config_main(action: str, *, raw: bool, output: str = "text") -> int:
    """``config path``: the files; ``config show``: every value with where it came from."""
    root = find_project_root(Path.cwd())
    if action == "path":
        if output != "text":
            paths = {"global": str(global_config_path()), "project": str(project_config_path(root))}
            paths["env"] = str(project_env_path(root))
            if output == "json":
                print_document(paths)
            else:
                print_records([paths])
            return 0
        sys.stdout.write(f"global:  {global_config_path()}\nproject: {project_config_path(root)}\n")
        sys.stdout.write(f".env:    {project_env_path(root)}\n")
        return 0
    try:
        loaded = load_config(root, schema=CONFIG_SCHEMA)
    except ConfigError as exc:
        sys.stderr.write(f"hive: {exc}\n")
        return 1
    for warning in loaded.warnings:
        sys.stderr.write(f"hive: warning: {warning}\n")
    ignored: list[IgnoredSetting] = []
    if not loaded.trusted:
        try:
            ignored = settings_needing_trust(root, loaded)
        except USER_ERRORS as exc:
            sys.stderr.write(f"hive: {exc}\n")
            return 1
    entries = config_entries(loaded, raw=raw)
    if output != "text":
        _print_entries(entries, output, ignored)
        for notice in loaded.notices:
            sys.stderr.write(f"hive: {notice}\n")
        return 0
    for entry in entries:
        unused = "" if entry.used else "; not used by this version of hive yet"
        sys.stdout.write(f"{entry.key} = {entry.value}  # {entry.origin}{unused}\n")
    if ignored:
        sys.stdout.write("# ignored, as the project is not trusted (`hive trust` to use them):\n")
    for item in ignored:
        sys.stdout.write(f"#   {item}\n")
    for notice in loaded.notices:
        sys.stderr.write(f"hive: {notice}\n")
    return 0
