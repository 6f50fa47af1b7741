// Staff pages: the memory guard's cache entries (search, usage counts, mark obsolete, delete),
// memories (facts / self / goals per scope, with the turn each was learned from, delete) and
// background jobs (queued, failed with their error; retry, cancel). Staff only: the API answers
// 403 to anyone else, and the page says so.
//
// mountStaff(container, ctx, page) with page in {"guard", "memory", "jobs"} -> unmount()

import {
  el,
  ensureCss,
  errorText,
  formatDate,
  label,
  registerLabels,
} from "./lobby_labels.js";

const PAGES = ["guard", "memory", "jobs"];
const TEXT_CHARS = 600;

function clip(text) {
  const value = String(text ?? "");
  return value.length > TEXT_CHARS ? `${value.slice(0, TEXT_CHARS - 1)}…` : value;
}

// A delete button that asks again in place (no native dialog) before calling `action`.
function confirmButton(ctx, onConfirm) {
  const box = el("span", "confirm");
  const ask = el("button", "danger", label(ctx, "staff.delete"), { type: "button", "data-testid": "delete" });
  box.appendChild(ask);
  ask.addEventListener("click", () => {
    const yes = el("button", "danger", label(ctx, "staff.confirmDelete"), {
      type: "button",
      "data-testid": "confirm-delete",
    });
    const no = el("button", "", label(ctx, "staff.cancel"), { type: "button" });
    no.addEventListener("click", () => box.replaceChildren(ask));
    yes.addEventListener("click", async () => {
      yes.disabled = true;
      await onConfirm();
    });
    box.replaceChildren(yes, no);
  });
  return box;
}

function staffOnly(body, ctx) {
  body.replaceChildren(el("p", "staff-only", label(ctx, "staff.only"), { role: "alert", "data-testid": "staff-only" }));
}

function showError(body, ctx, error) {
  if (error && error.status === 403) return staffOnly(body, ctx);
  body.prepend(el("p", "staff-error", label(ctx, "staff.error", { error: errorText(error) }), { role: "alert" }));
}

// --- memory guard --------------------------------------------------------------------------

async function guardPage(body, ctx) {
  const form = el("form", "staff-toolbar");
  const q = el("input", "", null, {
    type: "search",
    placeholder: label(ctx, "staff.search"),
    "aria-label": label(ctx, "staff.search"),
    "data-testid": "guard-search",
    maxlength: 200,
  });
  const status = el("select", "", null, { "aria-label": label(ctx, "staff.status"), "data-testid": "guard-status" });
  for (const value of ["", "active", "obsolete"]) {
    status.appendChild(el("option", "", label(ctx, value ? `staff.${value}` : "staff.all"), { value }));
  }
  form.append(q, status, el("button", "", label(ctx, "staff.searchButton"), { type: "submit" }));
  const total = el("p", "staff-total", "", { "data-testid": "guard-total" });
  const list = el("div", "staff-list", null, { "data-testid": "guard-list" });
  body.append(form, total, list);

  async function load() {
    const params = new URLSearchParams({ limit: "100" });
    if (q.value.trim()) params.set("q", q.value.trim());
    if (status.value) params.set("status", status.value);
    let page;
    try {
      page = await ctx.api(`/v1/staff/memory?${params}`);
    } catch (error) {
      list.replaceChildren();
      return showError(body, ctx, error);
    }
    total.textContent = label(ctx, "staff.total", { n: page.total });
    list.replaceChildren(...page.items.map(entryCard));
    if (!page.items.length) list.appendChild(el("p", "staff-empty", label(ctx, "staff.empty")));
  }

  function entryCard(entry) {
    const card = el("article", `staff-card guard-entry status-${entry.status}`, null, {
      "data-testid": "guard-entry",
      "data-entry-id": entry.id,
      "data-status": entry.status,
    });
    const head = el("div", "staff-card-head");
    head.append(
      el("span", `badge badge-${entry.status}`, label(ctx, `staff.${entry.status}`), { "data-testid": "entry-status" }),
      el("span", "usage", label(ctx, "staff.usage", { n: entry.usage_count }), { "data-testid": "entry-usage" }),
      el("span", "muted", `${label(ctx, "staff.scope")}: ${entry.scope}`),
      el("span", "muted", formatDate(ctx, entry.created_at)),
    );
    const question = el("p", "guard-question", clip(entry.question));
    const answer = el("div", "guard-answer", clip(entry.answer));
    const actions = el("div", "staff-actions");
    if (entry.status === "active") {
      const obsolete = el("button", "", label(ctx, "staff.markObsolete"), { type: "button", "data-testid": "mark-obsolete" });
      obsolete.addEventListener("click", async () => {
        obsolete.disabled = true;
        try {
          const updated = await ctx.api(`/v1/staff/memory/${encodeURIComponent(entry.id)}/obsolete`, { method: "POST" });
          card.replaceWith(entryCard(updated));
        } catch (error) {
          obsolete.disabled = false;
          showError(body, ctx, error);
        }
      });
      actions.appendChild(obsolete);
    }
    actions.appendChild(
      confirmButton(ctx, async () => {
        try {
          await ctx.api(`/v1/staff/memory/${encodeURIComponent(entry.id)}`, { method: "DELETE" });
          card.remove();
        } catch (error) {
          showError(body, ctx, error);
        }
      }),
    );
    card.append(head, question, answer, actions);
    return card;
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    load();
  });
  status.addEventListener("change", load);
  await load();
}

