// Labels of the lobby, status bar, chain badges and staff pages (en, fr), and small DOM helpers
// they share. Registered with the shell's i18n.js when it has registerTranslations; looked up
// here by ctx.lang otherwise, so these views never show a bare key.

export const LABELS = {
  en: {
    "lobby.title": "Lobby",
    "lobby.members": "{n} members",
    "lobby.member": "1 member",
    "lobby.addMember": "Add a member by name",
    "lobby.add": "Add",
    "lobby.added": "Added.",
    "lobby.placeholder": "Write to the lobby… (name {name} to get an answer)",
    "lobby.send": "Send",
    "lobby.you": "you",
    "lobby.spontaneous": "spontaneous",
    "lobby.spontaneousTitle": "{name} said this on its own (a reflection), not as an answer",
    "lobby.loadError": "Could not load the lobby: {error}",
    "lobby.sendError": "Not sent: {error}",
    "status.idle": "{name}",
    "status.hint": "Right-click for the reflection panel",
    "status.gathering": "gathering…",
    "status.context": "context…",
    "status.thinking": "thinking…",
    "status.done": "done",
    "status.done.message": "done: spoke",
    "status.done.pass": "done: passed",
    "panel.title": "Reflection",
    "panel.today": "Today",
    "panel.total": "Since the start",
    "panel.interventions": "interventions",
    "panel.passes": "passes",
    "panel.messages": "messages",
    "panel.modelCalls": "model calls",
    "panel.tokens": "tokens",
    "panel.rateLimited": "rate limited",
    "panel.reflections": "reflections",
    "panel.history": "History",
    "panel.date": "date",
    "panel.duration": "duration",
    "panel.decision": "decision",
    "panel.reason": "reason",
    "panel.none": "No reflection yet.",
    "panel.trigger": "Reflect now",
    "panel.triggering": "Reflecting…",
    "panel.close": "Close",
    "panel.error": "Could not load the stats: {error}",
    "panel.nextAllowed": "next allowed: {at}",
    "action.message": "message",
    "action.pass": "pass",
    "chain.label": "Reflexive chain",
    "chain.turns": "{n} turns",
    "chain.turn": "1 turn",
    "chain.model": "model",
    "chain.duration": "duration",
    "chain.status": "status",
    "chain.tools": "tools",
    "chain.noTools": "no tool called",
    "chain.result": "result",
    "chain.error": "error",
    "chain.skipped": "skipped ({reason})",
    "chain.fallback": "simple answer instead ({reason})",
    "staff.title": "Staff",
    "staff.only": "Staff only: this page needs the staff role.",
    "staff.guard": "Memory guard",
    "staff.memory": "Memories",
    "staff.jobs": "Background jobs",
    "staff.search": "Search questions and answers",
    "staff.searchButton": "Search",
    "staff.all": "all",
    "staff.active": "active",
    "staff.obsolete": "obsolete",
    "staff.usage": "used {n}×",
    "staff.markObsolete": "Mark obsolete",
    "staff.delete": "Delete",
    "staff.confirmDelete": "Really delete?",
    "staff.cancel": "Cancel",
    "staff.empty": "Nothing here.",
    "staff.total": "{n} entries",
    "staff.error": "Error: {error}",
    "staff.scope": "scope",
    "staff.question": "question",
    "staff.answer": "answer",
    "staff.facts": "Facts",
    "staff.self": "Self",
    "staff.goals": "Goals",
    "staff.sources": "Source turn",
    "staff.noSource": "no source turn",
    "staff.hiddenSource": "source in a room you cannot see",
    "staff.kind": "kind",
    "staff.refresh": "Refresh",
    "staff.more": "More",
    "staff.retry": "Retry",
    "staff.cancelJob": "Cancel",
    "staff.status": "status",
    "staff.attempts": "attempts",
    "staff.runAt": "run at",
    "staff.backend": "backend: {name}",
    "staff.id": "#",
    "staff.name": "job",
    "staff.room": "room",
    "staff.errorColumn": "error",
  },
  fr: {
    "lobby.title": "Salon",
    "lobby.members": "{n} membres",
    "lobby.member": "1 membre",
    "lobby.addMember": "Ajouter un membre par son nom",
    "lobby.add": "Ajouter",
    "lobby.added": "Ajouté.",
    "lobby.placeholder": "Écrire au salon… (nommez {name} pour avoir une réponse)",
    "lobby.send": "Envoyer",
    "lobby.you": "vous",
    "lobby.spontaneous": "spontané",
    "lobby.spontaneousTitle": "{name} l'a dit de lui-même (une réflexion), pas en réponse",
    "lobby.loadError": "Impossible de charger le salon : {error}",
    "lobby.sendError": "Non envoyé : {error}",
    "status.idle": "{name}",
    "status.hint": "Clic droit : le panneau de réflexion",
    "status.gathering": "collecte…",
    "status.context": "contexte…",
    "status.thinking": "réflexion…",
    "status.done": "terminé",
    "status.done.message": "terminé : a parlé",
    "status.done.pass": "terminé : passe",
    "panel.title": "Réflexion",
    "panel.today": "Aujourd'hui",
    "panel.total": "Depuis le début",
    "panel.interventions": "interventions",
    "panel.passes": "passes",
    "panel.messages": "messages",
    "panel.modelCalls": "appels au modèle",
    "panel.tokens": "tokens",
    "panel.rateLimited": "limités",
    "panel.reflections": "réflexions",
    "panel.history": "Historique",
    "panel.date": "date",
    "panel.duration": "durée",
    "panel.decision": "décision",
    "panel.reason": "raison",
    "panel.none": "Aucune réflexion pour l'instant.",
    "panel.trigger": "Réfléchir maintenant",
    "panel.triggering": "Réflexion…",
    "panel.close": "Fermer",
    "panel.error": "Impossible de charger les stats : {error}",
    "panel.nextAllowed": "prochaine possible : {at}",
    "action.message": "message",
    "action.pass": "passe",
    "chain.label": "Chaîne réflexive",
    "chain.turns": "{n} tours",
    "chain.turn": "1 tour",
    "chain.model": "modèle",
    "chain.duration": "durée",
    "chain.status": "état",
    "chain.tools": "outils",
    "chain.noTools": "aucun outil appelé",
    "chain.result": "résultat",
    "chain.error": "erreur",
    "chain.skipped": "sautée ({reason})",
    "chain.fallback": "réponse simple à la place ({reason})",
    "staff.title": "Équipe",
    "staff.only": "Réservé à l'équipe : cette page demande le rôle staff.",
    "staff.guard": "Garde-mémoire",
    "staff.memory": "Souvenirs",
    "staff.jobs": "Tâches de fond",
    "staff.search": "Chercher dans les questions et réponses",
    "staff.searchButton": "Chercher",
    "staff.all": "tout",
    "staff.active": "actives",
    "staff.obsolete": "obsolètes",
    "staff.usage": "servie {n}×",
    "staff.markObsolete": "Marquer obsolète",
    "staff.delete": "Supprimer",
    "staff.confirmDelete": "Vraiment supprimer ?",
    "staff.cancel": "Annuler",
    "staff.empty": "Rien ici.",
    "staff.total": "{n} entrées",
    "staff.error": "Erreur : {error}",
    "staff.scope": "portée",
    "staff.question": "question",
    "staff.answer": "réponse",
    "staff.facts": "Faits",
    "staff.self": "Soi",
    "staff.goals": "Curiosités",
    "staff.sources": "Tour source",
    "staff.noSource": "pas de tour source",
    "staff.hiddenSource": "source dans un salon que vous ne voyez pas",
    "staff.kind": "type",
    "staff.refresh": "Actualiser",
    "staff.more": "Plus",
    "staff.retry": "Relancer",
    "staff.cancelJob": "Annuler",
    "staff.status": "état",
    "staff.attempts": "essais",
    "staff.runAt": "prévue",
    "staff.backend": "moteur : {name}",
    "staff.id": "n°",
    "staff.name": "tâche",
    "staff.room": "salon",
    "staff.errorColumn": "erreur",
  },
};

