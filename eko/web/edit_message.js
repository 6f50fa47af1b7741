// Edit and resend the person's last message: "Edit" turns its text into a form; "Save & send"
// hands the new text to `onSave` (the chat stores it as the message's new version and asks
// Eko again, POST …/messages/{id}/edit); "Cancel" puts the text back.
//
// editButton(message, ctx, onSave(message, content)) -> HTMLElement

import { registerTranslations } from "./i18n.js";

registerTranslations({
  en: { "edit.edit": "Edit", "edit.save": "Save & send", "edit.cancel": "Cancel" },
  fr: { "edit.edit": "Modifier", "edit.save": "Enregistrer et envoyer", "edit.cancel": "Annuler" },
});

export function editButton(message, ctx, onSave) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "icon edit";
  button.dataset.testid = "edit-message";
  button.textContent = "✎";
  button.setAttribute("aria-label", ctx.t("edit.edit"));
  button.title = ctx.t("edit.edit");
  button.addEventListener("click", () => openEditor(button.closest("article"), message, ctx, onSave));
  return button;
}

function openEditor(article, message, ctx, onSave) {
  const body = article?.querySelector(".msg-body");
  if (!body || article.querySelector(".msg-editor")) return;
  const form = document.createElement("form");
  form.className = "msg-editor";
  const input = document.createElement("textarea");
  input.dataset.testid = "edit-input";
  input.value = message.content || "";
  input.rows = Math.min(8, Math.max(2, input.value.split("\n").length));
  input.setAttribute("aria-label", ctx.t("edit.edit"));
  const save = document.createElement("button");
  save.type = "submit";
  save.dataset.testid = "edit-save";
  save.textContent = ctx.t("edit.save");
  const cancel = document.createElement("button");
  cancel.type = "button";
  cancel.className = "secondary";
  cancel.dataset.testid = "edit-cancel";
  cancel.textContent = ctx.t("edit.cancel");
  const buttons = document.createElement("div");
  buttons.className = "msg-editor-buttons";
  buttons.append(cancel, save);
  form.append(input, buttons);
  body.replaceWith(form);
  input.focus();
  cancel.addEventListener("click", () => form.replaceWith(body));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const content = input.value.trim();
    if (!content) return;
    if (content === (message.content || "").trim()) return form.replaceWith(body);
    save.disabled = true;
    onSave(message, content);
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Escape") form.replaceWith(body);
  });
}
