// Drawing the page: the side panels, the message log, the confirmation and the status line.
// Only DOM work lives here; app.js decides what to show and passes callbacks for clicks.

import {
  dueText,
  eventText,
  failed,
  relativeTime,
  replyBlocks,
  shortTime,
  toolCallText,
  withoutRepeats,
} from "./format.js";

const $ = (id) => document.getElementById(id);

/** An element with classes, text and attributes; `children` are appended in order. */
export function el(tag, { cls, text, attrs } = {}, children = []) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = text;
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
  for (const child of children) if (child) node.append(child);
  return node;
}

const hiddenText = (text) => el("span", { cls: "visually-hidden", text });

// ---- Conversations and topics -------------------------------------------------------------

/** The data-id of the entry of `list` that has the keyboard focus, if one has it. */
function focusedEntry(list) {
  const active = document.activeElement;
  return active && active !== list && list.contains(active) ? active.dataset.id : undefined;
}

/** After `list` is redrawn, give the focus back to the entry with the same data-id. */
function restoreFocus(list, id) {
  if (id === undefined) return;
  const entry = [...list.querySelectorAll("[data-id]")].find((node) => node.dataset.id === id);
  if (entry) entry.focus();
}

/**
 * The caller's conversations, newest first (or those found by a search): each one's name, the
 * latest message below it and the time, with Rename and Delete beside it; the one shown is
 * marked aria-current. `actions` has onSelect(id), onRename(id, name), onDelete(conversation).
 */
export function renderConversations(conversations, currentId, actions, { emptyText } = {}) {
  const list = $("conversations");
  const focused = focusedEntry(list);
  list.replaceChildren();
  if (!conversations.length) {
    list.append(el("li", { cls: "empty", text: emptyText || "No conversations yet." }));
    return;
  }
  conversations.forEach((c, index) => {
    list.append(conversationEntry(c, index, c.conversation_id === currentId, actions));
  });
  restoreFocus(list, focused);
}

function conversationEntry(c, index, current, actions) {
  const title = c.title || "New conversation";
  const time = relativeTime(c.last_message_at || c.created_at);
  const preview = c.preview && c.preview !== c.title ? c.preview : "";
  const previewId = `conversation-preview-${index}`;
  const attrs = {
    type: "button",
    "data-id": c.conversation_id,
    "aria-label": time ? `${title}, ${time}` : title,
  };
  if (preview) attrs["aria-describedby"] = previewId;
  if (current) attrs["aria-current"] = "true";
  const button = el("button", { cls: "nav-item conversation", attrs }, [
    el("span", { cls: "nav-title", text: title }),
    el("span", { cls: "nav-meta", text: time }),
    preview ? el("span", { cls: "nav-preview", text: preview, attrs: { id: previewId } }) : null,
  ]);
  button.addEventListener("click", () => actions.onSelect(c.conversation_id));
  const rename = iconButton("✎", `Rename “${title}”`, "rename");
  const remove = iconButton("✕", `Delete “${title}”`, "delete");
  const item = el("li", { cls: "conversation-entry" }, [
    button,
    el("span", { cls: "entry-actions" }, [rename, remove]),
  ]);
  rename.addEventListener("click", () => startRename(item, c, actions.onRename));
  remove.addEventListener("click", () => actions.onDelete(c));
  return item;
}

function iconButton(symbol, label, kind) {
  return el("button", {
    cls: `icon-button ${kind}`,
    text: symbol,
    attrs: { type: "button", "aria-label": label, title: label },
  });
}

/** Swap the entry for a name box: Enter keeps the new name, Escape or leaving it gives up. */
function startRename(item, c, onRename) {
  const input = el("input", {
    cls: "rename-box",
    attrs: {
      type: "text",
      maxlength: "200",
      "aria-label": "New name for the conversation (empty: named by its first message)",
    },
  });
  input.value = c.title || "";
  const form = el("form", { cls: "rename-form" }, [input]);
  item.replaceChildren(form);
  input.focus();
  input.select();
  let done = false;
  const finish = (name) => {
    if (done) return;
    done = true;
    onRename(c.conversation_id, name);
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    finish(input.value.trim() === (c.title || "") ? undefined : input.value);
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.stopPropagation();
      finish(undefined);
    }
  });
  input.addEventListener("blur", () => finish(undefined));
}

