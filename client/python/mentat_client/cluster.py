"""Address lists: a client of a cluster (docs/replication.md) is given
every node, "host1:port,host2:port,...". As the C++ client does
(client/client.cc): reads go round the nodes and pass on to the next one
when a node answers UNAVAILABLE; writes go to the node believed to be the
primary, and follow a refusal that names "the primary at HOST:PORT" once;
a node that cannot be reached is passed over for writes (nothing was
sent to it). One address is a plain client: no routing at all."""

import itertools
import threading
from typing import Any, Callable, List, Tuple

import grpc


def split_addresses(target: str) -> List[str]:
    """The addresses of `target`, split at commas, blanks trimmed.
    ValueError when there is none."""
    parts = [p.strip() for p in target.split(",")]
    parts = [p for p in parts if p]
    if not parts:
        raise ValueError("no address to connect to (give HOST:PORT, or "
                         "several separated by commas)")
    return parts


_MARKER = "primary at "


def named_primary(code: Any, details: str) -> str:
    """The primary a node names when it refuses a write ("... send writes
    to the primary at HOST:PORT"); "" when it names none."""
    if code not in (grpc.StatusCode.FAILED_PRECONDITION,
                    grpc.StatusCode.UNAVAILABLE):
        return ""
    at = details.rfind(_MARKER)
    if at < 0:
        return ""
    address = details[at + len(_MARKER):]
    for i, c in enumerate(address):
        if c in " ;,)\n":
            address = address[:i]
            break
    return address.rstrip(".")


def never_connected(code: Any, details: str) -> bool:
    """True when an UNAVAILABLE call never reached a server (gRPC could not
    connect): a write can then go to another node without any risk of
    running twice."""
    if code != grpc.StatusCode.UNAVAILABLE:
        return False
    d = details.lower()
    return ("failed to connect" in d or "connection refused" in d or
            "dns resolution failed" in d)


def code_and_details(e: grpc.RpcError) -> Tuple[Any, str]:
    code = e.code() if hasattr(e, "code") else None
    details = (e.details() if hasattr(e, "details") else "") or ""
    return code, details


class Nodes:
    """The nodes of one client: their channels and stubs, which one is
    believed to be the primary, and where the next read goes. Thread-safe
    (the blocking client is used from several threads)."""

    def __init__(self, addresses: List[str],
                 make_channel: Callable[[str], Any],
                 make_stub: Callable[[Any], Any]) -> None:
        self._lock = threading.Lock()
        self._make_channel = make_channel
        self._make_stub = make_stub
        self._nodes: List[Tuple[str, Any, Any]] = []
        for a in addresses:
            ch = make_channel(a)
            self._nodes.append((a, ch, make_stub(ch)))
        self._primary = 0
        self._reads = itertools.count()

    def __len__(self) -> int:
        with self._lock:
            return len(self._nodes)

    def addresses(self) -> List[str]:
        with self._lock:
            return [a for a, _, _ in self._nodes]

    def channels(self) -> List[Any]:
        with self._lock:
            return [ch for _, ch, _ in self._nodes]

    def first(self) -> Tuple[str, Any, Any]:
        with self._lock:
            return self._nodes[0]

    def primary(self) -> Tuple[str, Any]:
        """(address, stub) of the node writes go to now."""
        with self._lock:
            a, _, stub = self._nodes[self._primary]
            return a, stub

    def next_read(self) -> Tuple[str, Any]:
        """(address, stub) of the next node in the round of reads."""
        with self._lock:
            a, _, stub = self._nodes[next(self._reads) % len(self._nodes)]
            return a, stub

    def set_primary(self, address: str) -> Any:
        """Writes go to `address` from now on (added to the nodes if it was
        not given); its stub."""
        with self._lock:
            for i, (a, _, stub) in enumerate(self._nodes):
                if a == address:
                    self._primary = i
                    return stub
            ch = self._make_channel(address)
            stub = self._make_stub(ch)
            self._nodes.append((address, ch, stub))
            self._primary = len(self._nodes) - 1
            return stub

    def primary_failed(self, address: str) -> None:
        """The believed primary at `address` did not answer: writes try the
        next node (which names the primary if it is not)."""
        with self._lock:
            if self._nodes[self._primary][0] == address:
                self._primary = (self._primary + 1) % len(self._nodes)
