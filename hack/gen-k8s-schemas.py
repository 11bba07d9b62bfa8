#!/usr/bin/env python3
"""Write reconciler/crds/_k8s/<version>.json: the structural schemas of core/v1 PodTemplateSpec (and
batch/v1 JobSpec, core/v1 ServiceSpec, for decoding built-in objects) and everything they reach,
derived from kube-apiserver's own OpenAPI v3 documents.

Input: ``api/openapi-spec/v3/{api__v1,apis__batch__v1}_openapi.json`` of the ``k8s.io/kubernetes@<version>`` Go module
(data read from the module cache; nothing is built). Output: one definition per type, ``$ref`` kept
(``reconciler/k8s_schemas.py`` inlines them when a CRD file names a type with the marker
``x-training-conformance-k8s-type``). The rules turn the apiserver's document into what
controller-gen writes into a CRD for the same Go types (docs/bad-input.md says why each holds):

* descriptions, ``x-kubernetes-patch-*`` and ``x-kubernetes-unions`` go (not schema);
* ``allOf: [{$ref}]`` becomes the ``$ref`` itself;
* ``default`` goes, except on a list-map key that is not required (``protocol: TCP`` of a port:
  structural schemas need every list-map key required or defaulted, and the Go type's ``+default``
  is what controller-gen writes);
* Quantity becomes int-or-string with controller-gen's quantity pattern; IntOrString int-or-string;
  Time ``string`` / ``date-time``;
* an embedded ObjectMeta keeps only labels, annotations, finalizers, name and namespace (controller-gen's
  ``generateEmbeddedObjectMeta``).

    python hack/gen-k8s-schemas.py [--version v1.35.8] [--modcache ~/go/pkg/mod]
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROOTS = ["io.k8s.api.core.v1.PodTemplateSpec", "io.k8s.api.batch.v1.JobSpec", "io.k8s.api.core.v1.ServiceSpec"]
SOURCES = ["api__v1_openapi.json", "apis__batch__v1_openapi.json"]
PREFIX = "#/components/schemas/"
#: controller-gen's pattern for resource.Quantity (pkg/crd/known_types.go).
QUANTITY_PATTERN = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
KNOWN = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {"x-kubernetes-int-or-string": True, "pattern": QUANTITY_PATTERN},
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"x-kubernetes-int-or-string": True},
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": {"type": "string", "format": "date-time"},
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": {"type": "string", "format": "date-time"},
    "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {
        "type": "object",
        "properties": {
            "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
            "finalizers": {"type": "array", "items": {"type": "string"}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "name": {"type": "string"},
            "namespace": {"type": "string"},
        },
    },
}
DROP = {"description", "x-kubernetes-patch-merge-key", "x-kubernetes-patch-strategy", "x-kubernetes-unions"}


def convert(node, defs: dict, wanted: set, keep_defaults: set, path: str):
    if isinstance(node, list):
        return [convert(n, defs, wanted, keep_defaults, path) for n in node]
    if not isinstance(node, dict):
        return node
    node = dict(node)
    all_of = node.pop("allOf", None)
    if all_of:
        assert len(all_of) == 1 and "$ref" in all_of[0], all_of
        node["$ref"] = all_of[0]["$ref"]
    out = {}
    for key, value in node.items():
        if key in DROP:
            continue
        if key == "$ref":
            name = value.removeprefix(PREFIX)
            wanted.add(name)
            out["$ref"] = name
        elif key == "default":
            if path in keep_defaults:
                out["default"] = value
        elif key == "properties":
            out["properties"] = {k: convert(v, defs, wanted, keep_defaults, f"{path}.{k}") for k, v in value.items()}
        elif isinstance(value, (dict, list)):
            out[key] = convert(value, defs, wanted, keep_defaults, path)
        else:
            out[key] = value
    if "$ref" in out:  # a reference carries nothing else a CRD schema may keep beside it
        out = {"$ref": out["$ref"], **({"default": out["default"]} if "default" in out else {})}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="v1.35.8")
    parser.add_argument("--modcache", default=os.environ.get("GOMODCACHE", str(Path.home() / "go/pkg/mod")))
    args = parser.parse_args()
    schemas = {}
    for name in SOURCES:
        source = Path(args.modcache) / f"k8s.io/kubernetes@{args.version}/api/openapi-spec/v3/{name}"
        schemas.update(json.loads(source.read_text())["components"]["schemas"])

    # List-map keys that are not required keep their default (see the module docstring).
    keep_defaults = set()
    for name, schema in schemas.items():
        for prop in (schema.get("properties") or {}).values():
            keys = prop.get("x-kubernetes-list-map-keys")
            items = (prop.get("items") or {}).get("allOf", [{}])[0].get("$ref", "").removeprefix(PREFIX)
            if keys and items:
                for key in keys:
                    if key not in schemas[items].get("required", []):
                        keep_defaults.add(f"{items}.{key}")

    out, wanted, done = {}, set(ROOTS), set()
    while wanted - done:
        name = sorted(wanted - done)[0]
        done.add(name)
        if name in KNOWN:
            out[name] = KNOWN[name]
            continue
        out[name] = convert(schemas[name], schemas, wanted, keep_defaults, name)
    target = ROOT / "reconciler" / "crds" / "_k8s" / f"{args.version}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    document = {"source": f"k8s.io/kubernetes@{args.version} api/openapi-spec/v3/{{{','.join(SOURCES)}}} "
                          f"(generated by hack/gen-k8s-schemas.py)", "definitions": dict(sorted(out.items()))}
    target.write_text(json.dumps(document, indent=1, sort_keys=False) + "\n")
    print(f"{target.relative_to(ROOT)}: {len(out)} definitions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
