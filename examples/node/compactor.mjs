#!/usr/bin/env node
// Seed 000's context compactor (SPEC Part A, PRESET-000) in Node.js, as a `cmd:` target of
// compaction-suite: it speaks protocol v1 (conformance/schema/v1/) on stdin/stdout, one JSON
// object per line, and writes its logs to stderr.
//
//   compaction-suite check "cmd:node examples/node/compactor.mjs"
//
// No dependencies: Node 20's global `fetch` calls the summarizer, `node:crypto` hashes the prompt.

import { createHash } from "node:crypto";
import { createInterface } from "node:readline";

const PROTOCOL = "compaction-suite";
const PROTOCOL_VERSION = 1;
const IMPLEMENTATION = {
  name: "compaction-suite-node-example",
  version: "0.1.0",
  language: "javascript",
  language_version: process.version,
};
const PROFILES = ["core", "trigger", "summary", "failure", "events"];
const CAPABILITIES = { estimate_tokens: true, last_event: true };

const SUMMARY_PREFIX = "[Context Summary]";
const SYSTEM_ROLES = new Set(["system", "developer"]);
const KNOWN_ROLES = new Set([...SYSTEM_ROLES, "user", "assistant", "tool"]);
const CONTENT_REQUIRED = new Set([...SYSTEM_ROLES, "user", "tool"]);

const DEFAULT_PROMPT = [
  "You condense the earlier part of a tool-using agent's conversation so the agent can go on.",
  "Write a short bullet list for the agent itself. Keep the user's goal, constraints and corrections,",
  "identifiers (ids, paths, names) exactly as written, tool results later steps rely on, and the open work.",
  "Leave out raw tool output and pleasantries.",
].join("\n");

// --- errors -----------------------------------------------------------------------------

/** The history breaks a HIST rule: the compactor refuses it (protocol answer `rejected`). */
class HistoryError extends Error {
  constructor(rule, index, detail) {
    super(index === null ? `${rule}: ${detail}` : `${rule} at message ${index}: ${detail}`);
  }
}

/** The summarizer failed; non-fatal (SPEC FAIL-1..4): the input goes on unchanged. */
class SummarizerError extends Error {
  constructor(type, reason) {
    super(`${type}: ${reason}`);
    this.type = type;
    this.reason = reason;
  }
}

// --- token estimate (SPEC TOK-1) ------------------------------------------------------------

/** The pieces of text the model reads in a message: content, text parts, refusal, name, tool calls. */
function messageTexts(message) {
  const texts = [];
  const content = message.content;
  if (typeof content === "string") texts.push(content);
  if (Array.isArray(content)) {
    for (const part of content) {
      const kind = part && part.type;
      if ((kind === "text" || kind === "refusal") && typeof part[kind] === "string") texts.push(part[kind]);
    }
  }
  for (const key of ["refusal", "name"]) {
    if (typeof message[key] === "string") texts.push(message[key]);
  }
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    const fn = (call && call.function) || {};
    texts.push(String(fn.name ?? ""), String(fn.arguments ?? ""));
  }
  return texts;
}

