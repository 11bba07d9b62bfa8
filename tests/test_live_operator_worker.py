"""The live reference operator's worker loop, without a cluster: what a failed reconcile does next."""

import threading

from reconciler.live.informer import Cache
from reconciler.live.operator import Operator
from reconciler.live.rest import ApiError
from reconciler.live.workqueue import WorkQueue

JOBSET = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
          "metadata": {"name": "js", "namespace": "ns", "uid": "u1", "resourceVersion": "5"}}
KEY = ("jobset.x-k8s.io", "JobSet", "ns", "js")


class _Api:
    def __init__(self, exists: bool):
        self.exists, self.gets = exists, 0

    def resource_of(self, obj):
        return "jobsets"

    def get(self, resource, namespace, name):
        self.gets += 1
        return dict(JOBSET) if self.exists else None


class _Failing:
    def __init__(self, error):
        self.error, self.calls = error, 0

    def reconcile(self, cluster, obj):
        self.calls += 1
        raise self.error


def _worker(api, controller, failures=0, record_error=None):
    op = object.__new__(Operator)
    op.queue, op.cache, op.api = WorkQueue(), Cache(), api
    op.cluster = type("C", (), {"controllers": [controller]})()
    if record_error is not None:
        op.cluster.record_error = record_error
    op._views, op._failures = [None], {}
    op.cache.put(dict(JOBSET))
    if failures:
        op._failures[(0, KEY)] = failures
    op.queue.add((0, KEY))
    thread = threading.Thread(target=op._work, daemon=True)
    thread.start()
    return op, thread


def _stop(op, thread, after=0.3):
    threading.Event().wait(after)
    op.queue.shutdown()
    thread.join(2)


def test_a_404_for_an_object_that_is_gone_ends_its_retries_and_its_ghost():
    # A status write of a JobSet deleted meanwhile: 404. The object is gone on the server, so the
    # worker drops it from the cache and does not retry (it used to retry 1,000 times, then die).
    api, controller = _Api(exists=False), _Failing(ApiError(404, {"reason": "NotFound", "message": "gone"}))
    op, thread = _worker(api, controller)
    _stop(op, thread)
    assert controller.calls == 1
    assert op.cache.get(KEY) is None
    assert (0, KEY) not in op._failures


def test_a_404_for_something_else_is_retried():
    api, controller = _Api(exists=True), _Failing(ApiError(404, {"reason": "NotFound", "message": "ns gone"}))
    op, thread = _worker(api, controller)
    _stop(op, thread, after=0.4)
    assert controller.calls >= 2  # back-off 0.1 s, 0.2 s, ...
    assert op.cache.get(KEY) is not None


def test_the_back_off_is_capped_whatever_the_failure_count():
    # 2 ** 1100 does not fit a float: the delay must still be computed (10 s at most).
    api, controller = _Api(exists=True), _Failing(RuntimeError("boom"))
    op, thread = _worker(api, controller, failures=1100)
    threading.Event().wait(0.3)
    assert thread.is_alive() and op.queue.pending(60) == 1  # the worker lives on; the item waits its turn
    _stop(op, thread, after=0)
    assert op._failures[(0, KEY)] == 1101


def test_a_static_token_client_has_no_refresh_hook(tmp_path):
    # The hook re-reads os.environ before every request, racing pytest's PYTEST_CURRENT_TEST.
    import yaml

    from reconciler.live.rest import Api

    def kubeconfig(user):
        path = tmp_path / f"k{len(list(tmp_path.iterdir()))}"
        path.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "c",
            "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
            "users": [{"name": "u", "user": user}]}))
        return path

    static = Api.from_kubeconfig(str(kubeconfig({"token": "t"})))
    assert static.client.configuration.refresh_api_key_hook is None
    from reconciler.live.rest import _refreshing_credentials

    assert not _refreshing_credentials(str(kubeconfig({"token": "t"})))
    assert _refreshing_credentials(str(kubeconfig({"exec": {"apiVersion": "client.authentication.k8s.io/v1",
                                                             "command": "get-token"}})))


def test_a_refused_write_is_a_reconcile_error_and_is_retried():
    # As render's Cluster.run: the apiserver refused the controller's own write (e.g. a Volcano pod with
    # containerPort 0) - recorded (a Warning Event live) and retried with back-off.
    from reconciler.live.facade import LiveRejection

    refused = LiveRejection("schema", "Pod ns/p", [], api_code=422, api_message='Pod "p" is invalid: x')
    api, controller = _Api(exists=True), _Failing(refused)
    recorded = []
    op, thread = _worker(api, controller,
                         record_error=lambda obj, message: recorded.append((obj["metadata"]["name"], message)))
    _stop(op, thread, after=0.4)
    assert controller.calls >= 2
    assert recorded[0] == ("js", str(refused)) and str(refused) == 'Pod "p" is invalid: x'
