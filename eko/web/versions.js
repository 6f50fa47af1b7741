// Browsing a message's versions: "‹ 2/3 ›" on a message that has several (a regenerated reply,
// an edited message). The earlier ones are read once from GET …/messages/{id}/versions; the
// message's body shows the chosen one, the latest when the message is drawn again.
//
// versionPager(message, ctx, show(content)) -> HTMLElement | null

import { registerTranslations } from "./i18n.js";

registerTranslations({
  en: {
    "versions.previous": "Previous version",
    "versions.next": "Next version",
    "versions.label": "Version {n} of {total}",
  },
  fr: {
    "versions.previous": "Version précédente",
    "versions.next": "Version suivante",
    "versions.label": "Version {n} sur {total}",
  },
});

export function versionCount(message) {
  const n = Number(message.version ?? message.metadata?.version ?? 1);
  return Number.isInteger(n) && n > 1 ? n : 1;
}

function arrow(symbol, labelKey, ctx) {
  const el = document.createElement("button");
  el.type = "button";
  el.className = "icon version-arrow";
  el.textContent = symbol;
  el.setAttribute("aria-label", ctx.t(labelKey));
  el.title = ctx.t(labelKey);
  return el;
}

export function versionPager(message, ctx, show) {
  const total = versionCount(message);
  if (total < 2 || !message.room_id || (message.state && message.state !== "done")) return null;
  const box = document.createElement("span");
  box.className = "version-pager";
  box.dataset.testid = "version-pager";
  const previous = arrow("‹", "versions.previous", ctx);
  const next = arrow("›", "versions.next", ctx);
  const label = document.createElement("span");
  label.className = "version-label";
  label.dataset.testid = "version-label";
  box.append(previous, label, next);
  let shown = total;
  let earlier = null; // the versions the message replaced, oldest first, once read

  function render() {
    label.textContent = `${shown}/${total}`;
    label.title = ctx.t("versions.label", { n: shown, total });
    previous.disabled = shown <= 1;
    next.disabled = shown >= total;
    box.dataset.shown = String(shown);
  }

  async function go(step) {
    const target = shown + step;
    if (target < 1 || target > total) return;
    if (target < total && earlier === null) {
      const path =
        `/v1/rooms/${encodeURIComponent(message.room_id)}` +
        `/messages/${encodeURIComponent(message.id)}/versions`;
      earlier = (await ctx.api(path)).previous;
    }
    shown = target;
    show(target === total ? message.content || "" : earlier[target - 1]?.content || "");
    render();
  }

  previous.addEventListener("click", () => go(-1).catch(ctx.reportError));
  next.addEventListener("click", () => go(1).catch(ctx.reportError));
  render();
  return box;
}
