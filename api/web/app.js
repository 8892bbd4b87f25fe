// keel's chat page: opens a conversation from ?c=<id>, sends messages and reads the turn as SSE,
// and keeps the side panels (conversations, topics, mission and plan, tasks) in step.

import { StreamBroken, api, onKeyNeeded, streamMessage } from "./api.js";
import { errorText, failed, withoutRepeats } from "./format.js";
import { askForKey } from "./keyprompt.js";
import * as view from "./view.js";

const $ = (id) => document.getElementById(id);
const NOT_FOUND = "That conversation was not found";

const state = {
  cid: null, // the conversation shown
  snapshot: null, // its last GET snapshot
  viewTopic: null, // an earlier topic being viewed, or null for the whole conversation
  viewCheckpoint: null, // the branch being viewed (its newest checkpoint), or null: the newest
  turn: null, // {cid, controller} while a message is being answered
  polling: null, // {cid} while waiting for a turn started elsewhere (or before a reload) to end
  stopNotice: null, // the conversation whose "Stopping…" (or "could not stop") notice shows
  loads: 0, // counts conversation loads, so a slow one cannot overwrite a newer one
  conversations: [], // the list as last shown
  search: "", // the words the list is filtered by
};

const edits = { onEdit: editMessage, onSwitch: switchBranch };

const conversationActions = {
  onSelect: selectConversation,
  onRename: renameConversation,
  onDelete: deleteConversation,
};

onKeyNeeded(askForKey);
wireControls();
// A message sent before the page has opened its conversation waits for it (not a second one).
const booted = boot().catch((error) => view.setStatus(errorText(error), { tone: "error" }));
booted.then(watchReminders);

// ---- Start-up and navigation ---------------------------------------------------------------

async function boot() {
  const conversations = await refreshConversations();
  const requested = new URLSearchParams(location.search).get("c");
  if (requested) await openConversation(requested);
  else if (conversations.length) {
    await openConversation(conversations[0].conversation_id, "replace");
  } else newConversation("replace");
  $("message").focus();
}

/**
 * Show a conversation: its history, topics, plan, tasks; `address` is push, replace or keep.
 * True when it was shown with no turn running on it.
 */
async function openConversation(cid, address = "keep") {
  const load = ++state.loads;
  stopReadingTurn();
  if (cid !== state.cid) state.viewCheckpoint = null;
  const checkpoint = state.viewCheckpoint;
  state.viewTopic = null;
  view.showTopicBanner(null);
  state.stopNotice = null;
  view.setStatus("");
  let snapshot;
  let messages;
  try {
    [snapshot, messages] = await Promise.all([
      api.snapshot(cid, checkpoint),
      api.messages(cid, checkpoint),
    ]);
  } catch (error) {
    if (load !== state.loads) return;
    if (error.code === "checkpoint_not_found") return leaveBranch(cid, error);
    if (error.status === 404 || error.status === 422) return showNotFound();
    const again = retry(() => openConversation(cid, address));
    return view.setStatus(errorText(error), { tone: "error", action: again });
  }
  if (load !== state.loads) return;
  state.cid = cid;
  setAddress(cid, address);
  showSnapshot(snapshot);
  const emptyText = "Say hello: try “Add buy milk”.";
  const pendingPrompt = snapshot.pending_confirmation && snapshot.pending_confirmation.prompt;
  view.renderHistory(messages, snapshot.topics || [], { emptyText, pendingPrompt, edits });
  refreshTasks();
  refreshConversations();
  if (snapshot.turn_running) waitForRunningTurn();
  return !snapshot.turn_running;
}

/**
 * A new conversation, as a blank page: keel makes it at its first message (`send`), so opening
 * the page, or New, and leaving leaves no empty conversation behind.
 */
