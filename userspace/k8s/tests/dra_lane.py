#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# The DRA lane (docs/k8s.md#dra-tests): neuron-dra-plugin on three fake
# nodes against
#   - a fake API server on loopback (http.server) that validates every
#     object it is sent against the published resource.k8s.io/v1 schema
#     (kubernetes-models, through dra_validate.mjs) and the per-slice
#     limits the schema's descriptions state, and refuses what fails;
#   - a fake kubelet per node (Debian's grpcio; messages generated here
#     from our .proto by protoc --python_out, calls through generic
#     multi-callables): the plugin registration handshake, then
#     NodePrepareResources / NodeUnprepareResources;
#   - a small allocator standing in for the scheduler: it reads the
#     published slices (the newest complete generation of each pool) and
#     honours their shared counters.
# node-a: 2 devices of 4 cores; node-b: 1 device of 2 cores; node-c: 12
# devices of 4 cores (more counter sets than one slice may carry).
# Prints TAP ("ok N k8s.dra.NAME"), the transcript as "#" lines.
#
# Usage: dra_lane.py PLUGIN PROTO_DIR NODE_MODULES REPO_TOP
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

import grpc

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdi_schema  # noqa: E402

PLUGIN, PROTO_DIR, MODS, TOP = sys.argv[1:5]
DRIVER = "neuron.example"
tmp = tempfile.mkdtemp(prefix="ndra-")
n_checks = 0
failures = []


def say(line):
    for part in str(line).split("\n"):
        print(f"# {part}", flush=True)


def check(cond, name, why=""):
    global n_checks
    n_checks += 1
    print(f"{'ok' if cond else 'not ok'} {n_checks} k8s.dra.{name}", flush=True)
    if not cond:
        failures.append(name)
        if why:
            say(f"  {why}")


subprocess.run(["protoc", "-I", PROTO_DIR, "--python_out=" + tmp, "dra_v1.proto", "pluginregistration_v1.proto"],
               check=True)
sys.path.insert(0, tmp)
import dra_v1_pb2 as dra  # noqa: E402
import pluginregistration_v1_pb2 as reg  # noqa: E402

