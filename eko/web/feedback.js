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
  for (const [rating, symbol] of [["up", "👍"], ["down", "👎"]]) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = `icon feedback-${rating}`;
    b.textContent = symbol;
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
