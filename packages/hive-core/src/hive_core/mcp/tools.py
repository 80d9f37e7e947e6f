"""MCP tools as hive tools: their names, their schemas and their results.

Every MCP tool is offered to the model as ``mcp__<plugin>__<tool>``, so the ``mcp_tools`` permission rules judge
it. Model APIs accept names of letters, digits, ``_`` and ``-`` up to 64 characters; :func:`mcp_tool_names`
fits every tool into that, deterministically (see its rules).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Iterable
from collections.abc import Mapping
from typing import TYPE_CHECKING
from typing import Any
from typing import Final

import msgspec

from hive_core.messages import ToolImage
from hive_core.tools import Tool
from hive_core.tools import ToolArgumentError
from hive_core.tools import ToolContext
from hive_core.tools import ToolOutcome

from .connection import McpConnection
from .connection import McpServerError

if TYPE_CHECKING:
    from mcp.types import CallToolResult
    from mcp.types import Tool as ToolInfo

__all__ = [
    "CARRIED_IMAGE_TYPES",
    "MAX_TOOL_NAME_LENGTH",
    "TOOL_PREFIX",
    "McpTool",
    "mcp_tool_names",
    "outcome_of",
]

TOOL_PREFIX: Final = "mcp__"
"""What every MCP tool's name starts with: the permission engine judges such names by the ``mcp_tools`` rules."""

MAX_TOOL_NAME_LENGTH: Final = 64
"""The longest tool name model APIs accept."""

CARRIED_IMAGE_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The image types a tool's image is carried to the model in: those the model APIs all accept."""

_ERROR_TEXT_CAP: Final = 500
_HASH_LENGTHS: Final = (8, 16, 32)
_INVALID: Final = re.compile(r"[^A-Za-z0-9_-]")


