// The mcpgen web console's script (runtime/console/static). Plain JavaScript, no build step,
// no library. Device-supplied text (names, descriptions, results, events) is only ever set
// as textContent, never parsed as HTML. Arguments are checked by the server with the
// runtime's own validator (POST api/check as you type, and again by api/call): one set of
// rules, the bindings', so the page and the device cannot disagree.
"use strict";

// Bounds of what the page keeps and shows (the server keeps the same: console.FEED,
// registry.EVENTS, registry.HISTORY, registry.LATENCIES). A device may send events
// faster than any page can draw them: each message only updates `state` and marks the
// parts it changed; the marked parts are drawn once per animation frame, so 20,000 events
// cost 20,000 array pushes and one drawing of at most these many rows.
const LIMITS = { feed: 200, events: 100, history: 100, latencies: 500 };

const state = {
  devices: new Map(),   // id -> summary row
  selected: null,       // device id shown in the detail panel
  detail: null,         // that device's detail (tools, history, events, latencies)
  feed: [],             // recent events of every device, newest first
  resources: null,      // that device's resources, templates and watched URIs
  reading: null,        // the read the resource viewer shows: {request, uri, updates}
};

// ---------------------------------------------------------------- small helpers

function keepLast(list, n) {
  if (list.length > n) list.splice(0, list.length - n);
}

const dirty = new Set();  // parts of the page to draw in the next animation frame
let frameRequested = false;
const drawn = { frames: 0 };  // how many frames drew something (tests read it)

function schedule(...parts) {
  for (const part of parts) dirty.add(part);
  if (frameRequested) return;
  frameRequested = true;
  requestAnimationFrame(drawDirty);
}

function drawDirty() {
  frameRequested = false;
  const parts = new Set(dirty);
  dirty.clear();
  drawn.frames += 1;
  if (parts.has("devices")) renderDevices();
  if (parts.has("feed")) renderFeed();
  if (state.detail) {
    if (parts.has("events")) renderDeviceEvents();
    if (parts.has("history")) renderHistory();
    if (parts.has("meta")) renderMeta();
    if (parts.has("plot")) renderPlot();
  }
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("data-")) node.setAttribute(key, value);
    else if (key in node) node[key] = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
  return node;
}

function fmtMs(ms) {
  if (ms === null || ms === undefined) return "–";
  return ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0);
}

function fmtTime(epochMs) {
  return new Date(epochMs).toLocaleTimeString([], { hour12: false });
}

function fmtSince(epochMs) {
  const seconds = Math.max(0, Math.round((Date.now() - epochMs) / 1000));
  const ago = seconds < 60 ? `${seconds} s` : seconds < 3600 ? `${Math.floor(seconds / 60)} min`
    : `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
  return `${fmtTime(epochMs)} (${ago})`;
}

function compact(value) {
  try { return JSON.stringify(value); } catch (e) { return String(value); }
}

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  };
  const response = await fetch(path, { credentials: "same-origin", ...init });
  let data = null;
  try { data = await response.json(); } catch (e) { data = null; }
  return { status: response.status, data };
}

// ---------------------------------------------------------------- the device list

function renderDevices() {
  const body = document.querySelector("#devices tbody");
  const rows = [];
  for (const d of state.devices.values()) rows.push(deviceRow(d));
  body.replaceChildren(...rows);
  const connected = [...state.devices.values()].filter((d) => d.connected).length;
  document.getElementById("device-count").textContent =
    `${connected} connected` + (state.devices.size > connected ? `, ${state.devices.size - connected} gone` : "");
  document.getElementById("no-devices").hidden = state.devices.size > 0;
}

function deviceRow(d) {
  const compat = d.compatibility || { status: "unchecked", label: "?", detail: "" };
  const since = d.connected
    ? el("span", { class: "state-connected", text: fmtSince(d.connectedSince), "data-since": d.connectedSince })
    : el("span", { class: "state-disconnected", text: `disconnected ${fmtTime(d.disconnectedAt || Date.now())}` });
  const row = el("tr", { "data-device-id": d.id, class: (d.connected ? "" : "gone ") + (d.id === state.selected ? "selected" : "") },
    el("td", { class: "mono", text: d.id }),
    el("td", { text: d.name }),
    el("td", { text: d.version }),
    el("td", { class: "mono", text: d.fingerprint || "–" }),
    el("td", {}, el("span", { class: `badge compat-${compat.status}`, title: compat.detail, text: compat.label })),
    el("td", { text: d.transport }),
    el("td", {}, since),
    el("td", { class: "num calls", text: d.calls }),
    el("td", { class: "num errors", text: d.errors }),
    el("td", { class: "num", text: fmtMs(d.p50) }),
    el("td", { class: "num", text: fmtMs(d.p99) }),
  );
  row.addEventListener("click", () => select(d.id));
  return row;
}

// ---------------------------------------------------------------- one device

async function select(id) {
  state.selected = id;
  history.replaceState(null, "", `#device=${encodeURIComponent(id)}`);
  renderDevices();
  const { status, data } = await api(`api/device?id=${encodeURIComponent(id)}`);
  if (state.selected !== id) return;  // another device was picked meanwhile
  if (status !== 200) {
    state.detail = null;
    document.getElementById("detail").hidden = true;
    return;
  }
  const changed = !state.detail || state.detail.id !== id;
  keepLast(data.events, LIMITS.events);
  keepLast(data.history, LIMITS.history);
  keepLast(data.latencies, LIMITS.latencies);
  state.detail = data;
  renderDetail();
  loadResources(id, changed);
}

