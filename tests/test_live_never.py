"""Live `never` with `coexist`: a sighting is judged once the step has settled, on each object as it
was at the revision of the event that showed it - each kind is its own watch stream, so the cache can
hold a newer object of one kind beside an older version of another."""

from types import SimpleNamespace

from conformance.live.scenario import _NeverWatch
from conformance.outcome import Outcome

NEVER = [{"coexist": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "w"}},
                      {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "status": {"$absent": True}}]}]


class _Cache:
    def __init__(self):
        self.objects: dict[str, dict] = {}

    def in_namespaces(self, namespaces):
        return [o for o in self.objects.values() if o["metadata"]["namespace"] in namespaces]


def _obj(kind: str, name: str, rv: int, **extra) -> dict:
    api = "v1" if kind == "Pod" else "apps/v1"
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": "ns", "uid": f"{kind}-{name}",
                                                         "resourceVersion": str(rv)}, **extra}


def _watch(initial: list[dict]):
    cache = _Cache()
    for obj in initial:
        cache.objects[obj["metadata"]["uid"]] = obj
    run = SimpleNamespace(session=SimpleNamespace(cache=cache),
                          names=SimpleNamespace(live_namespaces=["ns"], back=lambda x, *_: x))
    outcome = Outcome(objects=[])
    watcher = _NeverWatch(NEVER, run, outcome)

    def deliver(obj: dict, event: str = "MODIFIED") -> None:
        cache.objects[obj["metadata"]["uid"]] = obj  # the cache first, then its listeners
        watcher(event, obj)
    return watcher, outcome, deliver


def test_a_sighting_made_of_two_streams_out_of_order_is_not_reported():
    # The pod got its status at revision 2 and the StatefulSet was made at 3, but the StatefulSet's
    # event reached the harness first: the cache showed them together for a moment.
    watcher, outcome, deliver = _watch([_obj("Pod", "p", 1)])
    deliver(_obj("StatefulSet", "w", 3), "ADDED")
    deliver(_obj("Pod", "p", 2, status={"phase": "Running"}))
    watcher.check_all()
    assert outcome.never_violations == []


def test_a_real_coexistence_is_reported_even_if_gone_by_the_end_of_the_step():
    watcher, outcome, deliver = _watch([_obj("Pod", "p", 1)])
    deliver(_obj("StatefulSet", "w", 2), "ADDED")
    deliver(_obj("Pod", "p", 3, status={"phase": "Running"}))
    watcher.check_all()
    assert len(outcome.never_violations) == 1 and "StatefulSet" in outcome.never_violations[0]


def test_a_coexistence_still_there_when_the_step_settles_is_reported():
    watcher, outcome, _ = _watch([_obj("Pod", "p", 1), _obj("StatefulSet", "w", 2)])
    watcher.check_all()
    assert len(outcome.never_violations) == 1
