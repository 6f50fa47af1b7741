// What a reply says about itself while and after it is written (issue #37, honest waiting):
//   typing     "Eko is writing…" with moving dots, from the moment a message is sent until
//              the first word (or the queue's place, messages.js) arrives
//   cause      a fallback answer: why no model answered (metadata.fallback_cause: busy,
//              timeout, unreachable, error), in the page's language, never a raw code
//   truncated  a reply cut at the model's token limit (metadata.truncated, not stopped by the
//              person): a "cut here" marker, and on the last reply a Continue button

import { registerTranslations } from "./i18n.js";

registerTranslations({
  en: {
    "reply.typing": "{name} is writing",
    "reply.cause.busy": "The model was busy with other people and ran out of time.",
    "reply.cause.timeout": "The model took too long to answer.",
    "reply.cause.unreachable": "The model could not be reached.",
    "reply.cause.error": "The model failed to answer.",
    "reply.cut": "Cut here: the reply reached its length limit.",
    "reply.continue": "Continue",
    "reply.continue.prompt": "Continue.",
  },
  fr: {
    "reply.typing": "{name} écrit",
    "reply.cause.busy": "Le modèle était occupé par d'autres personnes et a manqué de temps.",
    "reply.cause.timeout": "Le modèle a mis trop de temps à répondre.",
    "reply.cause.unreachable": "Le modèle est injoignable.",
    "reply.cause.error": "Le modèle n'a pas pu répondre.",
    "reply.cut": "Coupée ici : la réponse a atteint sa longueur maximale.",
    "reply.continue": "Continuer",
    "reply.continue.prompt": "Continue.",
  },
});

const CAUSES = new Set(["busy", "timeout", "unreachable", "error"]);

function isFallback(message) {
  return message.type === "fallback" || message.source === "fallback" || !!message.metadata?.fallback;
}

// The typing indicator of a reply being written that has no text yet, or null.
export function typingIndicator(message, ctx) {
  if (message.role !== "assistant" || message.state !== "streaming") return null;
  if (message.content || message.queued) return null;
  const el = document.createElement("p");
  el.className = "msg-typing";
  el.dataset.testid = "typing";
  el.setAttribute("role", "status");
  const text = document.createElement("span");
  text.textContent = ctx.t("reply.typing", { name: ctx.t("chat.assistant") });
  const dots = document.createElement("span");
  dots.className = "typing-dots";
  dots.setAttribute("aria-hidden", "true");
  for (let i = 0; i < 3; i++) dots.append(document.createElement("i"));
  el.append(text, dots);
  return el;
}

// The cause line of a fallback answer, or null.
export function fallbackCause(message, ctx) {
  if (message.role !== "assistant" || (message.state || "done") !== "done") return null;
  if (!isFallback(message)) return null;
  const cause = message.metadata?.fallback_cause;
  const el = document.createElement("p");
  el.className = "msg-cause";
  el.dataset.testid = "fallback-cause";
  el.dataset.cause = CAUSES.has(cause) ? cause : "error";
  el.textContent = ctx.t(`reply.cause.${el.dataset.cause}`);
  return el;
}

export function isTruncated(message) {
  const meta = message.metadata || {};
  // Stopped by the person or broken mid-stream are stored truncated too: their badges say so.
  if (meta.stopped || meta.incomplete || isFallback(message)) return false;
  return message.role === "assistant" && !!meta.truncated;
}

// The "cut here" marker of a truncated reply (with Continue when `onContinue` is given).
export function truncationMarker(message, ctx, onContinue) {
  if ((message.state || "done") !== "done" || !isTruncated(message)) return null;
  const el = document.createElement("div");
  el.className = "msg-cut";
  el.dataset.testid = "truncated";
  const line = document.createElement("span");
  line.className = "msg-cut-line";
  line.textContent = ctx.t("reply.cut");
  el.append(line);
  if (onContinue) {
    const more = document.createElement("button");
    more.type = "button";
    more.className = "msg-continue";
    more.dataset.testid = "continue";
    more.textContent = ctx.t("reply.continue");
    more.addEventListener("click", () => onContinue(ctx.t("reply.continue.prompt")));
    el.append(more);
  }
  return el;
}