/** Characters as code points, like Python's `len(str)` (a JS string's length counts UTF-16 units). */
function codePoints(text) {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

/** Seed 000's heuristic: floor(characters / 4) over the text of every message. */
function estimateTokens(messages) {
  let chars = 0;
  for (const message of messages) {
    for (const text of messageTexts(message)) chars += codePoints(text);
  }
  return Math.floor(chars / 4);
}

// --- rounds (SPEC ROUND-1, HIST-1..6) ----------------------------------------------------------

/**
 * Split a history into rounds: a system message, a user message, a bare assistant reply, or an
 * assistant message with tool_calls plus the tool messages answering them. Throws HistoryError.
 * Only the last round may still have unanswered calls (`pending`): a call in flight.
 */
function splitRounds(messages) {
  if (!Array.isArray(messages)) throw new HistoryError("HIST-1", null, "the history is not a list");
  const rounds = [];
  messages.forEach((message, index) => {
    const role = checkedRole(message, index);
    const current = rounds[rounds.length - 1];
    if (role === "tool") {
      answerCall(current, message, index);
      return;
    }
    if (current && current.pending.size > 0) {
      const missing = [...current.pending].sort().join(", ");
      throw new HistoryError("HIST-5", index, `new ${role} message before tool call(s) ${missing} were answered`);
    }
    const ids = role === "assistant" ? callIds(message, index) : [];
    const kind = SYSTEM_ROLES.has(role) ? "system" : role === "user" ? "user" : ids.length ? "tool_calls" : "assistant";
    rounds.push({ kind, messages: [message], pending: new Set(ids) });
  });
  return rounds;
}

function checkedRole(message, index) {
  if (message === null || typeof message !== "object" || Array.isArray(message)) {
    throw new HistoryError("HIST-2", index, "a message is not an object");
  }
  const role = message.role;
  if (!KNOWN_ROLES.has(role)) throw new HistoryError("HIST-2", index, `unknown role ${JSON.stringify(role)}`);
  if (CONTENT_REQUIRED.has(role) && !("content" in message)) {
    throw new HistoryError("HIST-2", index, `${role} message has no 'content'`);
  }
  return role;
}

/** HIST-6: ids differ within one assistant message; a later round may reuse an answered one. */
function callIds(message, index) {
  const seenIds = new Set();
  const calls = message.tool_calls ?? [];
  if (!Array.isArray(calls)) throw new HistoryError("HIST-2", index, "'tool_calls' is not a list");
  return calls.map((call) => {
    const id = call && call.id;
    if (typeof id !== "string" || id === "") throw new HistoryError("HIST-2", index, "a tool call has no string 'id'");
    if (seenIds.has(id)) throw new HistoryError("HIST-6", index, `tool_call id '${id}' is used twice in one assistant message`);
    seenIds.add(id);
    return id;
  });
}

function answerCall(round, message, index) {
  const id = message.tool_call_id;
  if (typeof id !== "string") throw new HistoryError("HIST-2", index, "tool message has no string 'tool_call_id'");
  if (!round || round.kind !== "tool_calls") {
    throw new HistoryError("HIST-3", index, `tool result '${id}' does not follow an assistant tool call`);
  }
  if (!round.pending.has(id)) {
    const twice = round.messages.some((m) => m.tool_call_id === id);
    throw new HistoryError(twice ? "HIST-4" : "HIST-3", index, `tool result '${id}' ${twice ? "answered twice" : "answers no call of its round"}`);
  }
  round.pending.delete(id);
  round.messages.push(message);
}

// --- the summary ---------------------------------------------------------------------------

function textOf(message) {
  const content = message.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.filter((p) => p && p.type === "text").map((p) => String(p.text ?? "")).join("\n");
  }
  return "";
}

/** A summary message: a user message whose text starts with `[Context Summary]` (SPEC SUM-2). */
function isSummary(message) {
  return message.role === "user" && textOf(message).startsWith(SUMMARY_PREFIX);
}

/** The summarized prefix as plain text, one block per message. */
function transcript(messages) {
  return messages
    .map((message) => {
      if (message.role === "tool") return `tool result (${message.tool_call_id}):\n${textOf(message)}`;
      const lines = [`${message.role}:`];
      if (textOf(message)) lines.push(textOf(message));
      for (const part of Array.isArray(message.content) ? message.content : []) {
        const url = part?.type === "image_url" ? String(part.image_url?.url ?? "") : "";
        if (/^https?:\/\//.test(url)) lines.push(`[image: ${url}]`); // images by URL reach the summarizer (SPEC CORE-12 Decision: media)
      }
      for (const call of message.tool_calls ?? []) {
        const fn = call.function ?? {};
        lines.push(`called ${fn.name}(${fn.arguments}) [${call.id}]`);
      }
      return lines.join("\n");
    })
    .join("\n\n");
}

function promptHash(prompt) {
  return createHash("sha256").update(prompt, "utf8").digest("hex").slice(0, 8);
}

// --- the summarizer: one POST /chat/completions -------------------------------------------------

/** POST `body` as JSON; the timeout covers the whole exchange, body included. */
async function postJson(url, body, apiKey, timeoutSeconds) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutSeconds * 1000);
  const failed = (error) =>
    controller.signal.aborted
      ? new SummarizerError("Timeout", `no answer within ${timeoutSeconds} s`)
      : new SummarizerError("ConnectionError", (error.cause && error.cause.message) || error.message);
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
      body: JSON.stringify(body),
      signal: controller.signal,
    }).catch((error) => Promise.reject(failed(error)));
    const text = await response.text().catch((error) => Promise.reject(failed(error)));
    return { status: response.status, statusText: response.statusText, text };
  } finally {
    clearTimeout(timer);
  }
}

