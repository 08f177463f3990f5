// SPDX-License-Identifier: MIT
// Validates the objects `kubectl kustomize deploy/base` rendered
// (scripts/check-manifests.sh, docs/k8s.md#manifest-checks) and prints TAP.
//
// Usage: node validate-manifests.js RENDERED.yaml KUSTOMIZATION_DIR REPO_TOP
//
// Each built-in object is validated by the kubernetes-models package's own
// validator (the Kubernetes OpenAPI schema of its release, compiled); that
// schema allows fields it does not know, as the OpenAPI document does, so
// each field is also checked to be one the schema types (an unknown field
// is one whose value the validator accepts whatever its type). The
// NodeFeatureRule is a CRD no packaged schema covers: its fields are checked
// here against NFD's v1alpha1 CRD by hand. Then the one-place knobs (image,
// resource prefix) and the DaemonSet's hardening.
"use strict";
const fs = require("fs");
const path = require("path");
const yaml = require("js-yaml");

const [rendered, kdir, top] = process.argv.slice(2);
let n = 0;
let failures = 0;
function ok(cond, name, why) {
  n++;
  if (cond) {
    console.log(`ok ${n} k8s.manifests.${name}`);
  } else {
    failures++;
    console.log(`not ok ${n} k8s.manifests.${name}`);
    for (const line of String(why).split("\n")) console.log(`# ${line}`);
  }
}

const MODELS = {
  "v1/ServiceAccount": "kubernetes-models/v1/ServiceAccount",
  "v1/ConfigMap": "kubernetes-models/v1/ConfigMap",
  "apps/v1/DaemonSet": "kubernetes-models/apps/v1/DaemonSet",
};

// schemaErrors(Model, obj), unknownFields(Model, obj): schema-check.js
const { schemaErrors, unknownFields } = require("./schema-check.js");

// NodeFeatureRule nfd.k8s-sigs.io/v1alpha1, the fields of NFD's CRD
// (deployment/base/nfd-crds in NFD's repository) this rule may use.
const NFD_OPS = ["In", "NotIn", "InRegexp", "Exists", "DoesNotExist", "Gt", "Lt", "GtLt", "IsTrue", "IsFalse"];
function nfdRuleErrors(o) {
  const e = [];
  const only = (v, p, keys) => {
    if (!v || typeof v !== "object" || Array.isArray(v)) return e.push(`${p}: must be an object`), false;
    for (const k of Object.keys(v)) if (!keys.includes(k)) e.push(`${p}/${k}: unknown field`);
    return true;
  };
  const strMap = (v, p) => {
    if (v === undefined) return;
    if (!v || typeof v !== "object" || Array.isArray(v)) return e.push(`${p}: must be a map of strings`);
    for (const [k, x] of Object.entries(v)) if (typeof x !== "string") e.push(`${p}/${k}: must be a string`);
  };
  const terms = (v, p) => {
    if (!Array.isArray(v) || v.length === 0) return e.push(`${p}: must be a non-empty list`);
    v.forEach((t, i) => {
      const q = `${p}/${i}`;
      if (!only(t, q, ["feature", "matchExpressions"])) return;
      if (typeof t.feature !== "string" || !t.feature) e.push(`${q}/feature: required string`);
      if (t.matchExpressions === undefined) return e.push(`${q}/matchExpressions: required`);
      if (!only(t.matchExpressions, `${q}/matchExpressions`, Object.keys(t.matchExpressions))) return;
      for (const [k, x] of Object.entries(t.matchExpressions)) {
        const r = `${q}/matchExpressions/${k}`;
        if (!only(x, r, ["op", "value"])) continue;
        if (!NFD_OPS.includes(x.op)) e.push(`${r}/op: '${x.op}' is not one of ${NFD_OPS.join(", ")}`);
        if (x.value !== undefined && (!Array.isArray(x.value) || x.value.some((s) => typeof s !== "string")))
          e.push(`${r}/value: must be a list of strings`);
      }
    });
  };
  only(o, "", ["apiVersion", "kind", "metadata", "spec"]);
  if (o.apiVersion !== "nfd.k8s-sigs.io/v1alpha1") e.push(`/apiVersion: '${o.apiVersion}', want nfd.k8s-sigs.io/v1alpha1`);
  if (!o.metadata || typeof o.metadata.name !== "string" || !o.metadata.name) e.push("/metadata/name: required");
  if (o.metadata && o.metadata.namespace !== undefined) e.push("/metadata/namespace: NodeFeatureRule is cluster-scoped");
  if (!only(o.spec, "/spec", ["rules"])) return e;
  if (!Array.isArray(o.spec.rules) || o.spec.rules.length === 0) return e.concat("/spec/rules: must be a non-empty list");
  const RULE = ["name", "labels", "labelsTemplate", "annotations", "vars", "varsTemplate", "taints",
    "extendedResources", "matchFeatures", "matchAny"];
  o.spec.rules.forEach((r, i) => {
    const p = `/spec/rules/${i}`;
    if (!only(r, p, RULE)) return;
    if (typeof r.name !== "string" || !r.name) e.push(`${p}/name: required string`);
    for (const k of ["labels", "annotations", "vars", "extendedResources"]) strMap(r[k], `${p}/${k}`);
    for (const k of ["labelsTemplate", "varsTemplate"])
      if (r[k] !== undefined && typeof r[k] !== "string") e.push(`${p}/${k}: must be a string`);
    if (r.matchFeatures === undefined && r.matchAny === undefined) e.push(`${p}: needs matchFeatures or matchAny`);
    if (r.matchFeatures !== undefined) terms(r.matchFeatures, `${p}/matchFeatures`);
    if (r.matchAny !== undefined) {
      if (!Array.isArray(r.matchAny)) e.push(`${p}/matchAny: must be a list`);
      else r.matchAny.forEach((m, j) => only(m, `${p}/matchAny/${j}`, ["matchFeatures"]) &&
        terms(m.matchFeatures, `${p}/matchAny/${j}/matchFeatures`));
    }
  });
  return e;
}

