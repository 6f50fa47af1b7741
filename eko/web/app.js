// The page's entry: sign-in (signin.js), the banner, the session's CSRF token. Once signed in,
// the shell (shell.js: rooms, routing, settings) is imported and started; a signed-out visit
// loads only what the sign-in form needs. The session check (GET /v1/auth/session) is
// preloaded by index.html, so it runs while the modules load.

import { makeApi } from "./api.js";
import { createBanner } from "./banner.js";
import { detectLang, setLang, t, translateTree } from "./i18n.js";
import { createSignin } from "./signin.js";

const $ = (id) => document.getElementById(id);

const banner = createBanner($("banner"), t);
// The session's CSRF token (the session itself is an HttpOnly cookie the page cannot read).
let csrf = null;
const { api, apiStream, close } = makeApi(() => csrf, { onNetwork: (ok) => banner.network(ok) });

function reportError(error) {
  if (error?.name === "AbortError") return;
  if (error?.status === 0) return; // the banner says it
  if (error?.status === 401) {
    // The session expired or was signed out elsewhere: back to the sign-in form.
    location.reload();
    return;
  }
  console.warn("eko:", error);
}

setLang(detectLang(navigator.language));
translateTree(document);

const signin = createSignin(api, {
  onSignedIn: async (session) => {
    csrf = session.csrf_token;
    try {
      const { startShell } = await import("./shell.js");
      startShell(session.user, { api, apiStream, banner, reportError });
    } catch (error) {
      reportError(error);
      signin.show("signin", t("signin.unreachable"));
    }
  },
});

$("signout").addEventListener("click", async () => {
  close(); // the views' requests stop first: once the session ends they would get 401s
  banner.stop();
  try {
    await api("/v1/auth/signout", { method: "POST", afterClose: true });
  } catch (error) {
    if (error?.status !== 401) console.warn("eko:", error);
  }
  csrf = null;
  history.replaceState(null, "", location.pathname);
  location.reload();
});

signin.boot();