function renderDetail() {
  const d = state.detail;
  const section = document.getElementById("detail");
  if (!d) { section.hidden = true; return; }
  section.hidden = false;
  section.dataset.deviceId = d.id;
  document.getElementById("detail-title").textContent = `${d.id}` + (d.name ? ` · ${d.name} ${d.version}` : "");
  renderMeta();
  const hidden = document.getElementById("hidden-tools");
  hidden.textContent = d.hiddenTools
    ? `${d.hiddenTools} user-only tool(s) hidden: start the console with --user-tools to show them.` : "";
  document.getElementById("tool-forms").replaceChildren(...d.toolList.map(safeToolForm));
  renderHistory();
  renderDeviceEvents();
  renderPlot();
}

function renderMeta() {
  const d = state.detail;
  const summary = state.devices.get(d.id) || d;
  const compat = summary.compatibility || {};
  const items = [
    ["status", summary.connected ? "connected" : "disconnected"],
    ["transport", summary.transport],
    ["fingerprint", summary.fingerprint || "–"],
    ["spec", `${compat.label || "?"}${compat.detail ? ": " + compat.detail : ""}`],
    ["protocol", d.protocolVersion || "–"],
    ["sessions", summary.sessions],
    ["calls", summary.calls],
    ["errors", summary.errors],
    ["p50", `${fmtMs(summary.p50)} ms`],
    ["p99", `${fmtMs(summary.p99)} ms`],
  ];
  const meta = document.getElementById("detail-meta");
  meta.replaceChildren(...items.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: v, "data-meta": k })]));
}

// ---------------------------------------------------------------- tools as forms

// A device reports its own schemas, and nothing makes them sane: `required: 5`,
// `maxLength: -1` or `properties: "x"` must not take the panel down (issue 40). Each
// keyword the form uses is taken only when its value has the type the form needs; the
// others are listed as unsupported, with the raw schema, and the field falls back to JSON.
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const isCount = (v) => Number.isInteger(v) && v >= 0;
const isFiniteNumber = (v) => typeof v === "number" && Number.isFinite(v);
const isTypeName = (v) => typeof v === "string" || (Array.isArray(v) && v.every((t) => typeof t === "string"));
const KEYWORD_CHECKS = {
  type: [isTypeName, "a type name or a list of them"],
  enum: [Array.isArray, "a list"],
  minimum: [isFiniteNumber, "a number"],
  maximum: [isFiniteNumber, "a number"],
  exclusiveMinimum: [isFiniteNumber, "a number"],
  exclusiveMaximum: [isFiniteNumber, "a number"],
  minLength: [isCount, "a whole number >= 0"],
  maxLength: [isCount, "a whole number >= 0"],
  pattern: [(v) => typeof v === "string", "a string"],
  description: [(v) => typeof v === "string", "a string"],
};
const RAW_LIMIT = 4000;  // characters of a raw schema shown

function shortJson(value, limit) {
  const text = compact(value) ?? String(value);
  return text.length > limit ? `${text.slice(0, limit)}… (${text.length} characters)` : text;
}

// The keywords of one property schema the form can use, and what it could not.
function saneSchema(raw, where, problems) {
  if (!isObject(raw)) {
    problems.push(`${where}: the schema is ${shortJson(raw, 60)}, not an object`);
    return { unsupported: true };
  }
  const clean = {};
  for (const [key, value] of Object.entries(raw)) {
    const check = KEYWORD_CHECKS[key];
    if (!check) { if (key === "default") clean.default = value; continue; }
    if (check[0](value)) clean[key] = value;
    else problems.push(`${where}: ${key} is ${shortJson(value, 60)}, expected ${check[1]}`);
  }
  if (isCount(clean.minLength) && isCount(clean.maxLength) && clean.minLength > clean.maxLength) {
    problems.push(`${where}: minLength ${clean.minLength} is more than maxLength ${clean.maxLength}`);
    delete clean.minLength; delete clean.maxLength;
  }
  return clean;
}

// The tool's input schema as the form uses it: {properties, required, whole, problems};
// `whole` means the arguments are typed as one JSON object (no usable properties).
function saneInput(schema) {
  const problems = [];
  if (schema === undefined || schema === null) return { properties: [], required: new Set(), whole: false, problems };
  if (!isObject(schema)) {
    problems.push(`inputSchema is ${shortJson(schema, 60)}, not an object`);
    return { properties: [], required: new Set(), whole: true, problems };
  }
  let whole = false;
  let properties = [];
  if (schema.properties !== undefined) {
    if (isObject(schema.properties)) {
      properties = Object.entries(schema.properties).map(([name, sub]) => [name, saneSchema(sub, name, problems)]);
    } else {
      problems.push(`properties is ${shortJson(schema.properties, 60)}, expected an object`);
      whole = true;
    }
  }
  const required = new Set();
  if (schema.required !== undefined) {
    if (Array.isArray(schema.required)) {
      for (const name of schema.required) {
        if (typeof name === "string") required.add(name);
        else problems.push(`required lists ${shortJson(name, 60)}, not a property name`);
      }
    } else {
      problems.push(`required is ${shortJson(schema.required, 60)}, expected a list of property names`);
    }
  }
  return { properties, required, whole, problems };
}

