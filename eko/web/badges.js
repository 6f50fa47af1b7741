// Chain badges (seed reflexive-chain-anti-loop): under an answer the reflexive chain ran for,
// one badge per stage — [OL1 ▸ 2 turns] [M1 ▸ 1 turn] [M2 ▸ 1 turn] — collapsed by default; a
// click unfolds that stage: model, tools called with their arguments and results, duration.
// Everything from the message is inserted as text, never as HTML.

import { el, ensureCss, formatDuration, label, registerLabels } from "./lobby_labels.js";

const RESULT_CHARS = 400;

// The chain's report of a message, or null when the chain did not run for it (same rule as the
// API's ChatOut: reflexive, with a stored report). A chain that fell back to the simple path
// still shows the stages it ran, and a badge saying why it gave way.
export function chainOf(message) {
  const meta = (message && message.metadata) || {};
  const complexity = meta.complexity || {};
  const chain = meta.chain;
  if (complexity.mode !== "reflexive" || !chain || typeof chain !== "object") return null;
  const stages = Array.isArray(chain.chain) ? chain.chain : [];
  const skipped = Array.isArray(chain.skipped) ? chain.skipped : [];
  // Stored before reports named the reason: a fallback then always meant "no reply".
  const fallback = chain.fallback || (complexity.chain_fallback ? "no_reply" : null);
  if (!stages.length && !skipped.length && !fallback) return null;
  return { stages, skipped, fallback };
}

function short(value) {
  let text;
  if (typeof value === "string") text = value;
  else {
    try {
      text = JSON.stringify(value);
    } catch {
      text = String(value);
    }
  }
  if (text === undefined) text = "";
  return text.length > RESULT_CHARS ? `${text.slice(0, RESULT_CHARS - 1)}…` : text;
}

function turnsLabel(ctx, turns) {
  const n = Number(turns) || 0;
  return n === 1 ? label(ctx, "chain.turn") : label(ctx, "chain.turns", { n });
}

function detailOf(stage, ctx) {
  const box = el("div", "chain-detail", null, { "data-testid": "chain-detail", role: "region" });
  const facts = el("dl", "chain-facts");
  const add = (key, value) => {
    facts.append(el("dt", "", label(ctx, key)), el("dd", "", value));
  };
  add("chain.model", stage.model || "?");
  add("chain.duration", formatDuration(stage.duration_ms));
  add("chain.status", [stage.status, stage.stop_reason].filter(Boolean).join(" · "));
  box.appendChild(facts);
  const tools = Array.isArray(stage.tools_used) ? stage.tools_used : [];
  box.appendChild(el("div", "chain-tools-title", label(ctx, "chain.tools")));
  if (!tools.length) {
    box.appendChild(el("div", "chain-tools-none", label(ctx, "chain.noTools")));
    return box;
  }
  const list = el("ol", "chain-tools");
  for (const tool of tools) {
    const item = el("li", "chain-tool", null, { "data-testid": "chain-tool" });
    item.appendChild(el("code", "chain-tool-call", `${tool.name}(${short(tool.args ?? {})})`));
    if (tool.error) {
      item.appendChild(el("div", "chain-tool-error", `${label(ctx, "chain.error")}: ${short(tool.error)}`));
    } else {
      item.appendChild(el("pre", "chain-tool-result", `${label(ctx, "chain.result")}: ${short(tool.result)}`));
    }
    list.appendChild(item);
  }
  box.appendChild(list);
  return box;
}

// The badges of a message (an HTMLElement), or null for a message the chain did not write.
export function renderChainBadges(message, ctx) {
  const chain = chainOf(message);
  if (!chain) return null;
  registerLabels();
  ensureCss("lobby.css");
  const root = el("div", "chain-badges", null, {
    "data-testid": "chain-badges",
    "aria-label": label(ctx, "chain.label"),
  });
  const row = el("div", "chain-badge-row");
  const details = el("div", "chain-details");
  root.append(row, details);
  chain.stages.forEach((stage, index) => {
    const id = `chain-${(message && message.id) || "m"}-${index}`;
    const badge = el("button", "chain-badge", `${stage.node} ▸ ${turnsLabel(ctx, stage.turns)}`, {
      type: "button",
      "data-testid": "chain-badge",
      "data-node": stage.node,
      "aria-expanded": "false",
      "aria-controls": id,
      title: `${stage.node} · ${stage.model || ""} · ${formatDuration(stage.duration_ms)}`,
    });
    if (stage.status && stage.status !== "ok") badge.classList.add("chain-badge-warn");
    let detail = null;
    badge.addEventListener("click", () => {
      const open = badge.getAttribute("aria-expanded") === "true";
      badge.setAttribute("aria-expanded", open ? "false" : "true");
      badge.classList.toggle("open", !open);
      if (open) {
        if (detail) detail.hidden = true;
        return;
      }
      if (!detail) {
        detail = detailOf(stage, ctx);
        detail.id = id;
        detail.dataset.node = stage.node;
        details.appendChild(detail);
      }
      detail.hidden = false;
    });
    row.appendChild(badge);
  });
  for (const skipped of chain.skipped) {
    row.appendChild(
      el("span", "chain-badge chain-badge-skipped", `${skipped.node} ▸ ${label(ctx, "chain.skipped", { reason: skipped.reason || "?" })}`, {
        "data-testid": "chain-badge-skipped",
      }),
    );
  }
  if (chain.fallback) {
    row.appendChild(
      el("span", "chain-badge chain-badge-fallback", label(ctx, "chain.fallback", { reason: chain.fallback }), {
        "data-testid": "chain-fallback",
      }),
    );
  }
  return root;
}
