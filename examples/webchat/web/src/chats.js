// The server's chats API (aisdk.Handler.Routes under /api) and the chat
// id in the page's address. Every function that talks to the server
// throws an Error whose message is short enough to show.

// ChatNotFound is thrown by getChat for a chat the server does not have
// (deleted, or never sent a message).
export class ChatNotFound extends Error {}

async function failure(res, what) {
  const body = await res.json().catch(() => null);
  return new Error(`${what}: ${body?.error ?? `HTTP ${res.status}`}`);
}

const chatPath = (id) => encodeURIComponent(id);

// listChats returns one page of GET /api/chats, the most recently updated
// first: {chats: [{id, title, updated}], next} (next is absent on the last
// page; pass it back as cursor for the next one).
export async function listChats({ cursor, limit = 30 } = {}) {
  const q = new URLSearchParams({ limit: String(limit) });
  if (cursor) q.set("cursor", cursor);
  const res = await fetch(`/api/chats?${q}`, { cache: "no-store" });
  if (!res.ok) throw await failure(res, "listing the chats");
  const body = await res.json();
  return { chats: body.chats ?? [], next: body.next };
}

// getChat returns GET /api/chats/{id}: {id, title, messages, streaming,
// lastRun, feedback, branches} (lastRun: "finished", "stopped", "failed"
// or absent; feedback: the ratings of answers by message id, {} when none;
// branches: the other versions' messages, [{parentId, message}], parents
// first, [] when none);
// messages are the AI SDK UIMessages to show, tool parts in their states.
export async function getChat(id) {
  const res = await fetch(`/api/chats/${chatPath(id)}`, { cache: "no-store" });
  if (res.status === 404) throw new ChatNotFound(`no chat ${id}`);
  if (!res.ok) throw await failure(res, "loading the chat");
  const view = await res.json();
  return { ...view, messages: view.messages ?? [], feedback: view.feedback ?? {}, branches: view.branches ?? [] };
}

// deleteChat deletes a chat with its tool states and streams. A chat the
// server does not have counts as deleted.
// keepalive lets the request outlive the page (a delete sent as it closes).
export async function deleteChat(id, { keepalive = false } = {}) {
  const res = await fetch(`/api/chats/${chatPath(id)}`, { method: "DELETE", keepalive });
  if (!res.ok && res.status !== 404) throw await failure(res, "deleting the chat");
}

// sendJSON sends a JSON body with method and returns the parsed answer;
// what is a short description of the request for its error.
async function sendJSON(method, url, body, what) {
  const res = await fetch(url, { method, headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  if (!res.ok) throw await failure(res, what);
  return res.json();
}

// renameChat gives the chat a title (1 to 60 characters) for good: the
// server's generated title never replaces it. It returns {id, title,
// updated}.
export const renameChat = (id, title) => sendJSON("PATCH", `/api/chats/${chatPath(id)}`, { title }, "renaming the chat");

// rateAnswer stores the user's rating of an answer: "up", "down", or ""
// to take it back. It returns the chat's ratings, {messageId: rating}.
export async function rateAnswer(chatId, messageId, rating) {
  const body = await sendJSON("PUT", `/api/chats/${chatPath(chatId)}/feedback/${encodeURIComponent(messageId)}`, { rating }, "saving your rating");
  return body.feedback ?? {};
}

// stopChat asks the server to stop the chat's run in progress, wherever it
// runs. Closing the response does not: in the stored mode a run outlives
// its client. A chat with no run in progress (404) is already stopped.
export async function stopChat(id) {
  const res = await fetch(`/api/chat/${chatPath(id)}/stop`, { method: "POST" });
  if (!res.ok && res.status !== 404) throw await failure(res, "stopping the answer");
}

// newChatId returns a fresh random chat id. It uses getRandomValues, which
// (unlike randomUUID) also works on plain http pages that are not
// localhost.
export function newChatId() {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return "chat-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// chatInURL returns the chat id in the page's address (?chat=…), or "".
export function chatInURL() {
  return new URLSearchParams(window.location.search).get("chat") ?? "";
}

// showChatInURL puts id (or, for "", no chat) in the address: a new
// history entry when push is true, else in place of the current one.
export function showChatInURL(id, { push = false } = {}) {
  if (chatInURL() === id) return;
  const url = new URL(window.location.href);
  if (id) url.searchParams.set("chat", id);
  else url.searchParams.delete("chat");
  window.history[push ? "pushState" : "replaceState"](null, "", url);
}