function schemaProblems(tool, problems) {
  if (!problems.length) return null;
  return el("details", { class: "schema-problems", "data-problems": String(problems.length) },
    el("summary", { class: "field-error", text: `unsupported schema: ${problems.length} problem(s); those parts are shown raw` }),
    el("ul", {}, ...problems.slice(0, 50).map((p) => el("li", { text: p }))),
    el("pre", { class: "result raw-schema", text: shortJson(tool.inputSchema, RAW_LIMIT) }));
}

// A whole-arguments JSON field: for a tool whose properties cannot be read.
function argumentsField() {
  const id = `f-${Math.random().toString(36).slice(2)}`;
  const input = el("textarea", { id, name: "", rows: 3, placeholder: "{ }" });
  input.dataset.kind = "arguments";
  return el("div", { class: "field" },
    el("label", { htmlFor: id, text: "arguments (a JSON object)" }),
    input,
    el("div", { class: "field-error", "data-for": "" }));
}

// toolForm, and a form with only the raw schema if anything in it still throws.
function safeToolForm(tool) {
  try {
    return toolForm(tool);
  } catch (error) {
    const name = typeof tool?.name === "string" ? tool.name : shortJson(tool?.name, 80);
    const form = el("form", { class: "tool broken", "data-tool": name, noValidate: true },
      el("h4", {}, el("code", { text: name })),
      schemaProblems(tool || {}, [`the form could not be built: ${error && error.message}`]),
      argumentsField(),
      el("button", { type: "submit", text: "Call" }),
      el("div", { class: "outcome", role: "status" }));
    form.addEventListener("submit", (event) => { event.preventDefault(); call(form, name); });
    return form;
  }
}

function constraintHint(schema, required) {
  const parts = [];
  if (schema.type) parts.push(Array.isArray(schema.type) ? schema.type.join(" | ") : schema.type);
  const lo = schema.minimum ?? schema.exclusiveMinimum;
  const hi = schema.maximum ?? schema.exclusiveMaximum;
  if (lo !== undefined || hi !== undefined) parts.push(`${lo ?? "−∞"} … ${hi ?? "∞"}`);
  if (schema.maxLength !== undefined) parts.push(`at most ${schema.maxLength} characters`);
  if (schema.minLength !== undefined) parts.push(`at least ${schema.minLength} characters`);
  if (schema.pattern) parts.push(`pattern ${schema.pattern}`);
  if (schema.default !== undefined) parts.push(`default ${compact(schema.default)}`);
  if (required) parts.push("required");
  const text = parts.join(" · ");
  return schema.description ? `${schema.description} (${text})` : text;
}

// One input per property: numbers with their range, enums as selects, booleans as a
// checkbox (a select when "not given" must stay possible), text with its length,
// anything else as JSON. Defaults are filled in.
function fieldFor(name, schema, required, label) {
  const id = `f-${Math.random().toString(36).slice(2)}`;
  const type = Array.isArray(schema.type) ? null : schema.type;
  let input;
  let kind;
  if (schema.unsupported) {
    kind = "json";
    input = el("textarea", { id, name, rows: 2, placeholder: "JSON (unsupported schema)" });
  } else if (Array.isArray(schema.enum)) {
    kind = "enum";
    input = el("select", { id, name });
    if (!required || schema.default === undefined) input.append(el("option", { value: "", text: "—" }));
    for (const option of schema.enum) {
      const text = typeof option === "string" ? option : shortJson(option, 80);
      input.append(el("option", { value: JSON.stringify(option) ?? "null", text }));
    }
    if (schema.default !== undefined) input.value = JSON.stringify(schema.default);
  } else if (type === "integer" || type === "number") {
    kind = "number";
    input = el("input", { id, name, type: "number", step: type === "integer" ? "1" : "any" });
    if (schema.minimum !== undefined) input.min = String(schema.minimum);
    if (schema.maximum !== undefined) input.max = String(schema.maximum);
    if (schema.default !== undefined) input.value = String(schema.default);
  } else if (type === "boolean" && (required || schema.default !== undefined)) {
    kind = "checkbox";
    input = el("input", { id, name, type: "checkbox" });
    input.checked = schema.default === true;
  } else if (type === "boolean") {
    kind = "enum";
    input = el("select", { id, name },
      el("option", { value: "", text: "—" }), el("option", { value: "true", text: "true" }),
      el("option", { value: "false", text: "false" }));
  } else if (type === "string") {
    kind = "text";
    input = el("input", { id, name, type: "text", autocomplete: "off" });
    if (schema.maxLength !== undefined) input.maxLength = schema.maxLength;
    if (schema.default !== undefined) input.value = String(schema.default);
  } else {
    kind = "json";
    input = el("textarea", { id, name, rows: 2, placeholder: "JSON" });
    if (schema.default !== undefined) input.value = JSON.stringify(schema.default);
  }
  input.dataset.kind = kind;
  input.dataset.required = required ? "1" : "";
  return el("div", { class: "field" },
    el("label", { htmlFor: id, text: (label || name) + (required ? " *" : "") }),
    input,
    el("div", { class: "hint", text: constraintHint(schema, required) }),
    el("div", { class: "field-error", "data-for": name }),
  );
}

