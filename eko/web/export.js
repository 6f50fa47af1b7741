// Export a conversation (GET /v1/rooms/{id}/export?format=md|json): a button in the list opens
// a small dialog with the two downloads (plain links: the session cookie signs them in).
//
// exportButton(room, ctx) -> HTMLButtonElement

import { registerTranslations } from "./i18n.js";

registerTranslations({
  en: {
    "export.open": "Export conversation",
    "export.title": "Export “{title}”",
    "export.md": "Markdown (.md)",
    "export.json": "JSON (.json)",
    "export.close": "Close",
  },
  fr: {
    "export.open": "Exporter la conversation",
    "export.title": "Exporter « {title} »",
    "export.md": "Markdown (.md)",
    "export.json": "JSON (.json)",
    "export.close": "Fermer",
  },
});

let dialog = null;

function exportDialog() {
  if (dialog) return dialog;
  dialog = document.createElement("dialog");
  dialog.className = "settings export-dialog";
  dialog.dataset.testid = "export-dialog";
  document.body.append(dialog);
  return dialog;
}

function open(room, ctx) {
  const box = exportDialog();
  const heading = document.createElement("h2");
  heading.textContent = ctx.t("export.title", { title: room.title || room.name });
  const base = `/v1/rooms/${encodeURIComponent(room.id)}/export`;
  const links = ["md", "json"].map((format) => {
    const a = document.createElement("a");
    a.href = `${base}?format=${format}`;
    a.download = "";
    a.className = "export-link";
    a.dataset.testid = `export-${format}`;
    a.textContent = ctx.t(`export.${format}`);
    a.addEventListener("click", () => box.close());
    return a;
  });
  const close = document.createElement("button");
  close.type = "button";
  close.textContent = ctx.t("export.close");
  close.addEventListener("click", () => box.close());
  const row = document.createElement("div");
  row.className = "row";
  row.append(...links, close);
  box.replaceChildren(heading, row);
  box.showModal();
}

export function exportButton(room, ctx) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = "icon export";
  b.textContent = "⤓";
  b.setAttribute("aria-label", ctx.t("export.open"));
  b.title = ctx.t("export.open");
  b.addEventListener("click", () => open(room, ctx));
  return b;
}
