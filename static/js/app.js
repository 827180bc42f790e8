// Copy and reveal buttons. Everything works without this file except the one-click copy.
"use strict";

function announce(button, text) {
  const original = button.dataset.label || button.textContent;
  button.dataset.label = original;
  button.textContent = text;
  setTimeout(() => { button.textContent = original; }, 2000);
}

async function copyFrom(button) {
  const field = document.querySelector(button.dataset.copy);
  if (!field) return;
  const value = "value" in field ? field.value : field.textContent;
  try {
    await navigator.clipboard.writeText(value);
  } catch {
    // Older browsers or an insecure origin: select it so Ctrl+C works.
    field.type = "text";
    field.select();
    document.execCommand("copy");
  }
  announce(button, "Copied");
}

function toggleReveal(button) {
  const field = document.querySelector(button.dataset.reveal);
  if (!field) return;
  const shown = field.type === "password";
  field.type = shown ? "text" : "password";
  button.setAttribute("aria-pressed", String(shown));
  button.textContent = shown ? "Hide" : "Reveal";
}

document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-copy], button[data-reveal]");
  if (!button) return;
  if (button.dataset.copy) copyFrom(button);
  else toggleReveal(button);
});
