// octomem browser view: the "Copy as Markdown" buttons (no other script runs).
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  for (const button of document.querySelectorAll("button.copy")) {
    button.addEventListener("click", async () => {
      const source = document.getElementById(button.dataset.copy);
      if (!source) return;
      const text = source.value;
      let done = false;
      if (navigator.clipboard && window.isSecureContext) {
        try { await navigator.clipboard.writeText(text); done = true; } catch (e) { done = false; }
      }
      if (!done) {  // plain-http remote views have no clipboard API: select and copy
        source.hidden = false;
        source.select();
        done = document.execCommand("copy");
        source.hidden = true;
      }
      button.textContent = done ? "Copied" : "Select and copy the text below";
      if (!done) source.hidden = false;
    });
  }
});
