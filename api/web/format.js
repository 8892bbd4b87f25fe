// Plain-words formatting for the page: times, turn events, tool calls and API errors.

const timeOnly = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const dayAndTime = new Intl.DateTimeFormat(undefined, {
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
});

/** A short local time: "14:05" today, "Nov 22, 14:05" another day. */
export function shortTime(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const today = new Date().toDateString() === date.toDateString();
  return (today ? timeOnly : dayAndTime).format(date);
}

const dueDay = new Intl.DateTimeFormat(undefined, {
  weekday: "short",
  month: "short",
  day: "numeric",
  timeZone: "UTC",
});

/**
 * When a task is due, short: "Fri, Dec 4" for a day ("2026-12-04"), "Fri, Dec 4, 17:00" for a
 * moment ("2026-12-04T17:00+01:00"), as keel gave it in the browser's zone; "" for none.
 */
export function dueText(due) {
  if (!due) return "";
  const [day, time] = due.split("T");
  const date = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(date.getTime())) return "";
  return dueDay.format(date) + (time ? `, ${time.slice(0, 5)}` : "");
}

/** "just now", "5 min ago", "3 h ago", or the short time for anything older than a day. */
export function relativeTime(iso) {
  if (!iso) return "";
  const seconds = (Date.now() - new Date(iso).getTime()) / 1000;
  if (Number.isNaN(seconds)) return "";
  if (seconds < 60) return "just now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return shortTime(iso);
}

/** A tool call's details, for whoever unfolds them: create_todo_task(title: buy milk). */
export function toolCallText(name, args) {
  const parts = Object.entries(args || {}).map(([key, value]) => `${key}: ${plain(value)}`);
  return `${name}(${parts.join(", ")})`;
}

function plain(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * Whether a tool call's result, as its event gives it or as the log keeps it (JSON text), is
 * keel's report of a failed call: "Error: Task 9 not found." (a tool of one's own that returns
 * words is no failure).
 */
export function failed(result) {
  if (typeof result !== "string") return false;
  let words = result;
  try {
    words = JSON.parse(result);
  } catch {
    // the words themselves, not JSON
  }
  return typeof words === "string" && words.startsWith("Error: ");
}

/**
 * The reply without the lines that only repeat what a failed tool call's line said (`told`):
 * that line tells the error, once. Empty when the reply said nothing else.
 */
export function withoutRepeats(reply, told) {
  if (!reply || !told.length) return reply;
  const kept = reply.split("\n").filter((line) => !told.includes(line.trim()));
  return kept.join("\n").replace(/\n{3,}/g, "\n\n").trim();
}

/** The quiet line shown for a turn event, or null for events the page does not show. */
export function eventText(type, data = {}) {
  switch (type) {
    case "topic_changed":
      return data.reason === "returned"
        ? `Back to the topic: ${data.title || "untitled"}`
        : `New topic: ${data.title || "untitled"}`;
    case "state_updated":
      // A finished mission gives way quietly (a thin divider, drawn by the view).
      if (!data.mission_reset || data.reason !== "unfinished_turn_abandoned") return null;
      return "The previous request was left unfinished; starting afresh";
    case "model_fallback":
      return data.step === "plan"
        ? `The model could not plan (${data.reason}); planned offline`
        : `The model failed (${data.reason}); the offline assistant took over`;
    case "turn_timed_out":
      return `Stopped: out of time after ${data.seconds ?? "?"} s`;
    case "resumed":
      return `Resumed in a fresh context from step ${data.step ?? "?"}`;
    case "loop_limit":
      return "Stopped after the loop limit";
    case "tool_call":
      return data.text || null;
    case "turn_stopped":
      return "Stopped";
    default:
      return null;
  }
}

const FRIENDLY = {
  conversation_busy: "Still answering the previous message.",
  message_too_large: "That message is too long.",
  database_unavailable: "keel is busy; try again shortly.",
  turn_failed: "The answer failed; what was saved is shown. Send it again if it is still needed.",
};

/** An error in plain words for the status line. */
export function errorText(error) {
  if (error && FRIENDLY[error.code]) return FRIENDLY[error.code];
  if (error && error.status === 503) return FRIENDLY.database_unavailable;
  if (error instanceof TypeError) {
    return "Could not reach keel. Check the connection and try again.";
  }
  if (error && error.code === "invalid_request") return error.message;
  return (error && error.message) || "Something went wrong.";
}

const ITEM = /^\s*[-*] (?:\[( |x|X)\] )?(.*)$/;
const WHEN = /^(.*?) \(((?:due|overdue since) [^()]*)\)$/;

/**
 * A reply's Markdown as blocks to draw: runs of list items ("- [ ] 1. eggs", "- eggs") as lists,
 * each item with its box (open, done, or none) and when it is due ("due Fri 4 Dec 2026", `late`
 * when it says "overdue since ..."), and the lines between them as text. Only what
 * keel's replies use; everything else stays the words it is.
 */
export function replyBlocks(text) {
  const blocks = [];
  for (const line of (text || "").split("\n")) {
    const item = ITEM.exec(line);
    const last = blocks[blocks.length - 1];
    if (item) {
      const when = WHEN.exec(item[2]);
      const entry = {
        text: when ? when[1] : item[2],
        box: item[1] === undefined ? null : item[1] !== " ",
        due: when ? when[2] : null,
        late: when ? when[2].startsWith("overdue") : false,
      };
      if (last && last.kind === "list") last.items.push(entry);
      else blocks.push({ kind: "list", items: [entry] });
    } else if (last && last.kind === "text") {
      last.text += `\n${line}`;
    } else {
      blocks.push({ kind: "text", text: line });
    }
  }
  return blocks
    .map((b) => (b.kind === "text" ? { ...b, text: b.text.replace(/^\n+|\n+$/g, "") } : b))
    .filter((b) => b.kind === "list" || b.text);
}
