// SPDX-License-Identifier: MIT
// The schema checks shared by validate-manifests.js (the deploy/base
// objects) and userspace/k8s/tests/dra_validate.mjs (the DRA lane's fake
// API server): a kubernetes-models Model's own errors, and the fields it
// does not know. The Model comes from the caller, so each uses the
// kubernetes-models release it pins.
"use strict";

// The schema errors of obj (kubernetes-models' validate() throws them).
function schemaErrors(Model, obj) {
  try {
    new Model(obj).validate();
    return [];
  } catch (e) {
    if (!Array.isArray(e.errors)) throw e;
    return e.errors;
  }
}

// Every field of obj: its JSON pointer ("/spec/template/..."), its parent.
function* fields(v, p = "") {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) yield* fields(v[i], `${p}/${i}`);
  } else if (v && typeof v === "object") {
    for (const k of Object.keys(v)) {
      const q = `${p}/${k.replace(/~/g, "~0").replace(/\//g, "~1")}`; // a JSON pointer, as the errors name it
      yield { path: q, parent: v, key: k };
      yield* fields(v[k], q);
    }
  }
}

// Fields the schema does not know: replaced by a fraction and by an array,
// a field the schema types fails one of them at its own path (string,
// integer, boolean, object and array fields all do); an unknown one fails
// neither.
function unknownFields(Model, obj) {
  const out = [];
  const copy = JSON.parse(JSON.stringify(obj));
  for (const f of fields(copy)) {
    if (f.path === "/apiVersion" || f.path === "/kind") continue;
    const saved = f.parent[f.key];
    let seen = false;
    for (const probe of [0.5, []]) {
      f.parent[f.key] = probe;
      if (schemaErrors(Model, copy).some((e) => e.instancePath === f.path)) seen = true;
      if (seen) break;
    }
    f.parent[f.key] = saved;
    if (!seen) out.push(f.path);
  }
  return out;
}

module.exports = { schemaErrors, unknownFields };
