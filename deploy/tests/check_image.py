#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks the device plugin's OCI image (scripts/check-image.sh, docs/k8s.md#image).

Usage: check_image.py LAYOUT TAG MANIFEST CONFIG RENDERED N0

LAYOUT is the OCI layout scripts/build-image.sh wrote, TAG its reference
name; MANIFEST and CONFIG are the manifest and config as skopeo (a second
reader, not this one) printed them; RENDERED is `kubectl kustomize
deploy/base`'s output; N0 the number of TAP lines printed before. Prints
TAP lines N0+1... (no plan: the caller prints it). The expected values are
literals (the entrypoint, the user, the label names, what may be in the
root) or come from debian/changelog through dpkg-parsechangelog (the
version, the date), never from the build script's own output.
"""
import datetime
import gzip
import hashlib
import io
import json
import os
import re
import stat
import subprocess
import sys
import tarfile

import yaml

layout, tag, manifest_file, config_file, rendered, n0 = sys.argv[1:]
top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
n = int(n0)
failures = 0


def ok(cond, name, why=""):
    global n, failures
    n += 1
    if cond:
        print(f"ok {n} k8s.image.{name}")
    else:
        failures += 1
        print(f"not ok {n} k8s.image.{name}")
        for line in str(why).splitlines():
            print(f"# {line}")


def changelog(field):
    return subprocess.run(["dpkg-parsechangelog", "-l", f"{top}/debian/changelog", "-S", field],
                          check=True, capture_output=True, text=True).stdout.strip()


VERSION = changelog("Version")
SDE = int(changelog("Timestamp"))
CREATED = datetime.datetime.fromtimestamp(SDE, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
ARCH = subprocess.run(["dpkg", "--print-architecture"], check=True, capture_output=True,
                      text=True).stdout.strip()
PLUGIN = "usr/sbin/neuron-device-plugin"
# the DRA driver, same package, same image (docs/k8s.md#dra): a DaemonSet runs it by `command`
DRA_PLUGIN = "usr/sbin/neuron-dra-plugin"


def blob(digest):
    algo, hexd = digest.split(":")
    with open(f"{layout}/blobs/{algo}/{hexd}", "rb") as f:
        return f.read()


# --- the layout: index -> manifest -> config, layer; every blob its digest
with open(f"{layout}/index.json") as f:
    index = json.load(f)
with open(manifest_file) as f:
    manifest = json.load(f)
with open(config_file) as f:
    config = json.load(f)
refs = [m for m in index.get("manifests", [])
        if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == tag]
ok(len(index["manifests"]) == 1 and len(refs) == 1, "layout_one_tagged_manifest",
   f"index.json: {json.dumps(index)}; expected one manifest named {tag}")
bad = []
for root, _, names in os.walk(f"{layout}/blobs"):
    for name in names:
        data = open(os.path.join(root, name), "rb").read()
        if hashlib.new(os.path.basename(root), data).hexdigest() != name:
            bad.append(name)
ok(not bad, "blobs_match_their_digests", f"blobs whose content is not their name: {bad}")
mbytes = blob(refs[0]["digest"]) if refs else b"{}"
ok(json.loads(mbytes) == manifest, "skopeo_reads_the_same_manifest",
   "skopeo's manifest differs from the layout's")
ok(manifest.get("schemaVersion") == 2
   and manifest.get("config", {}).get("mediaType") == "application/vnd.oci.image.config.v1+json"
   and [l.get("mediaType") for l in manifest.get("layers", [])]
   == ["application/vnd.oci.image.layer.v1.tar+gzip"],
   "manifest_one_gzip_layer", json.dumps(manifest, indent=1))
ok(json.loads(blob(manifest["config"]["digest"])) == config, "skopeo_reads_the_same_config",
   "skopeo's config differs from the layout's")

# --- the config
c = config.get("config", {})
ok(c.get("Entrypoint") == ["/usr/sbin/neuron-device-plugin"] and not c.get("Cmd"),
   "entrypoint_is_the_plugin", f"Entrypoint {c.get('Entrypoint')}, Cmd {c.get('Cmd')}")
ok(c.get("User") == "0:0", "user_is_root",
   f"User {c.get('User')!r}: the plugin runs as uid 0, which owns the kubelet's "
   "device-plugins directory (docs/k8s.md#hardening)")
ok(not c.get("Env") and not c.get("ExposedPorts") and not c.get("Volumes"),
   "no_env_ports_or_volumes", json.dumps(c))
want_labels = {
    "org.opencontainers.image.title": "neuron-device-plugin",
    "org.opencontainers.image.description":
        "Kubernetes device plugin for the Neuron notification queues (docs/k8s.md)",
    "org.opencontainers.image.version": VERSION,
    "org.opencontainers.image.created": CREATED,
    "org.opencontainers.image.licenses": "MIT",
}
ok(c.get("Labels") == want_labels, "labels",
   f"got {json.dumps(c.get('Labels'), indent=1)}\nexpected {json.dumps(want_labels, indent=1)}")
ok(config.get("created") == CREATED and config.get("architecture") == ARCH
   and config.get("os") == "linux", "created_arch_os",
   f"created {config.get('created')} (expected {CREATED}, debian/changelog's date), "
   f"architecture {config.get('architecture')} (expected {ARCH}), os {config.get('os')}")
layer_gz = blob(manifest["layers"][0]["digest"])
layer = gzip.decompress(layer_gz)
diff_ids = config.get("rootfs", {}).get("diff_ids", [])
ok(diff_ids == ["sha256:" + hashlib.sha256(layer).hexdigest()], "diff_id_is_the_layer",
   f"diff_ids {diff_ids}")
hist = config.get("history", [])
debs = hist[0].get("created_by", "").split("dpkg-deb -x ", 1)[-1].split() if len(hist) == 1 else []
ok(len(hist) == 1 and hist[0].get("created") == CREATED
   and f"neuron-device-plugin_{VERSION}_{ARCH}.deb" in debs,
   "history_names_the_debs", json.dumps(hist, indent=1))

# --- the file list
with tarfile.open(fileobj=io.BytesIO(layer)) as t:
    members = t.getmembers()
SO = re.compile(r"^(lib|lib64|usr/lib)/(.+/)?[^/]+\.so(\.[0-9]+)*$")


def unexpected(members):
    """The entries that are not a directory, the plugin, a shared object or
    the loader, or a package's copyright file (or its doc directory's link)."""
    bad = []
    for m in members:
        p = m.name.removeprefix("./")
        if m.isdir() or p in (PLUGIN, DRA_PLUGIN) or SO.match(p):
            continue
        if re.fullmatch(r"usr/share/doc/[^/]+/copyright", p) and m.isreg():
            continue
        if re.fullmatch(r"usr/share/doc/[^/]+", p) and m.issym():
            continue
        bad.append(p)
    return bad


for m in members:
    kind = "d" if m.isdir() else "l" if m.issym() else "h" if m.islnk() else "f" if m.isreg() else "?"
    tgt = f" -> {m.linkname}" if m.linkname else ""
    print(f"# file: {kind} {m.mode:04o} {m.size:9d} {m.name.removeprefix('./')}{tgt}")
bad = unexpected(members)
ok(not bad, "only_plugin_libraries_and_copyrights", "unexpected: " + " ".join(bad))
# negative control: the same list with a shell added must fail, naming it
sh = tarfile.TarInfo("./bin/sh")
sh.mode = 0o755
ok("bin/sh" in unexpected(members + [sh]) and "bin/sh" not in bad, "file_check_refuses_a_shell",
   "a layer with ./bin/sh added passed the file-list check")
shells = [m.name for m in members
          if os.path.basename(m.name) in ("sh", "bash", "dash", "ash", "busybox", "zsh")]
execs = [m.name for m in members if m.isreg() and m.mode & 0o111
         and m.name.removeprefix("./") not in (PLUGIN, DRA_PLUGIN) and not SO.match(m.name.removeprefix("./"))]
ok(not shells and not execs, "no_shell_no_other_executable", f"shells {shells}, executables {execs}")
plugin = [m for m in members if m.name.removeprefix("./") == PLUGIN]
ok(len(plugin) == 1 and plugin[0].isreg() and plugin[0].mode == 0o755, "plugin_binary_0755",
   f"{PLUGIN}: {[(m.type, oct(m.mode)) for m in plugin]}")
odd = [m.name for m in members
       if m.uid or m.gid or m.mtime != SDE or m.mode & (stat.S_ISUID | stat.S_ISGID)
       or (m.mode & 0o002 and not m.issym())  # a link's mode is 0777 and means nothing
       or not (m.isdir() or m.isreg() or m.issym() or m.islnk())]
ok(not odd, "owner_root_mtime_sde_no_setid_no_device",
   f"entries not 0:0, not mtime {SDE}, setuid/setgid, world-writable or special: {odd}")
names = {m.name.removeprefix("./") for m in members}
pkgs = [d.split("_")[0] for d in debs]
nocopy = [p for p in pkgs if f"usr/share/doc/{p}/copyright" not in names
          and f"usr/share/doc/{p}" not in names]
ok(pkgs and not nocopy, "every_package_keeps_its_copyright", f"no copyright file for {nocopy}")

# --- the DaemonSet names this image and runs its entrypoint
with open(rendered) as f:
    objs = [o for o in yaml.safe_load_all(f) if o]
ds = [o for o in objs if o.get("kind") == "DaemonSet"]
ctr = ds[0]["spec"]["template"]["spec"]["containers"][0] if ds else {}
ok(ctr.get("image") == f"neuron-device-plugin:{tag}", "daemonset_names_this_image",
   f"the rendered DaemonSet's image is {ctr.get('image')!r}, the image built is "
   f"neuron-device-plugin:{tag} (set newTag in deploy/base/kustomization.yaml)")
probe = ctr.get("livenessProbe", {}).get("exec", {}).get("command", [])
ok(ctr.get("command", c.get("Entrypoint")) == c.get("Entrypoint") and probe[:1] == ["/" + PLUGIN],
   "daemonset_command_and_probe_in_image",
   f"command {ctr.get('command')}, probe {probe}, entrypoint {c.get('Entrypoint')}")
print(f"# k8s.image: {len(members)} entries, layer {len(layer_gz)} bytes gzip, "
      f"{len(layer)} bytes tar; packages: {' '.join(debs)}")
sys.exit(1 if failures else 0)
