"""Tool-result truncation: a result longer than the limit keeps its head and tail lines."""

from __future__ import annotations

__all__ = ["truncate_tool_result"]


def truncate_tool_result(
    content: str, max_chars: int = 30_000, head_lines: int = 50, tail_lines: int = 20
) -> str:
    """``content`` cut to its first ``head_lines`` and last ``tail_lines`` lines when it is longer than
    ``max_chars``, joined by ``[... N lines omitted (M chars total) ...]`` on a line of its own between blank
    lines; a result with too few lines for that keeps its first ``max_chars`` characters and
    ``[... truncated (M chars total) ...]``.

    Unlike upstream, a line cut that would still exceed ``max_chars`` (a few enormous lines) falls back to the
    character cut, so the limit always holds.
    """
    total = len(content)
    if total <= max_chars:
        return content
    lines = content.split("\n")
    if len(lines) > head_lines + tail_lines:
        omitted = len(lines) - head_lines - tail_lines
        head = "\n".join(lines[:head_lines])
        tail = "\n".join(lines[len(lines) - tail_lines :]) if tail_lines else ""
        if len(head) + len(tail) <= max_chars:
            return f"{head}\n\n[... {omitted:,} lines omitted ({total:,} chars total) ...]\n\n{tail}"
    return f"{content[:max_chars]}\n[... truncated ({total:,} chars total) ...]"
