# SPDX-License-Identifier: MIT
#
# A CDI spec checked against the CDI project's own JSON schema, as Debian
# ships it in golang-github-container-orchestrated-devices-container-device-interface-dev
# (0.5.2: schema/schema.json and the defs.json it refers to), with Debian's
# python3-jsonschema (docs/k8s.md#cdi). The schema is the CDI library's, not
# ours; so are the rules its loader (pkg/cdi in the same package: ReadSpec,
# then Spec.validate) applies beyond the schema, which this file states in
# its own words from that package's documentation comments:
#   - cdiVersion one of the versions the library reads: 0.1.0 .. 0.5.0;
#   - kind "vendor/class": vendor starts with a letter, ends with a letter or
#     digit, inside letters, digits, '_', '-', '.'; class the same without '.';
#   - device names start and end with a letter or digit, inside letters,
#     digits, '_', '-', '.', ':'; no name twice in a spec;
#   - the loader parses strictly: a field the spec format does not have is
#     an error (the schema alone allows it);
#   - a spec file's name ends in .json or .yaml (anything else in the
#     directory is skipped).
# The selftest() proves the validator is not vacuous: the package's own
# testdata/good specs pass and testdata/bad/explicit-empty.json fails.
import json
import os
import re

from jsonschema import Draft7Validator, RefResolver

SCHEMA_DIR = ("/usr/share/gocode/src/github.com/container-orchestrated-devices/"
              "container-device-interface/schema")
VERSIONS = ("0.1.0", "0.2.0", "0.3.0", "0.4.0", "0.5.0")
VENDOR = re.compile(r"^[A-Za-z]([A-Za-z0-9_.-]*[A-Za-z0-9])?$")
CLASS = re.compile(r"^[A-Za-z]([A-Za-z0-9_-]*[A-Za-z0-9])?$")
NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.:-]*[A-Za-z0-9])?$")
# the fields of the spec format (specs-go/config.go in the same package)
FIELDS = {
    "spec": {"cdiVersion", "kind", "devices", "containerEdits"},
    "device": {"name", "containerEdits"},
    "edits": {"env", "deviceNodes", "hooks", "mounts"},
    "node": {"path", "hostPath", "type", "major", "minor", "fileMode", "permissions", "uid", "gid"},
}

_validator = None


def validator():
    """Draft-07 validator of schema.json; its "defs.json#..." references
    resolve to the file beside it."""
    global _validator
    if _validator is None:
        with open(os.path.join(SCHEMA_DIR, "schema.json")) as f:
            schema = json.load(f)
        Draft7Validator.check_schema(schema)
        resolver = RefResolver(base_uri="file://" + SCHEMA_DIR + "/", referrer=schema)
        _validator = Draft7Validator(schema, resolver=resolver)
    return _validator


def errors(spec, file_name=None):
    """Every reason SPEC (parsed JSON) is not a spec the CDI library loads;
    empty when it is one."""
    out = [f"schema: {'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
           for e in sorted(validator().iter_errors(spec), key=lambda e: list(map(str, e.absolute_path)))]
    if out or not isinstance(spec, dict):
        return out
    if file_name is not None and os.path.splitext(file_name)[1] not in (".json", ".yaml"):
        out.append(f"file name {file_name}: not .json or .yaml")
    if spec["cdiVersion"] not in VERSIONS:
        out.append(f"cdiVersion {spec['cdiVersion']!r}: not one of {', '.join(VERSIONS)}")
    vendor, slash, cls = spec["kind"].partition("/")
    if not slash or not VENDOR.match(vendor) or not CLASS.match(cls):
        out.append(f"kind {spec['kind']!r}: not vendor/class")
    names = [d["name"] for d in spec["devices"]]
    out += [f"device name {n!r}: not a CDI device name" for n in names if not NAME.match(n)]
    out += [f"device name {n!r} twice" for n in sorted({n for n in names if names.count(n) > 1})]
    unknown = set(spec) - FIELDS["spec"]
    for d in spec["devices"]:
        unknown |= set(d) - FIELDS["device"]
        unknown |= set(d["containerEdits"]) - FIELDS["edits"]
        for n in d["containerEdits"].get("deviceNodes", []):
            unknown |= set(n) - FIELDS["node"]
    out += [f"field {u!r}: not in the spec format" for u in sorted(unknown)]
    return out


def selftest():
    """The package's own examples: (file, accepted) for each; the good ones
    must pass, explicit-empty.json (an empty object) must not."""
    got = []
    for sub, name in (("good", "minimal.json"), ("good", "spec-example.json"), ("bad", "explicit-empty.json")):
        with open(os.path.join(SCHEMA_DIR, "testdata", sub, name)) as f:
            got.append((f"testdata/{sub}/{name}", not errors(json.load(f), name)))
    return got
