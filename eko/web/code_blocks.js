// Code blocks of a reply: a copy button on each, and syntax highlighting once the reply is
// finished (highlight.js and its stylesheet, vendored: vendor/README.md, loaded the first time
// a code block is highlighted, never with the page).
// The highlighted HTML is sanitized again (spans with classes only) before it is shown.
//
// enhanceCodeBlocks(body, ctx, {highlight, copy})

import { registerTranslations } from "./i18n.js";
import DOMPurify from "./vendor/purify.es.mjs";

registerTranslations({
  en: { "code.copy": "Copy code", "code.copied": "Copied" },
  fr: { "code.copy": "Copier le code", "code.copied": "Copié" },
});

const HIGHLIGHTED = { ALLOWED_TAGS: ["span"], ALLOWED_ATTR: ["class"] };
let highlighter = null;

function loadHighlighter() {
  if (!highlighter) {
    const theme = document.createElement("link");
    theme.rel = "stylesheet";
    theme.href = "/static/vendor/highlight-github-dark.min.css";
    document.head.append(theme);
    highlighter = import("./vendor/highlight.min.js").then((module) => module.default);
  }
  return highlighter;
}

async function highlightCode(code, ctx) {
  try {
    const hljs = await loadHighlighter();
    const text = code.textContent;
    const wanted = /\blanguage-([\w+#-]+)/.exec(code.className)?.[1];
    const result =
      wanted && hljs.getLanguage(wanted)
        ? hljs.highlight(text, { language: wanted, ignoreIllegals: true })
        : hljs.highlightAuto(text);
    if (code.textContent !== text) return; // redrawn meanwhile
    code.innerHTML = DOMPurify.sanitize(result.value, HIGHLIGHTED);
    code.classList.add("hljs");
    code.dataset.language = result.language || "";
  } catch (error) {
    ctx.reportError(error); // plain code stays readable
  }
}

export function enhanceCodeBlocks(body, ctx, { highlight = false, copy } = {}) {
  for (const pre of body.querySelectorAll("pre")) {
    const code = pre.querySelector("code");
    if (!code) continue;
    const text = code.textContent; // before highlighting: what the model wrote
    pre.classList.add("code-block");
    const button = document.createElement("button");
    button.type = "button";
    button.className = "icon code-copy";
    button.textContent = "❐";
    button.setAttribute("aria-label", ctx.t("code.copy"));
    button.title = ctx.t("code.copy");
    button.addEventListener("click", async () => {
      if (await copy(text)) {
        button.textContent = "✓";
        button.title = ctx.t("code.copied");
        button.classList.add("copied");
      }
    });
    pre.prepend(button);
    if (highlight) highlightCode(code, ctx);
  }
}
