"""tx-data from Python data: what transact() sends when it is given
operations rather than EDN text.

    [{":db/id": "ann", ":user/email": "ann@x.org",
      ":user/role": [kw(":role/admin")]},                  # an entity map
     (":db/add", "ann", ":user/name", "Ann"),             # an op
     (":db/retract", (":user/email", "bob@x.org"), ":user/age", 41),
     [":db/retractEntity", 17592186045420]]

The position decides what a plain str means, so that the data reads as
Datomic's does:
  * an op's name, an entity map's keys and an op's attribute are keywords
    (":user/email" or Keyword(...));
  * an entity (an op's second element, the value of :db/id) is an id (int),
    a tempid (str), an ident (Keyword) or a lookup ref (a pair whose first
    element is the attribute, or LookupRef);
  * a pair whose first element is a namespaced keyword (":person/name",
    Keyword or str) is a lookup ref wherever it stands, as the same data is
    in EDN: (":person/name", "Ridley Scott") as the value of a ref
    attribute names that person (LookupRef says so explicitly);
  * every other str is a string. Enum values (:role/admin) and idents given
    as values need Keyword / kw().
A dict in a value position is a nested entity map (components, refs to new
entities); any other list or tuple there is the values of a many-valued
attribute. (Two strings of a many-valued string attribute, the first of
which reads ":ns/name", would be taken for a lookup ref: write them with
Edn('[":a/b" "c"]').)
"""

import re
from typing import Any, Iterable, Union

from .values import Edn, Keyword, LookupRef, Tagged, to_edn

TxData = Union[str, Iterable[Any]]

# ":ns/name": what a lookup ref's attribute looks like.
_NAMESPACED = re.compile(r":[^\s/\[\]{}()\"\\,;]+/[^\s/\[\]{}()\"\\,;]+\Z")

# Ops whose arguments are [entity attribute value...].
_DATOM_OPS = {":db/add", ":db/retract", ":db/cas"}


def _fail(where: str, message: str) -> TypeError:
    return TypeError("mentat_client: tx-data %s: %s" % (where, message))


def _attribute(a: Any, where: str) -> str:
    if isinstance(a, str) and not isinstance(a, Edn):
        return to_edn(Keyword(a))
    raise _fail(where, "an attribute is a keyword (\":ns/name\"), not %r"
                % (a,))


def _entity(e: Any, where: str) -> str:
    if isinstance(e, Edn):
        return str(e)
    if isinstance(e, bool):
        raise _fail(where, "a bool is not an entity")
    if isinstance(e, (int, Keyword, str)):
        return to_edn(e)  # id, ident, tempid
    if isinstance(e, LookupRef):
        return to_edn(e)
    if isinstance(e, (tuple, list)) and len(e) == 2:
        return "[%s %s]" % (_attribute(e[0], where), _value(e[1], where))
    raise _fail(where, "an entity is an id, a tempid string, a Keyword "
                "ident or an (attribute, value) lookup ref, not %r" % (e,))


def _entity_map(m: dict, where: str) -> str:
    parts = []
    for k, v in m.items():
        a = _attribute(k, where)
        w = "%s %s" % (where, a)
        parts.append("%s %s" % (a, _entity(v, w) if a == ":db/id"
                                else _value(v, w)))
    return "{" + " ".join(parts) + "}"


def _looks_like_lookup(v: Any) -> bool:
    """A pair whose first element is a str that reads as a namespaced
    keyword (":person/name"): a lookup ref, as the same data would be in
    EDN, rather than two strings."""
    return (len(v) == 2 and isinstance(v[0], str) and
            not isinstance(v[0], Edn) and v[0].startswith(":") and
            _NAMESPACED.match(v[0]) is not None)


def _value(v: Any, where: str) -> str:
    if isinstance(v, dict):
        return _entity_map(v, where)
    if isinstance(v, (list, tuple)) and not isinstance(v, (LookupRef, Tagged)):
        if _looks_like_lookup(v):
            return "[%s %s]" % (_attribute(v[0], where), _value(v[1], where))
        return "[" + " ".join(_value(x, where) for x in v) + "]"
    try:
        return to_edn(v)
    except (TypeError, ValueError) as e:
        raise type(e)("%s (tx-data %s)" % (e, where)) from None


def _op(op: Any, where: str) -> str:
    if isinstance(op, Edn):
        return str(op)
    if isinstance(op, dict):
        return _entity_map(op, where)
    if isinstance(op, (list, tuple)) and op and isinstance(op[0], str):
        name = _attribute(op[0], where)
        w = "%s %s" % (where, name)
        args = list(op[1:])
        parts = [name]
        if name in _DATOM_OPS or name == ":db/retractEntity":
            if not args:
                raise _fail(w, "needs an entity")
            parts.append(_entity(args[0], w))
            if name in _DATOM_OPS and len(args) > 1:
                parts.append(_attribute(args[1], w))
                parts.extend(_value(x, w) for x in args[2:])
            else:
                parts.extend(_value(x, w) for x in args[1:])
        else:  # a transaction function: its arguments as values
            parts.extend(_value(x, w) for x in args)
        return "[" + " ".join(parts) + "]"
    raise _fail(where, "an operation is an entity map (dict) or a list "
                "starting with its name (\":db/add\"), not %r" % (op,))


def tx_edn(tx_data: TxData) -> str:
    """The EDN text of tx-data: str (EDN text) as it is, else a list (or
    any iterable but a dict) of operations converted (see the module doc).
    Raises TypeError / ValueError naming the operation at fault."""
    if isinstance(tx_data, str):
        return tx_data
    if isinstance(tx_data, (dict, bytes)) or not hasattr(tx_data,
                                                         "__iter__"):
        raise TypeError("mentat_client: tx-data is EDN text or a list of "
                        "operations (entity maps, op lists), not %s"
                        % type(tx_data).__name__)
    return "[" + " ".join(_op(op, "operation %d" % i)
                          for i, op in enumerate(tx_data)) + "]"
