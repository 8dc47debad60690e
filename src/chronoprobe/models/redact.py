"""Credentials in URLs and model specs: kept out of everything shown or recorded.

Both the spec parser (``registry``) and the backends that take a URL (``openai_backend``) use these.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit


def split_userinfo(url: str) -> tuple[str, str | None]:
    """(the URL without ``user:password@``, the secret it held or None).

    The secret is the password, or the user part when there is no password
    (``https://KEY@host/v1``). Only the first part is ever recorded or printed.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return strip_url_credentials(url), None
    if "@" not in parts.netloc:
        return strip_url_credentials(url), None
    userinfo = parts.netloc.rpartition("@")[0]
    user, _, password = userinfo.partition(":")
    return strip_url_credentials(url), password or user or None


# Everything between "scheme://" and the last "@" of the authority (which ends at / ? # or a space),
# so a password that itself holds an "@" goes too.
_URL_USERINFO = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]*://)[^/?#\s]*@")


def strip_url_credentials(text: str) -> str:
    """``text`` with the ``user:password@`` part of every URL in it removed.

    The one redaction of chronoprobe: specs, recorded command lines, configs and error messages
    all go through it, so what is shown and what is recorded always agree.
    """
    return _URL_USERINFO.sub(r"\1", text)


def canonical_spec(raw: str) -> str:
    """A model spec as it is shown, recorded and matched: trimmed, with any URL credentials removed."""
    return strip_url_credentials(raw.strip())