function newConversation(address = "push") {
  state.loads++;
  stopReadingTurn();
  Object.assign(state, { cid: null, snapshot: null, viewCheckpoint: null, viewTopic: null });
  view.showTopicBanner(null);
  view.setTitle("New conversation");
  view.renderHistory([], [], { emptyText: "Say hello: try “Add buy milk”." });
  view.renderTopics([], null, selectTopic);
  view.renderPlan(null, null);
  view.showConfirmation(null);
  view.setStatus("");
  if (address === "push") history.pushState({}, "", location.pathname);
  else if (address === "replace") history.replaceState({}, "", location.pathname);
  refreshConversations();
}

/** Make the conversation the blank page stands for, at its first message. */
async function createConversation() {
  try {
    const created = await api.createConversation();
    state.cid = created.conversation_id;
    setAddress(state.cid, "replace");
  } catch (error) {
    view.setStatus(errorText(error), { tone: "error" });
  }
}

function showNotFound() {
  state.cid = null;
  state.snapshot = null;
  view.setTitle("Conversation not found");
  view.renderHistory([], [], {
    emptyText: `${NOT_FOUND}. Pick one from the list, or start a new one.`,
  });
  view.renderTopics([], null, selectTopic);
  view.renderPlan(null, null);
  view.showConfirmation(null);
  view.setStatus(NOT_FOUND, { tone: "error" });
  refreshConversations();
  refreshTasks();
}

function setAddress(cid, address) {
  if (address === "keep") return;
  const url = `${location.pathname}?c=${encodeURIComponent(cid)}`;
  if (address === "push") history.pushState({ cid }, "", url);
  else history.replaceState({ cid }, "", url);
}

// ---- Side panels ---------------------------------------------------------------------------

/** The conversation's one name, as the list has it (its given name, else its first message). */
function conversationTitle() {
  const entry = state.conversations.find((c) => c.conversation_id === state.cid);
  return (entry && entry.title) || "New conversation";
}

function showSnapshot(snapshot) {
  state.snapshot = snapshot;
  const topics = snapshot.topics || [];
  view.setTitle(conversationTitle());
  view.renderTopics(topics, state.viewTopic && state.viewTopic.id, selectTopic);
  view.renderPlan(snapshot.mission, snapshot.todolist);
  view.showConfirmation(state.viewTopic ? null : snapshot.pending_confirmation);
}

async function refreshSnapshot() {
  const cid = state.cid;
  if (!cid) return;
  try {
    const snapshot = await api.snapshot(cid, state.viewCheckpoint);
    if (cid === state.cid) showSnapshot(snapshot);
  } catch (error) {
    view.setStatus(errorText(error), { tone: "error" });
  }
}

async function refreshConversations() {
  const words = state.search;
  try {
    const conversations = await api.listConversations(words);
    if (words !== state.search) return conversations; // a newer search is on its way
    state.conversations = conversations;
    const emptyText = words ? `No conversation holds “${words}”.` : "No conversations yet.";
    view.renderConversations(conversations, state.cid, conversationActions, { emptyText });
    if (state.cid && conversations.some((c) => c.conversation_id === state.cid)) {
      view.setTitle(conversationTitle());
    }
    return conversations;
  } catch (error) {
    view.renderConversations([], state.cid, conversationActions);
    if (error.status !== 404 && error.status !== 405) {
      view.setStatus(errorText(error), { tone: "error" });
    }
    return [];
  }
}

let shownList = ""; // the list the task panel shows ("": all of them)

async function refreshTasks() {
  try {
    const lists = await api.lists();
    if (shownList && !lists.some((l) => l.list === shownList)) shownList = "";
    view.renderLists(lists, shownList);
    view.renderTasks(await api.tasks(shownList), { listed: Boolean(shownList) });
  } catch {
    view.renderTasks(null);
  }
}

/** Give a conversation a name (undefined: left as it was; blank: named by its first message). */
async function renameConversation(cid, name) {
  if (name !== undefined) {
    try {
      await api.renameConversation(cid, name.trim() || null);
    } catch (error) {
      view.setStatus(errorText(error), { tone: "error" });
    }
  }
  await refreshConversations();
}