# ---------------------------------------------------------------- validator
validator = subprocess.Popen(["node", os.path.join(os.path.dirname(os.path.abspath(__file__)), "dra_validate.mjs"),
                              MODS, TOP], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
vlock = threading.Lock()


def schema_errors(model, obj):
    with vlock:
        validator.stdin.write(json.dumps({"model": model, "object": obj}) + "\n")
        validator.stdin.flush()
        return json.loads(validator.stdout.readline())["errors"]


# The per-slice limits of ResourceSliceSpec (its published field
# descriptions; the OpenAPI document cannot express them) and the
# references between counters and devices.
def limit_errors(s):
    e = []
    spec = s.get("spec", {})
    devs, sets = spec.get("devices", []), spec.get("sharedCounters", [])
    counted = any(d.get("consumesCounters") for d in devs)
    most = 64 if counted else 128
    if len(devs) > most:
        e.append(f"spec.devices: {len(devs)} devices, at most {most}")
    if len(sets) > 8:
        e.append(f"spec.sharedCounters: {len(sets)} counter sets, at most 8")
    have = {cs["name"]: set(cs.get("counters", {})) for cs in sets}
    names = set()
    for i, d in enumerate(devs):
        if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", d.get("name", "")):
            e.append(f"spec.devices[{i}].name: not a DNS label")
        if d.get("name") in names:
            e.append(f"spec.devices[{i}].name: '{d['name']}' twice")
        names.add(d.get("name"))
        if len(d.get("consumesCounters", [])) > 2:
            e.append(f"spec.devices[{i}].consumesCounters: more than 2")
        for j, cc in enumerate(d.get("consumesCounters", [])):
            if cc.get("counterSet") not in have:
                e.append(f"spec.devices[{i}].consumesCounters[{j}].counterSet: '{cc.get('counterSet')}' not in "
                         f"this slice's sharedCounters")
            elif not set(cc.get("counters", {})) <= have[cc["counterSet"]]:
                e.append(f"spec.devices[{i}].consumesCounters[{j}].counters: not in set '{cc['counterSet']}'")
    return e


# ---------------------------------------------------------------- API server
class Api:
    def __init__(self):
        self.lock = threading.Lock()
        self.slices = {}    # name -> object
        self.claims = {}    # (namespace, name) -> object
        self.validated = 0  # objects validated
        self.refused = []   # (what, errors)
        self.claim_gets = 0
        self.rv = 0


api = Api()
SLICES = "/apis/resource.k8s.io/v1/resourceslices"


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def status(self, code, reason, message):
        self.reply(code, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason,
                          "message": message, "code": code})

    def do_GET(self):
        u = urllib.parse.urlparse(self.path)
        if u.path == SLICES:
            sel = dict(kv.split("=", 1) for kv in urllib.parse.parse_qs(u.query).get("fieldSelector", [""])[0]
                       .split(",") if "=" in kv)
            with api.lock:
                items = [s for s in api.slices.values()
                         if all(s["spec"].get(k.split(".", 1)[1]) == v for k, v in sel.items())]
            return self.reply(200, {"kind": "ResourceSliceList", "apiVersion": "resource.k8s.io/v1",
                                    "metadata": {}, "items": items})
        m = re.fullmatch(r"/apis/resource\.k8s\.io/v1/namespaces/([^/]+)/resourceclaims/([^/]+)", u.path)
        if m:
            with api.lock:
                api.claim_gets += 1
                c = api.claims.get((m[1], m[2]))
            if c is None:
                return self.status(404, "NotFound", f'resourceclaims.resource.k8s.io "{m[2]}" not found')
            return self.reply(200, c)
        self.status(404, "NotFound", "no such path")

    def do_POST(self):
        if self.path != SLICES:
            return self.status(404, "NotFound", "no such path")
        try:
            obj = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        except ValueError as e:
            return self.status(400, "BadRequest", f"not JSON: {e}")
        errs = schema_errors("ResourceSlice", obj) + limit_errors(obj)
        with api.lock:
            api.validated += 1
            if errs:
                api.refused.append((obj.get("metadata", {}).get("name"), errs))
                return self.status(422, "Invalid", "; ".join(errs))
            name = obj["metadata"]["name"]
            if name in api.slices:
                return self.status(409, "AlreadyExists", f"{name} exists")
            api.rv += 1
            obj["metadata"].update(uid=f"uid-{api.rv}", resourceVersion=str(api.rv))
            api.slices[name] = obj
        self.reply(201, obj)

    def do_DELETE(self):
        name = self.path[len(SLICES) + 1:] if self.path.startswith(SLICES + "/") else None
        with api.lock:
            if name and api.slices.pop(name, None):
                return self.reply(200, {"kind": "Status", "status": "Success"})
        self.status(404, "NotFound", f"{name} not found")


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
API_URL = f"http://127.0.0.1:{server.server_address[1]}"


# ---------------------------------------------------------------- nodes
def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


