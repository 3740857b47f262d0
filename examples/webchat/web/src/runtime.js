// The page's assistant-ui runtime for one chat: the AI SDK's useChat on
// the server's POST /api/chat, with the chat's id and stored messages,
// resuming its run in progress (useChat's resume: GET
// /api/chat/{id}/stream, 204 when there is none). Where the chats come
// from (the list, loading one, the address) is App.jsx's and chats.js's.
import { useEffect, useMemo, useRef, useState } from "react";
import { useChat } from "@ai-sdk/react";
import { AssistantChatTransport, useAISDKRuntime } from "@assistant-ui/react-ai-sdk";
import { attachmentAdapter } from "./attachments.jsx";
import {
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
} from "ai";

// continueRun re-sends after the browser answered every tool call (the
// form) or every approval, so the server continues the run.
const continueRun = (opts) =>
  lastAssistantMessageIsCompleteWithToolCalls(opts) ||
  lastAssistantMessageIsCompleteWithApprovalResponses(opts);

// messageTree returns assistant-ui's message tree ({headId, messages:
// [{parentId, message}]}) of the version on screen (messages, each after
// the one before it) and the other versions (branches, parents first, the
// oldest first), or undefined when there are no other versions. Parents
// come before their children, and a message's versions in the order they
// were made: the replaced ones first, the one on screen last (so it is
// "2 / 2", as before the reload).
function messageTree(messages, branches) {
  if (!branches?.length || !messages.length) return undefined;
  const children = new Map(); // parent id ("" for none) → [{parentId, message}]
  const add = (parentId, message) => {
    const list = children.get(parentId) ?? [];
    list.push({ parentId: parentId || null, message });
    children.set(parentId, list);
  };
  for (const b of branches) add(b.parentId ?? "", b.message);
  messages.forEach((m, i) => add(i > 0 ? messages[i - 1].id : "", m));
  const tree = [];
  const emit = (parentId) => {
    for (const item of children.get(parentId) ?? []) {
      tree.push(item);
      emit(item.message.id);
    }
  };
  emit("");
  return { headId: messages.at(-1).id, messages: tree };
}

// useWebchatRuntime returns the runtime for AssistantRuntimeProvider, for
// the chat chatId. The component that calls it must be keyed by chatId:
// messages (the stored ones, [] for a new chat) and resume (true for a
// chat the server has, whose run may be in progress) are read once.
// onResponse is called when the server accepted a request of this chat
// (the chat now exists on the server); onNoStream when there was no run
// to resume (204); onResponseEnd once each response
// has been read to its end (or failed), so views of server state can
// refresh. Leaving the chat (unmounting) closes its stream, which does
// not stop the run on the server.
//
// branches ([{parentId, message}], from the chat's view: the versions an
// edit or a regeneration replaced) seed assistant-ui's message tree, so
// the branch picker shows the same versions as before a reload; they are
// read once too, and only when no run is resumed (a resumed stream goes
// on from useChat's messages).
export function useWebchatRuntime({ chatId, messages, branches, resume, onResponse, onNoStream, onResponseEnd }) {
  const callbacks = useRef({ onResponse, onNoStream, onResponseEnd });
  useEffect(() => {
    callbacks.current = { onResponse, onNoStream, onResponseEnd };
  });
  const transport = useMemo(
    () =>
      new AssistantChatTransport({
        api: "/api/chat",
        // The body's id is this chat's; assistant-ui would put in the id
        // of its own (single, in-memory) thread.
        prepareSendMessagesRequest: ({ body, messages, trigger, messageId, requestMetadata }) => ({
          body: { ...body, id: chatId, messages, trigger, messageId, metadata: requestMetadata },
        }),
        fetch: async (input, init) => {
          const res = await fetch(input, init);
          const end = () => callbacks.current.onResponseEnd();
          if (res.status === 204) callbacks.current.onNoStream();
          else if (res.ok) callbacks.current.onResponse();
          if (res.body) {
            res.clone().text().then(end, end);
          } else {
            end();
          }
          return res;
        },
      }),
    [chatId],
  );
  // Read once, as messages are: a new object would not seed the tree again.
  const [repository] = useState(() => messageTree(messages, resume ? [] : branches));
  const chat = useChat({ id: chatId, messages: repository ? [] : messages, transport, resume, sendAutomaticallyWhen: continueRun });
  const runtime = useAISDKRuntime(chat, repository
    ? { messageRepository: repository, adapters: { attachments: attachmentAdapter } }
    : { adapters: { attachments: attachmentAdapter } });
  // The transport reads the page's tools (create_record) from the runtime.
  transport.setRuntime(runtime);
  return runtime;
}