/** Delete a conversation once the user confirms; the one shown gives way to the next. */
async function deleteConversation(conversation) {
  const title = conversation.title || "New conversation";
  if (!confirm(`Delete the conversation “${title}”? Its messages go; your tasks stay.`)) return;
  const cid = conversation.conversation_id;
  try {
    await api.deleteConversation(cid);
  } catch (error) {
    if (error.status !== 404) return view.setStatus(errorText(error), { tone: "error" });
  }
  if (cid === state.cid) {
    if (state.search) $("conversation-search").value = state.search = "";
    const left = (await refreshConversations()).filter((c) => c.conversation_id !== cid);
    if (left.length) await openConversation(left[0].conversation_id, "replace");
    else newConversation("replace");
  } else await refreshConversations();
  view.setStatus(`Deleted “${title}”.`, { quiet: true });
}

function selectConversation(cid) {
  closePanels({ refocus: true });
  if (cid !== state.cid) openConversation(cid, "push");
}

async function selectTopic(topic) {
  closePanels({ refocus: true });
  if (topic.is_active) return showWholeConversation({ focus: false });
  state.viewTopic = topic;
  await showHistory();
}

/** Leave an earlier topic for the whole conversation; `focus` moves to the message box. */
async function showWholeConversation({ focus = true } = {}) {
  state.viewTopic = null;
  view.showTopicBanner(null);
  await showHistory();
  if (focus) $("message").focus();
}

/** Draw the log for the whole conversation, or for the earlier topic being viewed. */
async function showHistory() {
  const cid = state.cid;
  const topic = state.viewTopic;
  let messages;
  try {
    messages = await api.messages(cid, state.viewCheckpoint);
  } catch (error) {
    return view.setStatus(errorText(error), { tone: "error" });
  }
  if (cid !== state.cid) return;
  const shown = topic ? messages.filter((m) => m.topic_id === topic.id) : messages;
  view.showTopicBanner(topic);
  const pending = !topic && state.snapshot && state.snapshot.pending_confirmation;
  view.renderHistory(shown, (state.snapshot && state.snapshot.topics) || [], {
    emptyText: topic ? "This topic has no messages." : "No messages yet.",
    pendingPrompt: pending ? pending.prompt : null,
    edits: topic ? null : edits,
  });
  if (state.snapshot) showSnapshot(state.snapshot);
}

async function reopenTopic() {
  const topic = state.viewTopic;
  if (!topic || !state.cid) return;
  if (isBusy()) return view.setStatus("Still answering the previous message.");
  try {
    const answer = await api.reopenTopic(state.cid, topic.id);
    state.viewCheckpoint = null; // the topic is reopened where the conversation is
    await openConversation(state.cid);
    view.appendNotice(answer.message || `Back to the topic: ${topic.title}`, "notice");
    $("message").focus();
  } catch (error) {
    view.setStatus(errorText(error), { tone: "error" });
  }
}

// ---- Sending a message and reading the turn ------------------------------------------------

function isBusy() {
  return Boolean(state.turn) || Boolean(state.polling && state.polling.cid === state.cid);
}

function showBusy() {
  view.setBusy(isBusy());
}

async function send(text) {
  const content = text.trim();
  if (!content) return;
  if (isBusy()) return view.setStatus("Still answering the previous message.");
  if (content === "/reset") {
    $("message").value = "";
    return resetConversation();
  }
  await booted;
  if (!state.cid) await createConversation();
  if (!state.cid) return;
  $("message").value = "";
  askToNotify();
  await runTurn(content, crypto.randomUUID());
}

