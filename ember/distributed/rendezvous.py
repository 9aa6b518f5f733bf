"""Rendezvous: from an init_method URL to (store, rank, world_size), as torch.distributed's
rendezvous.py.

    env://                      MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE from the environment
    tcp://host:port             rank and world_size from the arguments
    file:///path/to/file        a FileStore on a shared file system

For env:// and tcp://, rank 0 serves a TCPStore at the address and the others connect to it.
`register_rendezvous_handler(scheme, handler)` adds a scheme; a handler is a generator that
yields the triple.
"""
import numbers
import os
from datetime import timedelta
from urllib.parse import urlparse, urlunparse

from .store import FileStore, TCPStore

__all__ = ["register_rendezvous_handler", "rendezvous"]

_handlers = {}
_DEFAULT_TIMEOUT = timedelta(minutes=30)


def register_rendezvous_handler(scheme, handler):
    """Make `rendezvous` use `handler(url, **kwargs)` for URLs of `scheme`."""
    if scheme in _handlers:
        raise RuntimeError(f"Rendezvous handler for {scheme}:// already registered")
    _handlers[scheme] = handler


def _query(query):
    return dict(pair.split("=") for pair in filter(None, query.split("&")))


def rendezvous(url, rank=-1, world_size=-1, **kwargs):
    """A generator of (store, rank, world_size) for `url`; rank and world_size, if given,
    are added to the URL's query (they must not already be there)."""
    if not isinstance(url, (str, bytes)):
        raise RuntimeError(f"`url` must be a string. {type(url)}: {url}")
    if not isinstance(rank, numbers.Integral):
        raise RuntimeError(f"`rank` must be an integer. {rank}")
    if not isinstance(world_size, numbers.Integral):
        raise RuntimeError(f"`world_size` must be an integer. {world_size}")
    return _rendezvous(url, rank, world_size, **kwargs)


def _rendezvous(url, rank, world_size, **kwargs):
    result = urlparse(url)
    if rank != -1 or world_size != -1:
        query = _query(result.query)
        if "rank" in query or "world_size" in query:
            raise AssertionError(f"The url: {url} has node-specific arguments(rank, "
                                 "world_size) already.")
        if rank != -1:
            query["rank"] = str(rank)
        if world_size != -1:
            query["world_size"] = str(world_size)
        result = result._replace(query="&".join(f"{k}={v}" for k, v in query.items()))
        url = urlunparse(result)
    if result.scheme not in _handlers:
        raise RuntimeError(f"No rendezvous handler for {result.scheme}://")
    return _handlers[result.scheme](url, **kwargs)


def _error(scheme, msg):
    return ValueError(f"Error initializing torch.distributed using {scheme}:// rendezvous: "
                      f"{msg}")


def _rank_and_size(scheme, query):
    if "rank" not in query:
        raise _error(scheme, "rank parameter missing")
    if "world_size" not in query:
        raise _error(scheme, "world size parameter missing")
    return int(query["rank"]), int(query["world_size"])


def _tcp_store(host, port, rank, world_size, timeout):
    """Rank 0 serves the store (and waits for the others to connect); the rest are clients."""
    if not 0 <= port < 2 ** 16:
        raise ValueError(f"port must have value from 0 to 65535 but was {port}.")
    return TCPStore(host, port, world_size, is_master=rank == 0, timeout=timeout,
                    multi_tenant=True)


def _file_handler(url, **kwargs):
    result = urlparse(url)
    if not result.path:
        raise _error("file", "path missing")
    rank, world_size = _rank_and_size("file", _query(result.query))
    yield FileStore(result.path, world_size), rank, world_size
    raise RuntimeError("Unable to perform rerendezvous using file:// method")


def _tcp_handler(url, timeout=_DEFAULT_TIMEOUT, **kwargs):
    result = urlparse(url)
    if result.port is None:
        raise _error("tcp", "port number missing")
    rank, world_size = _rank_and_size("tcp", _query(result.query))
    yield _tcp_store(result.hostname, result.port, rank, world_size, timeout), rank, world_size
    raise RuntimeError("Unable to perform re-rendezvous using tcp:// method")


def _env_handler(url, timeout=_DEFAULT_TIMEOUT, **kwargs):
    def env(name):
        value = os.environ.get(name)
        if not value:
            raise _error("env", f"environment variable {name} expected, but not set")
        return value

    query = _query(urlparse(url).query)
    rank = int(query["rank"]) if "rank" in query else int(env("RANK"))
    world_size = int(query["world_size"]) if "world_size" in query else int(env("WORLD_SIZE"))
    host, port = env("MASTER_ADDR"), int(env("MASTER_PORT"))
    yield _tcp_store(host, port, rank, world_size, timeout), rank, world_size
    raise RuntimeError("Unable to perform re-rendezvous using env:// method")


register_rendezvous_handler("tcp", _tcp_handler)
register_rendezvous_handler("env", _env_handler)
register_rendezvous_handler("file", _file_handler)
