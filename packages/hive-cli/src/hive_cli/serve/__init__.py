"""``hive serve``: sessions of any backend over HTTP, for browsers, web back ends and orchestrators.

:mod:`.guard` checks the token, ``Host`` and ``Origin`` of every request; :mod:`.app` holds the routes of the
client API (the turn-stream protocol's HTTP binding); :mod:`.hosted` one session and the log of its events; :mod:`.ag_ui` the AG-UI protocol's route.
"""

__all__: list[str] = []