// --- memories ------------------------------------------------------------------------------

const KINDS = [
  ["fact", "staff.facts"],
  ["self", "staff.self"],
  ["goal", "staff.goals"],
];

async function memoryPage(body, ctx) {
  const toolbar = el("div", "staff-toolbar");
  const refresh = el("button", "", label(ctx, "staff.refresh"), { type: "button" });
  toolbar.appendChild(refresh);
  const list = el("div", "staff-scopes", null, { "data-testid": "memory-list" });
  body.append(toolbar, list);

  async function sources(item, box, button) {
    button.disabled = true;
    try {
      const found = await ctx.api(`/v1/memory/items/${encodeURIComponent(item.id)}/sources`);
      const quotes = el("div", "memory-sources", null, { "data-testid": "memory-sources" });
      if (!found.turns.length) {
        quotes.appendChild(el("p", "muted", label(ctx, found.hidden ? "staff.hiddenSource" : "staff.noSource")));
      }
      for (const turn of found.turns) {
        const quote = el("blockquote", `source-turn source-${turn.role}`, null, { "data-message-id": turn.id });
        quote.append(
          el("span", "muted", `${turn.role} · #${turn.seq} · ${formatDate(ctx, turn.created_at)} · ${turn.room_id}`),
          el("p", "", clip(turn.content)),
        );
        quotes.appendChild(quote);
      }
      box.replaceChildren(quotes);
    } catch (error) {
      button.disabled = false;
      showError(body, ctx, error);
    }
  }

  function itemRow(item) {
    const row = el("li", `memory-item kind-${item.kind}`, null, { "data-testid": "memory-item", "data-item-id": item.id });
    const text = el("p", "memory-content", clip(item.content));
    const meta = el(
      "span",
      "muted",
      [item.subject, item.status, `×${item.mention_count}`, formatDate(ctx, item.updated_at)].filter(Boolean).join(" · "),
    );
    const actions = el("div", "staff-actions");
    const sourceBox = el("div", "memory-source-box");
    if (item.source_message_id) {
      const show = el("button", "", label(ctx, "staff.sources"), { type: "button", "data-testid": "show-sources" });
      show.addEventListener("click", () => sources(item, sourceBox, show));
      actions.appendChild(show);
    } else {
      actions.appendChild(el("span", "muted", label(ctx, "staff.noSource")));
    }
    actions.appendChild(
      confirmButton(ctx, async () => {
        try {
          await ctx.api(`/v1/memory/items/${encodeURIComponent(item.id)}`, { method: "DELETE" });
          row.remove();
        } catch (error) {
          showError(body, ctx, error);
        }
      }),
    );
    row.append(text, meta, actions, sourceBox);
    return row;
  }

  async function load() {
    let items;
    try {
      items = await ctx.api("/v1/memory/items?limit=500");
    } catch (error) {
      list.replaceChildren();
      return showError(body, ctx, error);
    }
    const scopes = new Map();
    for (const item of items) {
      if (!scopes.has(item.scope)) scopes.set(item.scope, []);
      scopes.get(item.scope).push(item);
    }
    const sections = [];
    for (const [scope, scoped] of [...scopes.entries()].sort(([a], [b]) => a.localeCompare(b))) {
      const section = el("section", "memory-scope", null, { "data-testid": "memory-scope", "data-scope": scope });
      section.appendChild(el("h3", "", scope));
      const columns = el("div", "memory-kinds");
      for (const [kind, key] of KINDS) {
        const ofKind = scoped.filter((item) => item.kind === kind);
        const column = el("div", `memory-kind kind-${kind}`, null, { "data-kind": kind });
        column.appendChild(el("h4", "", `${label(ctx, key)} (${ofKind.length})`));
        const ul = el("ul");
        for (const item of ofKind) ul.appendChild(itemRow(item));
        column.appendChild(ul);
        columns.appendChild(column);
      }
      section.appendChild(columns);
      sections.push(section);
    }
    list.replaceChildren(...sections);
    if (!sections.length) list.appendChild(el("p", "staff-empty", label(ctx, "staff.empty")));
  }

  refresh.addEventListener("click", load);
  await load();
}