/**
 * One turn: the user's bubble, then events and tokens as they stream, then the result.
 * Once keel has answered 200 and the stream began, the turn is keel's: whatever goes wrong
 * after that (the connection drops, an error frame), the page waits for it to end and shows
 * what was saved, and never sends the message again. The message runs from the branch being
 * viewed, or from `from` (the checkpoint before an edited message, whose bubble and what came
 * after it, `replacing`, give way to the new text).
 */
async function runTurn(content, idempotencyKey, { from = state.viewCheckpoint, replacing } = {}) {
  const cid = state.cid;
  const controller = new AbortController();
  state.turn = { cid, controller };
  showBusy();
  // The message goes to the active topic: show the whole conversation, where it will appear.
  if (state.viewTopic) await showWholeConversation({ focus: false });
  const viewed = state.viewCheckpoint;
  state.viewCheckpoint = null; // the turn's checkpoint will be the newest
  view.setStatus("");
  if (replacing) view.showConfirmation(null);
  else view.settleConfirmation(); // an answer: the question stays in the log above it
  if (replacing) view.dropFrom(replacing);
  view.appendUser(content);
  const userBubble = $("messages").lastElementChild;
  const reply = view.startReply();
  let result = null;
  let refused = null; // the turn did not start: keel refused it or was not reached
  let turnError = null; // an error frame: the turn started and failed
  const told = []; // what the lines of failed tool calls said, for the reply not to say again
  const onFrame = (event, data) => {
    if (event === "token") reply.append(data.data.text || "");
    else if (event === "event" && data.type === "round_started") reply.restart();
    else if (event === "event") {
      view.appendEvent(data.type, data.data, reply.node);
      if (data.type === "tool_call" && data.data.text && failed(data.data.result)) {
        told.push(data.data.text);
      }
    } else if (event === "result") result = data;
    else if (event === "error") turnError = data.error || {};
  };
  try {
    await streamMessage(cid, content, idempotencyKey, controller.signal, onFrame, from);
  } catch (error) {
    if (!(error instanceof StreamBroken)) refused = error;
  }
  if (controller.signal.aborted) return; // another conversation was opened meanwhile
  state.turn = null;
  showBusy();
  if (result) return finishTurn(result, reply, userBubble, content, told);
  reply.remove();
  if (refused) {
    state.viewCheckpoint = viewed; // nothing ran: the page stays where it was
    if (replacing) return editFailed(refused, content, idempotencyKey, from);
    return turnFailed(refused, content, idempotencyKey, userBubble, from);
  }
  // keel took the message: wait for its turn to end and show what was saved. An error frame
  // (the turn failed) is told once the log is back; nothing is offered to send again, since
  // what the turn did before failing is in the log for the user to judge.
  const reloaded = await waitForRunningTurn();
  if (reloaded && turnError) view.setStatus(errorText(turnError), { tone: "error" });
}

function finishTurn(result, reply, userBubble, content, told) {
  clearStopNotice(); // the turn ended, stopped (a turn_stopped event) or not
  // A question waiting for yes or no is asked by the card alone; an error, by its tool's line.
  if (result.awaiting_confirmation) reply.remove();
  else reply.finish(withoutRepeats(result.reply, told));
  if (result.recovered_reply) {
    const earlier = `Finished an earlier, interrupted answer: ${result.recovered_reply}`;
    view.appendNotice(earlier, "notice", userBubble);
  }
  view.showConfirmation(result.awaiting_confirmation);
  view.renderPlan(result.mission, result.todolist);
  offerEdit(result.conversation_id, userBubble, content);
  refreshSnapshot();
  refreshTasks();
  refreshConversations();
}

/** The message just answered, as the log has it: its bubble gets Edit (and its branches). */
async function offerEdit(cid, userBubble, content) {
  let latest;
  try {
    latest = await api.latest(cid);
  } catch {
    return; // Edit shows at the next load
  }
  const m = latest.find((row) => row.role === "user");
  if (m && m.content === content && cid === state.cid) view.attachEdit(userBubble, m, edits);
}

