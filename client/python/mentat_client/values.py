"""Typed values: mentat.v1.Value <-> Python, and Python -> EDN text.

Results (Value -> Python):

  nil -> None            long_value, ref -> int     double_value -> float
  string_value -> str    keyword -> Keyword         boolean -> bool
  instant_micros -> datetime (UTC, aware)           uuid -> uuid.UUID
  bigint -> int          bigdec -> decimal.Decimal  bytes_value -> bytes
  symbol -> Symbol       char_value -> Char         list -> list
  uri -> Uri
  set -> frozenset       map -> dict                tagged -> Tagged

Members of sets and keys of maps must be hashable, so inside them lists
become tuples, maps become frozensets of (key, value) pairs.

Inputs (Python -> Value) go the other way; a Python int that does not fit
in 64 bits becomes a bigint, a naive datetime is taken as UTC.

to_edn() prints a Python value as EDN text with the same mapping (the
tx-data of transact() is built with it, see tx.py).
"""

import base64
import datetime
import decimal
import math
import re
import uuid
from typing import Any, FrozenSet, NamedTuple, Optional

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)

# What an EDN keyword or symbol may hold after its ':' (the reader's token
# characters): no whitespace, quotes, brackets, commas, ';' or '\'.
_NAME = re.compile(r"[A-Za-z0-9*+!\-_?<>=.$%&/:#'|]+\Z")


class Keyword(str):
    """An EDN keyword. The string includes the leading ':' (":user/email"),
    so pull results can be indexed with plain strings: e[":user/email"].
    Keyword("user/email") adds the ':'."""

    def __new__(cls, text: str) -> "Keyword":
        if not text.startswith(":"):
            text = ":" + text
        return super().__new__(cls, text)

    @property
    def namespace(self) -> Optional[str]:
        body = self[1:]
        return body.rsplit("/", 1)[0] if "/" in body else None

    @property
    def name(self) -> str:
        return self[1:].rsplit("/", 1)[-1]

    def __repr__(self) -> str:
        return "Keyword(%s)" % str.__repr__(self)


def kw(text: str) -> Keyword:
    """kw(":user/email") or kw("user/email"): a Keyword, checked to be one
    EDN can read (ValueError otherwise)."""
    k = Keyword(text)
    _check_name(k[1:], "keyword")
    return k


class Symbol(str):
    """An EDN symbol ("foo" or "ns/foo")."""

    def __repr__(self) -> str:
        return "Symbol(%s)" % str.__repr__(self)


class Uri(str):
    """A :db.type/uri value, the URI reference as written
    ("https://example.com/a?b"); EDN #uri "https://example.com/a?b". The
    server checks its RFC 3986 syntax."""

    def __repr__(self) -> str:
        return "Uri(%s)" % str.__repr__(self)


class Char(str):
    """An EDN character (a one-character string)."""

    def __repr__(self) -> str:
        return "Char(%s)" % str.__repr__(self)


class Tagged(NamedTuple):
    """An EDN tagged literal the server has no type for: #tag value."""
    tag: str
    value: Any


class Edn(str):
    """EDN text taken as it is: a query input (Edn('[:user/email "a@b"]'))
    or a piece of tx-data inside Python data (to_edn prints it verbatim)."""


class Json(str):
    """A query input given as JSON text (see the proto's Input mapping)."""


class LookupRef(NamedTuple):
    """[:attribute value]: the entity whose unique `attribute` holds
    `value`. A tuple or list (attribute, value) in an entity position of
    tx-data is one too; in a value position (the value of a ref attribute)
    write LookupRef(":user/email", "a@x.org") or put a Keyword first."""
    attribute: str
    value: Any


def micros_to_datetime(micros: int) -> datetime.datetime:
    return _EPOCH + datetime.timedelta(microseconds=micros)


def datetime_to_micros(dt: datetime.datetime) -> int:
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=datetime.timezone.utc)
    delta = dt - _EPOCH
    return (delta.days * 86400 + delta.seconds) * 1000000 + delta.microseconds


def _freeze(x: Any) -> Any:
    if isinstance(x, list):
        return tuple(_freeze(v) for v in x)
    if isinstance(x, dict):
        return frozenset((_freeze(k), _freeze(v)) for k, v in x.items())
    return x