let registered = false;

// Give the shell our labels once (its i18n.js may not exist yet: then we keep ours).
export async function registerLabels() {
  if (registered) return;
  registered = true;
  try {
    const i18n = await import("./i18n.js");
    if (typeof i18n.registerTranslations === "function") i18n.registerTranslations(LABELS);
  } catch {
    // No shell i18n: label() below reads LABELS directly.
  }
}

function langOf(ctx) {
  const lang = String((ctx && ctx.lang) || "en").slice(0, 2).toLowerCase();
  return LABELS[lang] ? lang : "en";
}

// The label for `key` in the page's language, with {vars} filled in: the shell's t() once our
// labels are registered there (it follows a language switch), else our own dictionary.
export function label(ctx, key, vars = {}) {
  if (ctx && typeof ctx.t === "function") {
    const shown = ctx.t(key, vars);
    if (shown && shown !== key) return shown;
  }
  const text = LABELS[langOf(ctx)][key] ?? LABELS.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name) => (name in vars ? String(vars[name]) : `{${name}}`));
}

// An element with a class and text (always textContent: server text is never parsed as HTML).
export function el(tag, className = "", text = null, attrs = {}) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== null && text !== undefined) node.textContent = String(text);
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== null && value !== undefined && value !== false) node.setAttribute(name, String(value));
  }
  return node;
}

// Load a stylesheet next to this module once (the shell's index.html may link it already).
export function ensureCss(file) {
  const href = new URL(`./${file}`, import.meta.url).pathname;
  const present = [...document.querySelectorAll("link[rel=stylesheet]")].some(
    (link) => new URL(link.href, location.href).pathname === href,
  );
  if (present) return;
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = href;
  document.head.appendChild(link);
}

export function errorText(error) {
  if (!error) return "";
  const problem = error.problem;
  if (problem && (problem.detail || problem.title)) return String(problem.detail || problem.title);
  return String(error.message || error);
}

export function formatDate(ctx, iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return date.toLocaleString(langOf(ctx) === "fr" ? "fr-FR" : "en-GB", {
    dateStyle: "short",
    timeStyle: "medium",
  });
}

export function formatDuration(ms) {
  const value = Number(ms) || 0;
  if (value < 1000) return `${Math.round(value)} ms`;
  return `${(value / 1000).toFixed(1)} s`;
}

// An id for client_message_id without crypto.randomUUID (absent over plain http on a LAN).
export function clientId() {
  const bytes = new Uint8Array(16);
  if (globalThis.crypto && typeof globalThis.crypto.getRandomValues === "function") {
    globalThis.crypto.getRandomValues(bytes);
  } else {
    for (let i = 0; i < bytes.length; i += 1) bytes[i] = Math.floor(Math.random() * 256);
  }
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}