/** The conversation's topics: title, start time, a dot on the active one, a closed one's summary. */
export function renderTopics(topics, viewTopicId, onSelect) {
  const list = $("topics");
  const focused = focusedEntry(list);
  list.replaceChildren();
  if (!topics.length) {
    list.append(el("li", { cls: "empty", text: "Topics appear once you start talking." }));
    return;
  }
  for (const t of topics) {
    const attrs = { type: "button", "data-id": t.id };
    if (t.id === viewTopicId) attrs["aria-current"] = "true";
    const button = el("button", { cls: "nav-item topic" + (t.is_active ? " active" : ""), attrs }, [
      el("span", { cls: "nav-title" }, [
        t.is_active ? el("span", { cls: "dot", attrs: { "aria-hidden": "true" } }) : null,
        document.createTextNode(t.title || "Untitled"),
        t.is_active ? hiddenText(" (active)") : null,
      ]),
      el("span", { cls: "nav-meta", text: shortTime(t.started_at) }),
      t.summary && !t.is_active ? el("span", { cls: "nav-summary", text: t.summary }) : null,
    ]);
    button.addEventListener("click", () => onSelect(t));
    list.append(el("li", {}, [button]));
  }
  restoreFocus(list, focused);
}

/** The "viewing an earlier topic" banner, or none. */
export function showTopicBanner(topic) {
  $("topic-banner").hidden = !topic;
  $("topic-banner-title").textContent = topic ? topic.title : "";
}

// ---- Mission, plan and tasks ---------------------------------------------------------------

const STATUS_WORDS = {
  pending: "to do",
  in_progress: "in progress",
  done: "done",
  skipped: "skipped",
};

export function renderPlan(mission, todolist) {
  const missionEl = $("mission");
  missionEl.textContent = mission || "No mission yet.";
  missionEl.classList.toggle("empty", !mission);
  const plan = $("plan");
  plan.replaceChildren();
  const items = (todolist && todolist.items) || [];
  if (!items.length) {
    plan.append(el("li", { cls: "empty", text: "No plan yet." }));
    return;
  }
  for (const item of items) {
    const status = STATUS_WORDS[item.status] ? item.status : "pending";
    plan.append(el("li", { cls: `plan-item ${status}`, attrs: { "data-status": status } }, [
      el("span", { cls: "mark", attrs: { "aria-hidden": "true" } }),
      el("span", { cls: "plan-text", text: item.description }),
      hiddenText(` (${STATUS_WORDS[status]})`),
    ]));
  }
}

/** The user's tasks, drawn as marks that do nothing (✓ done, ○ open); null if unreadable. */
/** The list switcher above the tasks: all lists, or one (shown only when there are several). */
export function renderLists(lists, chosen) {
  const select = $("task-list");
  select.replaceChildren(el("option", { text: "All lists", attrs: { value: "" } }));
  for (const found of lists) {
    const option = el("option", {
      text: `${found.list} (${found.open})`,
      attrs: { value: found.list },
    });
    option.selected = found.list === chosen;
    select.append(option);
  }
  select.hidden = lists.length < 2 && !chosen;
}

/** The tasks panel; `listed`: one list is shown, so a task's list goes unsaid. */
export function renderTasks(tasks, { listed = false } = {}) {
  const list = $("tasks");
  list.replaceChildren();
  if (!tasks) {
    list.append(el("li", { cls: "empty", text: "The tasks could not be loaded." }));
    return;
  }
  if (!tasks.length) {
    list.append(el("li", { cls: "empty", text: "No tasks. Try “Add buy milk”." }));
    return;
  }
  for (const task of tasks) {
    list.append(el("li", {
      cls: "task" + (task.completed ? " completed" : ""),
      attrs: { "data-id": String(task.id) },
    }, [
      el("span", { cls: "mark", attrs: { "aria-hidden": "true" } }),
      el("span", { cls: "task-id", text: `${task.id}.` }),
      el("span", { cls: "task-title", text: task.title }),
      hiddenText(task.completed ? " (done)" : " (open)"),
      task.repeat
        ? el("span", {
            cls: "task-repeat",
            text: "↻",
            attrs: { title: `repeats ${task.repeat}`, "aria-label": `repeats ${task.repeat}` },
          })
        : null,
      !listed && task.list && task.list !== "todo"
        ? el("span", { cls: "task-list-name", text: task.list })
        : null,
      task.due
        ? el("span", {
            cls: task.overdue ? "task-due overdue" : "task-due",
            text: task.overdue ? `overdue: ${dueText(task.due)}` : dueText(task.due),
          })
        : null,
    ]));
  }
}

// ---- The message log -----------------------------------------------------------------------

const log = () => $("messages");

