"""hive-providers: model adapters and coding-agent backends for hive.

Importing this package imports no provider SDK; each adapter module imports its SDK when it is used.
"""

from .settings import Capabilities, ProviderSettings

__version__ = "0.1.0"

__all__ = ["Capabilities", "ProviderSettings"]
