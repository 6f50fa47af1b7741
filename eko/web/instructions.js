// Per-conversation instructions (a system prompt for this room): a fold at the top of the chat
// view, read from GET /v1/rooms/{id} and saved with PATCH /v1/rooms/{id} {instructions}.
// Replies written under them are never served to or learned for anyone else (the server's rule).
//
// mountInstructions(container, ctx, roomId) -> unmount()

import { registerTranslations } from "./i18n.js";

registerTranslations({
  en: {
    "instructions.title": "Instructions for this conversation",
    "instructions.set": "(set)",
    "instructions.help": "How Eko should answer here: tone, format, role, what to focus on.",
    "instructions.save": "Save instructions",
    "instructions.saved": "Saved: the next replies follow them.",
    "instructions.cleared": "Cleared.",
    "instructions.failed": "Not saved: {detail}",
  },
  fr: {
    "instructions.title": "Consignes pour cette conversation",
    "instructions.set": "(définies)",
    "instructions.help": "Comment Eko doit répondre ici : ton, format, rôle, sujet.",
    "instructions.save": "Enregistrer les consignes",
    "instructions.saved": "Enregistré : les prochaines réponses les suivent.",
    "instructions.cleared": "Effacées.",
    "instructions.failed": "Non enregistré : {detail}",
  },
});

const MAX_CHARS = 4000;

export function mountInstructions(container, ctx, roomId) {
  const path = `/v1/rooms/${encodeURIComponent(roomId)}`;
  const box = document.createElement("details");
  box.className = "room-instructions";
  box.dataset.testid = "instructions";
  const summary = document.createElement("summary");
  const title = document.createElement("span");
  title.textContent = ctx.t("instructions.title");
  const mark = document.createElement("span");
  mark.className = "muted instructions-set";
  summary.append(title, " ", mark);
  const area = document.createElement("textarea");
  area.rows = 3;
  area.maxLength = MAX_CHARS;
  area.dataset.testid = "instructions-text";
  area.placeholder = ctx.t("instructions.help");
  area.setAttribute("aria-label", ctx.t("instructions.title"));
  const save = document.createElement("button");
  save.type = "button";
  save.dataset.testid = "instructions-save";
  save.textContent = ctx.t("instructions.save");
  const status = document.createElement("span");
  status.className = "muted";
  status.dataset.testid = "instructions-status";
  status.setAttribute("role", "status");
  const row = document.createElement("div");
  row.className = "row";
  row.append(save, status);
  box.append(summary, area, row);
  container.prepend(box);

  let alive = true;
  function show(instructions) {
    area.value = instructions || "";
    mark.textContent = instructions ? ctx.t("instructions.set") : "";
    box.dataset.set = String(!!instructions);
  }

  save.addEventListener("click", async () => {
    save.disabled = true;
    try {
      const room = await ctx.api(path, { method: "PATCH", json: { instructions: area.value } });
      if (!alive) return;
      show(room.instructions);
      status.textContent = ctx.t(room.instructions ? "instructions.saved" : "instructions.cleared");
    } catch (error) {
      status.textContent = ctx.t("instructions.failed", {
        detail: error?.problem?.detail || error?.message || String(error),
      });
      ctx.reportError(error);
    } finally {
      save.disabled = false;
    }
  });

  ctx
    .api(path)
    .then((room) => alive && show(room.instructions))
    .catch(ctx.reportError);
  return () => {
    alive = false;
    box.remove();
  };
}