// --- background jobs -----------------------------------------------------------------------

function cell(child) {
  const td = el("td");
  td.appendChild(child);
  return td;
}

async function jobsPage(body, ctx) {
  const toolbar = el("div", "staff-toolbar");
  const status = el("select", "", null, { "aria-label": label(ctx, "staff.status"), "data-testid": "jobs-status" });
  for (const value of ["", "queued", "running", "failed", "succeeded", "cancelled"]) {
    status.appendChild(el("option", "", value || label(ctx, "staff.all"), { value }));
  }
  const refresh = el("button", "", label(ctx, "staff.refresh"), { type: "button", "data-testid": "jobs-refresh" });
  const summary = el("span", "muted", "", { "data-testid": "jobs-counts" });
  toolbar.append(status, refresh, summary);
  const table = el("table", "staff-table", null, { "data-testid": "jobs-table" });
  body.append(toolbar, table);

  function jobRow(job) {
    const row = el("tr", `job status-${job.status}`, null, {
      "data-testid": "job",
      "data-job-id": job.id,
      "data-status": job.status,
    });
    const actions = el("td", "staff-actions");
    const act = (kind, key) => {
      const button = el("button", "", label(ctx, key), { type: "button", "data-testid": `job-${kind}` });
      button.addEventListener("click", async () => {
        button.disabled = true;
        try {
          const updated = await ctx.api(`/v1/staff/jobs/${job.id}/${kind}`, { method: "POST" });
          row.replaceWith(jobRow(updated));
        } catch (error) {
          button.disabled = false;
          showError(body, ctx, error);
        }
      });
      actions.appendChild(button);
    };
    if (job.status === "failed") act("retry", "staff.retry");
    if (job.status === "queued") act("cancel", "staff.cancelJob");
    row.append(
      el("td", "", `#${job.id}`),
      el("td", "", job.name),
      cell(el("span", `badge badge-${job.status}`, job.status, { "data-testid": "job-status" })),
      el("td", "", String(job.attempts)),
      el("td", "", formatDate(ctx, job.run_at)),
      el("td", "muted", job.room_id || ""),
      el("td", "job-error", job.error ? clip(job.error) : "", { "data-testid": "job-error" }),
      actions,
    );
    return row;
  }

  async function load() {
    const params = new URLSearchParams({ limit: "200" });
    if (status.value) params.set("status", status.value);
    let listing;
    try {
      listing = await ctx.api(`/v1/staff/jobs?${params}`);
    } catch (error) {
      table.replaceChildren();
      return showError(body, ctx, error);
    }
    summary.textContent = [
      label(ctx, "staff.backend", { name: listing.backend }),
      ...Object.entries(listing.counts).map(([name, n]) => `${name}: ${n}`),
    ].join(" · ");
    const head = el("tr");
    for (const key of ["staff.id", "staff.name", "staff.status", "staff.attempts", "staff.runAt", "staff.room", "staff.errorColumn", ""]) {
      head.appendChild(el("th", "", key ? label(ctx, key) : ""));
    }
    const rows = listing.jobs.map(jobRow);
    table.replaceChildren(el("thead"), el("tbody"));
    table.tHead.appendChild(head);
    table.tBodies[0].append(...rows);
  }

  status.addEventListener("change", load);
  refresh.addEventListener("click", load);
  await load();
  // Progress of jobs arrives on the events stream (staff see every job event).
  if (!ctx.events) return () => {};
  let timer = null;
  const unsubscribe = ctx.events.subscribe(
    (event) => event && typeof event.type === "string" && event.type.startsWith("job."),
    () => {
      if (!table.isConnected) return unsubscribe();
      clearTimeout(timer);
      timer = setTimeout(load, 300);
    },
  );
  return () => {
    clearTimeout(timer);
    unsubscribe();
  };
}

// --- mount ---------------------------------------------------------------------------------

export async function mountStaff(container, ctx, page) {
  await registerLabels();
  ensureCss("staff.css");
  const which = PAGES.includes(page) ? page : "guard";
  const root = el("section", "staff", null, { "data-testid": "staff-page", "data-page": which });
  // The shell's top bar has the staff nav; this page says which one it is.
  const body = el("div", "staff-body");
  root.append(el("h2", "", label(ctx, `staff.${which}`)), body);
  container.replaceChildren(root);
  if (!ctx.me || ctx.me.role !== "staff") {
    staffOnly(body, ctx);
    return () => {};
  }
  const unmount = await { guard: guardPage, memory: memoryPage, jobs: jobsPage }[which](body, ctx);
  root.dataset.ready = "true";
  return typeof unmount === "function" ? unmount : () => {};
}
