"""Images tools returned, as every adapter carries them: each call's images after a line saying whose they are."""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Sequence

from hive_core.messages import ToolImage
from hive_core.messages import ToolResultPart

__all__ = ["data_url", "tool_images"]


def data_url(image: ToolImage) -> str:
    """The image as a ``data:`` URL (Chat Completions' ``image_url``, the Responses API's ``input_image``)."""
    return f"data:{image.media_type};base64,{image.data}"


def tool_images(results: Sequence[ToolResultPart]) -> Iterator[tuple[str, tuple[ToolImage, ...]]]:
    """For each result with images: the line that introduces them (the call's tool and id), and the images."""
    for result in results:
        if result.images:
            count = len(result.images)
            noun = "image" if count == 1 else f"{count} images"
            yield f"The {noun} returned by {result.name} (call {result.call_id}):", result.images
