// Opening a room at one message (a search result): once the view has drawn the message
// (chat or lobby, whenever their messages arrive), it is scrolled into view and marked
// `.msg-found`. A view that draws it again (a reload of its messages) is followed for a while.
//
// focusMessage(container, messageId) -> stop()

const FOLLOW_MS = 10000;

export function focusMessage(container, messageId) {
  const selector = `[data-message-id="${CSS.escape(messageId)}"]`;
  function mark() {
    const el = container.querySelector(selector);
    if (!el || el.classList.contains("msg-found")) return;
    el.classList.add("msg-found");
    el.dataset.found = "true";
    el.scrollIntoView({ block: "center" });
  }
  const observer = new MutationObserver(mark);
  observer.observe(container, { childList: true, subtree: true });
  const timer = setTimeout(() => observer.disconnect(), FOLLOW_MS);
  mark();
  return () => {
    clearTimeout(timer);
    observer.disconnect();
  };
}
