"""Loading the layered configuration: global file → project file → environment → ``.env``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ._layers import Layer, file_layer, finish, merge, variables_layer
from .dotenv import read_dotenv
from .errors import ConfigError, ConfigWarning
from .loaded import LoadedConfig
from .origin import LayerName
from .paths import HIVE_HOME_VAR, global_config_path, hive_home, project_config_path, project_env_path
from .schema import SCHEMA, ConfigSchema
from .structured import read_document

__all__ = ["load_config"]


def _same_file(first: Path, second: Path) -> bool:
    try:
        return first.resolve() == second.resolve()
    except OSError:
        return False


def load_config(
    project_root: Path, env: Mapping[str, str] = os.environ, *, schema: ConfigSchema = SCHEMA
) -> LoadedConfig:
    """The configuration of the project at ``project_root``, merged from every layer, later layers winning.

    ``schema`` names the keys that are read (others are reported as unknown): by default hive-core's own; a host
    passes its whole schema (hive's: :data:`hive_providers.CONFIG_SCHEMA`, with every provider's section).

    1. ``<home>/config.yaml``, the home being ``$HIVE_HOME`` or ``~/.hive`` (:func:`hive_home` of ``env``);
    2. ``<project>/.hive/config.yaml``;
    3. the environment variables of ``schema``'s keys (:attr:`ConfigSchema.environment`) in ``env``;
    4. the same variables in ``<project>/.env``, which win over the environment's, as upstream's dotenv
       loading does (the file is read, never loaded into the process environment; ``HIVE_HOME`` in it is
       ignored with a warning, since the home is needed before the file is found).

    Text overwrites only when not empty; booleans, numbers and lists overwrite whenever a layer sets them (a
    layer that leaves a key out changes nothing); ``permissions``, ``budget`` and ``skills`` are replaced
    whole by a layer that sets anything in them. Defaults fill what no layer set.

    Raises :class:`ConfigError` for a malformed file (naming the file, line and column), a section or value of
    the wrong type (naming the file, line and key), or an unreadable file. Unknown keys are reported in
    :attr:`LoadedConfig.warnings` with their file and line.
    """
    home = hive_home(env)
    root = Path(project_root).absolute()
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
        layers.append(layer)
        warnings.extend(found)
    layer, found = variables_layer(env, schema, layer="env")
    layers.append(layer)
    warnings.extend(found)
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
        layers.append(layer)
        warnings.extend(found)
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
    )
