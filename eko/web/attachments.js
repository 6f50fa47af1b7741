// Files attached to a conversation: a paperclip in the composer opens the file picker; a text,
// Markdown or PDF file is sent to POST /v1/rooms/{id}/attachments and shown as a chip above the
// composer (× removes it). Eko reads the attached files when it answers in this room.
//
// mountAttachments(container, ctx, roomId, form) -> unmount()
//   form: the composer the paperclip goes into (default: the chat view's, so after mountChat)

import { registerTranslations } from "./i18n.js";

registerTranslations({
  en: {
    "attachments.attach": "Attach a file (text, Markdown or PDF)",
    "attachments.list": "Files attached to this conversation",
    "attachments.remove": "Remove {name}",
    "attachments.sending": "Attaching {name}…",
    "attachments.added": "{name} attached: Eko reads it to answer here.",
    "attachments.removed": "{name} removed.",
    "attachments.unsupported": "{name} cannot be attached: only text (.txt), Markdown (.md) and PDF files.",
    "attachments.too_large": "{name} is too large to attach.",
    "attachments.unreadable": "No text could be read from {name} (a scanned, damaged or protected file?).",
    "attachments.failed": "{name} was not attached: {detail}",
  },
  fr: {
    "attachments.attach": "Joindre un fichier (texte, Markdown ou PDF)",
    "attachments.list": "Fichiers joints à cette conversation",
    "attachments.remove": "Retirer {name}",
    "attachments.sending": "Envoi de {name}…",
    "attachments.added": "{name} joint : Eko le lit pour répondre ici.",
    "attachments.removed": "{name} retiré.",
    "attachments.unsupported": "{name} ne peut pas être joint : seulement des fichiers texte (.txt), Markdown (.md) et PDF.",
    "attachments.too_large": "{name} est trop volumineux pour être joint.",
    "attachments.unreadable": "Aucun texte n’a pu être lu dans {name} (un fichier scanné, abîmé ou protégé ?).",
    "attachments.failed": "{name} n’a pas été joint : {detail}",
  },
});

const ACCEPT = ".txt,.md,.markdown,.pdf,text/plain,text/markdown,application/pdf";
const KINDS = { "application/pdf": "PDF", "text/markdown": "MD", "text/plain": "TXT" };
const ERRORS = { 415: "attachments.unsupported", 413: "attachments.too_large", 422: "attachments.unreadable" };

export function mountAttachments(container, ctx, roomId, form = container.querySelector("form.composer")) {
  const path = `/v1/rooms/${encodeURIComponent(roomId)}/attachments`;
  const strip = document.createElement("div");
  strip.className = "attachments";
  strip.dataset.testid = "attachments";
  const chips = document.createElement("ul");
  chips.className = "attachment-chips";
  chips.setAttribute("aria-label", ctx.t("attachments.list"));
  const status = document.createElement("span");
  status.className = "muted attachment-status";
  status.dataset.testid = "attachments-status";
  status.setAttribute("role", "status");
  strip.append(chips, status);
  const picker = document.createElement("input");
  picker.type = "file";
  picker.accept = ACCEPT;
  picker.hidden = true;
  picker.dataset.testid = "attach-input";
  const button = document.createElement("button");
  button.type = "button";
  button.className = "attach";
  button.dataset.testid = "attach";
  button.append(paperclip());
  button.title = ctx.t("attachments.attach");
  button.setAttribute("aria-label", ctx.t("attachments.attach"));
  form.prepend(button, picker);
  form.before(strip);

  let alive = true;
  let files = [];

  function say(text, isError = false) {
    status.textContent = text;
    status.classList.toggle("error", isError);
    render();
  }

  function render() {
    chips.replaceChildren(
      ...files.map((file) => {
        const chip = document.createElement("li");
        chip.className = "attachment-chip";
        chip.dataset.testid = "attachment-chip";
        chip.title = file.filename;
        const kind = document.createElement("small");
        kind.className = "attachment-kind";
        kind.textContent = KINDS[file.content_type] || "TXT";
        const name = document.createElement("span");
        name.textContent = file.filename;
        const remove = document.createElement("button");
        remove.type = "button";
        remove.textContent = "×";
        remove.setAttribute("aria-label", ctx.t("attachments.remove", { name: file.filename }));
        remove.addEventListener("click", () => drop(file));
        chip.append(kind, name, remove);
        return chip;
      }),
    );
    strip.hidden = !files.length && !status.textContent;
  }

  async function send(file) {
    const body = new FormData();
    body.append("file", file, file.name);
    button.disabled = true;
    say(ctx.t("attachments.sending", { name: file.name }));
    try {
      const added = await ctx.api(path, { method: "POST", body });
      if (!alive) return;
      files = [...files.filter((f) => f.filename !== added.filename), added];
      say(ctx.t("attachments.added", { name: added.filename }));
    } catch (error) {
      if (!alive) return;
      const key = ERRORS[error?.status] || "attachments.failed";
      const detail = error?.problem?.detail || error?.message || String(error);
      say(ctx.t(key, { name: file.name, detail }), true);
      if (!ERRORS[error?.status]) ctx.reportError(error);
    } finally {
      button.disabled = false;
    }
  }

  async function drop(file) {
    try {
      await ctx.api(`${path}/${encodeURIComponent(file.id)}`, { method: "DELETE" });
      if (!alive) return;
      files = files.filter((f) => f.id !== file.id);
      say(ctx.t("attachments.removed", { name: file.filename }));
    } catch (error) {
      ctx.reportError(error);
    }
  }

  button.addEventListener("click", () => picker.click());
  picker.addEventListener("change", () => {
    const [file] = picker.files;
    picker.value = "";
    if (file) send(file);
  });

  render();
  ctx
    .api(path)
    .then((list) => {
      if (!alive) return;
      files = list;
      render();
    })
    .catch(ctx.reportError);
  return () => {
    alive = false;
    strip.remove();
    button.remove();
    picker.remove();
  };
}

// A paperclip drawn in SVG (the page's fonts may have no emoji).
function paperclip() {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("width", "18");
  svg.setAttribute("height", "18");
  svg.setAttribute("aria-hidden", "true");
  const path = document.createElementNS(ns, "path");
  path.setAttribute(
    "d",
    "M21 11l-8.6 8.6a5.5 5.5 0 0 1-7.8-7.8l8.6-8.6a3.7 3.7 0 0 1 5.2 5.2l-8.6 8.6a1.8 1.8 0 0 1-2.6-2.6L15 6.6",
  );
  for (const [name, value] of [["fill", "none"], ["stroke", "currentColor"], ["stroke-width", "2"], ["stroke-linecap", "round"], ["stroke-linejoin", "round"]]) {
    path.setAttribute(name, value);
  }
  svg.append(path);
  return svg;
}