// The form's values as JSON arguments; a field left empty is not sent (so the schema's
// default applies, or "is required" is reported). Problems the server cannot see (text
// in a number field, JSON that does not parse) are reported here.
function collect(form) {
  const args = {};
  const problems = {};
  for (const input of form.querySelectorAll("[data-kind]")) {
    const name = input.name;
    const kind = input.dataset.kind;
    if (kind === "checkbox") { args[name] = input.checked; continue; }
    if (kind === "number") {
      if (input.validity.badInput) { problems[name] = `${name}: must be a number`; continue; }
      if (input.value !== "") args[name] = Number(input.value);
      continue;
    }
    if (kind === "enum") { if (input.value !== "") args[name] = JSON.parse(input.value); continue; }
    if (kind === "text") { if (input.value !== "" || input.dataset.required) args[name] = input.value; continue; }
    if (input.value.trim() === "") continue;
    if (kind === "arguments") {
      let whole;
      try { whole = JSON.parse(input.value); } catch (e) { problems[""] = `arguments: not valid JSON (${e.message})`; continue; }
      if (isObject(whole)) Object.assign(args, whole);
      else problems[""] = "arguments: must be a JSON object";
      continue;
    }
    try { args[name] = JSON.parse(input.value); } catch (e) { problems[name] = `${name}: not valid JSON (${e.message})`; }
  }
  return { args, problems };
}

function showProblems(form, problems) {
  for (const box of form.querySelectorAll(".field-error")) box.textContent = problems[box.dataset.for] || "";
  for (const input of form.querySelectorAll("[data-kind]")) input.classList.toggle("invalid", Boolean(problems[input.name]));
}

function problemsOf(error) {
  // a ValidationError names its argument ("" for the arguments object itself)
  return error && error.argument ? { [error.argument]: error.message } : {};
}

// What a tool asks of the person (spec from_human / confirm, as the server read it from the
// tool's _meta): {confirm, params: [[name, question], ...]} or null; never trusted as more.
function humanOf(tool) {
  const h = tool.human;
  if (!isObject(h)) return null;
  const params = Array.isArray(h.params)
    ? h.params.filter((p) => Array.isArray(p) && typeof p[0] === "string" && typeof p[1] === "string")
    : [];
  const confirm = typeof h.confirm === "string" && h.confirm ? h.confirm : null;
  return params.length || confirm ? { confirm, params } : null;
}

function toolForm(tool) {
  const input = saneInput(tool.inputSchema);
  const human = humanOf(tool);
  const asked = new Set(human ? human.params.map((p) => p[0]) : []);
  const form = el("form", { class: "tool", "data-tool": tool.name, noValidate: true },
    el("h4", {}, el("code", { text: tool.name }), tool.title ? ` · ${tool.title}` : "",
      tool.userOnly ? el("span", { class: "user-only small", text: "user-only" }) : null),
    tool.description ? el("p", { class: "description", text: String(tool.description) }) : null,
    // a schema pattern the server's RE2 cannot run: the tool is not callable (docs/security.md)
    tool.refused ? el("p", { class: "refused", text: `not callable: ${tool.refused}` }) : null,
    schemaProblems(tool, input.problems),
    human ? el("p", { class: "asks-person small", text: `asks you first${human.confirm ? `: ${human.confirm}` : ""}` }) : null,
    ...input.properties.filter(([name]) => !asked.has(name))
      .map(([name, sub]) => fieldFor(name, sub, input.required.has(name))),
    input.whole ? argumentsField() : null,
    el("button", { type: "submit", text: "Call", disabled: Boolean(tool.refused) }),
    el("div", { class: "outcome", role: "status" }),
  );
  if (human) {
    // the values the person gives in the dialog, never typed into the form
    const schemas = Object.fromEntries(input.properties.filter(([name]) => asked.has(name)));
    form.askPerson = () => askPerson(tool.name, human, schemas, input.required);
  }
  let timer = null;
  form.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => check(form, tool.name), 250);
  });
  form.addEventListener("submit", (event) => { event.preventDefault(); call(form, tool.name); });
  return form;
}

async function check(form, toolName) {
  const { args, problems } = collect(form);
  if (Object.keys(problems).length) { showProblems(form, problems); return; }
  const { data } = await api("api/check", { device: state.selected, tool: toolName, arguments: args });
  showProblems(form, data && !data.ok ? problemsOf(data.error) : {});
}

