"""Credentials in URLs and model specs: kept out of everything shown or recorded.

A URL can carry a key in three places: its userinfo (``http://user:KEY@host/v1``), a query
parameter named like a secret (``?api_key=KEY``, ``?sig=...``) and its fragment. Everything
shown or recorded goes through :func:`strip_url_credentials`, which removes the first and
masks the other two; requests use the URL as given (:func:`split_userinfo`,
:func:`join_api_path`). Both the spec parser (``registry``) and the backends that take a URL
(``openai_backend``) use these.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit, urlunsplit

SECRET_PARAMETERS = frozenset({"key", "api_key", "api-key", "token", "access_token", "sig"})
"""Query parameters whose value is masked wherever a URL is shown or recorded (names compared case-insensitively)."""
MASK = "***"


def split_userinfo(url: str) -> tuple[str, str | None]:
    """(the URL without ``user:password@``, the secret it held, percent-decoded, or None).

    The secret is the password, or the user part when there is no password
    (``https://KEY@host/v1``). Its percent-escapes are decoded as RFC 3986 defines them
    (``%2B`` is ``+``, a ``+`` stays a ``+``), since the key sent is the decoded one. The URL
    keeps its query and fragment as given: it is the one requests go to, never the one shown.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return _remove_userinfo(url), None
    if "@" not in parts.netloc:
        return _remove_userinfo(url), None
    userinfo = parts.netloc.rpartition("@")[0]
    user, _, password = userinfo.partition(":")
    secret = password or user
    return _remove_userinfo(url), unquote(secret) if secret else None


def join_api_path(base_url: str, path: str) -> str:
    """``path`` (``chat/completions``) appended to the base URL's path; its query stays a query, its fragment goes.

    ``http://h/v1?api-version=2`` and ``chat/completions`` give ``http://h/v1/chat/completions?api-version=2``.
    """
    parts = urlsplit(base_url)
    joined = f"{parts.path.rstrip('/')}/{path.lstrip('/')}"
    return urlunsplit((parts.scheme, parts.netloc, joined, parts.query, ""))


# Everything between "scheme://" and the last "@" of the authority (which ends at / ? # or a space),
# so a password that itself holds an "@" goes too.
_URL_USERINFO = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]*://)[^/?#\s]*@")
# A URL in free text, up to a space or a quote; its fragment is masked.
_URL_FRAGMENT = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>`#]*)#([^\s\"'<>`]+)")
# One query parameter (after ? or &) and its value, anywhere in the text: servers echo the path they were
# asked for (``no route /v1?api_key=...``) without the scheme and host.
_PARAMETER = re.compile(r"([?&])([^=&#?\s\"'<>`]*)=([^&#\s\"'<>`]*)")


def _remove_userinfo(text: str) -> str:
    return _URL_USERINFO.sub(r"\1", text)


def _mask_parameter(match: re.Match[str]) -> str:
    separator, name, value = match.groups()
    if unquote(name).strip().lower() in SECRET_PARAMETERS and value:
        return f"{separator}{name}={MASK}"
    return match.group(0)


def strip_url_credentials(text: str) -> str:
    """``text`` with every URL in it redacted: ``user:password@`` removed, secret query values and fragments masked.

    The one redaction of chronoprobe: specs, recorded command lines, configs and error messages
    all go through it, so what is shown and what is recorded always agree. A URL without a
    secret comes out unchanged, so the specs (and the keys derived from them) of such URLs
    are those of earlier releases.
    """
    text = _URL_FRAGMENT.sub(lambda match: f"{match.group(1)}#{MASK}", _remove_userinfo(text))
    return _PARAMETER.sub(_mask_parameter, text)


def canonical_spec(raw: str) -> str:
    """A model spec as it is shown, recorded and matched: trimmed, with any URL credentials removed."""
    return strip_url_credentials(raw.strip())
