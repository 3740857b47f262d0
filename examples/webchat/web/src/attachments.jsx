// Attachments: files the user adds to a message (the attach button, paste
// into the message box, drop on it), shown as chips that can be removed
// before sending, and sent as the AI SDK's file parts (data: URLs). The
// server decodes them into the history's files (aisdk: at most
// Limits.MaxFileBytes each, 5 MiB by default, else 413); the model's
// provider sends what its API takes and names a file it cannot take.
import { useEffect, useState } from "react";
import { AttachmentPrimitive, ComposerPrimitive, MessagePrimitive, useAuiEvent, useAuiState } from "@assistant-ui/react";
import "./attachments.css";

// maxFileBytes is the server's default limit (aisdk.DefaultMaxFileBytes):
// a larger file is refused here, before it is read.
export const maxFileBytes = 5 * 1024 * 1024;

// accept: the images every provider with vision takes, PDFs (OpenAI,
// Anthropic, Gemini) and plain text.
const accept = "image/png,image/jpeg,image/gif,image/webp,application/pdf,text/plain";

const formatSize = (n) => (n < 1024 * 1024 ? `${Math.max(1, Math.round(n / 1024))} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`);

const readDataURL = (file) =>
  new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error ?? new Error(`could not read ${file.name}`));
    reader.readAsDataURL(file);
  });

// attachmentAdapter is the runtime's attachment adapter: it refuses a file
// over the limit with a sentence that names it, and sends each file as one
// file part (media type, name, data: URL).
export const attachmentAdapter = {
  accept,
  async add({ file }) {
    if (file.size > maxFileBytes) {
      throw new Error(`${file.name} is ${formatSize(file.size)}; files up to ${formatSize(maxFileBytes)} can be attached.`);
    }
    return {
      id: `${file.name}-${file.size}-${file.lastModified}-${Math.random().toString(36).slice(2)}`,
      type: file.type.startsWith("image/") ? "image" : "document",
      name: file.name,
      contentType: file.type,
      file,
      content: [],
      status: { type: "requires-action", reason: "composer-send" },
    };
  },
  async send(attachment) {
    return {
      ...attachment,
      status: { type: "complete" },
      content: [{ type: "file", mimeType: attachment.contentType, filename: attachment.name, data: await readDataURL(attachment.file) }],
    };
  },
  async remove() {},
};

// useDataURL reads a pending attachment's image for its preview (the
// page's Content-Security-Policy allows data: images, not blob:).
function useDataURL(file) {
  const [url, setUrl] = useState(null);
  useEffect(() => {
    if (!file || !file.type.startsWith("image/")) return undefined;
    let live = true;
    readDataURL(file).then(
      (u) => live && setUrl(u),
      () => {},
    );
    return () => {
      live = false;
    };
  }, [file]);
  return url;
}

const FileGlyph = () => (
  <svg viewBox="0 0 24 24" width="20" height="20" fill="none" stroke="currentColor" strokeWidth="2"
    strokeLinecap="round" strokeLinejoin="round" aria-hidden="true" focusable="false">
    <path d="M14 2H6a2 2 0 0 0-2 2v16a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V8Z" />
    <path d="M14 2v6h6" />
  </svg>
);

const PaperclipIcon = () => (
  <svg viewBox="0 0 24 24" width="18" height="18" fill="none" stroke="currentColor" strokeWidth="2"
    strokeLinecap="round" strokeLinejoin="round" aria-hidden="true" focusable="false">
    <path d="m21.4 11.1-9.2 9.2a6 6 0 0 1-8.5-8.5l9.2-9.2a4 4 0 0 1 5.7 5.7l-9.2 9.2a2 2 0 0 1-2.8-2.8l8.5-8.5" />
  </svg>
);

// imageOf returns the data: or http(s) URL of a sent attachment's image
// (an edited message's files are sent ones), else null.
function imageOf(a) {
  const part = a.content?.[0];
  const src = part?.type === "image" ? part.image : part?.type === "file" && a.contentType?.startsWith("image/") ? part.data : null;
  return src && /^(data:image\/|https?:)/.test(src) ? src : null;
}

