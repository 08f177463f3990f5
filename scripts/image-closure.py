#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The packages the device plugin's image holds (scripts/build-image.sh,
docs/decisions/0042-plugin-image.md#plugin-image).

Usage: image-closure.py ARCH ROOT_PACKAGE OWN.deb...

The closure of ROOT_PACKAGE's Pre-Depends and Depends: a package one of
OWN.deb (the project's `make deb` output) provides comes from that .deb;
any other is apt's candidate version for ARCH (or "all"), read from apt's
index (`apt-cache show --no-all-versions`), the version a host installing
the packages today would get. Of the alternatives of a dependency
("a | b"), the first that is ours or has a candidate. Prints one line a
package, sorted by name: "own NAME PATH" or "apt NAME VERSION ARCH SHA256".
Exits 1 naming a dependency nothing satisfies.
"""
import subprocess
import sys

arch, root, *own_debs = sys.argv[1:]


def control(deb):
    out = subprocess.run(["dpkg-deb", "-f", deb, "Package", "Pre-Depends", "Depends"],
                         check=True, capture_output=True, text=True).stdout
    return parse_records(out)[0]


def parse_records(text):
    """Debian control records (blank-line separated) as dicts."""
    recs, cur, key = [], {}, None
    for line in text.splitlines():
        if not line.strip():
            if cur:
                recs.append(cur)
            cur, key = {}, None
        elif line[0] in " \t" and key:
            cur[key] += " " + line.strip()
        elif ":" in line:
            key, val = line.split(":", 1)
            cur[key] = val.strip()
    if cur:
        recs.append(cur)
    return recs


def groups(rec):
    """The dependency groups of a record: lists of alternative names."""
    text = ", ".join(v for k in ("Pre-Depends", "Depends") if (v := rec.get(k)))
    out = []
    for g in text.split(","):
        alts = [a.split("(")[0].split(":")[0].strip() for a in g.split("|")]
        alts = [a for a in alts if a]
        if alts:
            out.append(alts)
    return out


own = {}
for deb in own_debs:
    rec = control(deb)
    own[rec["Package"]] = (deb, rec)

apt = {}  # name -> candidate record (or None: apt has none)


def candidates(names):
    names = [n for n in names if n not in apt and n not in own]
    if not names:
        return
    out = subprocess.run(["apt-cache", "show", "--no-all-versions", *names],
                         capture_output=True, text=True).stdout
    for n in names:
        apt[n] = None
    for rec in parse_records(out):
        if rec.get("Package") in apt and rec.get("Architecture") in (arch, "all"):
            apt[rec["Package"]] = rec


if root not in own:
    sys.exit(f"image-closure: no {root} among the .debs given")
chosen = {root: own[root][1]}
todo = [root]
while todo:
    recs = [chosen[n] for n in todo]
    candidates([a for r in recs for g in groups(r) for a in g])
    todo = []
    for r in recs:
        for g in groups(r):
            pick = next((a for a in g if a in own or apt.get(a)), None)
            if pick is None:
                sys.exit(f"image-closure: {r['Package']} depends on '{' | '.join(g)}', "
                         "which no .deb given and no apt candidate satisfies (apt-get update?)")
            if pick not in chosen:
                chosen[pick] = own[pick][1] if pick in own else apt[pick]
                todo.append(pick)
for name in sorted(chosen):
    if name in own:
        print(f"own {name} {own[name][0]}")
    else:
        r = chosen[name]
        print(f"apt {name} {r['Version']} {r['Architecture']} {r['SHA256']}")