def to_python(v: Any) -> Any:
    """A mentat.v1.Value as a Python value (see the module doc)."""
    kind = v.WhichOneof("kind")
    if kind is None or kind == "nil":
        return None
    if kind in ("long_value", "ref"):
        return getattr(v, kind)
    if kind == "double_value":
        return v.double_value
    if kind == "string_value":
        return v.string_value
    if kind == "keyword":
        return Keyword(v.keyword)
    if kind == "boolean":
        return v.boolean
    if kind == "instant_micros":
        return micros_to_datetime(v.instant_micros)
    if kind == "uuid":
        return uuid.UUID(bytes=v.uuid)
    if kind == "bigint":
        return int(v.bigint)
    if kind == "bigdec":
        return decimal.Decimal(v.bigdec)
    if kind == "bytes_value":
        return bytes(v.bytes_value)
    if kind == "symbol":
        return Symbol(v.symbol)
    if kind == "uri":
        return Uri(v.uri)
    if kind == "char_value":
        return Char(chr(v.char_value))
    if kind == "list":
        return [to_python(x) for x in v.list.values]
    if kind == "set":
        s: FrozenSet[Any] = frozenset(
            _freeze(to_python(x)) for x in v.set.values)
        return s
    if kind == "map":
        return {_freeze(to_python(e.key)): to_python(e.value)
                for e in v.map.entries}
    if kind == "tagged":
        return Tagged(v.tagged.tag, to_python(v.tagged.value))
    raise ValueError("mentat_client: unknown Value kind " + kind)


_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def to_value(x: Any, out: Any) -> Any:
    """Fills the mentat.v1.Value `out` from the Python value `x`.

    Raises TypeError for a Python type with no EDN counterpart."""
    if x is None:
        out.nil = True
    elif isinstance(x, bool):
        out.boolean = x
    elif isinstance(x, int):
        if _INT64_MIN <= x <= _INT64_MAX:
            out.long_value = x
        else:
            out.bigint = str(x)
    elif isinstance(x, float):
        out.double_value = x
    elif isinstance(x, Keyword):
        out.keyword = x[1:]
    elif isinstance(x, Symbol):
        out.symbol = str(x)
    elif isinstance(x, Uri):
        out.uri = str(x)
    elif isinstance(x, Char):
        out.char_value = ord(x)
    elif isinstance(x, str):
        out.string_value = x
    elif isinstance(x, datetime.datetime):
        out.instant_micros = datetime_to_micros(x)
    elif isinstance(x, uuid.UUID):
        out.uuid = x.bytes
    elif isinstance(x, decimal.Decimal):
        out.bigdec = format(x, "f")
    elif isinstance(x, (bytes, bytearray)):
        out.bytes_value = bytes(x)
    elif isinstance(x, Tagged):
        out.tagged.tag = x.tag
        to_value(x.value, out.tagged.value)
    elif isinstance(x, LookupRef):
        to_value([Keyword(x.attribute), x.value], out)
    elif isinstance(x, (set, frozenset)):
        out.set.SetInParent()
        for item in x:
            to_value(item, out.set.values.add())
    elif isinstance(x, (list, tuple)):
        out.list.SetInParent()
        for item in x:
            to_value(item, out.list.values.add())
    elif isinstance(x, dict):
        out.map.SetInParent()
        for k, v in x.items():
            e = out.map.entries.add()
            to_value(k, e.key)
            to_value(v, e.value)
    else:
        raise TypeError("mentat_client: no EDN value for %s %r" %
                        (type(x).__name__, x))
    return out


# --- Python -> EDN text ----------------------------------------------------

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r",
            "\b": "\\b", "\f": "\\f"}
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f\x7f]')
_CHAR_NAMES = {"\n": "newline", " ": "space", "\t": "tab", "\r": "return",
               "\b": "backspace", "\f": "formfeed"}


def _check_name(body: str, what: str) -> None:
    if not body or not _NAME.match(body) or body.endswith("/"):
        raise ValueError("mentat_client: %r is not an EDN %s" % (body, what))


