"""Turning each source into a layer of known, typed values, and merging the layers."""

from __future__ import annotations

import copy
import difflib
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import cast

import msgspec

from ._values import describe
from ._values import number_problem
from ._values import parse_for_field
from .errors import ConfigError
from .errors import ConfigWarning
from .origin import DEFAULT_ORIGIN
from .origin import LayerName
from .origin import Origin
from .schema import ConfigSchema
from .schema import FieldSpec
from .schema import SectionSpec
from .structured import Document
from .structured import KeyPath

__all__ = ["Layer", "file_layer", "finish", "merge", "variables_layer"]


class Layer(msgspec.Struct, kw_only=True):
    """The known values one source sets (canonical keys, typed), and where each leaf came from."""

    values: dict[str, object]
    """Canonical top-level key → the section's fields (a dict) or the scalar."""
    origins: dict[str, Origin]
    """Dotted leaf key → where it was set."""


def _suggestion(name: str, known: Iterable[str]) -> str:
    candidates = list(known)
    for candidate in candidates:
        if candidate.lower() == name.lower():
            return f" (did you mean '{candidate}'?)"
    close = difflib.get_close_matches(name, candidates, n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


class _FileReader:
    def __init__(self, document: Document, layer: LayerName, schema: ConfigSchema) -> None:
        self.document = document
        self.schema = schema
        self.layer: LayerName = layer
        self.origins: dict[str, Origin] = {}
        self.warnings: list[ConfigWarning] = []

    def error(self, path: KeyPath, problem: str) -> ConfigError:
        mark = self.document.value_mark(path)
        return ConfigError(
            problem,
            source=self.document.source,
            line=mark.line,
            column=mark.column,
            key=".".join(str(part) for part in path) or None,
        )

    def unknown(self, path: KeyPath, known: Iterable[str]) -> None:
        written = ".".join(str(part) for part in path)
        mark = self.document.key_mark(path)
        self.warnings.append(
            ConfigWarning(
                message=f"unknown key '{written}'; ignored{_suggestion(str(path[-1]), known)}",
                source=self.document.source,
                line=mark.line,
                column=mark.column,
                key=written,
            )
        )

    def record(self, dotted: str, path: KeyPath, value: object) -> None:
        if isinstance(value, dict) and value:
            for name, item in cast("dict[object, object]", value).items():
                self.record(f"{dotted}.{name}", (*path, str(name)), item)
            return
        self.origins[dotted] = Origin(
            layer=self.layer, source=self.document.source, line=self.document.key_mark(path).line
        )

    def read(self) -> Layer:
        values: dict[str, object] = {}
        top = self.document.value
        if top is None:
            return Layer(values=values, origins=self.origins)
        if not isinstance(top, dict):
            raise self.error((), f"the top level must be a mapping of sections, not {describe(top)}")
        spelled: dict[str, str] = {}
        for key, value in cast("dict[object, object]", top).items():
            name = str(key)
            canonical = self.schema.aliases.get(name, name) if isinstance(key, str) else ""
            spec = self.schema.get(canonical)
            if spec is None:
                self.unknown((name,), [*self.schema, *self.schema.aliases])
                continue
            if canonical in spelled:
                raise self.error(
                    (name,), f"'{name}' and '{spelled[canonical]}' name the same section; keep one of them"
                )
            spelled[canonical] = name
            if value is None:
                continue
            if isinstance(spec, FieldSpec):
                coerced = self.coerce(spec, (name,), value)
                if coerced is not None:
                    values[canonical] = coerced
                    self.record(canonical, (name,), coerced)
                continue
            if not isinstance(value, dict):
                raise self.error((name,), f"'{name}' must be a mapping of fields, not {describe(value)}")
            values[canonical] = self.section(spec, name, cast("dict[object, object]", value))
        return Layer(values=values, origins=self.origins)

    def section(self, spec: SectionSpec, name: str, value: dict[object, object]) -> dict[str, object]:
        if spec.free_form:
            section = {str(key): copy.deepcopy(item) for key, item in value.items()}
            self.record(spec.name, (name,), section)
            return section
        section: dict[str, object] = {}
        for key, item in value.items():
            field = spec.field(key) if isinstance(key, str) else None
            path = (name, str(key))
            if field is None:
                self.unknown(path, [known.name for known in spec.fields])
                continue
            coerced = self.coerce(field, path, item)
            if coerced is not None:
                section[field.name] = coerced
                self.record(f"{spec.name}.{field.name}", path, coerced)
        return section

    def coerce(self, spec: FieldSpec, path: KeyPath, value: object) -> object:
        """``value`` as ``spec``'s type; ``None`` (not set) for a YAML null."""
        if value is None:
            return None
        key = ".".join(str(part) for part in path)
        match spec.kind:
            case "str":
                if _is_container(value):
                    raise self.error(path, f"'{key}' must be text, not {describe(value)}")
                text = value if isinstance(value, str) else self.document.raw.get(path, str(value))
                if text and spec.choices and text not in spec.choices:
                    raise self.error(path, f"'{key}' must be one of {', '.join(spec.choices)}, not {text!r}")
                return text
            case "bool":
                if not isinstance(value, bool):
                    raise self.error(path, f"'{key}' must be true or false, not {describe(value)}")
                return value
            case "int" | "number":
                whole = spec.kind == "int"
                if (
                    isinstance(value, bool)
                    or not isinstance(value, int | float)
                    or (whole and isinstance(value, float))
                ):
                    expected = "a whole number" if whole else "a number"
                    raise self.error(path, f"'{key}' must be {expected}, not {describe(value)}")
                problem = number_problem(spec, value)
                if problem is not None:
                    raise self.error(path, f"'{key}' {problem}, not {value}")
                return value
            case "str_list":
                items = [value] if isinstance(value, str) else value
                if not isinstance(items, list):
                    raise self.error(path, f"'{key}' must be a list of texts, not {describe(value)}")
                texts: list[str] = []
                for index, item in enumerate(cast("list[object]", items)):
                    if item is None or _is_container(item):
                        raise self.error(
                            (*path, index), f"each item of '{key}' must be text, not {describe(item)}"
                        )
                    texts.append(
                        item if isinstance(item, str) else self.document.raw.get((*path, index), str(item))
                    )
                return texts
            case "mapping_list":
                if not isinstance(value, list):
                    raise self.error(path, f"'{key}' must be a list of mappings, not {describe(value)}")
                mappings = cast("list[object]", value)
                for index, item in enumerate(mappings):
                    if not isinstance(item, dict):
                        raise self.error(
                            (*path, index), f"each item of '{key}' must be a mapping, not {describe(item)}"
                        )
                if not spec.items:
                    return copy.deepcopy(mappings)
                return [
                    self.item(spec, (*path, index), cast("dict[object, object]", item))
                    for index, item in enumerate(mappings)
                ]

    def item(self, spec: FieldSpec, path: KeyPath, value: dict[object, object]) -> dict[str, object]:
        """One item of a list of mappings whose keys ``spec.items`` names, each value checked."""
        fields = {field.name: field for field in spec.items}
        item: dict[str, object] = {}
        for key, raw in value.items():
            field = fields.get(key) if isinstance(key, str) else None
            if field is None:
                self.unknown((*path, str(key)), fields)
                continue
            coerced = self.coerce(field, (*path, field.name), raw)
            if coerced is not None and coerced != "":
                item[field.name] = coerced
        for field in spec.items:
            if field.required and field.name not in item:
                written = ".".join(str(part) for part in path)
                raise self.error(path, f"'{written}' must set '{field.name}'")
        return item


def _is_container(value: object) -> bool:
    return isinstance(value, dict | list)


def file_layer(
    document: Document, layer: LayerName, schema: ConfigSchema
) -> tuple[Layer, list[ConfigWarning]]:
    """The values of a parsed config file that ``schema`` knows; unknown keys become warnings, wrong types
    raise :class:`ConfigError` naming the file, line and key."""
    reader = _FileReader(document, layer, schema)
    return reader.read(), reader.warnings


def variables_layer(
    variables: Mapping[str, str],
    schema: ConfigSchema,
    *,
    layer: LayerName,
    source: str | None = None,
    lines: Mapping[str, int] | None = None,
) -> tuple[Layer, list[ConfigWarning]]:
    """The values the variables of ``schema``'s fields set (from the process environment or a ``.env`` file).

    For each key the first of its variables that is set wins. Empty values set nothing; a value that does not
    fit its key (a boolean that is not ``true``/``false``) is ignored with a warning.
    """
    values: dict[str, object] = {}
    origins: dict[str, Origin] = {}
    warnings: list[ConfigWarning] = []
    for section in schema.values():
        if not isinstance(section, SectionSpec):
            continue
        for field in section.fields:
            key = f"{section.name}.{field.name}"
            for name in field.env:
                text = variables.get(name)
                if text is None or not (text.strip() if field.kind == "bool" else text):
                    continue
                line = lines.get(name) if lines else None
                try:
                    value = text if field.kind == "str" else parse_for_field(text, field, key)
                except ConfigError:
                    expected = (
                        "neither true nor false" if field.kind == "bool" else f"not a valid {field.kind}"
                    )
                    warnings.append(
                        ConfigWarning(
                            message=f"{name}={text!r} is {expected}; ignored",
                            source=source or "environment",
                            line=line,
                            key=key,
                        )
                    )
                    continue
                cast("dict[str, object]", values.setdefault(section.name, {}))[field.name] = value
                origins[key] = Origin(layer=layer, source=source, line=line, variable=name)
                break
    return Layer(values=values, origins=origins), warnings


def _sets(spec: FieldSpec, value: object) -> bool:
    return value is not None and not (spec.kind == "str" and value == "")


def _take(origins: dict[str, Origin], layer: Layer, prefix: str) -> None:
    """Replace the origins of ``prefix`` and everything under it with the layer's."""

    def under(key: str) -> bool:
        return key == prefix or key.startswith(f"{prefix}.")

    for key in [key for key in origins if under(key)]:
        del origins[key]
    origins.update({key: origin for key, origin in layer.origins.items() if under(key)})


def merge(layers: Sequence[Layer], schema: ConfigSchema) -> tuple[dict[str, object], dict[str, Origin]]:
    """The layers merged, lowest first: text overwrites only when not empty, booleans, numbers and lists
    overwrite whenever set, and a ``replace_whole`` section that a layer sets replaces the section."""
    data: dict[str, object] = {}
    origins: dict[str, Origin] = {}
    for layer in layers:
        for name, value in layer.values.items():
            spec = schema[name]
            if isinstance(spec, FieldSpec):
                if _sets(spec, value):
                    data[name] = value
                    _take(origins, layer, name)
                continue
            section = cast("dict[str, object]", value)
            if spec.replace_whole:
                if section:
                    data[name] = copy.deepcopy(section)
                    _take(origins, layer, name)
                continue
            target = cast("dict[str, object]", data.setdefault(name, {}))
            for field_name, field_value in section.items():
                field = spec.field(field_name)
                if field is not None and _sets(field, field_value):
                    target[field_name] = copy.deepcopy(field_value)
                    _take(origins, layer, f"{name}.{field_name}")
    return data, origins


def finish(data: Mapping[str, object], origins: dict[str, Origin], schema: ConfigSchema) -> dict[str, object]:
    """The merged values in schema order with every default filled in (recorded in ``origins``): each section
    is present (``permissions`` only when a layer set it), ``defaultProvider`` only when set."""
    result: dict[str, object] = {}
    for name, spec in schema.items():
        current = data.get(name)
        if isinstance(spec, FieldSpec):
            if current is not None:
                result[name] = current
            elif spec.default is not None:
                result[name] = _default(spec)
                origins[name] = DEFAULT_ORIGIN
            continue
        if spec.free_form:
            if current is not None:
                result[name] = current
            continue
        present = cast("dict[str, object]", current) if current is not None else {}
        section: dict[str, object] = {}
        for field in spec.fields:
            if field.name in present:
                section[field.name] = present[field.name]
            elif field.default is not None:
                section[field.name] = _default(field)
                origins[f"{name}.{field.name}"] = DEFAULT_ORIGIN
        result[name] = section
    return result


def _default(spec: FieldSpec) -> object:
    return list(spec.default) if isinstance(spec.default, tuple) else spec.default
