/* Email verification form widget (docs/widget.md). Plain JavaScript, no build step.
   <script src=".../widget/verifier-form.js" data-key="ev_pub_..." defer></script>
   Options on the tag: data-base-url (default: this script's origin), data-block (statuses and
   sub-statuses that stop the form, default "invalid"), data-timeout-ms (default 3000). */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script) return;
  var key = script.getAttribute("data-key") || "";
  var base = (script.getAttribute("data-base-url") || new URL(script.src, location.href).origin).replace(/\/+$/, "");
  var block = (script.getAttribute("data-block") || "invalid").split(",").map(function (s) { return s.trim(); }).filter(Boolean);
  var timeoutMs = parseInt(script.getAttribute("data-timeout-ms") || "3000", 10) || 3000;
  var DEBOUNCE_MS = 400;
  var SELECTOR = 'input[type="email"]:not([data-verifier="off"]), input[data-verifier]:not([data-verifier="off"])';
  var MESSAGES = {
    invalid_syntax: "This is not a valid email address.",
    no_mx_record: "This domain cannot receive email.",
    mailbox_not_found: "This mailbox does not exist.",
    disposable: "Please use a permanent address, not a disposable one.",
    role_based: "Please use a personal address rather than a shared one such as info@.",
    invalid: "This email address cannot receive email.",
    risky: "This address may not receive our messages.",
    unknown: "We could not check this address."
  };
  var CSS = ".vf-message{color:var(--verifier-error-color,#b00020);font-size:var(--verifier-font-size,0.875em);margin-top:0.25em}" +
    ".vf-message:empty{display:none}" +
    ".vf-suggest{font:inherit;color:var(--verifier-suggest-color,#0b57d0);background:none;border:0;padding:0;text-decoration:underline;cursor:pointer}" +
    ".vf-suggestion{color:var(--verifier-text-color,inherit)}";
  var counter = 0;
  var states = new WeakMap();

  function addStyles() {
    try {
      var sheet = new CSSStyleSheet();
      sheet.replaceSync(CSS);
      document.adoptedStyleSheets = document.adoptedStyleSheets.concat([sheet]);
    } catch (e) {
      var style = document.createElement("style");
      style.textContent = CSS;
      document.head.appendChild(style);
    }
  }

  function attach(input) {
    if (states.has(input)) return;
    var region = document.createElement("div");
    region.id = "vf-message-" + (++counter);
    region.className = "vf-message";
    region.setAttribute("aria-live", "polite");
    input.insertAdjacentElement("afterend", region);
    var described = (input.getAttribute("aria-describedby") || "").split(/\s+/).filter(Boolean);
    described.push(region.id);
    input.setAttribute("aria-describedby", described.join(" "));
    var state = { region: region, value: null, result: null, pending: null, timer: null };
    states.set(input, state);
    var later = function () { schedule(input, state); };
    input.addEventListener("change", later);
    input.addEventListener("blur", later);
  }

  function schedule(input, state) {
    clearTimeout(state.timer);
    state.timer = setTimeout(function () { check(input, state); }, DEBOUNCE_MS);
  }

  function check(input, state) {
    clearTimeout(state.timer);
    var value = input.value.trim();
    if (value === state.value && (state.pending || state.result !== null)) return state.pending || Promise.resolve();
    state.value = value;
    state.result = null;
    show(input, state, null);
    if (value.indexOf("@") < 1) { state.pending = null; return Promise.resolve(); }
    var controller = typeof AbortController === "function" ? new AbortController() : null;
    var timer = setTimeout(function () { if (controller) controller.abort(); }, timeoutMs);
    var request = fetch(base + "/v1/verify", {
      method: "POST",
      headers: { "Authorization": "Bearer " + key, "Content-Type": "application/json" },
      body: JSON.stringify({ email: value }),
      signal: controller ? controller.signal : undefined,
      credentials: "omit"
    }).then(function (response) {
      return response.ok ? response.json() : null;
    }).catch(function () {
      return null; // slow or down: fail open, the form submits
    }).then(function (result) {
      clearTimeout(timer);
      if (state.value !== value) return;
      state.pending = null;
      state.result = result || false;
      show(input, state, result);
    });
    state.pending = request;
    return request;
  }

  function blocked(result) {
    return !!result && (block.indexOf(result.status) >= 0 || (result.sub_status && block.indexOf(result.sub_status) >= 0));
  }

  function show(input, state, result) {
    var region = state.region;
    region.textContent = "";
    input.removeAttribute("aria-invalid");
    if (!result) return;
    // A likely typo is the reason first (docs/widget.md): "Likely typo of jane@gmail.com?", then any
    // other reason the result is blocked, but never "disposable": typo domains are often listed as such.
    if (result.did_you_mean) region.appendChild(suggestion(input, state, result));
    if (blocked(result)) {
      input.setAttribute("aria-invalid", "true");
      if (!(result.did_you_mean && result.sub_status === "disposable")) {
        if (region.firstChild) region.appendChild(document.createTextNode(" "));
        region.appendChild(document.createTextNode(MESSAGES[result.sub_status] || MESSAGES[result.status] || MESSAGES.invalid));
      }
    }
  }

  function suggestion(input, state, result) {
    var wrap = document.createElement("span");
    wrap.className = "vf-suggestion";
    wrap.appendChild(document.createTextNode("Likely typo of "));
    var button = document.createElement("button");
    button.type = "button";
    button.className = "vf-suggest";
    button.textContent = result.did_you_mean;
    button.addEventListener("click", function () {
      input.value = result.did_you_mean;
      input.dispatchEvent(new Event("input", { bubbles: true }));
      input.focus();
      check(input, state);
    });
    wrap.appendChild(button);
    wrap.appendChild(document.createTextNode("?"));
    return wrap;
  }

  function onSubmit(event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement) || form.getAttribute("data-verifier-passed") === "1") {
      if (form instanceof HTMLFormElement) form.removeAttribute("data-verifier-passed");
      return;
    }
    var inputs = Array.prototype.filter.call(form.querySelectorAll(SELECTOR), function (el) { return states.has(el); });
    if (!inputs.length) return;
    var checks = inputs.map(function (input) { return check(input, states.get(input)); });
    var ready = inputs.every(function (input) { var s = states.get(input); return !s.pending; });
    if (ready) {
      var bad = inputs.filter(function (input) { return blocked(states.get(input).result); });
      if (bad.length) { event.preventDefault(); bad[0].focus(); }
      return;
    }
    event.preventDefault(); // wait for the answer (at most the timeout), then submit again
    var submitter = event.submitter || null;
    Promise.all(checks).then(function () {
      var bad = inputs.filter(function (input) { return blocked(states.get(input).result); });
      if (bad.length) { bad[0].focus(); return; }
      form.setAttribute("data-verifier-passed", "1");
      if (form.requestSubmit) form.requestSubmit(submitter); else form.submit();
    });
  }

  function scan(root) {
    if (root.matches && root.matches(SELECTOR)) attach(root);
    if (root.querySelectorAll) Array.prototype.forEach.call(root.querySelectorAll(SELECTOR), attach);
  }

  function start() {
    addStyles();
    scan(document);
    document.addEventListener("submit", onSubmit, true);
    new MutationObserver(function (mutations) {
      mutations.forEach(function (m) { Array.prototype.forEach.call(m.addedNodes, scan); });
    }).observe(document.documentElement, { childList: true, subtree: true });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
