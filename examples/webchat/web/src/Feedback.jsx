// Thumbs up and down on an answer, stored with the chat on the server
// (PUT /api/chats/{id}/feedback/{message}) and shown again on reload
// (the chat's view has the ratings). A second click on the chosen thumb
// takes the rating back.
import { createContext, useCallback, useContext, useMemo, useState } from "react";
import { useAuiState } from "@assistant-ui/react";
import { rateAnswer } from "./chats.js";
import "./Feedback.css";

const FeedbackContext = createContext(null);

// FeedbackProvider keeps the ratings of the chat chatId, starting from
// initial ({messageId: "up" | "down"}, from the chat's view). onError
// gets a short sentence when a rating could not be saved.
export function FeedbackProvider({ chatId, initial, onError, children }) {
  const [ratings, setRatings] = useState(() => initial ?? {});
  const rate = useCallback(async (messageId, rating) => {
    const before = ratings;
    setRatings((r) => ({ ...r, [messageId]: rating }));
    try {
      setRatings(await rateAnswer(chatId, messageId, rating));
    } catch (e) {
      setRatings(before);
      onError?.(e.message);
    }
  }, [chatId, ratings, onError]);
  const value = useMemo(() => ({ ratings, rate }), [ratings, rate]);
  return <FeedbackContext.Provider value={value}>{children}</FeedbackContext.Provider>;
}

const Thumb = ({ down }) => (
  <svg viewBox="0 0 24 24" width="16" height="16" fill="none" stroke="currentColor" strokeWidth="2"
    strokeLinecap="round" strokeLinejoin="round" aria-hidden="true" focusable="false"
    className={down ? "thumb-down" : undefined}>
    <path d="M7 10v12" />
    <path d="M15 5.9 14 10h5.8a2 2 0 0 1 2 2.3l-1.4 8a2 2 0 0 1-2 1.7H7V10l4-8a3 3 0 0 1 4 3.9Z" />
  </svg>
);

// FeedbackButtons are the two thumbs of the answer on screen (inside a
// MessagePrimitive). They show once the answer is in (not while it runs).
export function FeedbackButtons() {
  const ctx = useContext(FeedbackContext);
  const id = useAuiState((s) => s.message.id);
  const done = useAuiState((s) => s.message.status?.type !== "running");
  if (!ctx || !done) return null;
  const rating = ctx.ratings[id] ?? "";
  const button = (value, label) => (
    <button type="button" className={"icon-btn feedback" + (rating === value ? " chosen" : "")} aria-label={label} title={label}
      aria-pressed={rating === value} data-testid={`feedback-${value}`}
      onClick={() => ctx.rate(id, rating === value ? "" : value)}>
      <Thumb down={value === "down"} />
    </button>
  );
  return (
    <span className="feedback-buttons" role="group" aria-label="Rate this answer">
      {button("up", "Good answer")}
      {button("down", "Bad answer")}
    </span>
  );
}
