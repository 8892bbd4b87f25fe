// keel's /v1 API as the page uses it: JSON calls with the API key, and a turn read as SSE.

const KEY_STORAGE = "keel.apiKey";

/** An answer other than 2xx, with keel's error code and message. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let askForKey = async () => {
  throw new ApiError(401, "unauthorized", "An API key is needed");
};

/** Set how a new key is asked for; `ask(rejected)` resolves with the key typed. */
export function onKeyNeeded(ask) {
  askForKey = ask;
}

function storedKey() {
  return sessionStorage.getItem(KEY_STORAGE);
}

function headers(extra = {}) {
  const key = storedKey();
  return {
    ...(key ? { Authorization: `Bearer ${key}` } : {}),
    ...extra,
  };
}

async function errorOf(response) {
  let code = "http_" + response.status;
  let message = response.statusText || "Request failed";
  try {
    const body = await response.json();
    if (body && body.error) {
      code = body.error.code || code;
      message = body.error.message || message;
    }
  } catch {
    // Not JSON: keep the status line.
  }
  return new ApiError(response.status, code, message);
}

/** fetch() that asks for the key on 401 and tries again with the new one. */
async function authorizedFetch(path, init) {
  let rejected = false;
  for (;;) {
    const response = await fetch(path, { ...init, headers: headers(init.headers) });
    if (response.status !== 401) return response;
    const key = await askForKey(rejected || Boolean(storedKey()));
    sessionStorage.setItem(KEY_STORAGE, key);
    rejected = true;
  }
}

/** A JSON call: the parsed body (null for 204), or an ApiError. */
export async function call(method, path, body) {
  const init = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await authorizedFetch(path, init);
  if (!response.ok) throw await errorOf(response);
  return response.status === 204 ? null : response.json();
}

const HISTORY = 500;
const conv = (id) => `/v1/conversations/${encodeURIComponent(id)}`;
const at = (checkpoint, join) =>
  checkpoint ? `${join}checkpoint_id=${encodeURIComponent(checkpoint)}` : "";

export const api = {
  // The newest conversations, or those holding `words` (their name or messages).
  listConversations: (words = "") =>
    call("GET", `/v1/conversations${words ? `?q=${encodeURIComponent(words)}` : ""}`),
  renameConversation: (id, name) => call("PATCH", conv(id), { name }),
  createConversation: () => call("POST", "/v1/conversations", {}),
  deleteConversation: (id) => call("DELETE", conv(id)),
  // The conversation's state, or the state at a checkpoint (the branch being viewed).
  snapshot: (id, checkpoint = null) => call("GET", `${conv(id)}${at(checkpoint, "?")}`),
  // The newest HISTORY messages, shown oldest first (the log is read a page at a time), of the
  // branch the conversation is on, or of the one `checkpoint` is on.
  messages: async (id, checkpoint = null) =>
    (
      await call(
        "GET",
        `${conv(id)}/messages?topic=all&order=newest&limit=${HISTORY}${at(checkpoint, "&")}`,
      )
    ).reverse(),
  // The last few messages of the branch the conversation is on, newest first.
  latest: (id) => call("GET", `${conv(id)}/messages?topic=all&order=newest&limit=10`),
  // The messages sent from the same point as this one, each with its branch's newest checkpoint.
  branches: (id, messageId, checkpoint = null) =>
    call("GET", `${conv(id)}/messages/${messageId}/branches${at(checkpoint, "?")}`),
  reset: (id) => call("POST", `${conv(id)}/reset`),
  cancel: (id) => call("POST", `${conv(id)}/cancel`),
  reopenTopic: (id, topicId) =>
    call("POST", `${conv(id)}/topics/${encodeURIComponent(topicId)}/reopen`),
  // The caller's tasks, due times in the browser's zone; `list`: only those on that list.
  tasks: (list = "") => {
    const query = new URLSearchParams();
    const zone = browserZone();
    if (zone) query.set("timezone", zone);
    if (list) query.set("list", list);
    const text = query.toString();
    return call("GET", text ? `/v1/tasks?${text}` : "/v1/tasks");
  },
  // The caller's lists, each with how many tasks it holds and how many are open.
  lists: () => call("GET", "/v1/lists"),
  // The caller's reminders said after `since` (an ISO moment), newest first.
  reminders: (since) => call("GET", `/v1/reminders?since=${encodeURIComponent(since)}`),
};

/**
 * Reading a turn's stream failed after keel had answered 200 and the stream began: the turn
 * was accepted and may still be running, so it must not be sent again.
 */
export class StreamBroken extends Error {
  constructor(cause) {
    super("The connection ended before the answer came", { cause });
  }
}

/**
 * Send a message and read the turn as server-sent events.
 * Calls `onFrame(event, data)` for each frame; rejects with an ApiError if the turn
 * could not start (409, 413, 422, 503, 404 ...), with a TypeError if the request did not reach
 * keel, and with a StreamBroken once the stream had begun. `signal` stops reading (the turn
 * goes on). `from`: the checkpoint the message runs from (an edit, a branch continued).
 */
/** The browser's time zone (IANA), in which keel reads and shows dates; null when it has none. */
function browserZone() {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || null;
  } catch {
    return null;
  }
}

export async function streamMessage(id, content, idempotencyKey, signal, onFrame, from = null) {
  const response = await authorizedFetch(`${conv(id)}/messages`, {
    method: "POST",
    signal,
    headers: {
      Accept: "text/event-stream",
      "Content-Type": "application/json",
      "Idempotency-Key": idempotencyKey,
    },
    body: JSON.stringify({ content, timezone: browserZone(), ...(from ? { checkpoint_id: from } : {}) }),
  });
  if (!response.ok) throw await errorOf(response);
  try {
    for await (const frame of sseFrames(response.body)) {
      let data = null;
      try {
        data = JSON.parse(frame.data);
      } catch {
        continue; // a keep-alive or comment: nothing to show
      }
      onFrame(frame.event, data);
    }
  } catch (error) {
    if (signal && signal.aborted) throw error;
    throw new StreamBroken(error);
  }
}

/** The frames of an SSE body: {event, data}, split on blank lines, \r\n or \n. */
export async function* sseFrames(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end;
    while ((end = frameEnd(buffer)) !== null) {
      const frame = parseFrame(buffer.slice(0, end.at));
      buffer = buffer.slice(end.at + end.length);
      if (frame) yield frame;
    }
  }
  const last = parseFrame(buffer);
  if (last) yield last;
}

function frameEnd(buffer) {
  const match = /\r?\n\r?\n|\r\r/.exec(buffer);
  return match ? { at: match.index, length: match[0].length } : null;
}

function parseFrame(text) {
  let event = "message";
  const data = [];
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (!line || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
  }
  return data.length ? { event, data: data.join("\n") } : null;
}
