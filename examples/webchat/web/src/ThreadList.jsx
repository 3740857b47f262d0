// The chat list: New chat, the server's chats (GET /api/chats, newest
// first, a page at a time), switch, delete. On a wide screen it is a
// column beside the chat; on a narrower one (style.css) a drawer from the
// left, shown while open is true.
import { useEffect, useRef } from "react";
import { CloseIcon, PlusIcon, TrashIcon } from "./icons.jsx";
import { trapTab } from "./focusTrap.js";

// chatTitle is what the list calls a chat: the server's title (the start
// of its first message), or a stand-in for a chat without one.
const chatTitle = (c) => c.title || "Untitled chat";

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

// ThreadList shows list = {chats, next, error, loading}. currentId is the
// chat on screen ("" or an id the list lacks: a new chat); onNew,
// onSwitch(id), onDelete(id) and onMore (the next page) act; onClose (its
// close button, or Escape inside it) asks to hide the drawer.
export function ThreadList({ id, list, currentId, open, onNew, onSwitch, onDelete, onMore, onClose }) {
  const closeRef = useRef(null);
  const navRef = useRef(null);
  // Opening the drawer moves the focus into it, so a keyboard can use it.
  useEffect(() => {
    if (open) closeRef.current?.focus();
  }, [open]);
  const listed = list.chats.some((c) => c.id === currentId);

  return (
    <nav id={id} ref={navRef} className={"threads" + (open ? " open" : "")} aria-labelledby={id + "-title"} data-testid="thread-list"
      onKeyDown={(e) => {
        // While it is open as a drawer, the focus stays inside it.
        if (open) trapTab(e, navRef.current);
        if (e.key === "Escape" && open) {
          e.preventDefault();
          onClose();
        }
      }}>
      <div className="panel-head">
        <h2 id={id + "-title"}>Chats</h2>
        <button type="button" ref={closeRef} className="icon-btn threads-close" onClick={onClose} aria-label="Close the chat list">
          <CloseIcon />
        </button>
      </div>
      <button type="button" className="btn new-chat" data-testid="new-chat" aria-current={listed ? undefined : "page"} onClick={onNew}>
        <PlusIcon /> New chat
      </button>
      <ul className="thread-items">
        {list.chats.map((c) => (
          <li key={c.id} className={"thread-item" + (c.id === currentId ? " current" : "")} data-chat={c.id}>
            <button type="button" className="thread-open" aria-current={c.id === currentId ? "page" : undefined}
              title={`${chatTitle(c)}\n${dateTime.format(new Date(c.updated))}`} onClick={() => onSwitch(c.id)}>
              {chatTitle(c)}
            </button>
            <button type="button" className="icon-btn thread-delete" aria-label={`Delete chat: ${chatTitle(c)}`} title="Delete"
              onClick={() => onDelete(c.id)}>
              <TrashIcon />
            </button>
          </li>
        ))}
      </ul>
      {list.loading && <p className="hint" role="status">Loading…</p>}
      {list.error && <p className="hint" role="status">Not available: {list.error}</p>}
      {!list.loading && !list.error && list.chats.length === 0 && <p className="hint">No chats yet.</p>}
      {list.next && (
        <button type="button" className="btn more-chats" onClick={onMore} disabled={list.loading}>More chats</button>
      )}
    </nav>
  );
}
