// The API key prompt: a modal dialog with a labelled password field, shown when keel answers 401.

import { setStatus } from "./view.js";

const $ = (id) => document.getElementById(id);
let pending = null;

/** Ask for the key (once, however many calls are waiting); resolves with what was typed. */
export function askForKey(rejected) {
  $("key-error").textContent = rejected
    ? "That key was not accepted. Please check it and try again."
    : "";
  if (!pending) pending = new Promise(waitForSubmit);
  open();
  return pending;
}

function open() {
  const dialog = $("key-dialog");
  if (!dialog.open) dialog.showModal();
  $("api-key").focus();
}

function waitForSubmit(resolve) {
  const form = $("key-form");
  const dialog = $("key-dialog");
  const input = $("api-key");
  form.onsubmit = (event) => {
    event.preventDefault();
    const key = input.value.trim();
    if (!key) return;
    input.value = "";
    pending = null;
    form.onsubmit = null;
    dialog.onclose = null;
    dialog.close();
    setStatus("");
    resolve(key);
  };
  // Closed with Escape: keep waiting, and offer a way back to the prompt.
  dialog.onclose = () => {
    if (!pending) return;
    setStatus("keel needs an API key to continue.", {
      tone: "error",
      action: { label: "Enter key", run: open },
    });
  };
}