/** The turn did not start (no answer came, or keel refused it): the message is not kept. */
function turnFailed(error, content, idempotencyKey, userBubble, from) {
  clearStopNotice();
  userBubble.remove();
  if (!$("message").value) $("message").value = content;
  if (error.code === "checkpoint_not_found") return leaveBranch(state.cid, error);
  if (error.status === 404) return showNotFound();
  if (error.code === "conversation_busy" || error.status === 409) {
    return waitForRunningTurn(errorText(error));
  }
  // Sent again only when keel surely did not take it: unreachable (a TypeError), or busy (503).
  const canRetry = error.status === 503 || error instanceof TypeError;
  view.setStatus(errorText(error), {
    tone: "error",
    action: canRetry ? retry(() => retryTurn(content, idempotencyKey, userBubble, from)) : null,
  });
}

/** Send the same message again, with the same Idempotency-Key, from the same point. */
function retryTurn(content, idempotencyKey, userBubble, from) {
  if (isBusy()) return;
  userBubble.remove();
  if ($("message").value.trim() === content) $("message").value = "";
  runTurn(content, idempotencyKey, { from });
}

// ---- Edits and branches --------------------------------------------------------------------

/**
 * Send an edited message: from the checkpoint before the original, as a new branch. False (the
 * edit box stays open) while another answer is on its way.
 */
function editMessage(m, item, text) {
  if (isBusy()) {
    view.setStatus("Still answering the previous message.");
    return false;
  }
  runTurn(text, crypto.randomUUID(), { from: m.checkpoint_id, replacing: item });
  return true;
}

/** An edit keel did not take: the log as it was, and the edit offered again where it can be. */
async function editFailed(error, content, idempotencyKey, from) {
  clearStopNotice();
  if (error.code === "checkpoint_not_found") return leaveBranch(state.cid, error);
  await openConversation(state.cid);
  if (error.code === "conversation_busy" || error.status === 409) {
    return waitForRunningTurn(errorText(error));
  }
  const canRetry = error.status === 503 || error instanceof TypeError;
  const again = () => !isBusy() && runTurn(content, idempotencyKey, { from });
  view.setStatus(`${errorText(error)} Your edit was not sent.`, {
    tone: "error",
    action: canRetry ? retry(again) : null,
  });
}

/** Show the branch before (-1) or after (+1) the one viewed, among a message's branches. */
async function switchBranch(m, step) {
  const cid = state.cid;
  if (isBusy()) return view.setStatus("Still answering the previous message.");
  let branches;
  try {
    branches = await api.branches(cid, m.id, state.viewCheckpoint);
  } catch (error) {
    return view.setStatus(errorText(error), { tone: "error" });
  }
  if (cid !== state.cid) return;
  let index = branches.findIndex((b) => b.viewed);
  if (index < 0) index = (m.branch_index || 1) - 1;
  const target = branches[index + step];
  if (!target) return;
  if (!target.checkpoint_id) {
    const gone = "That branch is no longer kept (only recent checkpoints are); its messages stay.";
    return view.setStatus(gone, { tone: "error" });
  }
  // The branch the conversation is on is followed as it grows (elsewhere too), not pinned.
  let active = false;
  try {
    active = state.viewCheckpoint
      ? (await api.branches(cid, m.id)).some((b) => b.viewed && b.message_id === target.message_id)
      : false;
  } catch {
    active = false;
  }
  if (cid !== state.cid) return;
  state.viewCheckpoint = active ? null : target.checkpoint_id;
  const shown = await openConversation(cid);
  if (shown === undefined || state.viewCheckpoint !== (active ? null : target.checkpoint_id)) return;
  const place = `Branch ${index + step + 1} of ${branches.length}`;
  const where = active ? "the one the conversation is on" : "what you send now continues it";
  view.setStatus(`${place}: ${where}.`, { quiet: true });
}