// 1. the rendering
let objs = [];
let loadErr = "";
try {
  objs = yaml.loadAll(fs.readFileSync(rendered, "utf8")).filter((o) => o);
} catch (e) {
  loadErr = e.message;
}
ok(!loadErr && objs.length > 0, "kustomize_renders", loadErr || `${rendered}: no object`);
const leftover = fs.readFileSync(rendered, "utf8").match(/\$\([A-Z_]+\)/g);
ok(!leftover, "vars_substituted", `kustomize left ${leftover} unsubstituted (a var reference kustomize does not know)`);

// 2. one line per object
for (const o of objs) {
  const id = `${o.kind}/${o.metadata && o.metadata.name}`;
  if (o.kind === "NodeFeatureRule") {
    const e = nfdRuleErrors(o);
    ok(e.length === 0, id, e.join("\n"));
    continue;
  }
  const mod = MODELS[`${o.apiVersion}/${o.kind}`];
  if (!mod) {
    ok(false, id, `no schema for ${o.apiVersion} ${o.kind}: add it to MODELS in deploy/tests/validate-manifests.js`);
    continue;
  }
  const Model = Object.values(require(mod))[0];
  const errs = schemaErrors(Model, o).map((e) => `${e.instancePath || "/"}: ${e.message}`);
  const unknown = unknownFields(Model, o).map((p) => `${p}: unknown field (not in the ${o.kind} schema)`);
  ok(errs.length + unknown.length === 0, id, errs.concat(unknown).join("\n"));
}

// 3. one place for the image and the prefix
const kust = yaml.load(fs.readFileSync(path.join(kdir, "kustomization.yaml"), "utf8")) || {};
const find = (kind) => objs.find((o) => o.kind === kind) || {};
const ds = find("DaemonSet");
const pod = (ds.spec && ds.spec.template && ds.spec.template.spec) || {};
const c = (pod.containers || [])[0] || {};
const img = (kust.images || []).find((i) => i.name === "neuron-device-plugin") || {};
const wantImage = `${img.newName || img.name}:${img.newTag}`;
ok(c.image === wantImage, "image_from_kustomization",
  `container image '${c.image}', kustomization.yaml images: says '${wantImage}'`);

const lit = (((kust.configMapGenerator || [])[0] || {}).literals || [])
  .map((l) => l.split("=")).find(([k]) => k === "NEURON_RESOURCE_PREFIX");
const prefix = lit ? lit.slice(1).join("=") : undefined;
const nfr = find("NodeFeatureRule");
const rule = ((nfr.spec && nfr.spec.rules) || [])[0] || {};
const keys = (((pod.affinity || {}).nodeAffinity || {}).requiredDuringSchedulingIgnoredDuringExecution || {})
  .nodeSelectorTerms || [];
const affKey = ((((keys[0] || {}).matchExpressions) || [])[0] || {}).key;
const uses = {
  "ConfigMap data NEURON_RESOURCE_PREFIX": (find("ConfigMap").data || {}).NEURON_RESOURCE_PREFIX,
  "container --resource-prefix": ((c.args || []).find((a) => a.startsWith("--resource-prefix=")) || "").split("=")[1],
  "node affinity key": (affKey || "").replace(/\/present$/, ""),
  "NodeFeatureRule label": (rule.labelsTemplate || "").replace(/\/present=true$/, ""),
};
const off = Object.entries(uses).filter(([, v]) => v !== prefix).map(([k, v]) => `${k}: '${v}'`);
// the literal itself appears in no other file of the base
const elsewhere = fs.readdirSync(kdir).filter((f) => f !== "kustomization.yaml" && /\.ya?ml$/.test(f))
  .filter((f) => prefix && fs.readFileSync(path.join(kdir, f), "utf8").includes(prefix));