let pinned = true; // the log is scrolled to its end, and should stay there as it changes size

export function scrollToBottom() {
  const list = log();
  list.scrollTop = list.scrollHeight;
  pinned = true;
}

/**
 * Keep the log at its end when the area below it (confirmation, status) grows or shrinks.
 * Only a scroll at the log's last observed height says where the reader is: one that comes
 * after the log changed size (the box below appeared, and the scroll event is dispatched
 * before the resize observer runs) is left for the observer, which keeps a pinned log pinned.
 */
export function keepLogPinned() {
  const list = log();
  let height = list.clientHeight; // as the observer last saw it
  list.addEventListener("scroll", () => {
    if (list.clientHeight !== height) return;
    pinned = list.scrollHeight - list.scrollTop - list.clientHeight < 48;
  });
  const observer = new ResizeObserver(() => {
    height = list.clientHeight;
    if (pinned) list.scrollTop = list.scrollHeight;
  });
  observer.observe(list);
  observer.observe(list.parentElement.querySelector(".composer-area"));
}

function bubble(role, text) {
  const body = el("div", { cls: "text" });
  if (role === "assistant") showReply(body, text);
  else body.textContent = text;
  return el("li", { cls: `msg ${role}` }, [
    hiddenText(role === "user" ? "You: " : "keel: "),
    body,
  ]);
}

/** An assistant's words in `node`, its Markdown lists drawn as lists (`replyBlocks`). */
function showReply(node, text) {
  node.replaceChildren(
    ...replyBlocks(text).map((block) =>
      block.kind === "text"
        ? el("p", { cls: "line", text: block.text })
        : el(
            "ul",
            { cls: "reply-list" },
            block.items.map((item) => {
              const state = item.box === null ? "" : item.box ? "done" : "open";
              const box = item.box === null ? "" : item.box ? "☑ " : "☐ ";
              const hidden = { "aria-hidden": "true" };
              const mark = box ? el("span", { cls: "box", text: box, attrs: hidden }) : null;
              const said = box ? hiddenText(item.box ? "done: " : "open: ") : null;
              const due = item.due
                ? el("span", { cls: item.late ? "due overdue" : "due", text: ` ${item.due}` })
                : null;
              const words = document.createTextNode(item.text);
              return el("li", { cls: state }, [mark, said, words, due]);
            }),
          ),
    ),
  );
}

function eventLine(text, kind = "") {
  return el("li", { cls: `event ${kind}`.trim(), text });
}

/**
 * Show the log afresh: user and assistant bubbles, what tools did as short lines (details
 * folded; a reply does not say again what a failed call's line says), topic dividers ("New
 * topic", or "Back to the topic" for one seen earlier), and a notice where a command (a reset)
 * began a topic. The question of a confirmation still waiting is left to the card
 * (`pendingPrompt`).
 */
export function renderHistory(messages, topics, { emptyText, pendingPrompt, edits } = {}) {
  const titles = new Map(topics.map((t) => [t.id, t.title]));
  const list = log();
  list.replaceChildren();
  let topicId;
  const seen = new Set();
  let told = []; // what the failed tool calls of the turn shown last said
  const last = messages.length - 1;
  messages.forEach((m, index) => {
    const command = m.role === "command"; // its notice tells the new topic
    if (topicId !== undefined && m.topic_id && m.topic_id !== topicId && !command) {
      const title = titles.get(m.topic_id) || "untitled";
      const text = seen.has(m.topic_id) ? `Back to the topic: ${title}` : `New topic: ${title}`;
      list.append(eventLine(text, "divider"));
    }
    topicId = m.topic_id || topicId;
    if (m.topic_id) seen.add(m.topic_id);
    if (command) {
      list.append(eventLine(m.content, "notice"));
      return;
    }
    if (m.role === "user") told = [];
    if (m.role === "tool") {
      const failure = failed(m.content);
      if (failure && m.text) told.push(m.text);
      const detail = `${m.tool_name || "tool"} → ${shorten(m.content)}`;
      if (m.text) list.append(toolLine(m.text, detail, failure));
      return;
    }
    if (index === last && pendingPrompt && m.role === "assistant" && m.content === pendingPrompt) {
      return; // the card asks it
    }
    const content = m.role === "assistant" ? withoutRepeats(m.content, told) : m.content;
    if (!content || !content.trim()) return;
    const item = bubble(m.role, content);
    if (edits && m.role === "user" && m.checkpoint_id) item.append(messageTools(m, item, edits));
    list.append(item);
  });
  if (!list.children.length) {
    list.append(el("li", { cls: "empty", text: emptyText || "No messages yet." }));
  }
  scrollToBottom();
}