class Node:
    def __init__(self, name, layout):
        self.name, self.layout = name, layout
        self.root = os.path.join(tmp, name)
        self.sys, self.dev = f"{self.root}/sys", f"{self.root}/dev"
        self.kubelet, self.cdi = f"{self.root}/kubelet", f"{self.root}/cdi"
        for n, (numa, cores) in layout.items():
            write(f"{self.sys}/class/nnq/nnq{n}/device/numa_node", f"{numa}\n")
            write(f"{self.sys}/class/nnq/nnq{n}/state", "online\n")
            for c in range(cores):
                write(f"{self.sys}/class/nnq/nnq{n}-core{c}/core", f"{c}\n")
                write(f"{self.dev}/nnq{n}-core{c}", "")
            write(f"{self.dev}/nnq{n}", "")
        self.proc = None
        self.log = os.path.join(self.root, "plugin.log")

    def start(self):
        self.proc = subprocess.Popen(
            [PLUGIN, "--node-name", self.name, "--api-server", API_URL, "--token-file", "/nonexistent",
             "--ca-file", "/nonexistent", "--kubelet-dir", self.kubelet, "--cdi-dir", self.cdi,
             "--dev-root", self.dev, "--sys-root", self.sys, "--poll-ms", "100"],
            stderr=open(self.log, "a"))

    def stop(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    @property
    def reg_sock(self):
        return f"{self.kubelet}/plugins_registry/{DRIVER}-reg.sock"


def wait_for(cond, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.02)
    return cond()


def pool(node):
    """The newest complete generation of the node's pool: (generation, slices)."""
    with api.lock:
        mine = [s for s in api.slices.values() if s["spec"]["pool"]["name"] == node]
    if not mine:
        return None
    g = max(s["spec"]["pool"]["generation"] for s in mine)
    cur = [s for s in mine if s["spec"]["pool"]["generation"] == g]
    if len(cur) != cur[0]["spec"]["pool"]["resourceSliceCount"]:
        return None
    return g, cur


class Kubelet:
    """A fake kubelet's plugin side: the registration handshake, the DRA calls."""

    def __init__(self, node):
        self.node = node

    def register(self):
        ch = grpc.insecure_channel("unix://" + self.node.reg_sock)
        info = ch.unary_unary("/pluginregistration.Registration/GetInfo",
                              request_serializer=reg.InfoRequest.SerializeToString,
                              response_deserializer=reg.PluginInfo.FromString)(reg.InfoRequest(), timeout=5)
        ch.unary_unary("/pluginregistration.Registration/NotifyRegistrationStatus",
                       request_serializer=reg.RegistrationStatus.SerializeToString,
                       response_deserializer=reg.RegistrationStatusResponse.FromString)(
            reg.RegistrationStatus(plugin_registered=True), timeout=5)
        ch.close()
        self.endpoint = info.endpoint
        return info

    def call(self, method, req, resp):
        ch = grpc.insecure_channel("unix://" + self.endpoint)
        try:
            return ch.unary_unary(f"/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/{method}",
                                  request_serializer=req.SerializeToString,
                                  response_deserializer=resp.FromString)(req, timeout=10)
        finally:
            ch.close()

    def prepare(self, *claims):
        return self.call("NodePrepareResources", dra.NodePrepareResourcesRequest(
            claims=[dra.Claim(namespace=ns, uid=uid, name=n) for ns, uid, n in claims]),
            dra.NodePrepareResourcesResponse)

    def unprepare(self, *claims):
        return self.call("NodeUnprepareResources", dra.NodeUnprepareResourcesRequest(
            claims=[dra.Claim(namespace=ns, uid=uid, name=n) for ns, uid, n in claims]),
            dra.NodeUnprepareResourcesResponse)


# ---------------------------------------------------------------- allocator
class Allocator:
    """The scheduler's part, small: devices from the published slices, each
    given once, and only while every counter it consumes is still there."""

    def __init__(self):
        self.given = {}     # (pool, device) -> claim uid
        self.consumed = {}  # (pool, set, counter) -> amount

    def candidates(self, node):
        g = pool(node)
        if not g:
            return [], {}
        devs, have = [], {}
        for s in g[1]:
            for cs in s["spec"].get("sharedCounters", []):
                for cn, v in cs["counters"].items():
                    have[(node, cs["name"], cn)] = int(v["value"])
            devs += s["spec"]["devices"]
        return devs, have

    def fits(self, node, d, have):
        if (node, d["name"]) in self.given:
            return False, f"{d['name']} already given"
        for cc in d.get("consumesCounters", []):
            for cn, v in cc["counters"].items():
                k = (node, cc["counterSet"], cn)
                if self.consumed.get(k, 0) + int(v["value"]) > have.get(k, 0):
                    return False, f"{d['name']}: counter {cc['counterSet']}/{cn} used up"
        return True, ""

    def allocate(self, uid, node, request, want):
        """want(device) -> bool; request "cores": an aligned pair on one
        device (cores 2k, 2k+1), "device": one whole device. The results,
        or (None, why)."""
        devs, have = self.candidates(node)
        pick, why = None, []
        attrs = lambda d: {k: next(iter(v.values())) for k, v in d["attributes"].items()}  # noqa: E731
        if request == "cores":
            cores = {(attrs(d)["device"], attrs(d)["core"]): d for d in devs if attrs(d)["kind"] == "core"}
            for (dev, c), d in sorted(cores.items()):
                e = cores.get((dev, c + 1))
                if c % 2 or not e or not want(d):
                    continue
                ok1, w1 = self.fits(node, d, have)
                ok2, w2 = self.fits(node, e, have)
                if ok1 and ok2:
                    pick = [d, e]
                    break
                why += [w for w in (w1, w2) if w]
        else:
            for d in devs:
                if attrs(d)["kind"] != "device" or not want(d):
                    continue
                ok1, w1 = self.fits(node, d, have)
                if ok1:
                    pick = [d]
                    break
                why.append(w1)
        if not pick:
            return None, "; ".join(why) or "no device matches"
        for d in pick:
            self.given[(node, d["name"])] = uid
            for cc in d.get("consumesCounters", []):
                for cn, v in cc["counters"].items():
                    k = (node, cc["counterSet"], cn)
                    self.consumed[k] = self.consumed.get(k, 0) + int(v["value"])
        return [{"request": request, "driver": DRIVER, "pool": node, "device": d["name"]} for d in pick], ""

    def release(self, uid):
        for (node, name), u in list(self.given.items()):
            if u != uid:
                continue
            del self.given[(node, name)]
            devs, _ = self.candidates(node)
            for d in devs:
                if d["name"] == name:
                    for cc in d.get("consumesCounters", []):
                        for cn, v in cc["counters"].items():
                            self.consumed[(node, cc["counterSet"], cn)] -= int(v["value"])


def claim_object(ns, name, uid, request, results):
    """A ResourceClaim v1 as the API server would hold it once allocated."""
    exactly = {"deviceClassName": f"neuron-{request}", "allocationMode": "ExactCount",
               "count": 2 if request == "cores" else 1}
    spec = {"devices": {"requests": [{"name": request, "exactly": exactly}]}}
    if request == "cores":
        spec["devices"]["constraints"] = [{"requests": ["cores"], "matchAttribute": f"{DRIVER}/device"}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"namespace": ns, "name": name, "uid": uid},
            "spec": spec, "status": {"allocation": {"devices": {"results": results}}}}


