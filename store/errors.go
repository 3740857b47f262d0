package store

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Sentinels that the errors of every store match with [errors.Is].
var (
	// ErrNotFound: the chat, document or stream does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict: a write named a version that is no longer the stored
	// one. The error is a [*ConflictError].
	ErrConflict = errors.New("store: version conflict")
	// ErrCorrupt: stored data does not decode. The error is a
	// [*CorruptError].
	ErrCorrupt = errors.New("store: corrupt data")
	// ErrInvalid: the call's arguments are not acceptable (an empty or
	// malformed id, a bad cursor, a non-positive lease…); the error says
	// which.
	ErrInvalid = errors.New("store: invalid argument")
	// ErrStreamActive: the chat already has an active stream. The error is
	// an [*ActiveStreamError].
	ErrStreamActive = errors.New("store: the chat has an active stream")
	// ErrLeaseLost: a stream writer's lease is no longer valid.
	ErrLeaseLost = errors.New("store: stream lease lost")
	// ErrNewerSchema: the database was migrated by a newer version of this
	// package; this one refuses to open it rather than misread it.
	ErrNewerSchema = errors.New("store: database schema is newer than this build supports")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store: closed")
)

// ConflictError is the error of a write whose version is no longer the
// stored one. It matches [ErrConflict].
type ConflictError struct {
	// ChatID is the chat written; "" for a document of no chat.
	ChatID string
	// Doc is the document written, "" for the chat itself.
	Doc string
	// Want is the version the write named (0: create).
	Want int64
	// Have is the stored version found (0: none, the chat or document does
	// not exist). It may have moved on again since.
	Have int64
}

// Error says what was written, at which version, and what the store holds.
func (e *ConflictError) Error() string {
	what := "chat " + strconv.Quote(e.ChatID)
	switch {
	case e.Doc != "" && e.ChatID == "":
		what = "document " + strconv.Quote(e.Doc) + " of no chat"
	case e.Doc != "":
		what = "document " + strconv.Quote(e.Doc) + " of " + what
	}
	switch {
	case e.Want == 0:
		return fmt.Sprintf("store: version conflict: %s already exists (version %d)", what, e.Have)
	case e.Have == 0:
		return fmt.Sprintf("store: version conflict: %s was read at version %d and no longer exists", what, e.Want)
	}
	return fmt.Sprintf("store: version conflict: %s was read at version %d and is now at version %d", what, e.Want, e.Have)
}

// Is reports whether target is [ErrConflict].
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// CorruptError reports stored data that does not decode. It matches
// [ErrCorrupt] and unwraps to the decoding error.
type CorruptError struct {
	// ChatID is the chat whose data is corrupt.
	ChatID string
	// Version is the stored version of the corrupt data: write with it to
	// replace the data.
	Version int64
	// Err is the decoding error.
	Err error
}

// Error names the chat and its version, and says why it does not decode.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("store: chat %q (version %d): stored history does not decode: %v", e.ChatID, e.Version, e.Err)
}

// Is reports whether target is [ErrCorrupt].
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Unwrap returns the decoding error.
func (e *CorruptError) Unwrap() error { return e.Err }

// ActiveStreamError is the error of [StreamWriter.StartStream] for a chat
// whose active stream's lease still runs. It matches [ErrStreamActive].
type ActiveStreamError struct {
	// ChatID is the chat whose stream was asked for.
	ChatID string
	// StreamID is the active stream, which a client may follow.
	StreamID string
	// LeaseExpires is when its lease runs out unless renewed.
	LeaseExpires time.Time
}

// Error names the chat, its active stream and the lease's expiry.
func (e *ActiveStreamError) Error() string {
	return fmt.Sprintf("store: chat %q has an active stream %q (lease until %s)", e.ChatID, e.StreamID, e.LeaseExpires.Format(time.RFC3339Nano))
}

// Is reports whether target is [ErrStreamActive].
func (e *ActiveStreamError) Is(target error) bool { return target == ErrStreamActive }
