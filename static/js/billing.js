// The card form: Stripe Elements collects the card and confirms a SetupIntent; the form then
// posts the SetupIntent's id, and the server saves the card (and buys the pack, if one was chosen).
"use strict";

(() => {
  const form = document.getElementById("card-form");
  if (!form || typeof Stripe === "undefined") return;
  const stripe = Stripe(form.dataset.stripeKey);
  const card = stripe.elements().create("card");
  card.mount("#card-element");
  const error = form.querySelector("[data-card-error]");
  const button = form.querySelector("button[type=submit]");
  form.addEventListener("submit", async (event) => {
    if (form.elements.setup_intent.value) return;  // confirmed: let the browser post it
    event.preventDefault();
    button.disabled = true;
    error.textContent = "";
    const result = await stripe.confirmCardSetup(form.dataset.clientSecret, { payment_method: { card } });
    if (result.error) {
      error.textContent = result.error.message || "The card was declined.";
      button.disabled = false;
      return;
    }
    form.elements.setup_intent.value = result.setupIntent.id;
    form.submit();
  });
})();
