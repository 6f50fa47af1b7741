// Labels in French and English: t(key, vars) looks up the current language, then English.
// Other modules add their own keys with registerTranslations({en: {...}, fr: {...}}).

const DICTIONARY = {
  en: {
    "app.title": "Eko",
    "signin.title": "Sign in",
    "signin.key": "API key",
    "signin.submit": "Sign in",
    "signin.unreachable": "The server cannot be reached; try again.",
    "signout": "Sign out",
    "settings": "Settings",
    "settings.close": "Close settings",
    "settings.name": "Display name",
    "settings.language": "Language",
    "settings.save": "Save",
    "settings.saved": "Saved.",
    "settings.plan": "Plan",
    "settings.pro": "Pro: unlimited messages",
    "settings.free": "Free: {used} of {limit} messages used",
    "settings.staff": "Staff",
    "rooms": "Conversations",
    "rooms.toggle": "Show conversations",
    "rooms.new": "New conversation",
    "rooms.newLobby": "New lobby",
    "rooms.rename": "Rename conversation",
    "rooms.rename.prompt": "New name for this conversation:",
    "rooms.delete": "Delete conversation",
    "rooms.delete.confirm": "Delete “{title}” and all its messages?",
    "rooms.empty": "No conversation yet.",
    "rooms.lobby": "Lobby",
    "chat.placeholder": "Write a message… (Enter sends, Shift+Enter: new line)",
    "chat.send": "Send message",
    "chat.stop": "Stop the reply",
    "chat.regenerate": "Regenerate the reply",
    "chat.copy": "Copy message",
    "chat.copied": "Copied",
    "chat.new_messages": "New messages ↓",
    "chat.empty": "Say hello to start the conversation.",
    "chat.pick": "Pick a conversation or start a new one.",
    "chat.you": "You",
    "chat.assistant": "Eko",
    "chat.failed": "Not sent: {detail}",
    "chat.version": "Version {n}",
    "badge.cache": "cached answer",
    "badge.fallback": "fallback answer",
    "badge.paywall": "quota reached",
    "badge.stopped": "stopped",
    "badge.broken": "interrupted",
    "banner.offline": "The server cannot be reached. Retrying…",
    "banner.model_down": "The model is unavailable: answers are degraded.",
    "banner.model_busy": "The model is busy: answers take longer, people are served in turn.",
    "chat.queued": "Queued, position {position}, about {seconds} s",
    "banner.fallback": "The model failed: this answer is a fallback.",
    "nav.chat": "Chat",
    "nav.staff": "Staff",
    "nav.guard": "Memory guard",
    "nav.memory": "Memories",
    "nav.jobs": "Jobs",
    "view.missing": "This view is not available.",
  },
  fr: {
    "app.title": "Eko",
    "signin.title": "Connexion",
    "signin.key": "Clé d'API",
    "signin.submit": "Se connecter",
    "signin.unreachable": "Le serveur est injoignable ; réessayez.",
    "signout": "Se déconnecter",
    "settings": "Réglages",
    "settings.close": "Fermer les réglages",
    "settings.name": "Nom affiché",
    "settings.language": "Langue",
    "settings.save": "Enregistrer",
    "settings.saved": "Enregistré.",
    "settings.plan": "Formule",
    "settings.pro": "Pro : messages illimités",
    "settings.free": "Gratuit : {used} messages sur {limit} utilisés",
    "settings.staff": "Équipe",
    "rooms": "Conversations",
    "rooms.toggle": "Afficher les conversations",
    "rooms.new": "Nouvelle conversation",
    "rooms.newLobby": "Nouveau salon",
    "rooms.rename": "Renommer la conversation",
    "rooms.rename.prompt": "Nouveau nom de la conversation :",
    "rooms.delete": "Supprimer la conversation",
    "rooms.delete.confirm": "Supprimer « {title} » et tous ses messages ?",
    "rooms.empty": "Aucune conversation pour l'instant.",
    "rooms.lobby": "Salon",
    "chat.placeholder": "Écrivez un message… (Entrée envoie, Maj+Entrée : nouvelle ligne)",
    "chat.send": "Envoyer le message",
    "chat.stop": "Arrêter la réponse",
    "chat.regenerate": "Régénérer la réponse",
    "chat.copy": "Copier le message",
    "chat.copied": "Copié",
    "chat.new_messages": "Nouveaux messages ↓",
    "chat.empty": "Dites bonjour pour commencer la conversation.",
    "chat.pick": "Choisissez une conversation ou commencez-en une.",
    "chat.you": "Vous",
    "chat.assistant": "Eko",
    "chat.failed": "Non envoyé : {detail}",
    "chat.version": "Version {n}",
    "badge.cache": "réponse en cache",
    "badge.fallback": "réponse de secours",
    "badge.paywall": "quota atteint",
    "badge.stopped": "arrêtée",
    "badge.broken": "interrompue",
    "banner.offline": "Le serveur est injoignable. Nouvelle tentative…",
    "banner.model_down": "Le modèle est indisponible : réponses dégradées.",
    "banner.model_busy": "Le modèle est occupé : les réponses prennent plus de temps, chacun son tour.",
    "chat.queued": "En file d'attente, position {position}, environ {seconds} s",
    "banner.fallback": "Le modèle a échoué : cette réponse est une réponse de secours.",
    "nav.chat": "Discussion",
    "nav.staff": "Équipe",
    "nav.guard": "Garde mémoire",
    "nav.memory": "Souvenirs",
    "nav.jobs": "Tâches",
    "view.missing": "Cette vue n'est pas disponible.",
  },
};

export const LANGUAGES = ["en", "fr"];
const STORAGE_KEY = "eko.lang";
let current = "en";

export function registerTranslations(extra) {
  for (const [lang, entries] of Object.entries(extra)) {
    DICTIONARY[lang] = { ...(DICTIONARY[lang] || {}), ...entries };
  }
}

export function detectLang(navigatorLanguage) {
  const saved = localStorage.getItem(STORAGE_KEY);
  if (LANGUAGES.includes(saved)) return saved;
  const wanted = (navigatorLanguage || "en").slice(0, 2).toLowerCase();
  return LANGUAGES.includes(wanted) ? wanted : "en";
}

export function setLang(lang, { remember = false } = {}) {
  current = LANGUAGES.includes(lang) ? lang : "en";
  if (remember) localStorage.setItem(STORAGE_KEY, current);
  document.documentElement.lang = current;
}

export function getLang() {
  return current;
}

export function t(key, vars = {}) {
  const text = DICTIONARY[current]?.[key] ?? DICTIONARY.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name) => (name in vars ? String(vars[name]) : `{${name}}`));
}

// Fills [data-i18n] (text), [data-i18n-aria] (aria-label + title), [data-i18n-placeholder].
export function translateTree(root) {
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll("[data-i18n-aria]")) {
    el.setAttribute("aria-label", t(el.dataset.i18nAria));
    el.title = t(el.dataset.i18nAria);
  }
  for (const el of root.querySelectorAll("[data-i18n-placeholder]")) {
    el.placeholder = t(el.dataset.i18nPlaceholder);
  }
}
