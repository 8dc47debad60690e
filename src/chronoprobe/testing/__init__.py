"""Test helpers that are also useful to users (e.g. a loopback OpenAI-compatible server)."""