// The dialog that asks the person what a tool needs from them (the console's side of MCP
// elicitation): the confirmation text and one field per value asked, checked like the
// form's. Resolves {action: "accept", values} | {action: "decline"} | {action: "cancel"}
// (Escape cancels).
function askPerson(toolName, human, schemas, required) {
  return new Promise((resolve) => {
    const single = human.params.length === 1 && human.params[0][1];
    const message = human.confirm || single || `${toolName} needs a value from you`;
    const fields = human.params.map(([name, question]) =>
      fieldFor(name, schemas[name] || { unsupported: true }, required.has(name), question || name));
    const decline = el("button", { type: "button", class: "decline", text: "Decline" });
    const cancel = el("button", { type: "button", class: "cancel", text: "Cancel" });
    const body = el("form", { noValidate: true },
      el("h4", {}, el("code", { text: toolName })),
      el("p", { class: "ask-message", text: message }),
      ...fields,
      el("div", { class: "ask-buttons" }, el("button", { type: "submit", class: "accept", text: "Accept" }), decline, cancel));
    const dialog = el("dialog", { class: "ask", "data-tool": toolName }, body);
    const done = (answer) => { dialog.close(); dialog.remove(); resolve(answer); };
    body.addEventListener("submit", (event) => {
      event.preventDefault();
      const { args, problems } = collect(body);
      showProblems(body, problems);
      if (!Object.keys(problems).length) done({ action: "accept", values: args });
    });
    decline.addEventListener("click", () => done({ action: "decline" }));
    cancel.addEventListener("click", () => done({ action: "cancel" }));
    dialog.addEventListener("cancel", (event) => { event.preventDefault(); done({ action: "cancel" }); });
    document.body.append(dialog);
    dialog.showModal();
  });
}

async function call(form, toolName) {
  const outcome = form.querySelector(".outcome");
  const { args, problems } = collect(form);
  showProblems(form, problems);
  if (Object.keys(problems).length) {
    showOutcome(outcome, { outcome: "invalid", error: { type: "ValidationError", message: Object.values(problems)[0] } });
    return;
  }
  const button = form.querySelector("button");
  button.disabled = true;
  outcome.className = "outcome";
  outcome.replaceChildren(el("span", { class: "muted", text: form.askPerson ? "asking you…" : "calling…" }));
  form.dataset.calling = state.selected;  // progress messages of this call are drawn here
  try {
    const request = { device: state.selected, tool: toolName, arguments: args };
    if (form.askPerson) {
      const answer = await form.askPerson();
      if (answer.action !== "accept") {
        showOutcome(outcome, { outcome: answer.action === "decline" ? "declined" : "cancelled" });
        return;
      }
      request.human = answer.values;
      outcome.replaceChildren(el("span", { class: "muted", text: "calling…" }));
    }
    const { status, data } = await api("api/call", request);
    if (data && data.outcome) {
      showProblems(form, data.outcome === "invalid" ? problemsOf(data.error) : {});
      showOutcome(outcome, data);
    } else {
      const message = (data && data.error && data.error.message) || `HTTP ${status}`;
      showOutcome(outcome, { outcome: "error", error: { type: "HttpError", message } });
    }
  } finally {
    delete form.dataset.calling;
    button.disabled = false;
  }
}

// notifications/progress of a call this page made and waits for (docs/console.md): a bar
// (without a value while the device gives no total), the count and the device's message.
function showProgress(message) {
  const form = [...document.querySelectorAll("form.tool")].find(
    (f) => f.dataset.tool === message.tool && f.dataset.calling === message.id);
  if (!form) return;
  const outcome = form.querySelector(".outcome");
  const progress = Number(message.progress);
  const total = typeof message.total === "number" && message.total > 0 ? message.total : null;
  const bar = el("progress", { class: "call-progress" });
  if (total !== null) { bar.max = total; bar.value = Math.min(progress, total); }
  const count = total !== null ? `${fmtNumber(progress)} / ${fmtNumber(total)}` : fmtNumber(progress);
  const text = typeof message.message === "string" && message.message ? ` · ${message.message}` : "";
  outcome.className = "outcome";
  outcome.replaceChildren(bar, el("span", { class: "muted progress-text", text: ` ${count}${text}` }));
}

function fmtNumber(v) {
  return Number.isInteger(v) ? String(v) : v.toFixed(2);
}

function showOutcome(box, record) {
  const ok = record.outcome === "ok";
  box.className = `outcome ${ok ? "ok" : "error"}`;
  box.dataset.outcome = record.outcome;
  const took = record.ms !== null && record.ms !== undefined ? ` in ${fmtMs(record.ms)} ms` : "";
  let line;
  if (ok) line = `✓ result${took}`;
  else if (record.outcome === "invalid") line = `✗ ${record.error.type} (not sent): ${record.error.message}`;
  else if (record.outcome === "tool_error") line = `✗ tool error${took}`;
  else if (record.outcome === "declined" || record.outcome === "cancelled") line = `✗ ${record.outcome} by you: not sent`;
  else line = `✗ ${record.error ? `${record.error.type}: ${record.error.message}` : record.outcome}${took}`;
  box.replaceChildren(el("div", { class: "line", text: line }), ...resultNodes(record.result));
}

