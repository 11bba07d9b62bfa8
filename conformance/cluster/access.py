"""Reaching a cluster named by a kubeconfig, with one clear line for each way it can fail.

``conformance cluster clean`` and ``conformance doctor`` talk to clusters the harness did not
start; a Python traceback for a typo in a path, a cluster that is down or an account without
rights helps nobody. :func:`connect` checks the file, loads it and asks ``/version``;
:func:`explain` turns whatever a later request raised into one line that says which of these it
was (and what to do), so each command can print it and exit non-zero.
"""

from __future__ import annotations

from pathlib import Path

from reconciler.live.rest import Api, ApiError


class AccessError(RuntimeError):
    """The cluster cannot be used; ``str()`` is one line naming the kubeconfig and the cause."""


def connect(kubeconfig: str | Path) -> tuple[Api, dict]:
    """An :class:`Api` for ``kubeconfig`` and the server's ``/version`` answer."""
    path = Path(kubeconfig)
    if not path.is_file():
        raise AccessError(f"kubeconfig {path}: no such file")
    try:
        api = Api.from_kubeconfig(str(path))
    except Exception as exc:  # noqa: BLE001 - ConfigException, YAML errors, missing keys ...
        raise AccessError(f"kubeconfig {path} is not usable: {_one_line(exc)}") from None
    try:
        version = api.request("GET", "/version")
    except Exception as exc:  # noqa: BLE001
        api.close()
        raise AccessError(explain(exc, path, "read the server version")) from None
    return api, version


def explain(exc: BaseException, kubeconfig: str | Path, doing: str) -> str:
    """One line for an exception raised while ``doing`` something against ``kubeconfig``'s cluster."""
    if isinstance(exc, AccessError):
        return str(exc)
    if isinstance(exc, ApiError):
        if exc.code == 401:
            return (f"the cluster of {kubeconfig} does not accept its credentials (401 Unauthorized) "
                    f"while trying to {doing}: {exc.message}")
        if exc.code == 403:
            return (f"forbidden: the account of {kubeconfig} may not {doing} (403): {exc.message}; "
                    f"`conformance doctor --kubeconfig {kubeconfig}` lists the rights the harness needs")
        return f"the cluster of {kubeconfig} answered {exc.code} {exc.reason} while trying to {doing}: {exc.message}"
    server = _server(kubeconfig)
    if _is_connection_error(exc):
        return (f"cannot reach the API server {server} of {kubeconfig} (while trying to {doing}): "
                f"{_root_cause(exc)}")
    return f"cannot {doing} on the cluster of {kubeconfig}: {type(exc).__name__}: {_one_line(exc)}"


def _is_connection_error(exc: BaseException) -> bool:
    import urllib3

    return isinstance(exc, (urllib3.exceptions.HTTPError, ConnectionError, TimeoutError, OSError))


def _root_cause(exc: BaseException) -> str:
    """The innermost reason of a urllib3 retry error (connection refused, TLS, DNS ...)."""
    reason = getattr(exc, "reason", None)
    while isinstance(reason, BaseException) and getattr(reason, "reason", None) is not None:
        reason = reason.reason
    text = _one_line(reason if isinstance(reason, BaseException) else exc)
    # urllib3 wraps a refused connect as "<...HTTPSConnection object at 0x..>: Failed to establish
    # a new connection: [Errno 111] Connection refused": keep what comes after the object.
    return text.split(">: ", 1)[-1]


def _server(kubeconfig: str | Path) -> str:
    try:
        import yaml

        config = yaml.safe_load(Path(kubeconfig).read_text())
        return config["clusters"][0]["cluster"]["server"]
    except Exception:  # noqa: BLE001 - only for the message
        return "(unknown server)"


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
