"""Deliberately broken runners for the conformance kit's negative tests: ``python broken_runners.py MODE``.

Each mode runs the real ``hive run --server`` as a child (same environment, same working directory, its stderr
ours) and breaks exactly one thing about it:

- ``passthrough``: breaks nothing (the control: the wrapper alone must not fail anything).
- ``missing_tool_end``: drops every ``tool_end`` line.
- ``nulls``: writes an unset optional field as ``null`` instead of leaving it out: ``"stop_reason":null`` on a
  ``turn_end`` without a stop reason, ``"refusal":null`` on a ``tool_end`` without a refusal (in the declared
  place, so nothing else about the line changes).
- ``fields_out_of_order``: rewrites every line with ``type`` last, the values unchanged.
- ``no_session_started``: drops the ``session_started`` line.
- ``crash_on_malformed``: reads the requests itself (once the child has written its first line, as a runner reads
  nothing before ``session_started``) and forwards them line by line; on a line that is not valid JSON it kills
  the child and exits with status 1 at once.
- ``ascii_escapes``: writes non-ASCII characters as ``\\uXXXX`` escapes (the same JSON, not the canonical bytes).
- ``delta_after_turn_end``: writes a stray ``text_delta`` right after every ``turn_end``.

Every output line is flushed as soon as it is written (the harness waits on events). Unless the mode reads the
requests itself, the child reads our stdin directly, so a ``cancel`` or ``hitl_response`` reaches it at once.
SIGTERM is passed on to the child; the exit status is the child's.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import IO
from typing import Any
from typing import Final

import msgspec

from hive_protocol import ToolEndEvent
from hive_protocol import TurnEndEvent

HIVE_SERVER: Final = [
    shutil.which("hive", path=os.path.dirname(sys.executable)) or "hive",
    "run",
    "--server",
]
"""``hive run --server``, from this interpreter's environment (as ``conformance_targets.HIVE_SERVER``)."""

Transform = Callable[[bytes], bytes]
"""One output line (``\\n`` included) to what is written instead: nothing, the line changed, or more lines."""

_STRAY_DELTA: Final = b'{"type":"text_delta","content":"stray"}\n'
_NULLED: Final = {
    "turn_end": ("stop_reason", ("type", *TurnEndEvent.__struct_fields__)),
    "tool_end": ("refusal", ("type", *ToolEndEvent.__struct_fields__)),
}


def _decode(line: bytes) -> dict[str, Any]:
    return msgspec.json.decode(line, type=dict[str, Any])


def _encode(event: dict[str, Any]) -> bytes:
    return msgspec.json.encode(event) + b"\n"


def _drop(kind: str) -> Transform:
    prefix = f'{{"type":"{kind}"'.encode()
    return lambda line: b"" if line.startswith(prefix) else line


def _nulls(line: bytes) -> bytes:
    event = _decode(line)
    field, order = _NULLED.get(event["type"], ("", ()))
    if not field or field in event:
        return line
    event[field] = None
    return _encode({name: event[name] for name in order if name in event})


def _type_last(line: bytes) -> bytes:
    event = _decode(line)
    event["type"] = event.pop("type")
    return _encode(event)


def _ascii_escapes(line: bytes) -> bytes:
    # Non-ASCII only ever stands inside JSON strings; json.dumps escapes a character as \uXXXX (a surrogate pair
    # beyond the BMP), so the line means the same and only its bytes change.
    return "".join(char if char.isascii() else json.dumps(char)[1:-1] for char in line.decode()).encode()


def _stray_delta(line: bytes) -> bytes:
    return line + _STRAY_DELTA if line.startswith(b'{"type":"turn_end"') else line


TRANSFORMS: Final[dict[str, Transform]] = {
    "passthrough": lambda line: line,
    "missing_tool_end": _drop("tool_end"),
    "nulls": _nulls,
    "fields_out_of_order": _type_last,
    "no_session_started": _drop("session_started"),
    "crash_on_malformed": lambda line: line,
    "ascii_escapes": _ascii_escapes,
    "delta_after_turn_end": _stray_delta,
}
"""Each mode's change to the child's output lines."""

READS_INPUT: Final = frozenset({"crash_on_malformed"})
"""The modes that read the requests themselves instead of leaving our stdin to the child."""


def _forward(child: subprocess.Popen[bytes], started: threading.Event) -> None:
    """Pass the requests on line by line; die with status 1 on one that is not JSON."""
    assert child.stdin is not None
    started.wait()
    for line in sys.stdin.buffer:
        try:
            json.loads(line)
        except ValueError:
            child.kill()
            child.wait()
            os._exit(1)
        try:
            child.stdin.write(line)
            child.stdin.flush()
        except BrokenPipeError:
            return
    child.stdin.close()


def _copy(source: IO[bytes], transform: Transform, started: threading.Event) -> None:
    out = sys.stdout.buffer
    for line in source:
        started.set()
        out.write(transform(line))
        out.flush()
    started.set()


def main(argv: list[str]) -> int:
    """Run the child in the named mode; its exit status."""
    if len(argv) != 2 or argv[1] not in TRANSFORMS:
        print(f"usage: {argv[0]} {{{','.join(TRANSFORMS)}}}", file=sys.stderr)
        return 2
    mode = argv[1]
    reads_input = mode in READS_INPUT
    child = subprocess.Popen(
        HIVE_SERVER, stdin=subprocess.PIPE if reads_input else None, stdout=subprocess.PIPE
    )

    def terminate(signum: int, frame: object) -> None:
        child.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, terminate)
    started = threading.Event()
    if reads_input:
        threading.Thread(target=_forward, args=(child, started), daemon=True).start()
    assert child.stdout is not None
    _copy(child.stdout, TRANSFORMS[mode], started)
    status = child.wait()
    code = status if status >= 0 else 128 - status
    if reads_input:
        # The forwarding thread may still be blocked reading stdin, which would stall the interpreter's exit.
        os._exit(code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
