"""A question service for the backend tests that never answers (``hive_core.testing.Answerer`` answers)."""

from __future__ import annotations

from typing import NoReturn

import anyio

from hive_core.testing import Answerer
from hive_protocol import QuestionRequestEvent


class NeverAnswers(Answerer):
    """Records every question and never answers it: the turn must end some other way."""

    def __init__(self) -> None:
        super().__init__(None)

    async def ask(self, request: QuestionRequestEvent) -> NoReturn:
        """Record ``request`` and wait until cancelled."""
        self.requests.append(request)
        await anyio.sleep_forever()
        raise AssertionError("never answered")