function resultNodes(result) {
  if (!result) return [];
  const nodes = [];
  const texts = new Set();  // JSON texts shown: structuredContent equal to one is not shown twice
  for (const item of result.content || []) {
    if (item && item.type === "text") {
      let text = item.text;
      try { text = JSON.stringify(JSON.parse(text), null, 2); } catch (e) { /* plain text */ }
      texts.add(text);
      nodes.push(el("pre", { class: "result", text }));
    } else if (item && item.type === "image" && /^image\/[a-z0-9.+-]+$/i.test(item.mimeType || "")) {
      nodes.push(el("img", { src: `data:${item.mimeType};base64,${item.data}`, alt: "image result" }));
    } else if (item && item.type === "audio" && /^audio\/[a-z0-9.+-]+$/i.test(item.mimeType || "") &&
               typeof item.data === "string") {
      // A player for the clip (the data stays a data: URL: nothing to revoke).
      nodes.push(el("div", { class: "audio-result" },
        el("div", { class: "muted small", text: `${item.mimeType} · ${Math.floor(item.data.length * 3 / 4)} bytes` }),
        el("audio", { controls: true, preload: "metadata", src: `data:${item.mimeType};base64,${item.data}` })));
    } else if (item && item.type === "resource" && item.resource && typeof item.resource === "object") {
      // An embedded resource: shown like the resource viewer shows a read.
      nodes.push(el("div", { class: "embedded-resource", "data-uri": String(item.resource.uri || "") },
        el("div", { class: "small mono", text: `resource ${item.resource.uri || ""}` }),
        ...contentNodes(item.resource, true)));
    } else {
      nodes.push(el("pre", { class: "result", text: JSON.stringify(item, null, 2) }));
    }
  }
  if (result.structuredContent !== undefined) {
    const text = JSON.stringify(result.structuredContent, null, 2);
    if (!texts.has(text)) nodes.push(el("pre", { class: "result structured", text }));
  }
  return nodes;
}

// ---------------------------------------------------------------- resources
// The device's resources (resources/list), its templates as forms (one text field per
// {variable}; the server expands them), and one viewer: text as text (JSON indented),
// binary as its size with a download link, and a preview for image/* types. A watched
// resource is re-read in the viewer when the device says it changed.

async function loadResources(id, fresh) {
  if (fresh) { state.resources = null; state.reading = null; renderResources(); showViewer(false); }
  const { status, data } = await api(`api/resources?id=${encodeURIComponent(id)}`);
  if (state.selected !== id) return;
  state.resources = status === 200 && data ? data : null;
  renderResources();
}

function renderResources() {
  const data = state.resources;
  const box = document.getElementById("resources");
  const empty = !data || (!data.resources.length && !data.templates.length);
  box.hidden = empty && !(data && data.error);
  document.getElementById("resource-note").textContent =
    data && data.error ? `listing the resources failed: ${data.error.type}: ${data.error.message}` : "";
  document.getElementById("resource-list").replaceChildren(...(data ? data.resources.map(resourceItem) : []));
  document.getElementById("template-forms").replaceChildren(...(data ? data.templates.map(templateForm) : []));
}

function resourceItem(r) {
  const watched = state.resources.subscriptions.includes(r.uri);
  const read = el("button", { type: "button", class: "read", text: "Read" });
  read.addEventListener("click", () => readResource({ uri: r.uri }));
  const watch = el("input", { type: "checkbox", class: "watch", checked: watched });
  watch.addEventListener("change", () => setWatch(r.uri, watch));
  return el("li", { "data-uri": r.uri },
    el("code", { text: r.uri }), " ", el("span", { class: "muted small", text: r.mimeType || "" }),
    r.name ? el("span", { class: "small", text: ` · ${r.name}` }) : null,
    r.description ? el("div", { class: "description", text: r.description }) : null,
    el("div", { class: "actions" }, read,
      el("label", { class: "small" }, watch, " watch (re-read on update)"),
      el("span", { class: "updated muted small" }),
      el("span", { class: "watch-error field-error" })));
}

function templateVariables(template) {
  return [...template.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1]);
}

function templateForm(t) {
  const fields = templateVariables(t.uriTemplate).map((name) => {
    const id = `f-${Math.random().toString(36).slice(2)}`;
    return el("div", { class: "field" },
      el("label", { htmlFor: id, text: `${name} *` }),
      el("input", { id, name, type: "text", autocomplete: "off" }));
  });
  const form = el("form", { class: "template", "data-template": t.uriTemplate, noValidate: true },
    el("h4", {}, el("code", { text: t.uriTemplate }), " ", el("span", { class: "muted small", text: t.mimeType || "" })),
    t.description ? el("p", { class: "description", text: t.description }) : null,
    ...fields,
    el("button", { type: "submit", text: "Read" }));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const values = {};
    for (const input of form.querySelectorAll("input")) values[input.name] = input.value;
    readResource({ template: t.uriTemplate, values });
  });
  return form;
}

