// The staff's users page (#/staff/users): invite someone with a one-time link, create an
// account with a first password, and for everyone: role, plan (pro), free-message limit, keys.
//
// mountUsers(container, ctx) -> unmount()

import "./accounts_i18n.js";
import { mountKeys } from "./keys.js";
import { el, ensureCss, errorText, formatDate } from "./lobby_labels.js";

export async function mountUsers(container, ctx) {
  ensureCss("staff.css");
  container.className = "view view-staff view-users";
  const root = el("div", "staff users-page", null, { "data-testid": "users-page" });
  container.replaceChildren(root);
  root.append(el("h2", "", ctx.t("users.title")));
  root.append(inviteSection(ctx), createSection(ctx, () => load()));
  const table = el("table", "staff-table users-table", null, { "data-testid": "users-table" });
  const status = el("p", "muted", "", { role: "status" });
  root.append(table, status);

  async function save(user, change) {
    try {
      await ctx.api(`/v1/users/${encodeURIComponent(user.public_id)}`, { method: "PATCH", json: change });
      status.textContent = ctx.t("users.saved");
    } catch (error) {
      status.textContent = errorText(error);
      await load();
    }
  }

  function row(user) {
    const tr = el("tr", "", null, { "data-user": user.display_name });
    const role = el("select", "", null, { "aria-label": ctx.t("users.role"), "data-testid": "user-role" });
    for (const value of ["member", "staff"]) {
      const option = el("option", "", ctx.t(`users.${value}`), { value });
      option.selected = user.role === value;
      role.append(option);
    }
    role.addEventListener("change", () => save(user, { role: role.value }));
    const pro = el("input", "", null, { type: "checkbox", "aria-label": ctx.t("users.pro"), "data-testid": "user-pro" });
    pro.checked = user.is_pro;
    pro.addEventListener("change", () => save(user, { is_pro: pro.checked }));
    const quota = el("input", "quota", null, {
      type: "number",
      min: 0,
      value: user.free_quota_limit,
      "aria-label": ctx.t("users.quota"),
    });
    quota.addEventListener("change", () => save(user, { free_quota_limit: Number(quota.value) }));
    const keysCell = el("td");
    const keysButton = el("button", "", ctx.t("users.keys"), { type: "button", "data-testid": "user-keys" });
    keysButton.addEventListener("click", () => {
      keysButton.remove();
      mountKeys(keysCell, ctx, `/v1/users/${encodeURIComponent(user.public_id)}/keys`);
    });
    keysCell.append(keysButton);
    const used = user.is_pro ? "∞" : `${user.free_quota_used} /`;
    const cells = [el("td", "", user.display_name), el("td"), el("td"), el("td"), keysCell];
    cells[1].append(role);
    cells[2].append(pro);
    cells[3].append(el("span", "muted", used), " ", quota);
    tr.append(...cells);
    return tr;
  }

  async function load() {
    try {
      const users = await ctx.api("/v1/users");
      const head = el("tr");
      for (const key of ["users.name", "users.role", "users.pro", "users.quota", "users.keys"]) {
        head.append(el("th", "", ctx.t(key)));
      }
      table.replaceChildren(el("thead"), el("tbody"));
      table.firstChild.append(head);
      table.lastChild.append(...users.map(row));
    } catch (error) {
      status.textContent = errorText(error);
    }
  }

  await load();
  return () => {};
}

function inviteSection(ctx) {
  const section = el("section", "users-invite");
  section.append(el("h3", "", ctx.t("users.invite")));
  section.append(el("p", "muted", ctx.t("users.inviteHelp")));
  const role = el("select", "", null, { "aria-label": ctx.t("users.role"), "data-testid": "invite-role" });
  for (const value of ["member", "staff"]) role.append(el("option", "", ctx.t(`users.${value}`), { value }));
  const proLabel = el("label");
  const pro = el("input", "", null, { type: "checkbox", "data-testid": "invite-pro" });
  proLabel.append(pro, " ", ctx.t("users.pro"));
  const make = el("button", "", ctx.t("users.inviteCreate"), { type: "button", "data-testid": "invite-create" });
  const link = el("input", "invite-link", null, {
    readonly: true,
    hidden: true,
    "aria-label": ctx.t("users.inviteLink"),
    "data-testid": "invite-link",
  });
  const copy = el("button", "", ctx.t("users.copy"), { type: "button", hidden: true });
  const status = el("span", "muted", "", { role: "status" });
  const row = el("div", "row");
  row.append(role, proLabel, make);
  const linkRow = el("div", "row");
  linkRow.append(link, copy, status);
  section.append(row, linkRow);
  make.addEventListener("click", async () => {
    try {
      const made = await ctx.api("/v1/invitations", {
        method: "POST",
        json: { role: role.value, is_pro: pro.checked },
      });
      link.value = made.link;
      link.hidden = copy.hidden = false;
      status.textContent = ctx.t("users.expires", { date: formatDate(ctx, made.expires_at) });
      link.select();
    } catch (error) {
      status.textContent = errorText(error);
    }
  });
  copy.addEventListener("click", async () => {
    link.select();
    try {
      await navigator.clipboard.writeText(link.value);
      status.textContent = ctx.t("users.copied");
    } catch {
      status.textContent = ""; // no clipboard (plain http): the link stays selected
    }
  });
  return section;
}

function createSection(ctx, onCreated) {
  const form = el("form", "users-create");
  form.append(el("h3", "", ctx.t("users.create")));
  const name = el("input", "", null, { maxlength: 100, required: true, placeholder: ctx.t("users.name"), "aria-label": ctx.t("users.name"), "data-testid": "create-name" });
  const password = el("input", "", null, {
    type: "password",
    autocomplete: "new-password",
    required: true,
    placeholder: ctx.t("users.password"),
    "aria-label": ctx.t("users.password"),
    "data-testid": "create-password",
  });
  const submit = el("button", "", ctx.t("users.createSubmit"), { type: "submit", "data-testid": "create-submit" });
  const status = el("p", "muted", "", { role: "status" });
  const row = el("div", "row");
  row.append(name, password, submit);
  form.append(row, status);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const made = await ctx.api("/v1/users", {
        method: "POST",
        json: { display_name: name.value.trim(), password: password.value },
      });
      status.textContent = ctx.t("users.created", { name: made.user.display_name });
      name.value = password.value = "";
      onCreated();
    } catch (error) {
      status.textContent = errorText(error);
    }
  });
  return form;
}
