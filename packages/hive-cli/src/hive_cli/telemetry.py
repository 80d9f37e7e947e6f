"""Exporting hive's traces with OpenTelemetry: on when the ``otel`` extra is installed and the standard ``OTEL_*``
variables name a destination, off (and nothing of OpenTelemetry imported) otherwise.

:func:`tracing_status` reads the variables only; :func:`start_tracing` (once per process, from every command that
builds a host) sets up a tracer provider exporting over OTLP/HTTP in batches and installs an :class:`OtelTracer`
as hive-core's tracer; :func:`flush_tracing` exports what is left before the process exits.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Final

from hive_core import ChatClient
from hive_core.tracing import AttributeValue
from hive_core.tracing import Span
from hive_core.tracing import SpanKind
from hive_core.tracing import install_tracer
from hive_core.tracing import traced
from hive_core.tracing import tracer
from hive_providers import ProviderSettings

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Span as OtelSpan
    from opentelemetry.trace import Tracer as OtelApiTracer

__all__ = [
    "CAPTURE_CONTENT_VARIABLE",
    "OtelTracer",
    "TracingStatus",
    "flush_tracing",
    "gen_ai_provider",
    "start_tracing",
    "traced_client",
    "tracing_status",
]

CAPTURE_CONTENT_VARIABLE: Final = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""``true`` puts message content, tool arguments and tool results into the spans (off by default: they may hold
secrets and personal data)."""

_FLUSH_TIMEOUT_MS: Final = 5000

_GEN_AI_PROVIDERS: Final = {"google": "gcp.gemini", "azure": "azure.ai.openai", "xai": "x_ai"}
"""hive's provider names whose ``gen_ai.provider.name`` differs; the others are the same."""


def gen_ai_provider(provider: str) -> str:
    """``gen_ai.provider.name`` of one of hive's providers."""
    return _GEN_AI_PROVIDERS.get(provider, provider)


def traced_client(client: ChatClient, settings: ProviderSettings) -> ChatClient:
    """``client`` (built for ``settings``, not yet used) with each HTTP request a ``chat`` span when tracing is
    on (its retries then made by hive, :func:`~hive_core.tracing.traced`); as it is otherwise, so that a host
    without tracing pays nothing per streamed chunk."""
    if not tracer().enabled:
        return client
    return traced(client, provider=gen_ai_provider(settings.provider), model=settings.model)


@dataclass(frozen=True)
class TracingStatus:
    """Whether traces are exported, and where to or why not."""

    endpoint: str | None
    """The OTLP/HTTP traces endpoint; ``None`` when tracing is off."""
    reason: str
    """Where the traces go, or why tracing is off, in words for ``hive doctor``."""
    capture_content: bool = False
    """Whether message content goes into the spans (:data:`CAPTURE_CONTENT_VARIABLE`)."""
    missing_extra: bool = False
    """A destination is set but OpenTelemetry is not installed: the user meant to trace."""


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def tracing_status(environ: Mapping[str, str] | None = None) -> TracingStatus:
    """Whether tracing is on, from the standard variables and the extra being installed; imports nothing of
    OpenTelemetry unless a destination is set (then only to find the SDK)."""
    env = os.environ if environ is None else environ
    capture = _true(env.get(CAPTURE_CONTENT_VARIABLE))
    if _true(env.get("OTEL_SDK_DISABLED")):
        return TracingStatus(None, "off (OTEL_SDK_DISABLED=true)")
    exporters = [name.strip() for name in env.get("OTEL_TRACES_EXPORTER", "otlp").split(",") if name.strip()]
    if "otlp" not in exporters:
        said = ",".join(exporters) or "none"
        return TracingStatus(None, f"off (OTEL_TRACES_EXPORTER={said}; hive exports only otlp)")
    protocol = env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
    if protocol and protocol.strip() != "http/protobuf":
        return TracingStatus(None, f"off (OTLP protocol {protocol.strip()}; hive exports over http/protobuf)")
    endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    if not endpoint:
        base = env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
        if not base:
            return TracingStatus(
                None, "off (no OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)"
            )
        endpoint = base.rstrip("/") + "/v1/traces"
    if importlib.util.find_spec("opentelemetry") is None or not _sdk_installed():
        return TracingStatus(
            None,
            f"off: {endpoint} is set, but the otel extra is not installed (hive-agent-cli[otel])",
            missing_extra=True,
        )
    shown = "on, to " + endpoint + (", with message content" if capture else "")
    return TracingStatus(endpoint, shown, capture)