// Chip is one attachment in a composer (the message box's, or an edited
// message's): a preview, the name and size, and a remove button.
function Chip({ attachment }) {
  const read = useDataURL(attachment.file);
  const preview = read ?? imageOf(attachment);
  return (
    <AttachmentPrimitive.Root className="attach-chip" data-testid="attachment-chip">
      {preview ? <img className="attach-thumb" src={preview} alt="" /> : <span className="attach-thumb"><FileGlyph /></span>}
      <span className="attach-text">
        <span className="attach-name"><AttachmentPrimitive.Name /></span>
        {attachment.file && <span className="attach-size">{formatSize(attachment.file.size)}</span>}
      </span>
      <AttachmentPrimitive.Remove className="attach-remove" aria-label={`Remove ${attachment.name}`} title="Remove">
        <svg viewBox="0 0 24 24" width="14" height="14" fill="none" stroke="currentColor" strokeWidth="2.5"
          strokeLinecap="round" aria-hidden="true" focusable="false"><path d="M18 6 6 18" /><path d="m6 6 12 12" /></svg>
      </AttachmentPrimitive.Remove>
    </AttachmentPrimitive.Root>
  );
}

// ComposerAttachments lists the files waiting to be sent (nothing when
// there are none).
export function ComposerAttachments() {
  const count = useAuiState((s) => s.composer.attachments.length);
  if (count === 0) return null;
  return (
    <div className="attach-chips" role="list" aria-label="Attached files">
      <ComposerPrimitive.Attachments>{({ attachment }) => <div role="listitem"><Chip attachment={attachment} /></div>}</ComposerPrimitive.Attachments>
    </div>
  );
}

// AttachButton opens the file picker.
export function AttachButton() {
  return (
    <ComposerPrimitive.AddAttachment className="attach-btn round-btn" aria-label="Attach files" title="Attach files (or paste, or drop)">
      <PaperclipIcon />
    </ComposerPrimitive.AddAttachment>
  );
}

// AttachmentDropzone lets files be dropped anywhere on the composer.
export function AttachmentDropzone({ children }) {
  return <ComposerPrimitive.AttachmentDropzone className="attach-dropzone">{children}</ComposerPrimitive.AttachmentDropzone>;
}

// AttachmentError says why the last file could not be attached (too
// large, a type the page does not take); it clears when a file is added.
export function AttachmentError() {
  const [error, setError] = useState(null);
  useAuiEvent("composer.attachmentAddError", (e) => {
    setError(e.reason === "not-accepted" ? "Only images (PNG, JPEG, GIF, WebP), PDFs and plain text can be attached." : e.message);
  });
  useAuiEvent("composer.attachmentAdd", () => setError(null));
  if (!error) return null;
  return (
    <p className="attach-error" role="alert" data-testid="attachment-error">
      {error}
    </p>
  );
}

// SentAttachment is a file of a sent message: an image shows itself, any
// other file its name and type.
function SentAttachment() {
  const a = useAuiState((s) => s.attachment);
  const src = imageOf(a);
  if (src) {
    return (
      <AttachmentPrimitive.Root className="sent-attachment image" data-testid="sent-attachment">
        <img src={src} alt={a.name} />
      </AttachmentPrimitive.Root>
    );
  }
  return (
    <AttachmentPrimitive.Root className="sent-attachment file" data-testid="sent-attachment">
      <FileGlyph />
      <span className="attach-name">{a.name}</span>
    </AttachmentPrimitive.Root>
  );
}

// MessageAttachments shows a user message's files above its text.
export function MessageAttachments() {
  const count = useAuiState((s) => s.message.attachments?.length ?? 0);
  if (count === 0) return null;
  return (
    <div className="sent-attachments">
      <MessagePrimitive.Attachments components={{ Attachment: SentAttachment }} />
    </div>
  );
}
