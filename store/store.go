package store

import (
	"context"
	"io"
	"iter"
	"time"
)

// Chats stores chats, each under its id, with optimistic concurrency.
//
// Implementations are safe for concurrent use, and so is every interface of
// this package.
type Chats interface {
	// GetChat returns the chat with the given id. A chat that does not exist
	// is an error wrapping [ErrNotFound]. A chat whose stored history does
	// not decode is returned with a nil History and every other field as
	// stored, together with a [*CorruptError]: the caller reports it and
	// may start the conversation afresh by putting a new history with the
	// returned Version.
	GetChat(ctx context.Context, id string) (*Chat, error)

	// PutChat writes c if c.Version is still the stored version of the chat
	// c.ID: 0 creates the chat, and fails if it exists; any other version
	// replaces the chat stored with exactly that version. Otherwise nothing
	// is written and the error is a [*ConflictError]. It writes Owner, Title
	// and History as given and ignores c.Created and c.Updated. On success
	// it sets c.Version to the new version and c.Created and c.Updated to
	// the stored times; on failure c is unchanged. The store does not keep
	// c or its History.
	PutChat(ctx context.Context, c *Chat) error

	// DeleteChat deletes the chat stored with the given version, with its
	// documents and streams. A chat that does not exist is an error
	// wrapping [ErrNotFound]; another version is a [*ConflictError].
	DeleteChat(ctx context.Context, id string, version int64) error
}

// ChatLister lists chats for a front end's chat list.
type ChatLister interface {
	// ListChats returns one page of the chats whose Owner is q.Owner, the
	// most recently updated first (chats updated at the same time by id,
	// descending bytewise). Paging by [ChatPage.Next] is stable: a chat
	// that is not written while the pages are read appears exactly once,
	// and no chat appears twice.
	ListChats(ctx context.Context, q ListQuery) (*ChatPage, error)
}

// Docs stores named documents ("toolstate", a summary…), each versioned on
// its own, with the same optimistic concurrency as [Chats]: a document and
// its chat can be written concurrently without conflict.
//
// A document belongs to the chat named by its ChatID, which must exist, and
// is deleted with it. A document with an empty ChatID belongs to no chat:
// it is named by its Name alone, is written and read the same way, and lives
// until [Docs.DeleteDoc] deletes it. It is for state that must outlive or
// exist without a chat, such as the record of a paused run that was not
// served as a chat (see [Doc.ChatID]); documents of no chat and documents
// of chats never share a name space.
type Docs interface {
	// GetDoc returns the chat's document with the given name (chatID ""
	// for a document of no chat). A document (or chat) that does not
	// exist is an error wrapping [ErrNotFound].
	GetDoc(ctx context.Context, chatID, name string) (*Doc, error)

	// PutDoc writes d if d.Version is still the stored version of the
	// document d.Name of chat d.ChatID (0 creates it); otherwise the error is
	// a [*ConflictError]. The chat must exist: if it does not, the error
	// wraps [ErrNotFound]; an empty d.ChatID writes a document of no chat,
	// which needs none. On success it sets d.Version and d.Updated; on
	// failure d is unchanged. The store does not keep d.Data.
	PutDoc(ctx context.Context, d *Doc) error

	// DeleteDoc deletes the document stored with the given version. A
	// document that does not exist is an error wrapping [ErrNotFound];
	// another version is a [*ConflictError].
	DeleteDoc(ctx context.Context, chatID, name string, version int64) error
}

