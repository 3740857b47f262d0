// Renaming a chat in the chat list: the item's pencil opens a one-line
// form in its place; Enter or Save renames (PATCH /api/chats/{id}),
// Escape or Cancel keeps the title. A renamed chat keeps its name: the
// title the server generates after the first answer never replaces it.
import { useEffect, useRef, useState } from "react";
import { PencilIcon } from "./icons.jsx";
import "./ChatRename.css";

// maxTitle is the server's limit on a title's length, in characters.
const maxTitle = 60;

// RenameButton opens the form of the chat called title.
export const RenameButton = ({ title, onClick }) => (
  <button type="button" className="icon-btn thread-rename" aria-label={`Rename chat: ${title}`} title="Rename" onClick={onClick}>
    <PencilIcon />
  </button>
);

// RenameForm edits title; onSave(newTitle) returns a promise (rejected
// with an Error whose message is shown), onDone closes the form.
export function RenameForm({ title, onSave, onDone }) {
  const [value, setValue] = useState(title);
  const [error, setError] = useState("");
  const [saving, setSaving] = useState(false);
  const input = useRef(null);
  useEffect(() => {
    input.current?.select();
  }, []);
  const submit = async (e) => {
    e.preventDefault();
    const t = value.trim();
    if (!t) {
      setError("A title needs a word.");
      return;
    }
    if (t === title) {
      onDone();
      return;
    }
    setSaving(true);
    try {
      await onSave(t);
      onDone();
    } catch (err) {
      setError(err.message);
      setSaving(false);
    }
  };
  return (
    <form className="thread-rename-form" onSubmit={submit} data-testid="rename-form"
      onKeyDown={(e) => {
        if (e.key === "Escape") {
          e.preventDefault();
          e.stopPropagation();
          onDone();
        }
      }}>
      <input ref={input} className="thread-rename-input" aria-label="New title" value={value} maxLength={maxTitle}
        aria-invalid={error ? true : undefined} aria-describedby={error ? "rename-error" : undefined}
        onChange={(e) => {
          setValue(e.target.value);
          setError("");
        }} />
      <div className="thread-rename-buttons">
        <button type="button" className="btn" onClick={onDone}>Cancel</button>
        <button type="submit" className="btn primary" disabled={saving}>Save</button>
      </div>
      {error && <p id="rename-error" className="hint" role="alert">{error}</p>}
    </form>
  );
}