def edn_string(s: str) -> str:
    """s as an EDN string literal: quotes, backslashes and control
    characters escaped, the rest as UTF-8."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError("mentat_client: string %r holds a lone surrogate at "
                         "%d (not valid Unicode)" % (s[:40], e.start)) \
            from None

    def escape(m: "re.Match[str]") -> str:
        c = m.group(0)
        return _ESCAPES.get(c) or "\\u%04x" % ord(c)
    return '"' + _NEEDS_ESCAPE.sub(escape, s) + '"'


def edn_instant(dt: datetime.datetime) -> str:
    if dt.tzinfo is not None:
        dt = dt.astimezone(datetime.timezone.utc)
    return '#inst "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ"' % (
        dt.year, dt.month, dt.day, dt.hour, dt.minute, dt.second,
        dt.microsecond)


def _edn_float(x: float) -> str:
    if math.isnan(x):
        return "##NaN"
    if math.isinf(x):
        return "##Inf" if x > 0 else "##-Inf"
    text = repr(x)
    # repr gives "1e+20" or "1.5"; a float with neither '.' nor exponent
    # does not happen, but an EDN reader would take "1" for a long.
    return text if ("." in text or "e" in text) else text + ".0"


def to_edn(x: Any) -> str:
    """x as EDN text (the mapping of the module doc, the other way): None
    -> nil, bool, int (N past 64 bits), float (##NaN, ##Inf), str (escaped),
    Keyword, Symbol, Uri -> #uri, Char, datetime -> #inst (naive: UTC), uuid.UUID ->
    #uuid, Decimal -> M, bytes -> #bytes "<base64>", list/tuple -> vector,
    set/frozenset -> #{}, dict -> map, Tagged, LookupRef, Edn (verbatim).

    Raises TypeError for a type with no EDN form (a date without a time
    among them), ValueError for a value EDN cannot hold (a keyword with a
    space, a NaN Decimal)."""
    if x is None:
        return "nil"
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x) if _INT64_MIN <= x <= _INT64_MAX else "%dN" % x
    if isinstance(x, float):
        return _edn_float(x)
    if isinstance(x, Edn):
        return str(x)
    if isinstance(x, Keyword):
        _check_name(x[1:], "keyword")
        return str(x)
    if isinstance(x, Symbol):
        _check_name(x, "symbol")
        return str(x)
    if isinstance(x, Uri):
        return "#uri " + edn_string(str(x))
    if isinstance(x, Char):
        if len(x) != 1:
            raise ValueError("mentat_client: Char %r is not one character"
                             % str(x))
        name = _CHAR_NAMES.get(x)
        if name:
            return "\\" + name
        if ord(x) < 0x20 or ord(x) == 0x7f:
            return "\\u%04x" % ord(x)
        return "\\" + x
    if isinstance(x, Json):
        raise TypeError("mentat_client: JSON text has no place in EDN")
    if isinstance(x, str):
        return edn_string(x)
    if isinstance(x, datetime.datetime):
        return edn_instant(x)
    if isinstance(x, datetime.date):
        raise TypeError("mentat_client: %r names no time of day: pass a "
                        "datetime (an instant)" % (x,))
    if isinstance(x, uuid.UUID):
        return '#uuid "%s"' % x
    if isinstance(x, decimal.Decimal):
        if not x.is_finite():
            raise ValueError("mentat_client: EDN has no decimal %s" % x)
        return format(x, "f") + "M"
    if isinstance(x, (bytes, bytearray)):
        return '#bytes "%s"' % base64.b64encode(bytes(x)).decode("ascii")
    if isinstance(x, LookupRef):
        return "[%s %s]" % (to_edn(Keyword(x.attribute)), to_edn(x.value))
    if isinstance(x, Tagged):
        _check_name(x.tag, "tag")
        return "#%s %s" % (x.tag, to_edn(x.value))
    if isinstance(x, (list, tuple)):
        return "[" + " ".join(to_edn(v) for v in x) + "]"
    if isinstance(x, (set, frozenset)):
        return "#{" + " ".join(to_edn(v) for v in x) + "}"
    if isinstance(x, dict):
        return "{" + " ".join("%s %s" % (to_edn(k), to_edn(v))
                              for k, v in x.items()) + "}"
    raise TypeError("mentat_client: no EDN form for %s %r" %
                    (type(x).__name__, x))
