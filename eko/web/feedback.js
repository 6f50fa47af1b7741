// 👍/👎 on an assistant reply (POST /v1/messages/{id}/feedback). A thumbs up teaches the memory
// guard (the reply is learned for the rater, or the page says why not); a thumbs down takes it
// back. The rating shown is the one stored on the message (metadata.feedback[<me>]).
//
// feedbackButtons(message, ctx) -> HTMLElement

import { registerTranslations } from "./i18n.js";

registerTranslations({
  en: {
    "feedback.up": "Good answer",
    "feedback.down": "Bad answer",
    "feedback.learned": "Thanks: remembered for next time.",
    "feedback.thanks": "Thanks for the feedback.",
    "feedback.refused": "Thanks. Not remembered: {reason}",
    "feedback.failed": "The rating could not be saved.",
  },
  fr: {
    "feedback.up": "Bonne réponse",
    "feedback.down": "Mauvaise réponse",
    "feedback.learned": "Merci : retenu pour la prochaine fois.",
    "feedback.thanks": "Merci pour votre avis.",
    "feedback.refused": "Merci. Non retenu : {reason}",
    "feedback.failed": "L’avis n’a pas pu être enregistré.",
  },
});

// A thumb drawn in SVG: an emoji needs a colour-emoji font, which many Linux desktops lack.
const THUMB =
  "M2 10h4v11H2zM8 21h9.3a2 2 0 0 0 2-1.6l1.4-7A2 2 0 0 0 18.7 10H14V5.5A2.5 2.5 0 0 0 11.5 3L8 10z";
const SVG = "http://www.w3.org/2000/svg";

function thumb(rating) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("width", "16");
  svg.setAttribute("height", "16");
  svg.setAttribute("aria-hidden", "true");
  if (rating === "down") svg.setAttribute("transform", "rotate(180)");
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", THUMB);
  path.setAttribute("fill", "none");
  path.setAttribute("stroke", "currentColor");
  path.setAttribute("stroke-width", "1.8");
  path.setAttribute("stroke-linejoin", "round");
  svg.append(path);
  return svg;
}

function ratingOf(message, ctx) {
  return message.metadata?.feedback?.[ctx.me?.public_id]?.rating || null;
}

export function feedbackButtons(message, ctx) {
  const box = document.createElement("span");
  box.className = "feedback";
  const note = document.createElement("span");
  note.className = "feedback-note muted";
  note.dataset.testid = "feedback-note";
  note.setAttribute("role", "status");
  const buttons = {};
  for (const rating of ["up", "down"]) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = `icon feedback-${rating}`;
    b.append(thumb(rating));
    b.setAttribute("aria-label", ctx.t(`feedback.${rating}`));
    b.title = ctx.t(`feedback.${rating}`);
    b.addEventListener("click", () => rate(rating));
    buttons[rating] = b;
  }

  function show(current) {
    for (const [rating, b] of Object.entries(buttons)) {
      b.setAttribute("aria-pressed", String(current === rating));
    }
  }

  async function rate(rating) {
    for (const b of Object.values(buttons)) b.disabled = true;
    try {
      const out = await ctx.api(`/v1/messages/${encodeURIComponent(message.id)}/feedback`, {
        method: "POST",
        json: { rating },
      });
      // Kept on the message, so a redraw of it shows the rating.
      message.metadata = {
        ...(message.metadata || {}),
        feedback: { ...(message.metadata?.feedback || {}), [ctx.me.public_id]: { rating } },
      };
      show(rating);
      if (rating === "up" && out.refused) {
        note.textContent = ctx.t("feedback.refused", { reason: out.refused_reason || out.refused });
      } else {
        note.textContent = ctx.t(rating === "up" && out.entry_id ? "feedback.learned" : "feedback.thanks");
      }
    } catch (error) {
      note.textContent = ctx.t("feedback.failed");
      ctx.reportError(error);
    } finally {
      for (const b of Object.values(buttons)) b.disabled = false;
    }
  }

  show(ratingOf(message, ctx));
  box.append(buttons.up, buttons.down, note);
  return box;
}