/** The branch viewed is no longer kept: say so and show where the conversation is. */
async function leaveBranch(cid, error) {
  state.viewCheckpoint = null;
  await openConversation(cid);
  view.setStatus(errorText(error), { tone: "error" });
}

function retry(run) {
  return { label: "Try again", run };
}

/** Leave a turn being read (when switching away); keel finishes it on its own. */
function stopReadingTurn() {
  if (state.turn) state.turn.controller.abort();
  state.turn = null;
  showBusy();
}

/**
 * A turn is running that this page is not reading: poll until it ends, then show the log.
 * True when it reloaded the conversation still shown.
 */
async function waitForRunningTurn(message = "Still answering…") {
  const cid = state.cid;
  if (state.polling && state.polling.cid === cid) return false;
  const polling = { cid };
  state.polling = polling;
  showBusy();
  view.setStatus(message);
  const pending = view.startReply();
  while (cid === state.cid) {
    await sleep(1000);
    if (cid !== state.cid) break;
    try {
      const snapshot = await api.snapshot(cid);
      if (!snapshot.turn_running) break;
    } catch (error) {
      if (error.status === 404) break;
    }
  }
  pending.remove();
  if (state.polling !== polling) return false;
  state.polling = null;
  showBusy();
  if (cid !== state.cid) return false;
  const load = state.loads + 1;
  const shown = await openConversation(cid);
  return shown === true && state.loads === load;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Ask keel to stop the running turn; the notice lasts until the turn ends. */
async function stopTurn() {
  const cid = state.cid;
  if (!cid || !isBusy()) return;
  state.stopNotice = cid;
  view.setStatus("Stopping…");
  let answer;
  try {
    answer = await api.cancel(cid);
  } catch (error) {
    if (state.stopNotice !== cid) return;
    state.stopNotice = null;
    return view.setStatus(errorText(error), { tone: "error" });
  }
  if (state.stopNotice !== cid) return; // the turn ended meanwhile, and took the notice with it
  if (!answer.running) clearStopNotice();
  else if (!answer.cancel_requested) {
    // The turn runs in another worker process, which this request did not reach.
    view.setStatus("Could not stop it from here; it will finish on its own.");
  }
}

function clearStopNotice() {
  if (!state.stopNotice) return;
  state.stopNotice = null;
  view.setStatus("");
}

async function resetConversation() {
  if (!state.cid) return;
  if (isBusy()) return view.setStatus("Still answering the previous message.");
  try {
    const answer = await api.reset(state.cid);
    if (state.viewCheckpoint) {
      state.viewCheckpoint = null; // the reset is where the conversation is: show it there
      await openConversation(state.cid);
    }
    if (state.viewTopic) await showWholeConversation();
    view.appendNotice(answer.message || "The conversation was reset.", "notice");
    view.showConfirmation(null);
    await refreshSnapshot();
  } catch (error) {
    view.setStatus(errorText(error), { tone: "error" });
  }
}

// ---- Reminders -----------------------------------------------------------------------------

const REMINDERS_EVERY_MS = 5000;
const SEEN_KEY = "keel.reminders.seen";

/**
 * Show each reminder keel says, here or in another conversation, once: those said while the page
 * was closed when it opens (since the last one it showed), then each as it comes. The open
 * conversation shows it in its log; another's is told in the status line, with a way to it; and
 * the browser tells it too where the person allowed notifications and the page is not in view.
 */
async function watchReminders() {
  let seen = localStorage.getItem(SEEN_KEY) || new Date().toISOString();
  const shown = new Set();
  for (;;) {
    try {
      const said = (await api.reminders(seen))
        .filter((r) => r.delivered_at && !shown.has(r.id))
        .sort((a, b) => Date.parse(a.delivered_at) - Date.parse(b.delivered_at));
      for (const reminder of said) {
        shown.add(reminder.id);
        await showReminder(reminder);
        if (Date.parse(reminder.delivered_at) > Date.parse(seen)) seen = reminder.delivered_at;
      }
      localStorage.setItem(SEEN_KEY, seen);
    } catch {
      // keel is away or the key was refused: asked again at the next round
    }
    await sleep(REMINDERS_EVERY_MS);
  }
}

async function showReminder(reminder) {
  const text = `⏰ Reminder: ${reminder.title} (task ${reminder.task_id}).`;
  if ("Notification" in window && Notification.permission === "granted" && document.hidden) {
    try {
      new Notification("keel", { body: text, tag: reminder.id });
    } catch {
      // a browser that shows notifications only from a service worker (Android's Chrome)
    }
  }
  if (reminder.conversation_id && reminder.conversation_id === state.cid) {
    if (!isBusy() && !state.viewCheckpoint && !state.viewTopic) await openConversation(state.cid);
    refreshTasks();
    return;
  }
  const where = state.conversations.find((c) => c.conversation_id === reminder.conversation_id);
  const open = where ? { label: "Open", run: () => selectConversation(where.conversation_id) } : null;
  view.setStatus(where ? `${text} In “${where.title}”.` : text, { action: open });
  refreshConversations();
}

/** Ask once, at a message sent (a gesture), whether the browser may show reminders. */
function askToNotify() {
  if ("Notification" in window && Notification.permission === "default") {
    Notification.requestPermission().catch(() => {});
  }
}

// ---- Controls ------------------------------------------------------------------------------

function wireControls() {
  view.keepLogPinned();
  $("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    send($("message").value);
  });
  $("message").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      send($("message").value); // while busy, it says so and keeps the text
    }
  });
  $("stop").addEventListener("click", stopTurn);
  $("reset").addEventListener("click", resetConversation);
  $("new-conversation").addEventListener("click", () => {
    closePanels();
    newConversation("push");
  });
  let searching = null;
  $("conversation-search").addEventListener("input", (event) => {
    clearTimeout(searching);
    searching = setTimeout(() => {
      state.search = event.target.value.trim();
      refreshConversations();
    }, 250);
  });
  $("confirm-yes").addEventListener("click", () => answerConfirmation("yes"));
  $("confirm-no").addEventListener("click", () => answerConfirmation("no"));
  $("reopen-topic").addEventListener("click", reopenTopic);
  $("show-all").addEventListener("click", showWholeConversation);
  $("toggle-sidebar").addEventListener("click", () => togglePanel("sidebar"));
  $("toggle-details").addEventListener("click", () => togglePanel("details"));
  $("task-list").addEventListener("change", (event) => {
    shownList = event.target.value;
    refreshTasks();
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") closePanels({ refocus: true });
  });
  window.addEventListener("popstate", () => {
    const cid = new URLSearchParams(location.search).get("c");
    if (cid && cid !== state.cid) openConversation(cid);
    else if (!cid && state.cid) newConversation("keep");
  });
  // The panels overlay the chat only at phone width (style.css): going wider folds them.
  const phone = matchMedia("(max-width: 700px)");
  phone.addEventListener("change", () => {
    if (!phone.matches) closePanels();
  });
}

function answerConfirmation(answer) {
  $("message").focus();
  send(answer);
}

/** Open or fold a side panel (phone width); the chat behind an open one is inert. */
function togglePanel(id) {
  const panel = $(id);
  const open = !panel.classList.contains("open");
  closePanels();
  panel.classList.toggle("open", open);
  $(`toggle-${id}`).setAttribute("aria-expanded", String(open));
  $("chat").inert = open;
}

/** Fold the side panels (phone width); `refocus` returns focus to the toggle of an open one. */
function closePanels({ refocus = false } = {}) {
  for (const id of ["sidebar", "details"]) {
    const toggle = $(`toggle-${id}`);
    if (refocus && $(id).classList.contains("open")) toggle.focus();
    $(id).classList.remove("open");
    toggle.setAttribute("aria-expanded", "false");
  }
  $("chat").inert = false;
}
