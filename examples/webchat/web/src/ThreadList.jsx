// The chat list: New chat, Export (the chat on screen, as Markdown), a
// search over the titles, the server's chats (GET /api/chats, newest
// first, a page at a time) under Today, Yesterday and Earlier, a sign on
// the chats whose reply runs, switch, delete. On a wide screen it is a
// column beside the chat; on a narrower one (style.css) a drawer from the
// left, shown while open is true.
import { useEffect, useRef, useState } from "react";
import { CloseIcon, DownloadIcon, PlusIcon, TrashIcon } from "./icons.jsx";
import { trapTab } from "./focusTrap.js";
import { RenameButton, RenameForm } from "./ChatRename.jsx";

// chatTitle is what the list calls a chat: the server's title (the
// user's, the one the model made after the first answer, or the start of
// the first message), or a stand-in for a chat without one.
const chatTitle = (c) => c.title || "Untitled chat";

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

// dayGroups splits chats (newest first) into Today, Yesterday and Earlier,
// by the day they were last written, in the browser's time zone.
function dayGroups(chats, now = new Date()) {
  const today = new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime();
  const yesterday = today - 24 * 60 * 60 * 1000;
  const groups = [
    { name: "Today", chats: [] },
    { name: "Yesterday", chats: [] },
    { name: "Earlier", chats: [] },
  ];
  for (const c of chats) {
    const t = new Date(c.updated).getTime();
    groups[t >= today ? 0 : t >= yesterday ? 1 : 2].chats.push(c);
  }
  return groups.filter((g) => g.chats.length > 0);
}

// ThreadList shows list = {chats, next, error, loading}. currentId is the
// chat on screen ("" or an id the list lacks: a new chat); onNew,
// onSwitch(id), onDelete(id) and onMore (the next page) act; onClose (its
// close button, or Escape inside it) asks to hide the drawer.
// running is the set of chat ids whose reply runs; onExport exports the
// chat on screen (offered while it is listed); onRename(id, title) renames
// (a promise).
export function ThreadList({ id, list, currentId, running, open, onNew, onSwitch, onDelete, onMore, onClose, onExport, onRename }) {
  const [query, setQuery] = useState("");
  const [renaming, setRenaming] = useState(""); // the id of the chat whose title is edited
  // When the rename form closes, the focus goes back to its chat's
  // Rename button (the form that had it is gone).
  const renamed = useRef("");
  useEffect(() => {
    if (renaming || !renamed.current) return;
    navRef.current?.querySelector(`[data-chat="${CSS.escape(renamed.current)}"] .thread-rename`)?.focus();
    renamed.current = "";
  }, [renaming]);
  const endRename = (chatId) => {
    renamed.current = chatId;
    setRenaming("");
  };
  const closeRef = useRef(null);
  const navRef = useRef(null);
  // Opening the drawer moves the focus into it, so a keyboard can use it.
  useEffect(() => {
    if (open) closeRef.current?.focus();
  }, [open]);
  const listed = list.chats.some((c) => c.id === currentId);
  const q = query.trim().toLowerCase();
  const shown = q ? list.chats.filter((c) => chatTitle(c).toLowerCase().includes(q)) : list.chats;

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
      {listed && (
        <button type="button" className="btn export-chat" data-testid="export-chat" onClick={onExport}>
          <DownloadIcon /> Export as Markdown
        </button>
      )}
      {list.chats.length > 0 && (
        <input type="search" className="thread-search" placeholder="Search chats" aria-label="Search chats" value={query}
          onChange={(e) => setQuery(e.target.value)} />
      )}
      {dayGroups(shown).map((g) => (
        <section key={g.name} className="thread-group" aria-label={g.name}>
          <h3 className="thread-day">{g.name}</h3>
          <ul className="thread-items">
            {g.chats.map((c) => (
              <li key={c.id} className={"thread-item" + (c.id === currentId ? " current" : "")} data-chat={c.id}>
                {renaming === c.id ? (
                  <RenameForm title={c.title} onSave={(t) => onRename(c.id, t)} onDone={() => endRename(c.id)} />
                ) : (
                  <>
                    <button type="button" className="thread-open" aria-current={c.id === currentId ? "page" : undefined}
                      title={`${chatTitle(c)}\n${dateTime.format(new Date(c.updated))}`} onClick={() => onSwitch(c.id)}>
                      {chatTitle(c)}
                    </button>
                    {running?.has(c.id) && <span className="thread-running" role="img" aria-label="answering" title="A reply is running" data-testid="thread-running" />}
                    <RenameButton title={chatTitle(c)} onClick={() => setRenaming(c.id)} />
                    <button type="button" className="icon-btn thread-delete" aria-label={`Delete chat: ${chatTitle(c)}`} title="Delete"
                      onClick={() => onDelete(c.id)}>
                      <TrashIcon />
                    </button>
                  </>
                )}
              </li>
            ))}
          </ul>
        </section>
      ))}
      {q && shown.length === 0 && <p className="hint" role="status">No chat title contains “{query.trim()}”.</p>}
      {list.loading && <p className="hint" role="status">Loading…</p>}
      {list.error && <p className="hint" role="status">Not available: {list.error}</p>}
      {!list.loading && !list.error && list.chats.length === 0 && <p className="hint">No chats yet.</p>}
      {list.next && (
        <button type="button" className="btn more-chats" onClick={onMore} disabled={list.loading}>More chats</button>
      )}
    </nav>
  );
}
