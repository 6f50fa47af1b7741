// One message as a DOM element: stable, testable, updated in place.
//   <article class="msg msg-<role> state-<state>" data-message-id data-role data-state>
// state: pending (own message not stored yet) | streaming | done | failed

import { enhanceCodeBlocks } from "./code_blocks.js";
import { editButton } from "./edit_message.js";
import { feedbackButtons } from "./feedback.js";
import { fallbackCause, truncationMarker, typingIndicator } from "./reply_status.js";
import { versionPager } from "./versions.js";

const BADGES = [
  ["cache", (m) => m.type === "cached_response" || m.source === "cache"],
  ["fallback", (m) => m.type === "fallback" || m.source === "fallback" || !!m.metadata?.fallback],
  ["paywall", (m) => m.type === "paywall" || m.source === "paywall"],
  ["stopped", (m) => !!m.metadata?.stopped],
  ["broken", (m) => !!m.metadata?.incomplete && !m.metadata?.stopped],
];

export function badgesOf(message) {
  return BADGES.filter(([, test]) => test(message)).map(([name]) => name);
}

// Clipboard API where it exists (secure contexts); a hidden textarea + execCommand elsewhere
// (plain http on a LAN address).
export async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      /* fall through to the old way */
    }
  }
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.className = "offscreen";
  document.body.append(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } finally {
    area.remove();
  }
  return ok;
}

function button(className, labelKey, symbol, ctx) {
  const el = document.createElement("button");
  el.type = "button";
  el.className = `icon ${className}`;
  el.textContent = symbol;
  el.setAttribute("aria-label", ctx.t(labelKey));
  el.title = ctx.t(labelKey);
  return el;
}

// A new element for `message`; `actions` = {onRegenerate(message), onContinue(prompt)} add the
// regenerate and continue buttons when the caller allows them (last assistant reply), and
// {onEdit(message, content)} the edit button (the person's own last message).
export function createMessageElement(message, ctx, actions = {}) {
  const el = document.createElement("article");
  updateMessageElement(el, message, ctx, actions);
  return el;
}

export function updateMessageElement(el, message, ctx, actions = {}) {
  const state = message.state || "done";
  el.className = `msg msg-${message.role} state-${state}`;
  el.dataset.messageId = message.id;
  el.dataset.role = message.role;
  el.dataset.state = state;
  const body = document.createElement("div");
  body.className = "msg-body";
  const fill = (content) => {
    if (message.role === "assistant") {
      body.innerHTML = ctx.renderMarkdown(content);
      enhanceCodeBlocks(body, ctx, { highlight: state === "done", copy: copyText });
    } else body.textContent = content;
  };
  fill(message.content || "");
  const parts = [body];
  if (message.queued && state === "streaming") {
    const queued = document.createElement("p");
    queued.className = "msg-queued";
    queued.dataset.testid = "queued";
    queued.setAttribute("role", "status");
    queued.textContent = ctx.t("chat.queued", message.queued);
    parts.unshift(queued);
  }
  const typing = typingIndicator({ ...message, state }, ctx);
  if (typing) parts.unshift(typing);
  const cut = truncationMarker(message, ctx, actions.onContinue);
  if (cut) parts.push(cut);
  const cause = fallbackCause(message, ctx);
  if (cause) parts.push(cause);
  if (message.error) {
    const error = document.createElement("p");
    error.className = "msg-error";
    error.setAttribute("role", "alert");
    error.textContent = ctx.t("chat.failed", { detail: message.error });
    parts.push(error);
  }
  const names = badgesOf(message);
  if (message.version > 1) names.push(`version:${message.version}`);
  if (names.length) {
    const badges = document.createElement("div");
    badges.className = "msg-badges";
    for (const name of names) {
      const badge = document.createElement("span");
      const [kind, n] = name.split(":");
      badge.className = `badge badge-${kind}`;
      badge.textContent = kind === "version" ? ctx.t("chat.version", { n }) : ctx.t(`badge.${kind}`);
      badges.append(badge);
    }
    parts.push(badges);
  }
  if (state === "done" || state === "failed") {
    const bar = document.createElement("div");
    bar.className = "msg-actions";
    const copy = button("copy", "chat.copy", "❐", ctx);
    copy.addEventListener("click", async () => {
      if (await copyText(message.content || "")) {
        copy.classList.add("copied");
        copy.textContent = "✓";
        copy.title = ctx.t("chat.copied");
      }
    });
    const pager = versionPager(message, ctx, fill);
    if (pager) bar.prepend(pager);
    bar.append(copy);
    if (actions.onEdit && message.role === "user" && state === "done") {
      bar.append(editButton(message, ctx, actions.onEdit));
    }
    if (actions.onRegenerate && message.role === "assistant" && state === "done") {
      const again = button("regenerate", "chat.regenerate", "↻", ctx);
      again.addEventListener("click", () => actions.onRegenerate(message));
      bar.append(again);
    }
    if (message.role === "assistant" && state === "done" && ctx.me && !message.id.startsWith("reply-")) {
      bar.append(feedbackButtons(message, ctx));
    }
    parts.push(bar);
  }
  el.replaceChildren(...parts);
  if (message.role === "assistant" && ctx.chainBadges && state === "done") {
    const chain = ctx.chainBadges(message, ctx);
    if (chain) el.append(chain);
  }
  return el;
}
