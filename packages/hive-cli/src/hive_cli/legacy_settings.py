"""The ``settings.json`` of earlier versions, migrated into ``config.yaml`` once: on the first run of any command
that reads the configuration (:func:`migrate_on_first_run`), and by ``hive doctor --fix`` (:func:`migrate`).

Values ``config.yaml`` already sets win. When every value was copied the old file is renamed
``settings.json.migrated``; a value that cannot be copied (a list of rules, a value the key does not take) is
named, and the old file is kept for the user to finish by hand (``hive doctor`` keeps reporting it).
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from typing import TextIO
from typing import cast

from hive_core.config import hive_home

__all__ = ["LEGACY_SETTINGS", "MIGRATED_SUFFIX", "Migration", "migrate", "migrate_on_first_run"]

LEGACY_SETTINGS: Final = "settings.json"
"""The configuration file of earlier versions, in the hive home."""

MIGRATED_SUFFIX: Final = ".migrated"
"""What the old file's name gets once every value of it is in ``config.yaml``."""

_done_in_this_process: set[Path] = set()


@dataclass(frozen=True)
class Migration:
    """What one migration did."""

    legacy: Path
    """The old file."""
    config: Path
    """The ``config.yaml`` written."""
    copied: tuple[str, ...]
    """Dotted keys copied into ``config.yaml``."""
    kept: tuple[str, ...]
    """Dotted keys ``config.yaml`` already set (its value kept)."""
    left: tuple[str, ...]
    """Keys that could not be copied, each with why when the value was refused; the old file is then kept."""

    @property
    def finished(self) -> bool:
        """Whether the old file was renamed (every value is in ``config.yaml``)."""
        return not self.left

    def summary(self) -> str:
        """One line saying what was done."""
        done = f"migrated {len(self.copied)} value(s) of {self.legacy} into {self.config}"
        if self.kept:
            done += f"; kept config.yaml's {', '.join(self.kept)}"
        if self.left:
            return (
                f"{done}; not migrated (copy by hand, then delete {self.legacy.name}): {', '.join(self.left)}"
            )
        return f"{done}; the old file is now {self.legacy.name}{MIGRATED_SUFFIX}"


def _setting_text(value: object) -> str | None:
    """A legacy value as ``hive set`` takes it; ``None`` for what it cannot take (a list of mappings)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    if isinstance(value, list) and all(
        isinstance(item, str | int | float) and not isinstance(item, bool)
        for item in cast("list[object]", value)
    ):
        return ",".join(str(item) for item in cast("list[object]", value))
    return None


def migrate(legacy: Path, home: Path) -> Migration:
    """Copy every value of ``legacy`` that ``config.yaml`` does not set into it, then rename ``legacy`` to
    ``settings.json.migrated``; what cannot be copied is named and ``legacy`` is kept.

    Raises ``OSError`` when ``legacy`` cannot be read or is not a JSON object, and the configuration's user error
    when ``config.yaml`` itself is malformed (nothing is written then).
    """
    # ruamel.yaml and the schema are needed only when there is something to migrate.
    from hive_cli.config_store import get_value
    from hive_cli.config_store import set_value
    from hive_core.config import ConfigError
    from hive_core.config import flatten
    from hive_core.config import global_config_path
    from hive_providers import CONFIG_SCHEMA

    try:
        document: object = json.loads(legacy.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise OSError(f"{legacy} is not JSON ({exc}); fix or remove it") from None
    if not isinstance(document, dict):
        raise OSError(f"{legacy} does not hold an object of settings; fix or remove it")
    values = flatten(cast("Mapping[str, object]", document))
    present = get_value(home=home, raw=True)
    copied: list[str] = []
    kept: list[str] = []
    left: list[str] = []
    for key, value in values.items():
        if value is None:
            continue
        text = _setting_text(value)
        if text is None:
            left.append(key)
            continue
        dotted = ".".join(CONFIG_SCHEMA.normalize_key(key))
        if dotted in present:
            kept.append(dotted)
            continue
        try:
            copied.append(set_value(dotted, text, home=home).key)
        except ConfigError as exc:
            left.append(f"{key} ({exc})")
    done = Migration(legacy, global_config_path(home), tuple(copied), tuple(kept), tuple(left))
    if done.finished:
        with contextlib.suppress(FileNotFoundError):  # another hive, started at the same time, renamed it
            legacy.rename(legacy.with_name(f"{legacy.name}{MIGRATED_SUFFIX}"))
    return done


def migrate_on_first_run(home: Path | None = None, *, stderr: TextIO | None = None) -> None:
    """Migrate the hive home's legacy ``settings.json`` when there is one, saying on ``stderr`` (by default
    ``sys.stderr``) in one line what was done; at most once per process and home.

    Never raises for a file it cannot migrate: a broken ``settings.json`` is a warning and hive goes on. When some
    values were left behind, a later run copies nothing again and only reminds of them.
    """
    where = (home if home is not None else hive_home()).absolute()
    legacy = where / LEGACY_SETTINGS
    if where in _done_in_this_process or not legacy.is_file():
        return
    _done_in_this_process.add(where)
    from hive_cli.errors import USER_ERRORS

    out = stderr if stderr is not None else sys.stderr
    try:
        done = migrate(legacy, where)
    except FileNotFoundError:
        return  # another hive, started at the same time, migrated it
    except (OSError, *USER_ERRORS) as exc:
        out.write(f"hive: warning: {LEGACY_SETTINGS} not migrated to config.yaml: {exc}\n")
        return
    if done.copied or done.finished:
        out.write(f"hive: {done.summary()}\n")
    else:
        out.write(
            f"hive: {legacy} still holds what could not be migrated to config.yaml (copy by hand, then delete "
            f"it): {', '.join(done.left)}\n"
        )