def _sdk_installed() -> bool:
    try:
        return (
            importlib.util.find_spec("opentelemetry.sdk") is not None
            and importlib.util.find_spec("opentelemetry.exporter.otlp.proto.http") is not None
        )
    except ModuleNotFoundError:
        return False


_provider: TracerProvider | None = None
_started = False


def start_tracing(environ: Mapping[str, str] | None = None) -> TracingStatus:
    """Set up tracing for this process once, when :func:`tracing_status` says it is on; later calls only
    report. The provider exports in batches from a thread of its own, and what is left when the process exits
    (its exit handler shuts it down), so a one-shot ``hive -p`` exports its turn before it ends."""
    global _provider, _started
    status = tracing_status(environ)
    if _started or status.endpoint is None:
        return status
    _started = True
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    env = os.environ if environ is None else environ
    named = env.get("OTEL_SERVICE_NAME") or "service.name=" in env.get("OTEL_RESOURCE_ATTRIBUTES", "")
    attributes: dict[str, str] = {} if named else {"service.name": "hive"}
    provider = TracerProvider(resource=Resource.create(attributes))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=status.endpoint)))
    _provider = provider
    install_tracer(OtelTracer(provider, capture_content=status.capture_content))
    return status


def flush_tracing(*, timeout_ms: int = _FLUSH_TIMEOUT_MS) -> None:
    """Export the spans not yet sent, waiting ``timeout_ms`` at most: for an exit that skips the interpreter's
    exit handlers (a normal exit shuts the provider down, which exports them); nothing when tracing is off."""
    if _provider is not None:
        _provider.force_flush(timeout_ms)


class _OtelSpan:
    __slots__ = ("span",)

    def __init__(self, span: OtelSpan) -> None:
        self.span = span

    def set(self, key: str, value: AttributeValue) -> None:
        self.span.set_attribute(key, value)

    def fail(self, error_type: str) -> None:
        from opentelemetry.trace import Status
        from opentelemetry.trace import StatusCode

        self.span.set_attribute("error.type", error_type)
        self.span.set_status(Status(StatusCode.ERROR, error_type))

    def end(self) -> None:
        self.span.end()


class OtelTracer:
    """hive-core's :class:`~hive_core.tracing.Tracer` over an OpenTelemetry tracer provider."""

    def __init__(self, provider: TracerProvider, *, capture_content: bool = False) -> None:
        from opentelemetry.trace import SpanKind as OtelSpanKind

        from .version import installed_version

        self._tracer: OtelApiTracer = provider.get_tracer("hive", installed_version())
        self._kinds = {"internal": OtelSpanKind.INTERNAL, "client": OtelSpanKind.CLIENT}
        self._capture = capture_content

    @property
    def enabled(self) -> bool:
        """Always: an installed OpenTelemetry tracer records."""
        return True

    @property
    def capture_content(self) -> bool:
        """Whether message content goes into spans."""
        return self._capture

    def start(
        self, name: str, kind: SpanKind, attributes: Mapping[str, AttributeValue], parent: Span | None
    ) -> Span:
        """Start a span under ``parent`` (explicitly: hive's current span is its own, not OpenTelemetry's
        context, so a span may outlive the task switches of a streamed response)."""
        from opentelemetry.trace import set_span_in_context

        context = set_span_in_context(parent.span) if isinstance(parent, _OtelSpan) else None
        span = self._tracer.start_span(name, context=context, kind=self._kinds[kind], attributes=attributes)
        return _OtelSpan(span)