ok(prefix && off.length === 0 && elsewhere.length === 0, "prefix_from_kustomization",
  (prefix ? `kustomization.yaml sets '${prefix}'` : "kustomization.yaml: no NEURON_RESOURCE_PREFIX literal") +
  (off.length ? `; rendered otherwise: ${off.join(", ")}` : "") +
  (elsewhere.length ? `; also written in ${elsewhere.join(", ")}` : ""));

// 4. the NFD rule matches the device's exact PCI identity, from the headers
const hdr = (f, name) => {
  const m = fs.readFileSync(path.join(top, f), "utf8").match(new RegExp(`#define\\s+${name}\\s+0x([0-9a-fA-F]+)`));
  return m ? m[1].toLowerCase().padStart(4, "0") : undefined;
};
const want = {
  vendor: hdr("include/uapi/linux/neuron_record.h", "NEURON_PCI_VENDOR_ID"),
  device: hdr("include/uapi/linux/neuron_record.h", "NEURON_PCI_DEVICE_ID"),
  class: hdr("include/neuron/regs.h", "NEURON_PCI_CLASS"),
};
const pci = ((rule.matchFeatures || []).find((t) => t.feature === "pci.device") || {}).matchExpressions || {};
const pciOff = Object.entries(want).filter(([k, v]) =>
  !pci[k] || pci[k].op !== "In" || JSON.stringify(pci[k].value) !== JSON.stringify([v]))
  .map(([k, v]) => `${k}: want {op: In, value: ["${v}"]}, have ${JSON.stringify(pci[k])}`);
ok(pciOff.length === 0, "nfd_rule_matches_pci_id", pciOff.join("\n"));

// 5. the DaemonSet's hardening, one line each
const sc = c.securityContext || {};
const seccomp = (sc.seccompProfile || (pod.securityContext || {}).seccompProfile || {}).type;
const lp = c.livenessProbe || {};
const harden = [
  ["no_service_account_token", pod.automountServiceAccountToken === false,
    "spec.template.spec.automountServiceAccountToken must be false (the plugin calls no Kubernetes API)"],
  ["seccomp_runtime_default", seccomp === "RuntimeDefault", `seccompProfile.type is '${seccomp}', want RuntimeDefault`],
  ["no_privilege_escalation", sc.allowPrivilegeEscalation === false && !sc.privileged,
    "securityContext.allowPrivilegeEscalation must be false and privileged unset"],
  ["read_only_root", sc.readOnlyRootFilesystem === true, "securityContext.readOnlyRootFilesystem must be true"],
  ["capabilities_dropped", JSON.stringify((sc.capabilities || {}).drop) === '["ALL"]' && !(sc.capabilities || {}).add,
    `securityContext.capabilities is ${JSON.stringify(sc.capabilities)}, want drop [ALL] and no add`],
  ["resources", !!(c.resources && c.resources.requests && c.resources.requests.cpu && c.resources.requests.memory &&
    c.resources.limits && c.resources.limits.memory), "resources needs requests.cpu, requests.memory, limits.memory"],
  ["liveness_probe", JSON.stringify((lp.exec || {}).command) === '["/usr/sbin/neuron-device-plugin","--probe"]',
    `livenessProbe is ${JSON.stringify(lp)}, want exec of neuron-device-plugin --probe`],
  ["priority_class", pod.priorityClassName === "system-node-critical",
    `priorityClassName is '${pod.priorityClassName}', want system-node-critical`],
  ["tolerations", (pod.tolerations || []).some((t) => t.key === "CriticalAddonsOnly" && t.operator === "Exists") &&
    (pod.tolerations || []).some((t) => !t.key && t.operator === "Exists" && t.effect === "NoSchedule"),
    "tolerations need CriticalAddonsOnly and every NoSchedule taint"],
  ["node_affinity_on_nfd_label", affKey === `${prefix}/present`,
    `node affinity key is '${affKey}', want the NodeFeatureRule's label ${prefix}/present`],
];
for (const [name, cond, why] of harden) ok(cond, `daemonset.${name}`, why);

// the plan is the caller's (scripts/check-manifests.sh adds its own line)
process.exit(failures ? 1 : 0);