function httpFailure(status, statusText, text) {
  let detail = statusText;
  try {
    detail = JSON.parse(text).error.message || detail;
  } catch {
    // not an OpenAI-style error body: keep the status text
  }
  const type = status === 429 ? "RateLimitError" : status >= 500 ? "InternalServerError" : "APIStatusError";
  return new SummarizerError(type, `HTTP ${status}: ${detail}`);
}

/** Read the summary and usage from a chat completion, refusing what is not a usable answer. */
function parseCompletion(text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new SummarizerError("MalformedResponse", `the body is not JSON (${error.message})`);
  }
  if (!data || !Array.isArray(data.choices)) throw new SummarizerError("MalformedResponse", "the response has no 'choices' list");
  if (data.choices.length === 0) throw new SummarizerError("MalformedResponse", "the response has no choices");
  const content = data.choices[0] && data.choices[0].message && data.choices[0].message.content;
  if (typeof content !== "string" || content.trim() === "") throw new SummarizerError("EmptySummary", "the response's content is empty");
  const usage = data.usage ?? {};
  return {
    text: content.trim(),
    promptTokens: Number.isInteger(usage.prompt_tokens) ? usage.prompt_tokens : null,
    completionTokens: Number.isInteger(usage.completion_tokens) ? usage.completion_tokens : null,
  };
}

async function summarize(settings, prompt, text) {
  if (!settings.base_url) throw new SummarizerError("ConfigurationError", "settings.base_url is not set");
  const url = `${settings.base_url.replace(/\/+$/, "")}/chat/completions`;
  const request = {
    model: settings.model,
    messages: [
      { role: "system", content: prompt },
      { role: "user", content: text },
    ],
    temperature: 0,
  };
  const response = await postJson(url, request, settings.api_key, settings.summarizer_timeout);
  if (response.status < 200 || response.status >= 300) throw httpFailure(response.status, response.statusText, response.text);
  return parseCompletion(response.text);
}

// --- the compactor ----------------------------------------------------------------------------

/** Seed 000: iterations (since the last compaction) >= T OR chars/4 >= M; keep the last K rounds. */
class Compactor {
  constructor(settings) {
    this.settings = settings;
    this.prompt = settings.summary_prompt ?? DEFAULT_PROMPT;
    this.promptHash = promptHash(this.prompt);
    this.compactedAt = 0; // SPEC RT-1: iterations count from the last compaction
  }

  /** Returns {messages, event, logs}; throws HistoryError for a history it refuses. */
  async compact(messages, iteration) {
    const rounds = splitRounds(messages);
    if (iteration < this.compactedAt) this.compactedAt = 0; // a lower iteration starts a new run
    const tokens = estimateTokens(messages);
    const event = this.newEvent(messages, iteration, tokens);
    const unchanged = (reason) => this.finish(event, messages, { skipped_reason: reason });

    const last = rounds[rounds.length - 1];
    if (last && last.pending.size > 0) return unchanged("a tool call is in flight (ROUND-3)");
    event.trigger = this.trigger(iteration, tokens);
    if (event.trigger === null) return unchanged("trigger did not fire");
    const plan = this.plan(rounds);
    if (plan === null) return unchanged("nothing older than the kept tail (STRAT-9)");

    let summary;
    try {
      summary = await summarize(this.settings, this.prompt, transcript(plan.prefix));
    } catch (error) {
      if (!(error instanceof SummarizerError)) throw error;
      const line = `compaction failed: ${error.type}: ${error.reason}`;
      process.stderr.write(`WARNING ${line}\n`);
      return this.finish(event, messages, { failure_reason: error.message }, [{ level: "WARNING", message: line }]);
    }
    const output = [...plan.system, { role: "user", content: `${SUMMARY_PREFIX}\n${summary.text}` }, ...plan.tail];
    this.compactedAt = iteration;
    return this.finish(event, output, {
      compacted: true,
      summarizer_prompt_tokens: summary.promptTokens,
      summarizer_completion_tokens: summary.completionTokens,
    });
  }