def mcp_tool_names(tools: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The name each ``(plugin, tool)`` is offered under. The rules, in order:

    1. The name is ``mcp__<plugin>__<tool>`` with every character of the tool's name that is not a letter,
       digit, ``_`` or ``-`` replaced by ``_`` (an empty name becomes ``_``).
    2. A name longer than 64 characters is cut to 55 and ends in ``_`` plus the first 8 hex digits of the
       SHA-256 of ``<plugin>\\0<tool>``.
    3. Tools that still share a name are ordered: first a tool whose name needed no change, then by plugin
       name, then by tool name (code point order). The first keeps the name; each later one is cut to 55
       characters and ends in ``_`` plus 8 hex digits of that hash (16 or 32, cut shorter, should even that be
       taken).

    The result depends only on the set of tools, never on the order servers connected or listed them in.
    """
    candidates: dict[str, list[tuple[bool, str, str]]] = {}
    for plugin, tool in sorted(set(tools)):
        clean = _INVALID.sub("_", tool) or "_"
        name = f"{TOOL_PREFIX}{plugin}__{clean}"
        exact = clean == tool
        if len(name) > MAX_TOOL_NAME_LENGTH:
            name = _hashed(name, plugin, tool, 8)
            exact = False
        candidates.setdefault(name, []).append((not exact, plugin, tool))
    names: dict[tuple[str, str], str] = {}
    taken = set(candidates)
    for name, claimants in sorted(candidates.items()):
        claimants.sort()
        first, *rest = claimants
        names[first[1], first[2]] = name
        for _, plugin, tool in rest:
            for length in _HASH_LENGTHS:
                alternative = _hashed(name, plugin, tool, length)
                if alternative not in taken:
                    taken.add(alternative)
                    names[plugin, tool] = alternative
                    break
    return names


def _hashed(name: str, plugin: str, tool: str, length: int) -> str:
    digest = hashlib.sha256(f"{plugin}\0{tool}".encode()).hexdigest()[:length]
    return f"{name[: MAX_TOOL_NAME_LENGTH - length - 1]}_{digest}"


class McpTool(Tool):
    """A tool of an MCP server, called through its plugin's :class:`McpConnection`.

    ``read_only`` comes from the tool's ``readOnlyHint`` annotation, ``timeout`` from the plugin's
    ``timeoutMs`` (the pipeline's per-call timeout applies it), ``parameters`` is the tool's input schema.
    """

    def __init__(self, connection: McpConnection, info: ToolInfo, name: str) -> None:
        annotations = info.annotations
        super().__init__(
            _call_through_invoke,
            name=name,
            description=info.description
            or info.title
            or f"The '{info.name}' tool of MCP plugin '{connection.config.name}'.",
            read_only=bool(annotations and annotations.read_only_hint),
            timeout=connection.config.timeout,
        )
        self.parameters = _parameters(info.input_schema)
        self.connection = connection
        """The connection to the tool's server."""
        self.plugin = connection.config.name
        """The plugin the tool belongs to."""
        self.tool_name = info.name
        """The tool's name on its server."""
        self.info = info
        """The tool as the server listed it."""

    def __repr__(self) -> str:
        return f"McpTool({self.name!r}, read_only={self.read_only})"

    async def invoke(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolOutcome:
        """Call the tool on its server. A missing required argument raises :class:`ToolArgumentError`; every other
        failure, the server's own (``isError``) included, is a failed outcome."""
        required: object = self.parameters.get("required")
        if isinstance(required, list):
            for key in required:  # pyright: ignore[reportUnknownVariableType]
                if isinstance(key, str) and key not in arguments:
                    raise ToolArgumentError(f"missing required field `{key}`", missing=key)
        try:
            result = await self.connection.call_tool(self.tool_name, arguments)
        except McpServerError as error:
            return ToolOutcome.failed(error)
        return outcome_of(result)


async def _call_through_invoke() -> None:
    """Stands in for the function of a function tool: an MCP tool runs through :meth:`McpTool.invoke`."""
    raise RuntimeError("an MCP tool runs through McpTool.invoke")


def _parameters(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    parameters: dict[str, Any] = dict(schema or {})
    parameters.setdefault("type", "object")
    parameters.setdefault("properties", {})
    return parameters


def outcome_of(result: CallToolResult) -> ToolOutcome:
    """What the model reads of a tool's result: its content blocks as text (structured content when there is no
    content), each image named in the text and carried as an image besides (:attr:`ToolOutcome.images`). A
    result flagged ``isError`` is a failed outcome whose error is ``McpToolError: <text>``."""
    from mcp.types import ImageContent

    text = "\n".join(_block_text(block) for block in result.content)
    images = tuple(
        ToolImage(block.mime_type, block.data)
        for block in result.content
        if isinstance(block, ImageContent) and _carriable(block.mime_type, block.data)
    )
    if not text and result.structured_content is not None:
        text = msgspec.json.encode(result.structured_content).decode()
    if result.is_error:
        message = text or "the tool reported an error without a message"
        cut = message if len(message) <= _ERROR_TEXT_CAP else message[:_ERROR_TEXT_CAP] + "..."
        return ToolOutcome(content=message, success=False, error=f"McpToolError: {cut}")
    return ToolOutcome(content=text, images=images)


def _carriable(media_type: str, data: str) -> bool:
    """Whether an image can go to a model as one: a type every provider takes, and base64 that decodes (a
    provider refuses the whole request over a bad image, so such an image stays a line of text)."""
    if media_type not in CARRIED_IMAGE_TYPES:
        return False
    try:
        base64.b64decode(data, validate=True)
    except binascii.Error:
        return False
    return True


def _block_text(block: object) -> str:
    from mcp.types import AudioContent
    from mcp.types import BlobResourceContents
    from mcp.types import EmbeddedResource
    from mcp.types import ImageContent
    from mcp.types import ResourceLink
    from mcp.types import TextContent
    from mcp.types import TextResourceContents

    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ImageContent | AudioContent):
        kind = "image" if isinstance(block, ImageContent) else "audio"
        return f"[{kind} {block.mime_type}, {len(block.data) * 3 // 4} bytes]"
    if isinstance(block, ResourceLink):
        return f"[resource {block.uri}" + (f" ({block.name})" if block.name else "") + "]"
    if isinstance(block, EmbeddedResource):
        resource = block.resource
        if isinstance(resource, TextResourceContents):
            return resource.text
        blob: BlobResourceContents = resource
        return f"[resource {blob.uri}, {blob.mime_type or 'binary'}, {len(blob.blob) * 3 // 4} bytes]"
    return f"[{type(block).__name__}]"
