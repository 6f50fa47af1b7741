// The lobby's status bar (seed reactive-eko): the live phase of a reflection — gathering →
// context → thinking → done — from the `reflection:phase` events; once done it shows the
// decision (a pass in red, a message in violet) and fades out after 5 s. A right-click opens a
// panel: today's and all-time counters, the history (date, duration, tokens) and a button that
// triggers a reflection now (bypassing the rate limits). A left click elsewhere closes it.

import { el, errorText, formatDate, formatDuration, label } from "./lobby_labels.js";

export const FADE_MS = 5000;
const PHASES = ["gathering", "context", "thinking", "done"];
const HISTORY_ROWS = 10;

export function createStatusBar(ctx, roomId, { assistantName = "Eko" } = {}) {
  const base = `/v1/rooms/${encodeURIComponent(roomId)}/reflection`;
  const bar = el("div", "statusbar idle", null, {
    "data-testid": "statusbar",
    "data-phase": "idle",
    title: label(ctx, "status.hint"),
    role: "status",
    "aria-live": "polite",
  });
  const name = el("span", "statusbar-name", assistantName);
  const live = el("span", "statusbar-live");
  const phaseText = el("span", "statusbar-phase", "", { "data-testid": "statusbar-phase" });
  const steps = el("span", "statusbar-steps", null, { "aria-hidden": "true" });
  const stepEls = {};
  for (const phase of PHASES) {
    stepEls[phase] = el("span", "statusbar-step", "", { "data-step": phase });
    steps.appendChild(stepEls[phase]);
  }
  live.append(phaseText, steps);
  bar.append(name, live);

  let trail = [];
  let fadeTimer = null;
  let panel = null;
  let closed = false;

  function show(phase, action) {
    if (phase === "gathering" || !trail.length) trail = [];
    if (trail[trail.length - 1] !== phase) trail.push(phase);
    bar.dataset.phase = phase;
    bar.dataset.trail = trail.join(" ");
    bar.classList.remove("idle", "faded", "decision-pass", "decision-message");
    bar.classList.toggle("active", phase !== "done");
    bar.classList.toggle("done", phase === "done");
    for (const step of PHASES) {
      stepEls[step].classList.toggle("seen", trail.includes(step));
      stepEls[step].classList.toggle("current", step === phase);
    }
    clearTimeout(fadeTimer);
    if (phase === "done") {
      const decision = action === "message" ? "message" : "pass";
      bar.dataset.action = decision;
      bar.classList.add(`decision-${decision}`);
      phaseText.textContent = label(ctx, `status.done.${decision}`);
      fadeTimer = setTimeout(() => {
        bar.classList.add("faded");
        bar.dataset.phase = "idle";
      }, FADE_MS);
    } else {
      delete bar.dataset.action;
      phaseText.textContent = label(ctx, `status.${phase}`);
    }
  }

  // One event of the shared stream (already filtered to this room by the caller).
  function onEvent(event) {
    if (closed || !event) return;
    const data = event.data || {};
    if (event.type === "reflection:phase" && PHASES.includes(data.phase)) {
      show(data.phase, data.action);
    } else if (event.type === "reflection:update" && panel) {
      refreshPanel();
    }
  }

  // --- the panel ---------------------------------------------------------------------------

  function counters(title, rows) {
    const box = el("div", "panel-counters");
    box.appendChild(el("h4", "", title));
    const list = el("dl", "");
    for (const [key, value, testid] of rows) {
      list.append(el("dt", "", label(ctx, key)), el("dd", "", value, { "data-testid": testid }));
    }
    box.appendChild(list);
    return box;
  }

  function historyTable(history) {
    if (!history.length) return el("p", "panel-empty", label(ctx, "panel.none"));
    const table = el("table", "panel-history", null, { "data-testid": "panel-history" });
    const head = el("tr");
    for (const key of ["panel.date", "panel.decision", "panel.duration", "panel.tokens", "panel.reason"]) {
      head.appendChild(el("th", "", label(ctx, key)));
    }
    table.appendChild(el("thead")).appendChild(head);
    const body = el("tbody");
    for (const r of history.slice(0, HISTORY_ROWS)) {
      const row = el("tr", `history-${r.action}`, null, { "data-testid": "history-row" });
      row.append(
        el("td", "", formatDate(ctx, r.timestamp)),
        el("td", `decision decision-${r.action}`, label(ctx, `action.${r.action}`) + (r.skipped ? ` (${r.skipped})` : "")),
        el("td", "", formatDuration(r.duration_ms)),
        el("td", "", String(r.llm_tokens ?? 0)),
        el("td", "reason", r.reason || ""),
      );
      body.appendChild(row);
    }
    table.appendChild(body);
    return table;
  }

  function fillPanel(status) {
    const content = panel.querySelector(".panel-content");
    content.replaceChildren();
    const today = status.today || {};
    const stats = status.stats || {};
    content.appendChild(
      counters(label(ctx, "panel.today"), [
        ["panel.interventions", today.messages ?? stats.interventions_today ?? 0, "today-interventions"],
        ["panel.passes", today.passes ?? 0, "today-passes"],
        ["panel.modelCalls", today.model_calls ?? 0, "today-model-calls"],
        ["panel.tokens", today.tokens ?? 0, "today-tokens"],
      ]),
    );
    content.appendChild(
      counters(label(ctx, "panel.total"), [
        ["panel.reflections", stats.total_reflections ?? 0, "total-reflections"],
        ["panel.messages", stats.message_count ?? 0, "total-messages"],
        ["panel.passes", stats.pass_count ?? 0, "total-passes"],
        ["panel.rateLimited", stats.rate_limited_count ?? 0, "total-rate-limited"],
        ["panel.modelCalls", stats.model_calls ?? 0, "total-model-calls"],
        ["panel.tokens", stats.total_tokens ?? 0, "total-tokens"],
      ]),
    );
    if (stats.next_allowed_at) {
      content.appendChild(
        el("p", "panel-next", label(ctx, "panel.nextAllowed", { at: formatDate(ctx, stats.next_allowed_at) })),
      );
    }
    content.appendChild(el("h4", "", label(ctx, "panel.history")));
    content.appendChild(historyTable(status.history || []));
  }

  async function refreshPanel() {
    if (!panel) return;
    const current = panel;
    try {
      const status = await ctx.api(`${base}/status`);
      if (panel === current) fillPanel(status);
    } catch (error) {
      if (panel === current) {
        current.querySelector(".panel-content").replaceChildren(
          el("p", "panel-error", label(ctx, "panel.error", { error: errorText(error) })),
        );
      }
    }
  }

  async function trigger(button) {
    button.disabled = true;
    button.textContent = label(ctx, "panel.triggering");
    try {
      const result = await ctx.api(`${base}/trigger`, { method: "POST", json: {} });
      // The stream may have been down: the answer alone still ends the phase display.
      if (bar.dataset.phase !== "done" && result && result.reflection) {
        show("done", result.reflection.action);
      }
      await refreshPanel();
    } catch (error) {
      const content = panel && panel.querySelector(".panel-content");
      if (content) content.prepend(el("p", "panel-error", label(ctx, "panel.error", { error: errorText(error) })));
    } finally {
      button.disabled = false;
      button.textContent = label(ctx, "panel.trigger");
    }
  }

  function openPanel(x, y) {
    closePanel();
    panel = el("div", "reflection-panel", null, {
      "data-testid": "reflection-panel",
      role: "dialog",
      "aria-label": label(ctx, "panel.title"),
    });
    const head = el("div", "panel-head");
    head.appendChild(el("h3", "", label(ctx, "panel.title")));
    const triggerButton = el("button", "panel-trigger", label(ctx, "panel.trigger"), {
      type: "button",
      "data-testid": "reflection-trigger",
    });
    triggerButton.addEventListener("click", () => trigger(triggerButton));
    const close = el("button", "panel-close", "×", { type: "button", "aria-label": label(ctx, "panel.close") });
    close.addEventListener("click", closePanel);
    head.append(triggerButton, close);
    panel.append(head, el("div", "panel-content"));
    panel.style.top = `${Math.max(8, y)}px`;
    document.body.appendChild(panel);
    // Placed once its width is known (lobby.css), so it never sticks out on the right.
    panel.style.left = `${Math.max(8, Math.min(x, window.innerWidth - panel.offsetWidth - 8))}px`;
    refreshPanel();
  }

  function closePanel() {
    if (panel) panel.remove();
    panel = null;
  }

  function onContextMenu(event) {
    event.preventDefault();
    openPanel(event.clientX, event.clientY + 8);
  }

  // A left click outside the panel closes it; Escape too.
  function onDocumentClick(event) {
    if (panel && event.button === 0 && !panel.contains(event.target)) closePanel();
  }
  function onKey(event) {
    if (event.key === "Escape") closePanel();
  }

  bar.addEventListener("contextmenu", onContextMenu);
  document.addEventListener("click", onDocumentClick, true);
  document.addEventListener("keydown", onKey);

  // A reflection already under way in this process when the lobby opens.
  function resume(status) {
    const state = status && status.live;
    if (state && state.phase && state.phase !== "done") show(state.phase, state.action);
  }

  function destroy() {
    closed = true;
    clearTimeout(fadeTimer);
    closePanel();
    document.removeEventListener("click", onDocumentClick, true);
    document.removeEventListener("keydown", onKey);
  }

  return { element: bar, onEvent, resume, openPanel, closePanel, destroy };
}
