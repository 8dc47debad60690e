"""Test helpers that are also useful to users: a mock backend and a loopback OpenAI-compatible server
(``chronoprobe.testing.openai_server``)."""

from chronoprobe.testing.mock import (
    MockBackend,
    MockPrompt,
    MockReply,
    register_mock,
    registered_mocks,
    unregister_mock,
)

__all__ = ["MockBackend", "MockPrompt", "MockReply", "register_mock", "registered_mocks", "unregister_mock"]