async function setWatch(uri, box) {
  const item = box.closest("li");
  const problem = item.querySelector(".watch-error");
  problem.textContent = "";
  const { status, data } = await api("api/subscribe", { device: state.selected, uri, subscribe: box.checked });
  if (status !== 200 || !data || data.error) {
    box.checked = !box.checked;
    const error = data && data.error;
    problem.textContent = error ? `${error.type}${error.code ? " " + error.code : ""}: ${error.message}` : `HTTP ${status}`;
    return;
  }
  if (state.resources) state.resources.subscriptions = data.subscriptions;
}

function showViewer(visible) {
  document.getElementById("resource-view").hidden = !visible;
}

async function readResource(request, updates) {
  const reading = { request, uri: request.uri || null, updates: updates || 0 };
  state.reading = reading;
  const view = document.getElementById("resource-view");
  showViewer(true);
  view.dataset.state = "reading";
  const { status, data } = await api("api/read", { device: state.selected, ...request });
  if (state.reading !== reading) return;  // another read started meanwhile
  reading.uri = (data && data.uri) || reading.uri;
  renderRead(view, status, data, reading);
}

let downloadUrl = null;  // the object URL of the viewer's download link (revoked when replaced)

function renderRead(view, status, data, reading) {
  if (downloadUrl) { URL.revokeObjectURL(downloadUrl); downloadUrl = null; }
  view.dataset.uri = reading.uri || "";
  view.dataset.updates = String(reading.updates);
  const head = el("div", { class: "line" }, el("code", { text: reading.uri || "" }),
    reading.updates ? el("span", { class: "muted small", text: ` · updated ${reading.updates}× (last ${fmtTime(Date.now())})` }) : null);
  const error = data && data.error ? data.error : (!data || status !== 200 ? { type: "HttpError", message: `HTTP ${status}` } : null);
  if (error) {
    view.dataset.state = "error";
    const code = error.code !== undefined && error.code !== null ? ` ${error.code}` : "";
    view.replaceChildren(head, el("div", { class: "outcome error", text: `✗ ${error.type}${code}: ${error.message}` }));
    return;
  }
  view.dataset.state = "ok";
  view.replaceChildren(head, ...data.contents.map(contentNodes).flat());
}

function contentNodes(c, embedded = false) {
  const mime = c.mimeType || "";
  if (typeof c.text === "string") {
    let text = c.text;
    if (/json/i.test(mime)) { try { text = JSON.stringify(JSON.parse(text), null, 2); } catch (e) { /* as sent */ } }
    return [el("div", { class: "muted small", text: `${mime || "text"} · ${c.text.length} characters` }),
      el("pre", { class: "result resource-text", text })];
  }
  if (typeof c.blob !== "string") return [el("pre", { class: "result", text: JSON.stringify(c, null, 2) })];
  let bytes;
  try { bytes = Uint8Array.from(atob(c.blob), (ch) => ch.charCodeAt(0)); } catch (e) {
    return [el("div", { class: "outcome error", text: "✗ the blob is not base64" })];
  }
  // The viewer's link is an object URL (revoked when replaced); one in a tool result a
  // data: URL, so results in the history never hold object URLs.
  const type = mime || "application/octet-stream";
  const href = embedded ? `data:${type};base64,${c.blob}` : URL.createObjectURL(new Blob([bytes], { type }));
  if (!embedded) downloadUrl = href;
  const name = (c.uri || "resource").split(/[/:]/).filter(Boolean).pop() || "resource";
  const nodes = [el("div", { class: "blob" },
    el("span", { class: "size", text: `${mime || "binary"} · ${bytes.length} bytes` }), " ",
    el("a", { href, download: name, class: "download", text: "download" }))];
  if (/^image\/[a-z0-9.+-]+$/i.test(mime)) {
    nodes.push(el("img", { class: "preview", src: `data:${mime};base64,${c.blob}`, alt: `${name} (preview)` }));
  }
  return nodes;
}

function resourceUpdated(message) {
  if (!state.detail || message.id !== state.detail.id) return;
  const item = [...document.querySelectorAll("#resource-list li")].find((li) => li.dataset.uri === message.uri);
  if (item) item.querySelector(".updated").textContent = ` updated ${fmtTime(message.time)}`;
  const reading = state.reading;
  if (reading && reading.uri === message.uri) readResource(reading.request, reading.updates + 1);
}

// ---------------------------------------------------------------- history, events, latency

function renderHistory() {
  const rows = state.detail.history.slice(-LIMITS.history).reverse().map((c) => el("tr", { "data-call": c.id },
    el("td", { text: fmtTime(c.time) }),
    el("td", { class: "mono", text: c.tool }),
    el("td", { class: "mono args", text: compact(c.arguments), title: compact(c.arguments) }),
    el("td", { class: `outcome-${c.outcome}`, text: c.outcome,
      title: c.error ? `${c.error.type}: ${c.error.message}` : "" }),
    el("td", { class: "num", text: fmtMs(c.ms) }),
  ));
  document.querySelector("#history tbody").replaceChildren(...rows);
}

function eventItem(e, withDevice) {
  return el("li", { "data-event": e.event },
    el("span", { class: "time", text: fmtTime(e.time) }),
    withDevice ? el("span", { class: "mono", text: `${e.device} ` }) : null,
    el("span", { class: "name", text: e.event }),
    el("code", { text: compact(e.arguments) }));
}