def put_claim(obj, validate=True):
    if validate:
        errs = schema_errors("ResourceClaim", obj)
        check(not errs, f"claim_{obj['metadata']['name']}_schema_valid", "; ".join(errs))
    with api.lock:
        api.claims[(obj["metadata"]["namespace"], obj["metadata"]["name"])] = obj


def answer(resp, uid):
    r = resp.claims[uid]
    return r.error, [(d.device_name, list(d.cdi_device_ids), list(d.request_names), d.pool_name) for d in r.devices]


# ---------------------------------------------------------------- the lane
nodes = {"node-a": Node("node-a", {0: (0, 4), 1: (1, 4)}),
         "node-b": Node("node-b", {0: (0, 2)}),
         "node-c": Node("node-c", {n: (n % 2, 4) for n in range(12)})}
t_start = time.monotonic()
try:
    say("== the validator refuses what the schema does not allow (negative controls)")
    good = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "x"},
            "spec": {"driver": DRIVER, "nodeName": "n", "pool": {"name": "n", "generation": 1,
                                                                   "resourceSliceCount": 1}, "devices": []}}
    check(schema_errors("ResourceSlice", good) == [], "validator_accepts_a_minimal_slice")
    bad = json.loads(json.dumps(good))
    bad["spec"]["devices"] = [{"name": "d0", "attributes": {"core": {"int": 1}}, "capacityy": {}}]
    del bad["spec"]["pool"]["generation"]
    errs = schema_errors("ResourceSlice", bad)
    say(f"  slice with devices[0].capacityy and no pool.generation <- {errs}")
    check(any("/spec/devices/0/capacityy" in e for e in errs) and any("generation" in e for e in errs),
          "validator_names_unknown_and_missing_fields")

    say("== three plugins start, each publishes its pool")
    for n in nodes.values():
        n.start()
    for name, n in nodes.items():
        g = wait_for(lambda: pool(name), 10)
        check(g is not None, f"{name}_pool_published")
        if not g:
            continue
        devs = [d["name"] for s in g[1] for d in s["spec"]["devices"]]
        sets = sum(len(s["spec"].get("sharedCounters", [])) for s in g[1])
        say(f"  {name}: generation {g[0]}, {len(g[1])} slice(s), {len(devs)} devices, {sets} counter sets: "
            f"{', '.join(devs[:6])}{' ...' if len(devs) > 6 else ''}")
    with api.lock:
        say(f"  fake API server: {api.validated} objects validated, {len(api.refused)} refused")
        refused = list(api.refused)
    check(not refused, "every_published_slice_schema_valid", f"refused: {refused}")
    ga, gc = pool("node-a"), pool("node-c")
    if ga:
        s = ga[1][0]
        d0 = next(d for d in s["spec"]["devices"] if d["name"] == "nnq0-core1")
        w0 = next(d for d in s["spec"]["devices"] if d["name"] == "nnq0")
        say("  node-a nnq0-core1: " + json.dumps(d0, sort_keys=True))
        say("  node-a nnq0 (whole): consumes " + json.dumps(w0.get("consumesCounters"), sort_keys=True))
        check(d0["attributes"] == {"device": {"string": "nnq0"}, "kind": {"string": "core"}, "core": {"int": 1},
                                   "numaNode": {"int": 0}, "generation": {"string": "unknown"}},
              "core_attributes_device_kind_core_numa_generation")
        check(w0.get("consumesCounters") == [{"counterSet": "nnq0-cores", "counters": {
            f"core{c}": {"value": "1"} for c in range(4)}}], "whole_device_consumes_every_core_counter")
        check(len(ga[1]) == 1 and len(ga[1][0]["spec"]["devices"]) == 10, "node_a_one_slice_of_10_devices")
    # node-c: 12 devices, 12 counter sets: at most 8 a slice, so two slices (8 and 4 devices: 40 and 20 entries)
    check(gc is not None and [len(s["spec"]["sharedCounters"]) for s in sorted(
        gc[1], key=lambda s: s["metadata"]["name"])] == [8, 4] and sum(len(s["spec"]["devices"]) for s in gc[1])
        == 60, "node_c_split_into_two_slices_8_and_4_counter_sets")

    say("== the fake kubelets: registration")
    kubelets = {}
    for name, n in nodes.items():
        k = Kubelet(n)
        info = k.register()
        say(f"  {name}: GetInfo <- type={info.type} name={info.name} endpoint={info.endpoint} "
            f"supported_versions={list(info.supported_versions)}")
        check(info.type == "DRAPlugin" and info.name == DRIVER and list(info.supported_versions) == ["v1.DRAPlugin"]
              and os.path.exists(info.endpoint), f"{name}_registration_info")
        kubelets[name] = k

    say("== the allocator: 2 aligned cores on node-a, then node-a's nnq0 whole")
    alloc = Allocator()
    res, why = alloc.allocate("c1-uid", "node-a", "cores", lambda d: True)
    say(f"  claim cores-pair <- {[r['device'] for r in res] if res else why}")
    check(res is not None and [r["device"] for r in res] == ["nnq0-core0", "nnq0-core1"], "two_aligned_cores_allocated")
    put_claim(claim_object("ml", "cores-pair", "c1-uid", "cores", res or []))
    on_nnq0 = lambda d: d["attributes"]["device"]["string"] == "nnq0"  # noqa: E731
    res2, why2 = alloc.allocate("c2-uid", "node-a", "device", on_nnq0)
    say(f"  claim whole-nnq0 while nnq0-core0/1 are held <- {res2 if res2 else 'refused: ' + why2}")
    check(res2 is None and "counter nnq0-cores/core0 used up" in why2, "whole_device_refused_while_cores_held")
    res3, _ = alloc.allocate("c3-uid", "node-b", "device", lambda d: True)
    check(res3 == [{"request": "device", "driver": DRIVER, "pool": "node-b", "device": "nnq0"}],
          "node_b_whole_device_allocated")
    put_claim(claim_object("ml", "whole-b", "c3-uid", "device", res3 or []))

    say("== NodePrepareResources / NodeUnprepareResources on node-a, repeated")
    ka = kubelets["node-a"]
    c1 = ("ml", "c1-uid", "cores-pair")
    spec_path = f"{nodes['node-a'].cdi}/{DRIVER}-claim_c1-uid.json"
    first = answer(ka.prepare(c1), "c1-uid")
    say(f"  prepare cores-pair <- error={first[0]!r} devices={first[1]}")
    want = ("", [("nnq0-core0", [f"{DRIVER}/claim=c1-uid-nnq0-core0"], ["cores"], "node-a"),
                 ("nnq0-core1", [f"{DRIVER}/claim=c1-uid-nnq0-core1"], ["cores"], "node-a")])
    check(first == want, "prepare_gives_the_allocated_cores_and_cdi_ids")
    spec = json.load(open(spec_path)) if os.path.exists(spec_path) else {}
    errs = cdi_schema.errors(spec, os.path.basename(spec_path)) if spec else ["no spec"]
    say(f"  {os.path.basename(spec_path)}: {[d['name'] for d in spec.get('devices', [])]}: "
        f"{'valid' if not errs else errs}")
    check(not errs and [d["containerEdits"]["deviceNodes"][0]["path"] for d in spec["devices"]]
          == ["/dev/nnq0-core0", "/dev/nnq0-core1"], "claim_cdi_spec_valid_and_names_the_cores")
    gets = api.claim_gets
    again = answer(ka.prepare(c1), "c1-uid")
    check(again == want and api.claim_gets == gets, "prepare_again_same_answer_from_the_checkpoint")
    r = ka.unprepare(c1).claims["c1-uid"].error
    r2 = ka.unprepare(c1).claims["c1-uid"].error
    say(f"  unprepare, unprepare again <- {r!r}, {r2!r}; spec left: {os.path.exists(spec_path)}")
    check(r == "" and r2 == "" and not os.path.exists(spec_path), "unprepare_twice_ok_spec_removed")
    check(answer(ka.prepare(c1), "c1-uid") == want and os.path.exists(spec_path), "prepare_after_unprepare")

    say("== node-a's plugin killed (SIGKILL) and started again: the checkpoint")
    rc = nodes["node-a"].stop(signal.SIGKILL)
    g_before = pool("node-a")[0]
    nodes["node-a"].start()
    def reregister():
        try:
            return ka.register()
        except grpc.RpcError:
            return None  # the socket the killed run left, not yet replaced
    check(wait_for(reregister, 5) is not None, "registers_again_after_restart")
    gets = api.claim_gets
    after = answer(ka.prepare(c1), "c1-uid")
    say(f"  after restart: prepare cores-pair <- error={after[0]!r} devices={[d[0] for d in after[1]]}, "
        f"claim read from the API server {api.claim_gets - gets} time(s)")
    check(after == want and api.claim_gets == gets, "prepare_after_restart_from_the_checkpoint")
    g_after = wait_for(lambda: (pool("node-a") or (0,))[0] > g_before and pool("node-a"), 5)
    say(f"  node-a republished: generation {g_before} -> {g_after[0] if g_after else '?'}")
    def stale_a():
        with api.lock:
            return [n for n, s in api.slices.items() if s["spec"]["pool"]["name"] == "node-a"
                    and s["spec"]["pool"]["generation"] < g_after[0]]
    check(g_after is not None and wait_for(lambda: not stale_a(), 2), "restart_republishes_newer_generation_old_deleted",
          f"left: {stale_a()}; all: {[(n, s['spec']['pool']['generation']) for n, s in api.slices.items()]}")
    r = ka.unprepare(c1).claims["c1-uid"].error
    r2 = ka.unprepare(c1).claims["c1-uid"].error
    check(r == "" and r2 == "" and not os.path.exists(spec_path), "unprepare_after_restart_twice_ok")
    alloc.release("c1-uid")
    res2, why2 = alloc.allocate("c2-uid", "node-a", "device", on_nnq0)
    say(f"  claim whole-nnq0 once cores-pair is released <- {[r['device'] for r in res2] if res2 else why2}")
    check(res2 is not None and res2[0]["device"] == "nnq0", "whole_device_allocated_once_cores_released")
    put_claim(claim_object("ml", "whole-nnq0", "c2-uid", "device", res2 or []))
    got = answer(ka.prepare(("ml", "c2-uid", "whole-nnq0")), "c2-uid")
    check(got[0] == "" and [d[0] for d in got[1]] == ["nnq0"], "whole_device_prepared")

    say("== node-b: prepare its whole device")
    got = answer(kubelets["node-b"].prepare(("ml", "c3-uid", "whole-b")), "c3-uid")
    check(got[0] == "" and [d[0] for d in got[1]] == ["nnq0"], "node_b_whole_device_prepared")

    say("== hostile claims on node-a: refused, naming the field; the plugin stays up")
    base = lambda uid, name, results: claim_object("ml", name, uid, "cores", results)  # noqa: E731
    hostile = [
        ("unknown device", base("h1", "h-unknown", [{"request": "cores", "driver": DRIVER, "pool": "node-a",
                                                      "device": "nnq9-core0"}]),
         "status.allocation.devices.results[0].device: 'nnq9-core0' is no device of pool 'node-a'"),
        ("another node's device", base("h2", "h-other", [{"request": "cores", "driver": DRIVER, "pool": "node-b",
                                                           "device": "nnq0-core0"}]),
         "status.allocation.devices.results[0].pool: 'node-b' is another node's pool"),
        ("results not a list", dict(base("h3", "h-notlist", []), status={"allocation": {"devices": {
            "results": {"device": "nnq1"}}}}), "status.allocation.devices.results: not a list"),
        ("device not a string", base("h4", "h-int", [{"request": "cores", "driver": DRIVER, "pool": "node-a",
                                                       "device": 7}]),
         "status.allocation.devices.results[0].device: missing or not a non-empty string"),
        ("not allocated", dict(base("h5", "h-unalloc", []), status={}),
         "status.allocation.devices.results: missing"),
        ("another claim's uid", base("h6-other", "h-uid", []), "metadata.uid"),
        ("a core of the whole nnq0 prepared for whole-nnq0", base("h7", "h-overlap", [{
            "request": "cores", "driver": DRIVER, "pool": "node-a", "device": "nnq0-core3"}]),
         "shares nnq0 (claim c2-uid)"),
    ]
    for i, (what, obj, want_err) in enumerate(hostile):
        put_claim(obj, validate=False)
        uid = f"h{i + 1}"
        err, devs = answer(ka.prepare(("ml", uid, obj["metadata"]["name"])), uid)
        say(f"  {what} <- {err}")
        check(want_err in err and not devs, f"hostile_{obj['metadata']['name']}_refused_naming_the_field", err)
    for what, claim, want_err in (("a path as uid", ("ml", "../../etc", "x"), "claims[0].uid"),
                                  ("no such claim", ("ml", "nope", "nope"), "404")):
        err, devs = answer(ka.prepare(claim), claim[1])
        say(f"  {what} <- {err}")
        check(want_err in err and not devs, f"hostile_{what.replace(' ', '_')}_refused", err)
    check(nodes["node-a"].proc.poll() is None, "plugin_alive_after_hostile_claims")

    say("== health: node-b's nnq0 goes offline: republished without it")
    g_b = pool("node-b")[0]
    write(f"{nodes['node-b'].sys}/class/nnq/nnq0/state", "offline\n")
    g = wait_for(lambda: (pool("node-b") or (0,))[0] > g_b and pool("node-b"), 5)
    check(g is not None and all(not s["spec"]["devices"] for s in g[1]), "offline_device_unpublished")
    with api.lock:
        check(not api.refused, "every_slice_ever_sent_schema_valid", f"refused: {api.refused}")
        say(f"  fake API server: {api.validated} objects validated in all, {len(api.refused)} refused")
finally:
    for name, n in nodes.items():
        if n.proc and n.proc.poll() is None:
            rc = n.stop()
            check(rc == 0, f"{name}_exits_0_on_sigterm", f"rc {rc}")
            check(not os.path.exists(n.reg_sock), f"{name}_registration_socket_removed")
    server.shutdown()
    validator.stdin.close()
    validator.wait(5)
    if failures:
        for n in nodes.values():
            if os.path.exists(n.log):
                say(f"--- {n.name} plugin log (tail)")
                say("".join(open(n.log).readlines()[-40:]))
    shutil.rmtree(tmp, ignore_errors=True)

say(f"DRA lane: {(time.monotonic() - t_start):.1f} s")
print(f"1..{n_checks}")
sys.exit(1 if failures else 0)
