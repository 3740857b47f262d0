// The page's assistant-ui runtime for one chat: the AI SDK's useChat on
// the server's POST /api/chat, with the chat's id and stored messages,
// resuming its run in progress (useChat's resume: GET
// /api/chat/{id}/stream, 204 when there is none). Where the chats come
// from (the list, loading one, the address) is App.jsx's and chats.js's.
import { useEffect, useMemo, useRef } from "react";
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
export function useWebchatRuntime({ chatId, messages, resume, onResponse, onNoStream, onResponseEnd }) {
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
  const chat = useChat({ id: chatId, messages, transport, resume, sendAutomaticallyWhen: continueRun });
  const runtime = useAISDKRuntime(chat, { adapters: { attachments: attachmentAdapter } });
  // The transport reads the page's tools (create_record) from the runtime.
  transport.setRuntime(runtime);
  return runtime;
}
