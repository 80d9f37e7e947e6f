// The web chat page of `hive serve`: lists the sessions, opens new ones, and runs a chat over the server's client
// API (the turn-stream protocol's HTTP binding). The page holds no token: the cookie set from the printed URL
// goes with every request, which the server takes only from this origin.
//
// Model output is untrusted. Markdown goes through marked and then DOMPurify, and is inserted as the DOM that
// DOMPurify returns; everything else (tool arguments and output, questions, errors) is set as textContent.

import { marked } from "./vendor/marked.esm.js";
import DOMPurify from "./vendor/purify.es.js";

const PURIFY = {
  USE_PROFILE: { html: true },
  // Nothing the model writes may load anything, submit anything or restyle the page.
  FORBID_TAGS: ["img", "picture", "video", "audio", "source", "style", "form", "input", "button", "textarea", "select"],
  FORBID_ATTR: ["style"],
  RETURN_DOM_FRAGMENT: true,
};
DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

const $ = (selector) => document.querySelector(selector);
const els = {
  sessions: $("#sessions"),
  newForm: $("#new-form"),
  info: $("#session-info"),
  usage: $("#usage"),
  connection: $("#connection"),
  log: $("#log"),
  composer: $("#composer"),
  cancel: $("#cancel"),
  menu: $("#menu"),
};

/** One open session's view; replaced whenever another session is opened. */
let view = null;

function newView(sessionId) {
  return {
    sessionId,
    source: null, // the EventSource
    last: 0, // the position of the last event shown: anything at or before it is a repeat
    ended: false,
    retry: 0, // reconnect attempts since the stream last opened
    turn: null, // the DOM of the turn being streamed
    tools: new Map(), // call_id -> tool card
    messages: [], // the user's messages, in order: the n-th is the n-th turn's (the stream does not carry them)
    turns: 0, // turns begun on the page
    bubbles: new Set(), // the numbers of the messages shown
    dirty: new Set(), // Markdown blocks to render at the next frame
    input: 0,
    output: 0,
  };
}

// -- small helpers ---------------------------------------------------------------------------------------------

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function sessionPath(id, rest = "") {
  return `/api/sessions/${encodeURIComponent(id)}${rest}`;
}

async function errorText(response) {
  try {
    const body = await response.json();
    return body.error || `HTTP ${response.status}`;
  } catch {
    return `HTTP ${response.status}`;
  }
}

/** Sends request lines (JSON Lines) to the open session; returns the response. */
function sendRequests(...requests) {
  const body = requests.map((request) => JSON.stringify(request) + "\n").join("");
  return fetch(sessionPath(view.sessionId, "/requests"), {
    method: "POST",
    headers: { "content-type": "application/x-ndjson" },
    body,
  });
}

function scrollToEnd() {
  const nearEnd = els.log.scrollHeight - els.log.scrollTop - els.log.clientHeight < 120;
  if (nearEnd) els.log.scrollTop = els.log.scrollHeight;
}

function note(text, className = "note") {
  const node = el("p", className, text);
  (view.turn ? view.turn.root : els.log).append(node);
  return node;
}

// -- the sessions list -----------------------------------------------------------------------------------------

async function refreshSessions() {
  const response = await fetch("/api/sessions");
  if (!response.ok) {
    els.sessions.replaceChildren(el("li", "form-error", await errorText(response)));
    return [];
  }
  const { sessions } = await response.json();
  els.sessions.replaceChildren(
    ...sessions.map((session) => {
      const button = el("button", "session");
      button.type = "button";
      button.dataset.id = session.session_id;
      button.append(
        el("span", "title", session.title || session.session_id),
        el("span", "meta", `${session.backend} · ${session.model || "default model"} · ${session.status}`),
      );
      if (view && view.sessionId === session.session_id) button.setAttribute("aria-current", "true");
      button.addEventListener("click", () => openSession(session.session_id));
      const item = el("li");
      item.append(button);
      return item;
    }),
  );
  return sessions;
}

function showSummary(summary) {
  els.info.textContent = `${summary.backend} · ${summary.model || "default model"} · ${summary.status}`;
  els.info.dataset.status = summary.status;
  const busy = summary.status === "running" || summary.status === "waiting";
  els.cancel.disabled = !busy;
  els.composer.hidden = summary.status === "ended";
}

let summaryAsked = 0; // only the answer to the latest request is shown: answers may come back out of order

async function refreshSummary() {
  const current = view;
  const asked = ++summaryAsked;
  const response = await fetch(sessionPath(current.sessionId));
  if (!response.ok) return { response, summary: null };
  const summary = await response.json();
  if (current === view && asked === summaryAsked) showSummary(summary);
  return { response, summary };
}