  trigger(iteration, tokens) {
    const { threshold_iterations: T, max_context_tokens: M } = this.settings;
    const iterations = iteration - this.compactedAt;
    if (iterations >= T) return `iterations ${iterations} >= ${T}`;
    if (tokens >= M) return `estimated tokens ${tokens} >= ${M}`;
    return null;
  }

  /** System messages, the prefix to summarize and the kept tail; null when there is nothing to fold. */
  plan(rounds) {
    const system = rounds.filter((r) => r.kind === "system").map((r) => r.messages[0]);
    const others = rounds.filter((r) => r.kind !== "system");
    const start = Math.max(others.length - this.settings.keep_recent_rounds, 0);
    const prefix = others.slice(0, start).flatMap((r) => r.messages);
    const tail = others.slice(start).flatMap((r) => r.messages);
    if (prefix.length === 0 || (prefix.length === 1 && isSummary(prefix[0]))) return null;
    return { system, prefix, tail };
  }

  newEvent(messages, iteration, tokens) {
    return {
      iteration,
      compacted: false,
      trigger: null,
      messages_before: messages.length,
      messages_after: null,
      estimated_tokens_before: tokens,
      estimated_tokens_after: null,
      estimated_tokens_saved: null,
      summarizer_prompt_tokens: null,
      summarizer_completion_tokens: null,
      prompt_hash: this.promptHash,
      failure_reason: null,
      skipped_reason: null,
    };
  }

  finish(event, output, fields, logs = []) {
    Object.assign(event, fields);
    event.messages_after = output.length;
    event.estimated_tokens_after = estimateTokens(output);
    event.estimated_tokens_saved = event.estimated_tokens_before - event.estimated_tokens_after;
    return { messages: output, event, logs };
  }
}

// --- protocol v1 ------------------------------------------------------------------------------

let compactor = null;

function send(answer) {
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}

function started(request) {
  if (request.protocol !== PROTOCOL || request.version !== PROTOCOL_VERSION) {
    return { ok: false, error: `this compactor speaks ${PROTOCOL} protocol version ${PROTOCOL_VERSION} only` };
  }
  return { ok: true, version: PROTOCOL_VERSION, implementation: IMPLEMENTATION, profiles: PROFILES, capabilities: CAPABILITIES };
}

async function answerCompact(request) {
  if (compactor === null) return { seq: request.seq, errored: { message: "compact before reset" } };
  try {
    const { messages, event, logs } = await compactor.compact(request.messages, request.iteration);
    return { seq: request.seq, messages, event, logs };
  } catch (error) {
    if (error instanceof HistoryError) return { seq: request.seq, rejected: { message: error.message } };
    throw error;
  }
}

async function answer(request) {
  switch (request.cmd) {
    case "start":
      return started(request);
    case "reset":
      compactor = new Compactor(request.settings);
      return { ok: true };
    case "compact":
      return answerCompact(request);
    case "estimate_tokens":
      return { seq: request.seq, tokens: estimateTokens(request.messages) };
    default:
      return { ok: false, error: `unknown command ${JSON.stringify(request.cmd)}` };
  }
}

function exit(status) {
  process.stdout.write("", () => process.exit(status));
}

async function main() {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === "") continue;
    let request;
    try {
      request = JSON.parse(line);
    } catch (error) {
      process.stderr.write(`ERROR ignoring a request that is not JSON: ${error.message}\n`);
      continue;
    }
    if (request.cmd === "stop") break;
    try {
      send(await answer(request));
    } catch (error) {
      send({ seq: request.seq, errored: { message: String(error && error.message), context: String(error && error.stack) } });
    }
  }
  exit(0);
}

main();
