"""Removing secrets from text that may be shown, logged or stored (error bodies that echo a key,
URLs with a password)."""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "***"
_URL_PASSWORD = re.compile(r"(?P<head>[a-z][a-z0-9+.-]*://[^:/@\s]*:)(?P<pw>[^@/\s]+)(?=@)", re.IGNORECASE)
_BEARER = re.compile(r"(?P<head>\bbearer\s+)(?P<tok>[A-Za-z0-9._~+/=-]{8,})", re.IGNORECASE)
MIN_SECRET_CHARS = 4  # shorter values would mask ordinary words


def redact_url_password(text: str) -> str:
    return _URL_PASSWORD.sub(lambda m: m.group("head") + MASK, text)


class Redactor:
    """Masks the given secret values, passwords in URLs and bearer tokens wherever they occur."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self._secrets = sorted({s for s in secrets if s and len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        text = _BEARER.sub(lambda m: m.group("head") + MASK, text)
        return redact_url_password(text)