/** Refreshes the session's status soon, once for a burst of events. */
let summaryQueued = false;
function summarySoon() {
  if (summaryQueued) return;
  summaryQueued = true;
  setTimeout(() => {
    summaryQueued = false;
    if (view) refreshSummary().catch(() => {});
  }, 0);
}

els.newForm.addEventListener("submit", async (submitted) => {
  submitted.preventDefault();
  const error = els.newForm.querySelector(".form-error");
  error.textContent = "";
  const body = {};
  for (const [name, value] of new FormData(els.newForm)) {
    if (String(value).trim()) body[name] = String(value).trim();
  }
  const response = await fetch("/api/sessions", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (response.status !== 201) {
    error.textContent = await errorText(response);
    return;
  }
  const { session_id: id } = await response.json();
  els.newForm.reset();
  $("#new-session").open = false;
  await openSession(id);
});

els.menu.addEventListener("click", () => {
  const shown = document.body.classList.toggle("show-sidebar");
  els.menu.setAttribute("aria-expanded", String(shown));
});

// -- one session: its event stream -----------------------------------------------------------------------------

async function openSession(id) {
  if (view && view.source) view.source.close();
  view = newView(id);
  document.body.classList.remove("show-sidebar");
  els.menu.setAttribute("aria-expanded", "false");
  if (location.hash !== `#${encodeURIComponent(id)}`) history.replaceState(null, "", `#${encodeURIComponent(id)}`);
  els.log.replaceChildren();
  els.usage.textContent = "";
  els.composer.hidden = false;
  setConnection("");
  const current = view;
  try {
    const response = await fetch(sessionPath(id, "/messages"));
    if (response.ok) current.messages = (await response.json()).messages.map((message) => message.content);
  } catch {
    // Without them the replies still show; the stream is what matters.
  }
  if (view !== current) return;
  connect(current);
  await Promise.all([refreshSummary(), refreshSessions()]);
}

/** The user's message ``number`` (1-based) as a bubble at the end of the log, unless it is shown already. */
function userBubble(number) {
  const content = view.messages[number - 1];
  if (content === undefined || view.bubbles.has(number)) return;
  view.bubbles.add(number);
  els.log.append(el("div", "user-message", content));
}

function setConnection(text) {
  els.connection.textContent = text;
  els.connection.hidden = !text;
}

// EventSource sends Last-Event-ID by itself when it reconnects, so the server replays only what came after the
// last event it delivered; a stream opened anew (below) replays from the start, and positions already shown are
// skipped either way, so no event is shown twice.
function connect(current) {
  const source = new EventSource(sessionPath(current.sessionId, "/events"));
  current.source = source;
  source.addEventListener("open", () => {
    if (view !== current) return;
    current.retry = 0;
    setConnection("");
  });
  source.addEventListener("message", (message) => {
    if (view !== current) return;
    const position = Number(message.lastEventId);
    if (!(position > current.last)) return;
    current.last = position;
    show(JSON.parse(message.data), position);
  });
  source.addEventListener("error", () => streamBroke(current, source));
}

async function streamBroke(current, source) {
  if (view !== current || current.ended) return;
  setConnection("Connection lost: reconnecting…");
  let summary = null;
  try {
    const checked = await refreshSummary();
    if (checked.response.status === 401 || checked.response.status === 404) {
      // The token changed (server restarted with another) or the session is gone: retrying cannot help.
      source.close();
      setConnection(`Disconnected: ${await errorText(checked.response)}`);
      return;
    }
    summary = checked.summary;
  } catch {
    // Offline: the browser's own reconnection (or ours, below) tries again.
  }
  if (view !== current) return;
  if (summary && summary.status === "ended" && summary.events <= current.last) {
    // The server ends the stream of a session that has ended: that is the end, not a drop.
    source.close();
    current.ended = true;
    setConnection("");
    note("The session has ended.", "note ended");
    return;
  }
  if (source.readyState === EventSource.CLOSED) {
    // The browser gave up (it does when the network is down): open a new stream after a pause.
    current.retry += 1;
    const delay = Math.min(10000, 500 * 2 ** Math.min(current.retry, 5));
    setTimeout(() => {
      if (view === current && current.source === source) connect(current);
    }, delay);
  }
}

// -- rendering events ------------------------------------------------------------------------------------------

function currentTurn() {
  if (!view.turn) {
    view.turns += 1;
    userBubble(view.turns); // a turn replayed from the stream: its message goes before it
    const root = el("section", "turn");
    els.log.append(root);
    view.turn = { root, text: null, thinking: null };
    summarySoon();
  }
  return view.turn;
}

/** A block of Markdown that grows with each delta and is rendered at most once a frame. */
function markdownBlock(turn, className) {
  const node = el("div", className);
  node.dataset.source = "";
  turn.root.append(node);
  return node;
}

function appendMarkdown(node, piece) {
  node.dataset.source += piece;
  view.dirty.add(node);
  if (view.dirty.size === 1) requestAnimationFrame(renderDirty);
}

function renderDirty() {
  for (const node of view.dirty) {
    node.replaceChildren(DOMPurify.sanitize(marked.parse(node.dataset.source), PURIFY));
  }
  view.dirty.clear();
  scrollToEnd();
}

function show(event, position) {
  switch (event.type) {
    case "session_started":
      return;
    case "text_delta": {
      const turn = currentTurn();
      turn.thinking = null;
      if (!turn.text) turn.text = markdownBlock(turn, "reply markdown");
      appendMarkdown(turn.text, event.content);
      return;
    }
    case "thinking_delta": {
      const turn = currentTurn();
      if (!turn.thinking) {
        const box = el("details", "thinking");
        box.append(el("summary", "", "Thinking"));
        turn.root.append(box);
        turn.thinking = markdownBlock({ root: box }, "markdown");
      }
      appendMarkdown(turn.thinking, event.content);
      return;
    }
    case "tool_start":
      return toolStart(event);
    case "tool_end":
      return toolEnd(event);
    case "hitl_request":
      summarySoon();
      return approvalCard(event);
    case "question_request":
      summarySoon();
      return questionCard(event);
    case "turn_end":
      return turnEnd(event);
    case "error":
      note(`Error: ${event.message}`, "note error");
      return;
    case "fallback":
      note(`Model provider ${event.provider_index + 1}/${event.total_providers}: ${event.message} (${event.kind})`);
      return;
    case "addendum":
      note(event.content);
      return;
    case "agent_selected":
      note(`Agent: ${event.agent_name}`);
      return;
    case "plan_created":
      note(`Plan: ${event.step_descriptions.map((step, index) => `${index + 1}. ${step}`).join("  ")}`);
      return;
    case "plan_step_completed":
      note(`Step ${event.step_index + 1} ${event.success ? "done" : "failed"}${event.summary ? `: ${event.summary}` : ""}`);
      return;
    case "plan_completed":
      note(`Plan ${event.success ? "done" : "ended"}${event.summary ? `: ${event.summary}` : ""}`);
      return;
    default:
      return; // plan_step_started, agent_work and anything newer: nothing to show in the chat
  }
}

function argumentsOf(value) {
  return value && typeof value === "object" && !Array.isArray(value) ? value : {};
}

/** What a call acts on, in a few words. */
function targetOf(args) {
  for (const key of ["path", "command", "file_path", "source", "pattern", "url", "query"]) {
    if (typeof args[key] === "string") return args[key];
  }
  return "";
}

/** An edit's diff, from the call's arguments: the lines that change, between the unchanged ones of the replaced
 * text (the file around it is not known here, so there are no line numbers). */
function diffOf(tool, args) {
  const path = args.path || args.file_path || "";
  let before;
  let after;
  if (typeof args.old_text === "string" && typeof args.new_text === "string") {
    [before, after] = [args.old_text, args.new_text];
  } else if (typeof args.old_string === "string" && typeof args.new_string === "string") {
    [before, after] = [args.old_string, args.new_string];
  } else if (tool === "write_file" && typeof args.content === "string") {
    [before, after] = [null, args.content];
  } else {
    return null;
  }
  const a = before === null ? [] : before.split("\n");
  const b = after.split("\n");
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const lines = [
    ["head", before === null ? "--- (whole file)" : `--- a/${path}`],
    ["head", `+++ b/${path}`],
  ];
  for (const line of a.slice(Math.max(0, start - 3), start)) lines.push(["ctx", ` ${line}`]);
  for (const line of a.slice(start, endA)) lines.push(["del", `-${line}`]);
  for (const line of b.slice(start, endB)) lines.push(["add", `+${line}`]);
  for (const line of a.slice(endA, endA + 3)) lines.push(["ctx", ` ${line}`]);
  const pre = el("pre", "diff");
  for (const [kind, text] of lines) pre.append(el("span", kind, `${text}\n`));
  return pre;
}

function argumentsView(tool, input) {
  const args = argumentsOf(input);
  const diff = diffOf(tool, args);
  if (diff) return diff;
  return el("pre", "arguments", typeof input === "string" ? input : JSON.stringify(input, null, 2));
}

function toolStart(event) {
  const turn = currentTurn();
  // A restarted server starts the call that waited for approval again: the card shown for it stays.
  if (view.tools.get(event.call_id)?.classList.contains("running")) return;
  turn.text = null;
  turn.thinking = null;
  const card = el("details", "card tool running");
  card.dataset.callId = event.call_id;
  const summary = el("summary");
  summary.append(
    el("span", "state", "…"),
    el("span", "tool-name", event.tool),
    el("span", "target", targetOf(argumentsOf(event.input))),
  );
  card.append(summary, argumentsView(event.tool, event.input));
  turn.root.append(card);
  view.tools.set(event.call_id, card);
  scrollToEnd();
}

function toolEnd(event) {
  const card = view.tools.get(event.call_id);
  if (!card) return;
  card.classList.remove("running");
  card.classList.add(event.success ? "succeeded" : "failed");
  card.querySelector(".state").textContent = event.success ? "✓" : "✗";
  const output = el("pre", "output", event.output || (event.success ? "(no output)" : "(failed)"));
  if (event.refusal) card.append(el("p", "refusal", `Refused (${event.refusal})`));
  card.append(output);
  // Seen again on a replay, an approval card says how it was answered.
  settle(".approval", (node) => node.dataset.callId === event.call_id, event.refusal ? "Refused" : "Approved");
  summarySoon();
}

/** Marks the matching cards of `selector` that are not yet answered as answered, with `text` as their outcome:
 * their controls are disabled. */
function settle(selector, match, text = "") {
  for (const node of els.log.querySelectorAll(`:is(${selector}):not(.answered)`)) {
    if (!match(node)) continue;
    node.classList.add("answered");
    for (const control of node.querySelectorAll("button, input, textarea")) control.disabled = true;
    if (text) node.querySelector(".outcome").textContent = text;
  }
}

function approvalCard(event) {
  // A restarted server asks again what was waiting, with the same id: only the latest card answers it.
  settle(".approval", (node) => node.dataset.id === event.id, "Asked again below");
  const turn = currentTurn();
  turn.text = null;
  const card = el("div", "card approval");
  card.dataset.id = event.id;
  card.dataset.callId = event.call_id || "";
  card.append(el("p", "question", event.description));
  const what = el("p", "what");
  what.append(el("strong", "", event.tool_name || event.action), el("span", "target", ` ${event.target || ""}`));
  if (event.level) what.append(el("span", `level level-${event.level}`, event.level));
  card.append(what);
  // The card goes into the call's tool card, which already shows the arguments (or the diff), when there is one.
  const tool = event.call_id ? view.tools.get(event.call_id) : undefined;
  if (event.arguments && !tool) card.append(argumentsView(event.tool_name, event.arguments));
  const reason = el("input", "reason");
  reason.placeholder = "Reason (sent to the model when you reject)";
  reason.setAttribute("aria-label", "Reason");
  const buttons = el("div", "actions");
  const once = el("button", "approve", "Approve once");
  const always = el("button", "always", "Always approve");
  const reject = el("button", "reject", "Reject");
  buttons.append(once, always, reject);
  const outcome = el("p", "outcome");
  card.append(reason, buttons, outcome);
  const answer = async (approved, alwaysApprove) => {
    const request = { type: "hitl_response", id: event.id, approved };
    if (alwaysApprove) request.always_approve = true;
    if (reason.value.trim()) request.reason = reason.value.trim();
    settle(".approval", (node) => node === card, "Sending…");
    const response = await sendRequests(request);
    // 409: nothing waits for this answer any more (answered elsewhere, or the turn ended).
    outcome.textContent = response.ok
      ? approved
        ? alwaysApprove
          ? "Always approved"
          : "Approved"
        : "Rejected"
      : await errorText(response);
  };
  once.addEventListener("click", () => answer(true, false));
  always.addEventListener("click", () => answer(true, true));
  reject.addEventListener("click", () => answer(false, false));
  for (const button of [once, always, reject]) button.type = "button";
  if (tool) {
    tool.open = true;
    tool.append(card);
  } else {
    turn.root.append(card);
  }
  scrollToEnd();
}

function questionCard(event) {
  const turn = currentTurn();
  turn.text = null;
  const card = el("form", "card questions");
  card.dataset.id = event.id;
  event.questions.forEach((question, index) => {
    const set = el("fieldset");
    const legend = el("legend");
    if (question.header) legend.append(el("span", "header", question.header));
    legend.append(el("span", "text", question.question));
    set.append(legend);
    for (const option of question.options) {
      const label = el("label", "option");
      const input = el("input");
      input.type = question.multi_select ? "checkbox" : "radio";
      input.name = `q${index}`;
      input.value = option.label;
      label.append(input, el("span", "", option.label));
      if (option.description) label.append(el("span", "description", option.description));
      set.append(label);
    }
    if (question.allow_free_text) {
      const free = el("input", "free-text");
      free.name = `free${index}`;
      free.placeholder = "Or write an answer";
      free.setAttribute("aria-label", `Answer to: ${question.question}`);
      set.append(free);
    }
    card.append(set);
  });
  const buttons = el("div", "actions");
  const submit = el("button", "submit-answer", "Answer");
  submit.type = "submit";
  const decline = el("button", "decline", "Decline");
  decline.type = "button";
  buttons.append(submit, decline);
  card.append(buttons, el("p", "outcome"));
  const respond = async (answers) => {
    const request = { type: "question_response", id: event.id };
    if (answers) request.answers = answers;
    settle(".questions", (node) => node === card, "Sending…");
    const response = await sendRequests(request);
    card.querySelector(".outcome").textContent = response.ok
      ? answers
        ? "Answered"
        : "Declined"
      : await errorText(response);
  };
  card.addEventListener("submit", (submitted) => {
    submitted.preventDefault();
    const answers = {};
    event.questions.forEach((question, index) => {
      const free = card.elements[`free${index}`];
      const chosen = [...card.querySelectorAll(`input[name="q${index}"]:checked`)].map((input) => input.value);
      if (free && free.value.trim()) answers[question.question] = free.value.trim();
      else if (chosen.length) answers[question.question] = chosen;
    });
    respond(answers);
  });
  decline.addEventListener("click", () => respond(null));
  turn.root.append(card);
  scrollToEnd();
}

function turnEnd(event) {
  const turn = currentTurn();
  const parts = [];
  if (event.stop_reason === "cancelled") parts.push("Turn cancelled");
  else if (!event.stop_reason) parts.push("Turn failed");
  else parts.push(event.stop_reason === "completed" ? "Done" : `Ended: ${event.stop_reason.replaceAll("_", " ")}`);
  if (event.input_tokens !== undefined || event.output_tokens !== undefined) {
    parts.push(`${event.input_tokens || 0} in / ${event.output_tokens || 0} out tokens`);
    view.input += event.input_tokens || 0;
    view.output += event.output_tokens || 0;
    els.usage.textContent = `${view.input} in / ${view.output} out tokens`;
  }
  if (event.duration_ms !== undefined) parts.push(`${(event.duration_ms / 1000).toFixed(1)} s`);
  const footer = el("p", `turn-end ${event.stop_reason || "failed"}`, parts.join(" · "));
  turn.root.append(footer);
  // Whatever still asks in this turn can no longer be answered.
  settle(".approval, .questions", (node) => turn.root.contains(node), "No longer waiting");
  view.turn = null;
  scrollToEnd();
  summarySoon();
  refreshSessions().catch(() => {});
}

// -- sending ---------------------------------------------------------------------------------------------------

els.composer.addEventListener("submit", async (submitted) => {
  submitted.preventDefault();
  const box = els.composer.elements.content;
  const content = box.value;
  if (!content.trim() || !view) return;
  const response = await sendRequests({ type: "user_message", content });
  if (!response.ok) {
    note(`Not sent: ${await errorText(response)}`, "note error");
    return;
  }
  box.value = "";
  // A message sent while a turn streams belongs after that turn, which is still growing: put it at the end.
  view.messages.push(content);
  userBubble(view.messages.length);
  els.cancel.disabled = false;
  els.log.scrollTop = els.log.scrollHeight;
  summarySoon();
});

els.composer.elements.content.addEventListener("keydown", (key) => {
  if (key.key === "Enter" && !key.shiftKey && !key.isComposing) {
    key.preventDefault();
    els.composer.requestSubmit();
  }
});

els.cancel.addEventListener("click", async () => {
  if (!view) return;
  const response = await sendRequests({ type: "cancel" });
  if (!response.ok) note(`Cancel failed: ${await errorText(response)}`, "note error");
});

// -- start -----------------------------------------------------------------------------------------------------

const sessions = await refreshSessions();
const wanted = decodeURIComponent(location.hash.slice(1));
if (wanted && sessions.some((session) => session.session_id === wanted)) await openSession(wanted);
