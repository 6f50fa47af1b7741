// The settings dialog: display name, language, plan (pro / free quota), staff role, and one's
// API keys for programs (keys.js, loaded when the dialog first opens).

import { LANGUAGES } from "./i18n.js";

export function createSettings(dialog, ctx, { onSaved }) {
  const form = dialog.querySelector("form");
  const name = dialog.querySelector("#settings-name");
  const language = dialog.querySelector("#settings-language");
  const plan = dialog.querySelector("#settings-plan");
  const status = dialog.querySelector("#settings-status");
  let keys = null;

  language.replaceChildren(
    ...LANGUAGES.map((code) => {
      const option = document.createElement("option");
      option.value = code;
      option.textContent = code === "fr" ? "Français" : "English";
      return option;
    }),
  );

  function open() {
    const me = ctx.me;
    name.value = me.display_name;
    language.value = ctx.lang;
    const parts = [
      me.is_pro
        ? ctx.t("settings.pro")
        : ctx.t("settings.free", { used: me.free_quota_used, limit: me.free_quota_limit }),
    ];
    if (me.role === "staff") parts.push(ctx.t("settings.staff"));
    plan.textContent = parts.join(" · ");
    status.textContent = "";
    if (keys) keys.then((mounted) => mounted.reload()).catch(ctx.reportError);
    else {
      keys = import("./keys.js").then(({ mountKeys }) =>
        mountKeys(dialog.querySelector("#settings-keys"), ctx, "/v1/me/keys"),
      );
      keys.catch((error) => {
        keys = null;
        ctx.reportError(error);
      });
    }
    dialog.showModal();
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (event.submitter?.value === "close") return dialog.close();
    try {
      const me = await ctx.api("/v1/me", {
        method: "PATCH",
        json: { display_name: name.value.trim(), language: language.value },
      });
      onSaved(me); // may switch the language first
      status.textContent = ctx.t("settings.saved");
    } catch (error) {
      status.textContent = error.message;
    }
  });

  return { open };
}
