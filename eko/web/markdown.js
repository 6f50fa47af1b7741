// Markdown to safe HTML: marked renders, DOMPurify sanitizes (both vendored: vendor/README.md).
// Raw HTML in a message is shown as text, never interpreted; images become links (the page's
// Content-Security-Policy would refuse remote images anyway).

import { Marked } from "./vendor/marked.esm.js";
import DOMPurify from "./vendor/purify.es.mjs";

function escapeHtml(text) {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

const marked = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    html({ text }) {
      return escapeHtml(text);
    },
    image({ href, text }) {
      return `<a href="${escapeHtml(href || "")}">${escapeHtml(text || href || "")}</a>`;
    },
  },
});

const PURIFY = {
  FORBID_TAGS: ["style", "img", "svg", "math", "form", "input", "button", "iframe"],
  FORBID_ATTR: ["style"],
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|#|\/)/i,
};

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

export function renderMarkdown(text) {
  return DOMPurify.sanitize(marked.parse(text || ""), PURIFY);
}