function renderDeviceEvents() {
  const items = state.detail.events.slice(-LIMITS.events).reverse().map((e) => eventItem(e, false));
  document.getElementById("device-events").replaceChildren(...items);
}

function renderFeed() {
  document.getElementById("feed").replaceChildren(...state.feed.slice(0, LIMITS.feed).map((e) => eventItem(e, true)));
}

function renderPlot() {
  const plot = document.getElementById("latency-plot");
  const values = state.detail.latencies.slice(-100);
  const W = 480, H = 170, L = 44, R = 10, T = 10, B = 22;
  const nodes = [svg("line", { class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B }),
    svg("line", { class: "axis", x1: L, y1: T, x2: L, y2: H - B })];
  if (!values.length) {
    const text = svg("text", { x: L + 10, y: H / 2 });
    text.textContent = "no calls yet";
    plot.replaceChildren(...nodes, text);
    return;
  }
  const summary = state.devices.get(state.detail.id) || state.detail;
  const top = Math.max(...values, summary.p99 || 0) * 1.15 || 1;
  const x = (i) => L + (values.length === 1 ? (W - L - R) / 2 : (i * (W - L - R)) / (values.length - 1));
  const y = (v) => H - B - (v / top) * (H - T - B);
  const points = values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  nodes.push(svg("polyline", { class: "series", points }));
  values.forEach((v, i) => nodes.push(svg("circle", { class: "dot", cx: x(i).toFixed(1), cy: y(v).toFixed(1), r: 2 })));
  for (const [name, value] of [["p50", summary.p50], ["p99", summary.p99]]) {
    if (value === null || value === undefined) continue;
    nodes.push(svg("line", { class: name, x1: L, x2: W - R, y1: y(value), y2: y(value) }));
    const label = svg("text", { x: W - R - 70, y: name === "p50" ? y(value) + 11 : y(value) - 3 });
    label.textContent = `${name} ${fmtMs(value)} ms`;
    nodes.push(label);
  }
  for (const v of [0, top]) {
    const label = svg("text", { x: 4, y: y(v) + 3 });
    label.textContent = fmtMs(v);
    nodes.push(label);
  }
  const caption = svg("text", { x: L, y: H - 6 });
  caption.textContent = `last ${values.length} calls`;
  nodes.push(caption);
  plot.replaceChildren(...nodes);
}

// ---------------------------------------------------------------- the live stream

function handle(message) {
  switch (message.type) {
    case "state": {
      state.devices = new Map(message.state.devices.map((d) => [d.id, d]));
      state.feed = [...message.state.feed].reverse().slice(0, LIMITS.feed);
      renderDevices();
      renderFeed();
      const wanted = state.selected
        || decodeURIComponent((location.hash.match(/^#device=(.*)$/) || [])[1] || "")
        || (state.devices.size ? state.devices.keys().next().value : null);
      if (wanted && state.devices.has(wanted)) select(wanted);
      break;
    }
    case "device": case "tools": {
      const d = message.device;
      state.devices.set(d.id, d);
      renderDevices();
      if (d.id === state.selected) {
        if (message.type === "tools" || (state.detail && d.connectedSince !== state.detail.connectedSince)) select(d.id);
        else if (state.detail) renderMeta();
      } else if (!state.selected) {
        select(d.id);
      }
      break;
    }
    case "resource":
      resourceUpdated(message);
      break;
    case "progress":
      showProgress(message);
      break;
    case "removed":
      state.devices.delete(message.id);
      if (state.selected === message.id) { state.selected = null; state.detail = null; renderDetail(); }
      renderDevices();
      break;
    case "event": {
      const e = message.event;
      state.feed.unshift(e);
      if (state.feed.length > 2 * LIMITS.feed) state.feed.length = LIMITS.feed;  // trimmed in batches
      schedule("feed");
      if (state.detail && e.device === state.detail.id) {
        state.detail.events.push(e);
        if (state.detail.events.length > 2 * LIMITS.events) keepLast(state.detail.events, LIMITS.events);
        schedule("events");
      }
      break;
    }
    case "call": {
      state.devices.set(message.device.id, message.device);
      schedule("devices");
      if (state.detail && message.id === state.detail.id) {
        state.detail.history.push(message.call);
        keepLast(state.detail.history, LIMITS.history);
        if (message.call.ms !== null && message.call.outcome !== "invalid") state.detail.latencies.push(message.call.ms);
        keepLast(state.detail.latencies, LIMITS.latencies);
        schedule("history", "meta", "plot");
      }
      break;
    }
    default:
      break;
  }
}

function connect() {
  const live = document.getElementById("live");
  const stream = new EventSource("api/stream");
  stream.onopen = () => { live.textContent = "live"; live.className = "live on"; };
  stream.onmessage = (event) => handle(JSON.parse(event.data));
  stream.onerror = () => { live.textContent = "reconnecting…"; live.className = "live off"; };
}

setInterval(() => {  // keep "connected since (3 min)" current
  for (const span of document.querySelectorAll("[data-since]")) span.textContent = fmtSince(Number(span.dataset.since));
}, 10000);

connect();
