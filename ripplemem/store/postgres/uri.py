"""PostgreSQL connection URIs as they may be shown: the password never leaves this module."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

_PASSWORD_PARAM = re.compile(r"(password=)[^&\s]*", re.IGNORECASE)


def is_postgres_uri(text: str) -> bool:
    """Whether the text is a postgresql:// (or postgres://) URI."""
    return text.startswith(("postgresql://", "postgres://"))


def redacted(uri: str) -> str:
    """The URI with its password (in the user part or a password= parameter) replaced by ***."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        return "<a PostgreSQL URI that does not parse>"
    netloc = parts.netloc
    if "@" in netloc:
        user, host = netloc.rsplit("@", 1)
        if ":" in user:
            user = user.split(":", 1)[0] + ":***"
        netloc = f"{user}@{host}"
    query = _PASSWORD_PARAM.sub(r"\1***", parts.query)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def password_of(conninfo: str) -> str | None:
    """The password of a URI (user part or password= parameter) or of a key=value connection
    string, to scrub from a server's messages."""
    if not is_postgres_uri(conninfo):
        from psycopg.conninfo import conninfo_to_dict  # a key=value string: only psycopg reads those

        try:
            password = conninfo_to_dict(conninfo).get("password")
        except Exception:  # not parsable: nothing to scrub by
            return None
        return str(password) if password else None
    try:
        parts = urlsplit(conninfo)
    except ValueError:
        return None
    if parts.password:
        return parts.password
    found = _PASSWORD_PARAM.search(parts.query)
    return found.group(0).split("=", 1)[1] if found else None


def scrubbed(message: str, uri: str) -> str:
    """A message about this URI's server, with the password (if it appears) replaced by ***."""
    password = password_of(uri)
    return message.replace(password, "***") if password else message
