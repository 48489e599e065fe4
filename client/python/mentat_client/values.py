"""Typed values: mentat.v1.Value <-> Python.

Results (Value -> Python):

  nil -> None            long_value, ref -> int     double_value -> float
  string_value -> str    keyword -> Keyword         boolean -> bool
  instant_micros -> datetime (UTC, aware)           uuid -> uuid.UUID
  bigint -> int          bigdec -> decimal.Decimal  bytes_value -> bytes
  symbol -> Symbol       char_value -> Char         list -> list
  set -> frozenset       map -> dict                tagged -> Tagged

Members of sets and keys of maps must be hashable, so inside them lists
become tuples, maps become frozensets of (key, value) pairs.

Inputs (Python -> Value) go the other way; a Python int that does not fit
in 64 bits becomes a bigint, a naive datetime is taken as UTC.
"""

import datetime
import decimal
import uuid

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


class Keyword(str):
    """An EDN keyword. The string includes the leading ':' (":user/email"),
    so pull results can be indexed with plain strings: e[":user/email"]."""

    def __new__(cls, text):
        if not text.startswith(":"):
            text = ":" + text
        return super().__new__(cls, text)

    @property
    def namespace(self):
        body = self[1:]
        return body.rsplit("/", 1)[0] if "/" in body else None

    @property
    def name(self):
        return self[1:].rsplit("/", 1)[-1]

    def __repr__(self):
        return "Keyword(%s)" % str.__repr__(self)


class Symbol(str):
    """An EDN symbol ("foo" or "ns/foo")."""

    def __repr__(self):
        return "Symbol(%s)" % str.__repr__(self)


class Char(str):
    """An EDN character (a one-character string)."""

    def __repr__(self):
        return "Char(%s)" % str.__repr__(self)


class Tagged(tuple):
    """An EDN tagged literal the server has no type for: (tag, value)."""

    def __new__(cls, tag, value):
        return super().__new__(cls, (tag, value))

    @property
    def tag(self):
        return self[0]

    @property
    def value(self):
        return self[1]

    def __repr__(self):
        return "Tagged(%r, %r)" % (self[0], self[1])


def micros_to_datetime(micros):
    return _EPOCH + datetime.timedelta(microseconds=micros)


def datetime_to_micros(dt):
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=datetime.timezone.utc)
    delta = dt - _EPOCH
    return (delta.days * 86400 + delta.seconds) * 1000000 + delta.microseconds


def _freeze(x):
    if isinstance(x, list):
        return tuple(_freeze(v) for v in x)
    if isinstance(x, dict):
        return frozenset((_freeze(k), _freeze(v)) for k, v in x.items())
    return x


def to_python(v):
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
    if kind == "char_value":
        return Char(chr(v.char_value))
    if kind == "list":
        return [to_python(x) for x in v.list.values]
    if kind == "set":
        return frozenset(_freeze(to_python(x)) for x in v.set.values)
    if kind == "map":
        return {_freeze(to_python(e.key)): to_python(e.value)
                for e in v.map.entries}
    if kind == "tagged":
        return Tagged(v.tagged.tag, to_python(v.tagged.value))
    raise ValueError("mentat_client: unknown Value kind " + kind)


_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def to_value(x, out):
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