/**
 * Under a message of the user's: Edit, and "‹ 2/3 ›" when other messages were sent from the same
 * point (its branches). `edits` has onEdit(message, item, text) and onSwitch(message, step).
 */
function messageTools(m, item, edits) {
  const tools = el("div", { cls: "msg-tools" });
  const count = m.branch_count || 1;
  if (count > 1) {
    const index = m.branch_index || count;
    const earlier = iconButton("‹", "Show the earlier branch", "branch-step");
    const later = iconButton("›", "Show the later branch", "branch-step");
    earlier.disabled = index <= 1;
    later.disabled = index >= count;
    earlier.addEventListener("click", () => edits.onSwitch(m, -1));
    later.addEventListener("click", () => edits.onSwitch(m, 1));
    const place = el("span", {
      cls: "branch-place",
      text: `${index}/${count}`,
      attrs: { "aria-label": `Branch ${index} of ${count}` },
    });
    tools.append(el("span", { cls: "branches" }, [earlier, place, later]));
  }
  const edit = el("button", {
    cls: "link-button edit",
    text: "Edit",
    attrs: { type: "button", "aria-label": "Edit this message and send it again" },
  });
  edit.addEventListener("click", () => startEdit(m, item, edits.onEdit));
  tools.append(edit);
  return tools;
}

const EDIT_NOTE =
  "Sending starts a new branch from before this message; the earlier one stays a click away. " +
  "Tasks changed since are not undone.";

/** Swap the message for an edit box: Send runs the new text from before it, Cancel gives up. */
function startEdit(m, item, onEdit, text = m.content) {
  const box = el("textarea", {
    cls: "edit-box",
    attrs: { rows: "2", maxlength: "8000", "aria-label": "Edited message" },
  });
  box.value = text;
  const send = el("button", { cls: "button primary", text: "Send", attrs: { type: "submit" } });
  const cancel = el("button", { cls: "button subtle", text: "Cancel", attrs: { type: "button" } });
  const note = el("p", { cls: "edit-note", text: EDIT_NOTE });
  const form = el("form", { cls: "edit-form" }, [
    box,
    note,
    el("div", { cls: "edit-actions" }, [cancel, send]),
  ]);
  const shown = [...item.children];
  item.classList.add("editing");
  item.replaceChildren(form);
  box.focus();
  box.setSelectionRange(box.value.length, box.value.length);
  const changed = () => box.value.trim() && box.value.trim() !== m.content.trim();
  send.disabled = !changed();
  box.addEventListener("input", () => (send.disabled = !changed()));
  const close = () => {
    item.classList.remove("editing");
    item.replaceChildren(...shown);
  };
  cancel.addEventListener("click", close);
  box.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.stopPropagation();
      close();
    } else if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      if (changed()) form.requestSubmit();
    }
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!changed()) return;
    const text = box.value.trim();
    close();
    if (onEdit(m, item, text) === false) startEdit(m, item, onEdit, text); // not sent: kept
  });
}

/** Give a bubble drawn live its Edit (and branch switcher), once the log has its message. */
export function attachEdit(item, m, edits) {
  if (!item.parentElement || !m.checkpoint_id || item.querySelector(".msg-tools")) return;
  const atBottom = pinned;
  item.append(messageTools(m, item, edits));
  if (atBottom) scrollToBottom(); // the line it adds does not push the last reply out of view
}

/** Take the message `item` and everything after it off the log (an edit replaces them). */
export function dropFrom(item) {
  while (item && item.parentElement) {
    const next = item.nextElementSibling;
    item.remove();
    item = next;
  }
}

/** What a tool did (or why it failed), in a sentence; its call and result folded below. */
function toolLine(text, detail, failure = false) {
  return el("li", { cls: failure ? "event tool failed" : "event tool" }, [
    el("details", {}, [
      el("summary", { text }),
      el("div", { cls: "tool-detail", text: detail }),
    ]),
  ]);
}

function shorten(text, max = 90) {
  const flat = String(text || "").replace(/\s+/g, " ");
  return flat.length > max ? flat.slice(0, max - 1) + "…" : flat;
}

function dropEmptyNote() {
  for (const node of log().querySelectorAll(":scope > .empty")) node.remove();
}

export function appendUser(text) {
  dropEmptyNote();
  log().append(bubble("user", text));
  scrollToBottom();
}

