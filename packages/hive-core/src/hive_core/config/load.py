"""Loading the layered configuration: global file → project file → ``.env`` → environment."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import cast

from ._layers import Layer
from ._layers import file_layer
from ._layers import finish
from ._layers import merge
from ._layers import variables_layer
from .dotenv import read_dotenv
from .errors import ConfigError
from .errors import ConfigWarning
from .keys import display_value
from .loaded import LoadedConfig
from .origin import LayerName
from .origin import Origin
from .paths import HIVE_HOME_VAR
from .paths import global_config_path
from .paths import hive_home
from .paths import project_config_path
from .paths import project_env_path
from .schema import SCHEMA
from .schema import ConfigSchema
from .structured import read_document
from .trust import IgnoredSetting
from .trust import TrustStore
from .trust import is_endpoint_key
from .trust import lowers_protection

__all__ = ["load_config"]


def _same_file(first: Path, second: Path) -> bool:
    try:
        return first.resolve() == second.resolve()
    except OSError:
        return False


def _value(values: dict[str, object], key: str) -> object:
    node: object = values
    for segment in key.split("."):
        node = cast("dict[object, object]", node).get(segment) if isinstance(node, dict) else None
    return node


def _drop(layer: Layer, key: str) -> None:
    section, _, field = key.partition(".")
    if not field:
        layer.values.pop(section, None)
    else:
        fields = layer.values.get(section)
        if isinstance(fields, dict):
            cast("dict[str, object]", fields).pop(field, None)
    for name in [name for name in layer.origins if name == key or name.startswith(f"{key}.")]:
        del layer.origins[name]


def _withhold(layer: Layer, below: list[Layer], ignored: list[IgnoredSetting]) -> None:
    """Take out of an untrusted project's ``layer`` every setting that lowers protection, recording each."""
    for key, origin in sorted(layer.origins.items(), key=lambda item: (item[1].line or 0, item[0])):
        if key.startswith("permissions"):
            continue  # judged rule by rule by the permissions loader, from LoadedConfig.project_permissions
        value = _value(layer.values, key)
        floor: object = None
        for lower in below:
            found = _value(lower.values, key)
            floor = found if found is not None else floor
        if not lowers_protection(key, value, floor):
            continue
        _drop(layer, key)
        shown = origin.variable or f"{key}: {display_value(key, value)}"
        ignored.append(IgnoredSetting(setting=shown, source=origin.source or "", line=origin.line))


def _endpoint_notices(dotenv_layer: Layer, env_layer: Layer) -> list[str]:
    """One line for each endpoint the project's ``.env`` sets: where requests go, or that the user's own
    variable wins."""
    notices: list[str] = []
    for key, origin in dotenv_layer.origins.items():
        if not is_endpoint_key(key):
            continue
        where = f"{origin.source}:{origin.line}" if origin.line is not None else str(origin.source)
        mine: Origin | None = env_layer.origins.get(key)
        if mine is not None:
            notices.append(
                f"{origin.variable} in {where} is not used: your environment's {mine.variable} sets {key}"
            )
        else:
            shown = display_value(key, _value(dotenv_layer.values, key))
            notices.append(f"the project's {where} sets {origin.variable}: {key} requests go to {shown}")
    return notices