// StreamWriter is the side of a stream log that one run, the lease holder,
// writes. Every method but StartStream takes the [Lease] that StartStream
// returned and fails with an error wrapping [ErrLeaseLost] once the lease
// is lost: the stream ended, its lease expired, another holder took the
// chat over, or the chat was deleted. The lease is the fencing token: a
// holder that lost it can no longer write.
type StreamWriter interface {
	// StartStream starts the active stream of the chat, which must exist
	// (else the error wraps [ErrNotFound]), with a lease of length ttl
	// (> 0). A chat has at most one active stream: while another one's lease
	// runs, the error is an [*ActiveStreamError]. A stream whose lease
	// expired without an end is taken over: it ends as
	// [StreamInterrupted], and the new one starts. A stream that ends while
	// the call runs never makes it fail otherwise: the new one starts, or
	// the error names the stream that is active then.
	StartStream(ctx context.Context, chatID string, ttl time.Duration) (Lease, error)

	// AppendChunks appends chunks to the stream's log, in order; each gets
	// the next sequence number, counting from 0. It returns the sequence
	// number the next chunk will get. The store does not keep the slices.
	// Each call is one write (one transaction, in a database): pass the
	// chunks that are ready together in one call.
	AppendChunks(ctx context.Context, l Lease, chunks ...[]byte) (next int64, err error)

	// RenewLease extends the lease to ttl (> 0) from now and returns it
	// with its new expiry. Renew well before the lease expires.
	RenewLease(ctx context.Context, l Lease, ttl time.Duration) (Lease, error)

	// EndStream ends the stream in the given state (not [StreamActive]).
	// Its log stays readable until [Streams.DeleteEndedStreams] removes it.
	EndStream(ctx context.Context, l Lease, state StreamState) error

	// WaitStop blocks until [Streams.StopStream] asks the stream to stop,
	// and then returns nil; or until the lease is lost (an error wrapping
	// [ErrLeaseLost]: the holder must stop too); or until ctx is done
	// (ctx.Err()). A stop asked before the call is seen at once.
	WaitStop(ctx context.Context, l Lease) error
}

// StreamReader reads stream logs, from any process.
type StreamReader interface {
	// ActiveStream returns the chat's active stream: started, not ended,
	// lease not expired. When there is none the error wraps [ErrNotFound].
	ActiveStream(ctx context.Context, chatID string) (*Stream, error)

	// GetStream returns the stream with the given id (from [Stream.ID] or
	// [Lease.StreamID]); an unknown or deleted one is [ErrNotFound]. A
	// stream whose lease expired without an end reads as
	// [StreamInterrupted], ended at its lease's expiry.
	GetStream(ctx context.Context, streamID string) (*Stream, error)

	// ReadStream yields the stream's chunks from sequence number from on,
	// in order and each once, and follows the stream live: it waits for
	// new chunks until the stream ends (or its lease expires) and every
	// chunk is yielded, and then stops. If ctx is done first, the last pair
	// is (Chunk{}, ctx.Err()); any other failure is the last pair too, with
	// an error wrapping [ErrNotFound] when the stream does not exist or was
	// deleted. Chunks are yielded as soon as the store knows of them (see
	// each backend for how it learns of chunks appended by other
	// processes).
	ReadStream(ctx context.Context, streamID string, from int64) iter.Seq2[Chunk, error]
}

// Streams holds every chat's stream logs: the log of each run's chunks,
// written by the one run that holds the chat's lease and readable by any
// number of followers on any replica, for resumable streams.
type Streams interface {
	StreamWriter
	StreamReader

	// StopStream asks the chat's active stream to stop: the holder's
	// [StreamWriter.WaitStop] returns, wherever it runs. With no active
	// stream the error wraps [ErrNotFound].
	StopStream(ctx context.Context, chatID string) error

	// DeleteEndedStreams deletes the streams, with their logs, that ended
	// (or whose lease expired) before the given time, and returns how many.
	DeleteEndedStreams(ctx context.Context, before time.Time) (int64, error)
}

// Store is a whole conversation store: chats, their list, their documents
// and their streams. Every backend implements it; code that needs less
// should take one of the smaller interfaces.
type Store interface {
	Chats
	ChatLister
	Docs
	Streams
	// Close releases the store's resources. Calls made after Close fail;
	// streams being followed end with an error.
	io.Closer
}
