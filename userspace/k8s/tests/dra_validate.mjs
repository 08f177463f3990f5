// SPDX-License-Identifier: MIT
// The DRA lane's schema validator (docs/k8s.md#dra-tests): the fake API
// server (dra_lane.py) writes one JSON object a line on stdin,
// {"model": "ResourceSlice", "object": {...}}; this answers each with one
// line {"errors": ["<JSON pointer>: <what>", ...]}: kubernetes-models'
// resource.k8s.io/v1 schema (the Kubernetes OpenAPI document of its
// release, compiled) and the fields that schema does not know
// (deploy/tests/schema-check.js, shared with the manifest checks).
//
// Usage: node dra_validate.mjs NODE_MODULES_DIR REPO_TOP
import { createRequire } from "module";
import path from "path";
import readline from "readline";
import { pathToFileURL } from "url";

const [mods, top] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const { schemaErrors, unknownFields } = require(path.join(top, "deploy/tests/schema-check.js"));
// kubernetes-models 5 is ES modules only, and ESM resolution ignores
// NODE_PATH: each model is imported by its file's path
const model = async (group, kind) =>
  (await import(pathToFileURL(path.join(mods, "kubernetes-models", group, `${kind}.js`)).href))[kind];
const MODELS = {
  ResourceSlice: await model("resource.k8s.io/v1", "ResourceSlice"),
  ResourceClaim: await model("resource.k8s.io/v1", "ResourceClaim"),
};

for await (const line of readline.createInterface({ input: process.stdin })) {
  let errors;
  try {
    const { model: name, object } = JSON.parse(line);
    const Model = MODELS[name];
    if (!Model) {
      errors = [`no model ${name}`];
    } else {
      errors = schemaErrors(Model, object).map((e) => `${e.instancePath || "/"}: ${e.message}`);
      errors.push(...unknownFields(Model, object).map((p) => `${p}: unknown field`));
    }
  } catch (e) {
    errors = [`validator: ${e.message}`];
  }
  process.stdout.write(JSON.stringify({ errors }) + "\n");
}