/** A quiet line in the log (an event, a notice); `before` keeps it above a reply in progress. */
export function appendNotice(text, kind = "", before = null) {
  dropEmptyNote();
  const line = eventLine(text, kind);
  if (before && before.isConnected) log().insertBefore(line, before);
  else log().append(line);
  scrollToBottom();
  return line;
}

/** A turn event in the log, above `before` (the reply), drawn as the log draws it after a reload
 * (events a reload cannot show, such as a new mission, are left to the side panel). */
export function appendEvent(type, data, before) {
  const text = eventText(type, data);
  if (!text) return;
  // A topic line is drawn as the log draws it after a reload: a divider.
  if (type !== "tool_call") return appendNotice(text, type === "topic_changed" ? "divider" : "", before);
  dropEmptyNote();
  const detail = `${toolCallText(data.name, data.args)} → ${shorten(JSON.stringify(data.result))}`;
  const line = toolLine(text, detail, failed(data.result));
  if (before && before.isConnected) log().insertBefore(line, before);
  else log().append(line);
  scrollToBottom();
}

/** A reply bubble that fills as tokens arrive; `finish` sets the final text. */
export function startReply() {
  dropEmptyNote();
  const item = bubble("assistant", "");
  item.classList.add("streaming");
  item.setAttribute("aria-busy", "true");
  const text = item.querySelector(".text");
  const dot = () => el("span", { cls: "typing-dot", attrs: { "aria-hidden": "true" } });
  text.append(el("span", { cls: "typing" }, [hiddenText("keel is typing"), dot(), dot(), dot()]));
  log().append(item);
  scrollToBottom();
  let streamed = "";
  return {
    node: item,
    append(piece) {
      streamed += piece;
      text.textContent = streamed;
      scrollToBottom();
    },
    /** A new model call begins (a `round_started` event): its text replaces the last one's. */
    restart() {
      if (!streamed) return; // still the typing dots
      streamed = "";
      text.textContent = "";
    },
    finish(reply) {
      item.classList.remove("streaming");
      item.removeAttribute("aria-busy");
      const final = reply ?? streamed;
      if (!final) item.remove();
      else showReply(text, final);
      scrollToBottom();
    },
    remove() {
      item.remove();
    },
  };
}

// ---- Confirmation, status and busy state ----------------------------------------------------

let asking = null; // the confirmation the card shows

/**
 * The card is answered (a message is sent while it shows): its question joins the log as a
 * bubble, as the log shows it after a reload, and the card goes.
 */
export function settleConfirmation() {
  if (asking) {
    dropEmptyNote();
    log().append(bubble("assistant", asking.prompt));
  }
  showConfirmation(null);
}

/** The card that asks for a yes: what will change, task by task, with Yes and No. */
export function showConfirmation(confirmation) {
  asking = confirmation || null;
  $("confirm").hidden = !confirmation;
  const changes = (confirmation && confirmation.changes) || [];
  let question = confirmation ? confirmation.prompt : "";
  const first = question.split("\n")[0];
  // why it is asked again ("Please answer yes or no.", "This changed since I asked (...)."):
  const why = first.includes("Are you sure") ? first.slice(0, first.indexOf("Are you sure")) : "";
  if (changes.length === 1) question = `${changes[0].text}?`;
  else if (changes.length > 1) question = `Make these ${changes.length} changes?`;
  if (why.trim() && changes.length) question = `${why.trim()} ${question}`;
  $("confirm-prompt").textContent = question;
  const list = $("confirm-changes");
  const listed = changes.length > 1 ? changes : [];
  list.replaceChildren(...listed.map((c) => el("li", { text: c.text })));
  list.hidden = !listed.length;
}

let statusTimer = null;

/** The polite status line; `action` adds one button ({label, run}); `quiet` clears it later. */
export function setStatus(text, { action = null, tone = "info", quiet = false } = {}) {
  clearTimeout(statusTimer);
  const status = $("status");
  status.textContent = text || "";
  status.dataset.tone = tone;
  const button = $("status-action");
  button.hidden = !action;
  button.textContent = action ? action.label : "";
  button.onclick = action ? action.run : null;
  if (quiet && text) statusTimer = setTimeout(() => setStatus(""), 4000);
}

export function setBusy(busy) {
  $("send").disabled = busy;
  $("stop").hidden = !busy;
  $("reset").disabled = busy;
  $("confirm-yes").disabled = busy;
  $("confirm-no").disabled = busy;
}

export function setTitle(text) {
  $("chat-title").textContent = text;
  document.title = text ? `${text} · keel` : "keel";
}
