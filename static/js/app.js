// Copy and reveal buttons, and the upload page's drop area. Every page works without this file.
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

// Drag and drop: a file dropped on the area goes into the ordinary file input, so the form posts it as usual.
function setUpDropzone(zone) {
  const input = zone.querySelector("input[type=file]");
  const name = zone.querySelector("[data-file-name]");
  if (!input) return;
  const show = () => { if (name) name.textContent = input.files.length ? `Selected: ${input.files[0].name}` : ""; };
  for (const type of ["dragenter", "dragover"]) {
    zone.addEventListener(type, (event) => { event.preventDefault(); zone.classList.add("is-dragging"); });
  }
  for (const type of ["dragleave", "drop"]) {
    zone.addEventListener(type, (event) => { event.preventDefault(); zone.classList.remove("is-dragging"); });
  }
  zone.addEventListener("drop", (event) => {
    if (!event.dataTransfer.files.length) return;
    input.files = event.dataTransfer.files;
    // Setting files fires no event: announce it, so the preview (htmx, on change) follows a drop too.
    input.dispatchEvent(new Event("change", { bubbles: true }));
  });
  input.addEventListener("change", show);
}

document.querySelectorAll("[data-dropzone]").forEach(setUpDropzone);

// The preview's estimate depends on the mode (a deep job waits on mail servers): choosing another
// mode once a preview is shown asks for it again, keeping the chosen column (the column choice's
// own request includes the whole form, the mode with it).
document.querySelectorAll("[data-mode-choice]").forEach((choice) => {
  choice.addEventListener("change", () => {
    const column = document.querySelector("#preview select[name=email_column]");
    if (column) column.dispatchEvent(new Event("change", { bubbles: true }));
  });
});

// The receipt page's print button (a saved PDF is the browser's "Save as PDF").
document.addEventListener("click", (event) => {
  if (event.target.closest("button[data-print]")) window.print();
});