def load_config(
    project_root: Path,
    env: Mapping[str, str] = os.environ,
    *,
    schema: ConfigSchema = SCHEMA,
    trusted: bool | None = None,
) -> LoadedConfig:
    """The configuration of the project at ``project_root``, merged from every layer, later layers winning.

    ``schema`` names the keys that are read (others are reported as unknown): by default hive-core's own; a host
    passes its whole schema (hive's: :data:`hive_providers.CONFIG_SCHEMA`, with every provider's section).

    1. ``<home>/config.yaml``, the home being ``$HIVE_HOME`` or ``~/.hive`` (:func:`hive_home` of ``env``);
    2. ``<project>/.hive/config.yaml``;
    3. the environment variables of ``schema``'s keys (:attr:`ConfigSchema.environment`) in
       ``<project>/.env`` (the file is read, never loaded into the process environment; ``HIVE_HOME`` in it is
       ignored with a warning, since the home is needed before the file is found);
    4. the same variables in ``env``: a variable the user set always wins over the project's ``.env``.

    The project's two layers are the project's: unless it is ``trusted`` (``None``: as the
    :class:`~hive_core.config.trust.TrustStore` in the home says), every setting in them that lowers protection
    (:func:`~hive_core.config.trust.lowers_protection`) is left out and listed in
    :attr:`LoadedConfig.ignored`, and the project file's ``permissions`` section is not merged (the permissions
    loader takes what only tightens from :attr:`LoadedConfig.project_permissions`).

    Text overwrites only when not empty; booleans, numbers and lists overwrite whenever a layer sets them (a
    layer that leaves a key out changes nothing); ``permissions``, ``budget`` and ``skills`` are replaced
    whole by a layer that sets anything in them. Defaults fill what no layer set.

    Raises :class:`ConfigError` for a malformed file (naming the file, line and column), a section or value of
    the wrong type (naming the file, line and key), or an unreadable file. Unknown keys are reported in
    :attr:`LoadedConfig.warnings` with their file and line.
    """
    home = hive_home(env)
    root = Path(project_root).absolute()
    if trusted is None:
        trusted = TrustStore(home).is_trusted(root)
    ignored: list[IgnoredSetting] = []
    project_permissions: dict[str, object] | None = None
    project_permissions_source: str | None = None
    layers: list[Layer] = []
    warnings: list[ConfigWarning] = []
    files: list[Path] = []
    global_file = global_config_path(home)
    sources: list[tuple[Path, LayerName]] = [(global_file, "global")]
    project_file = project_config_path(root)
    if not _same_file(project_file, global_file):
        sources.append((project_file, "project"))
    for path, layer_name in sources:
        document = read_document(path, error=ConfigError)
        if document is None:
            continue
        files.append(path)
        layer, found = file_layer(document, layer_name, schema)
        if layer_name == "project":
            section = layer.values.get("permissions")
            if isinstance(section, dict):
                project_permissions = cast("dict[str, object]", section)
                project_permissions_source = str(path)
            if not trusted:
                _withhold(layer, layers, ignored)
                if project_permissions is not None:
                    _drop(layer, "permissions")
        layers.append(layer)
        warnings.extend(found)
    env_layer, found = variables_layer(env, schema, layer="env")
    warnings.extend(found)
    notices: list[str] = []
    env_file = project_env_path(root)
    dotenv = read_dotenv(env_file)
    if dotenv is not None:
        files.append(env_file)
        warnings.extend(dotenv.warnings)
        if HIVE_HOME_VAR in dotenv.values:
            warnings.append(
                ConfigWarning(
                    message=f"{HIVE_HOME_VAR} in .env is ignored; set it in the environment to move the home",
                    source=dotenv.source,
                    line=dotenv.lines[HIVE_HOME_VAR],
                    key=HIVE_HOME_VAR,
                )
            )
        layer, found = variables_layer(
            dotenv.values, schema, layer="dotenv", source=dotenv.source, lines=dotenv.lines
        )
        if not trusted:
            _withhold(layer, layers, ignored)
        notices.extend(_endpoint_notices(layer, env_layer))
        layers.append(layer)
        warnings.extend(found)
    layers.append(env_layer)
    data, origins = merge(layers, schema)
    return LoadedConfig(
        schema=schema,
        data=finish(data, origins, schema),
        origins=origins,
        warnings=tuple(warnings),
        home=home,
        project_root=root,
        files=tuple(files),
        dotenv=dict(dotenv.values) if dotenv is not None else {},
        trusted=trusted,
        ignored=tuple(ignored),
        notices=tuple(notices),
        project_permissions=project_permissions,
        project_permissions_source=project_permissions_source,
    )
