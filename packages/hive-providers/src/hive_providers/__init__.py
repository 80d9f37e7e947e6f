"""hive-providers: model adapters and coding-agent backends for hive.

:data:`PROVIDERS` describes every model provider once (its configuration section, environment variables, when
it counts as configured, its factory); :data:`CONFIG_SCHEMA` is the configuration hive reads with them;
:mod:`hive_providers.registry` chooses a provider and builds its client. Importing this package imports no
provider SDK; each adapter module imports its SDK when it is used.
"""

from .settings import ProviderSettings
from .settings import SettingName
from .table import CONFIG_SCHEMA
from .table import PROVIDERS
from .table import ProviderSpec

__all__ = ["CONFIG_SCHEMA", "PROVIDERS", "ProviderSettings", "ProviderSpec", "SettingName"]


def __getattr__(name: str) -> str:
    # ``__version__`` is read from the installed metadata when asked for: importing importlib.metadata costs
    # ~25 ms, more than the rest of ``hive --help``, and only ``--version`` and ``doctor`` need it.
    if name == "__version__":
        from importlib.metadata import version

        return version("hive-providers")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
