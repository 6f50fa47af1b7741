// API keys for programs: a list (name, first characters, created, revoked) with a revoke
// button each, and a form that creates one and shows it once. Used by the settings dialog
// (/v1/me/keys) and, for anyone's keys, by the staff's users page (/v1/users/<id>/keys).
//
// mountKeys(container, ctx, basePath) -> {reload()}

import "./accounts_i18n.js";
import { el, errorText, formatDate } from "./lobby_labels.js";

export function mountKeys(container, ctx, basePath) {
  const list = el("ul", "keys-list", null, { "data-testid": "keys-list" });
  const name = el("input", "", null, {
    maxlength: 100,
    placeholder: ctx.t("keys.name"),
    "aria-label": ctx.t("keys.name"),
    "data-testid": "key-name",
  });
  const create = el("button", "", ctx.t("keys.create"), { type: "button", "data-testid": "key-create" });
  const row = el("div", "row");
  row.append(name, create);
  const shown = el("p", "key-new", null, { hidden: true });
  const status = el("p", "muted", "", { role: "status" });
  container.append(list, row, shown, status);

  function item(key) {
    const li = el("li", key.revoked_at ? "key revoked" : "key", null, { "data-key-id": key.id });
    const when = key.revoked_at
      ? ctx.t("keys.revoked", { date: formatDate(ctx, key.revoked_at) })
      : ctx.t("keys.createdOn", { date: formatDate(ctx, key.created_at) });
    li.append(el("strong", "", key.name), " ", el("code", "", `${key.prefix}…`), " ", el("span", "muted", when));
    if (!key.revoked_at) {
      const revoke = el("button", "danger", ctx.t("keys.revoke"), { type: "button", "data-testid": "key-revoke" });
      revoke.addEventListener("click", async () => {
        revoke.disabled = true;
        try {
          await ctx.api(`${basePath}/${encodeURIComponent(key.id)}`, { method: "DELETE" });
          await reload();
        } catch (error) {
          status.textContent = errorText(error);
          revoke.disabled = false;
        }
      });
      li.append(" ", revoke);
    }
    return li;
  }

  async function reload() {
    try {
      const keys = await ctx.api(basePath);
      list.replaceChildren(...(keys.length ? keys.map(item) : [el("li", "muted", ctx.t("keys.none"))]));
    } catch (error) {
      status.textContent = errorText(error);
    }
  }

  name.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault(); // not the surrounding form's submit
      create.click();
    }
  });
  create.addEventListener("click", async () => {
    create.disabled = true;
    try {
      const made = await ctx.api(basePath, { method: "POST", json: { name: name.value.trim() || "key" } });
      name.value = "";
      shown.replaceChildren(ctx.t("keys.created"), " ", el("code", "", made.key, { "data-testid": "key-new" }));
      shown.hidden = false;
      status.textContent = "";
      await reload();
    } catch (error) {
      status.textContent = errorText(error);
    } finally {
      create.disabled = false;
    }
  });

  reload();
  return { reload };
}
