"""Secrets kept out of messages and logs: the API key and the credentials in ``--llm-base-url``.

``redact_url`` is the URL fit to print (as PostgreSQL store URLs are printed: no
credentials, no query values). ``register_secret`` adds a value that must never be shown;
``mask`` blanks every registered one (and any ``user:password@`` of a URL) in a text. The
CLI's error output, the HTTP error bodies and answers, and every log record (a log record
factory, installed with the first secret) pass through ``mask``.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

if TYPE_CHECKING:
    from foretab.llm.options import LLMOptions

PLACEHOLDER_KEY = "not-needed"  # LLMOptions' key when none is set: not a secret

MASK = "***"
# Shorter values would blank ordinary words; keys and passwords are longer.
_MIN_SECRET_CHARS = 6
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@?#]+@")
_QUERY_SECRET = re.compile(
    r"(?i)([?&](?:key|api[_-]?key|token|access[_-]?token|secret|password|sig|signature)=)[^&#\s]+"
)

_secrets: set[str] = set()
_lock = threading.Lock()
_factory_installed = False


def redact_url(url: str) -> str:
    """``url`` without user, password or query values (``https://***@host/v1?key=***``)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    netloc = (f"{MASK}@" if parts.username or parts.password else "") + host + port
    query = "&".join(f"{name}={MASK}" for name, _ in parse_qsl(parts.query, True))
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def url_secrets(url: str) -> list[str]:
    """The credentials a URL carries: user, password and query values, raw and decoded."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return [url]
    found = [parts.username, parts.password, *(v for _, v in parse_qsl(parts.query, True))]
    raw = parts.netloc.rpartition("@")[0].split(":") if "@" in parts.netloc else []
    raw += [v.partition("=")[2] for v in parts.query.split("&")]
    values = [v for v in (*found, *raw) if v]
    return values + [unquote(v) for v in values]


def register_secret(value: str | None) -> None:
    """Never show ``value`` again in a message or log line of this process."""
    if not value or len(value) < _MIN_SECRET_CHARS:
        return
    with _lock:
        _secrets.add(value)
    _install_log_factory()


def register_url(url: str | None) -> None:
    """Register the credentials of ``url`` (see ``url_secrets``)."""
    if url:
        for secret in url_secrets(url):
            register_secret(secret)


def register_options(options: LLMOptions) -> None:
    """Register the configured API key and the base URL's credentials."""
    register_url(options.base_url)
    key = options.api_key()
    if key != PLACEHOLDER_KEY:
        register_secret(key)


def mask(text: str) -> str:
    """``text`` with every registered secret and any URL credentials blanked out."""
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    if "://" in text:  # no URL, no userinfo: the scan costs 0.14 ms of an answer's 6 KB
        text = _USERINFO.sub(r"\1" + MASK + "@", text)
    return _QUERY_SECRET.sub(r"\1" + MASK, text)


def _install_log_factory() -> None:
    global _factory_installed
    with _lock:
        if _factory_installed:
            return
        _factory_installed = True
    previous = logging.getLogRecordFactory()

    def masked_record(*args: object, **kwargs: object) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            record.msg, record.args = mask(record.getMessage()), ()
        except Exception:
            return record
        if record.exc_info and not record.exc_text:
            record.exc_text = mask(logging.Formatter().formatException(record.exc_info))
        return record

    logging.setLogRecordFactory(masked_record)
