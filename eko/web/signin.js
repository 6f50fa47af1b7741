// The ways in, before the chat: sign in with a name and password (or an API key, turned into
// a session by the server), the first run's operator account, an invitation link
// (#/invite/<token>). The session is an HttpOnly cookie: the page keeps only its CSRF token.
//
// createSignin(api, {onSignedIn(session)}) -> {boot()}
//   session = {user, csrf_token, expires_at} (GET /v1/auth/session, or a sign-in's answer)

import "./accounts_i18n.js";
import { t } from "./i18n.js";

const $ = (id) => document.getElementById(id);
const INVITE = /^#\/invite\/([\w-]{10,200})$/;

// The message shown for a refused request: a known cause in the page's language, else the
// server's sentence (problem+json detail).
function refusal(error) {
  if (!error || error.status === 0) return t("signin.unreachable");
  const kind = String(error.problem?.type || "").split(":").pop();
  const known = {
    "bad-credentials": "signin.invalid",
    "invalid-api-key": "signin.keyInvalid",
    "too-many-signin-attempts": "signin.tooMany",
    "name-taken": "signin.nameTaken",
    "invitation-unusable": "invite.unusable",
    "already-set-up": "setup.done",
  }[kind];
  return known ? t(known) : error.message;
}

export function createSignin(api, { onSignedIn }) {
  const form = $("signin-form");
  let mode = "signin";
  let inviteToken = null;

  function show(nextMode, message = "") {
    mode = nextMode;
    $("shell").hidden = true;
    $("signin").hidden = false;
    form.dataset.mode = mode;
    $("signin-title").textContent = t(`${mode}.title`);
    $("signin-help").textContent = t(`${mode}.help`);
    $("signin-submit").textContent = t(`${mode}.submit`);
    $("signin-password").autocomplete = mode === "signin" ? "current-password" : "new-password";
    $("signin-key-box").hidden = mode !== "signin";
    $("signin-error").textContent = message;
    $("signin-name").focus();
  }

  function done(session) {
    $("signin-password").value = "";
    $("signin-key").value = "";
    if (inviteToken) history.replaceState(null, "", location.pathname);
    inviteToken = null;
    onSignedIn(session);
  }

  async function submit() {
    const body = { name: $("signin-name").value.trim(), password: $("signin-password").value };
    const path = {
      signin: "/v1/auth/signin",
      setup: "/v1/auth/setup",
      invite: `/v1/invite/${inviteToken}`,
    }[mode];
    $("signin-submit").disabled = true;
    try {
      done(await api(path, { method: "POST", json: body }));
    } catch (error) {
      $("signin-error").textContent = refusal(error);
      if (mode === "setup" && error?.status === 409) show("signin", t("setup.done"));
    } finally {
      $("signin-submit").disabled = false;
    }
  }

  async function submitKey() {
    const key = $("signin-key").value.trim();
    if (!key) return;
    try {
      done(await api("/v1/auth/key", { method: "POST", headers: { Authorization: `Bearer ${key}` } }));
    } catch (error) {
      $("signin-error").textContent = refusal(error);
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit();
  });
  $("signin-key-submit").addEventListener("click", submitKey);
  $("signin-key").addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      submitKey();
    }
  });

  // An invitation link in the address bar: checked, then its form (or why it cannot be used).
  async function openInvitation(token) {
    inviteToken = token;
    try {
      await api(`/v1/invite/${token}`);
      show("invite");
    } catch (error) {
      inviteToken = null;
      history.replaceState(null, "", location.pathname);
      show("signin", refusal(error));
    }
  }

  async function boot() {
    let state;
    try {
      state = await api("/v1/auth/session");
    } catch (error) {
      show("signin", refusal(error));
      return;
    }
    const invite = location.hash.match(INVITE);
    if (invite && !state.signed_in) return openInvitation(invite[1]);
    if (state.signed_in) onSignedIn(state);
    else show(state.setup_needed ? "setup" : "signin");
  }

  // A link pasted into a tab already showing the sign-in form changes only the hash: the
  // page is not reloaded, so the invitation is picked up here.
  window.addEventListener("hashchange", () => {
    const invite = location.hash.match(INVITE);
    if (invite && !$("signin").hidden && invite[1] !== inviteToken) openInvitation(invite[1]);
  });

  return { boot, show };
}
